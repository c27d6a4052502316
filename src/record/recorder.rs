//! The recording loop: step K, ask for the states, write the previous frame while the
//! device integrates the next K steps.

use crate::body::Body;
use crate::error::{Error, Result};
use crate::simulation::{Simulation, StatesTicket};

/// Frames a run of `steps` steps records every `every` steps: the start and each multiple
/// of `every` up to `steps`, that is `steps / every + 1`. `every` must be at least 1.
pub fn frame_count(steps: u64, every: u64) -> usize {
    (steps / every.max(1) + 1) as usize
}

/// Runs `sim` for `steps` steps and hands the states at the start and after every `every`
/// steps to `on_frame(step, time, bodies)` — [`frame_count`] frames, `step` counted from
/// the start of this call, `time` the simulated time. `on_progress` sees the steps queued
/// so far after each batch. [`Recorder`] does the same over several calls.
///
/// Each frame is requested with [`Simulation::request_states`] right after its steps are
/// queued and collected only after the next `every` steps are queued, so on the GPU the
/// host handles frame N while the device integrates towards frame N + 1 (two frames in
/// flight, double-buffered staging). The frames are exactly what [`Simulation::bodies`]
/// returns after the same steps; recording does not change the run.
pub fn record_run(
    sim: &mut Simulation,
    steps: u64,
    every: u64,
    mut on_frame: impl FnMut(u64, f64, &[Body]) -> Result<()>,
    on_progress: impl FnMut(u64),
) -> Result<()> {
    let mut recorder = Recorder::start(sim, every)?;
    recorder.advance(sim, steps, &mut on_frame, on_progress)?;
    recorder.finish(sim, &mut on_frame)
}

/// A recording in progress, for runs stepped in several calls (between checkpoints, say):
/// frames at the start and at every multiple of `every` steps after it, whatever the calls.
#[derive(Debug)]
pub struct Recorder {
    every: u64,
    first_step: u64,
    /// The newest frame asked for and not yet handed out.
    pending: Option<StatesTicket>,
}

impl Recorder {
    /// Starts recording `sim` every `every` steps (at least 1), asking for the first frame.
    pub fn start(sim: &mut Simulation, every: u64) -> Result<Self> {
        if every == 0 {
            return Err(Error::invalid("every", "must be at least 1"));
        }
        Ok(Self {
            every,
            first_step: sim.steps_taken(),
            pending: Some(sim.request_states()?),
        })
    }

    /// Steps `sim` by `steps` in batches that stop at each frame, handing out each frame
    /// once the next batch is queued. `on_progress` sees the steps taken in this call.
    pub fn advance(
        &mut self,
        sim: &mut Simulation,
        steps: u64,
        mut on_frame: impl FnMut(u64, f64, &[Body]) -> Result<()>,
        mut on_progress: impl FnMut(u64),
    ) -> Result<()> {
        let mut done = 0;
        while done < steps {
            let since_frame = (sim.steps_taken() - self.first_step) % self.every;
            let batch = (self.every - since_frame).min(steps - done);
            sim.step(batch)?;
            done += batch;
            on_progress(done);
            if (sim.steps_taken() - self.first_step).is_multiple_of(self.every) {
                let next = sim.request_states()?;
                if let Some(ticket) = self.pending.replace(next) {
                    self.deliver(sim, ticket, &mut on_frame)?;
                }
            }
        }
        Ok(())
    }

    /// Hands out the last frame asked for.
    pub fn finish(
        mut self,
        sim: &mut Simulation,
        mut on_frame: impl FnMut(u64, f64, &[Body]) -> Result<()>,
    ) -> Result<()> {
        match self.pending.take() {
            Some(ticket) => self.deliver(sim, ticket, &mut on_frame),
            None => Ok(()),
        }
    }

    fn deliver(
        &self,
        sim: &mut Simulation,
        ticket: StatesTicket,
        on_frame: &mut impl FnMut(u64, f64, &[Body]) -> Result<()>,
    ) -> Result<()> {
        let (step, time) = (ticket.step() - self.first_step, ticket.time());
        let bodies = sim.wait_states(ticket)?;
        on_frame(step, time, &bodies)
    }
}
