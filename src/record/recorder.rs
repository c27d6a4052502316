//! The recording loop: step K, ask for the states, write the previous frame while the
//! device integrates the next K steps.

use crate::model::body::Body;
use crate::model::error::{Error, Result};
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
/// A run resumed from a checkpoint in another process continues its recording with
/// [`Recorder::resume`].
#[derive(Debug)]
pub struct Recorder {
    every: u64,
    /// `sim.steps_taken()` when this recorder was made ...
    first_step: u64,
    /// ... and the recording's step then: 0 for a new recording, the steps already recorded
    /// for a resumed one. A frame's step is `base + steps_taken - first_step`.
    base: u64,
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
            base: 0,
            pending: Some(sim.request_states()?),
        })
    }

    /// Continues a recording that was [`flush`](Self::flush)ed `steps_done` steps after its
    /// first frame (in this process or another; `sim` is at that point, a run resumed from
    /// a checkpoint taken then): every frame up to `steps_done` was handed out, and the next
    /// one is at the next multiple of `every`. The frames continue exactly as those of a
    /// recording never interrupted.
    pub fn resume(sim: &Simulation, every: u64, steps_done: u64) -> Result<Self> {
        if every == 0 {
            return Err(Error::invalid("every", "must be at least 1"));
        }
        Ok(Self {
            every,
            first_step: sim.steps_taken(),
            base: steps_done,
            pending: None,
        })
    }

    /// Steps since the recording's first frame.
    fn recorded_steps(&self, sim: &Simulation) -> u64 {
        self.base + (sim.steps_taken() - self.first_step)
    }

    /// Hands out the frame asked for and not yet handed out (waiting for it), so that every
    /// frame up to the simulation's current step is out: before a checkpoint, which
    /// [`Recorder::resume`] continues from. The frames are the same as without it.
    pub fn flush(
        &mut self,
        sim: &mut Simulation,
        mut on_frame: impl FnMut(u64, f64, &[Body]) -> Result<()>,
    ) -> Result<()> {
        match self.pending.take() {
            Some(ticket) => self.deliver(sim, ticket, &mut on_frame),
            None => Ok(()),
        }
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
            let since_frame = self.recorded_steps(sim) % self.every;
            let batch = (self.every - since_frame).min(steps - done);
            sim.step(batch)?;
            done += batch;
            on_progress(done);
            if self.recorded_steps(sim).is_multiple_of(self.every) {
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
        on_frame: impl FnMut(u64, f64, &[Body]) -> Result<()>,
    ) -> Result<()> {
        self.flush(sim, on_frame)
    }

    fn deliver(
        &self,
        sim: &mut Simulation,
        ticket: StatesTicket,
        on_frame: &mut impl FnMut(u64, f64, &[Body]) -> Result<()>,
    ) -> Result<()> {
        let (step, time) = (self.base + (ticket.step() - self.first_step), ticket.time());
        let bodies = sim.wait_states(ticket)?;
        on_frame(step, time, &bodies)
    }
}
