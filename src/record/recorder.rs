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
/// so far after each batch.
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
    mut on_progress: impl FnMut(u64),
) -> Result<()> {
    if every == 0 {
        return Err(Error::invalid("every", "must be at least 1"));
    }
    let first = sim.steps_taken();
    let mut deliver = |sim: &mut Simulation, ticket: StatesTicket| -> Result<()> {
        let (step, time) = (ticket.step() - first, ticket.time());
        let bodies = sim.wait_states(ticket)?;
        on_frame(step, time, &bodies)
    };
    let mut previous = Some(sim.request_states()?);
    let mut done = 0;
    while done < steps {
        let batch = every.min(steps - done);
        sim.step(batch)?;
        done += batch;
        on_progress(done);
        let next = if batch == every {
            Some(sim.request_states()?)
        } else {
            None
        };
        if let Some(ticket) = previous.take() {
            deliver(sim, ticket)?;
        }
        previous = next;
    }
    if let Some(ticket) = previous {
        deliver(sim, ticket)?;
    }
    Ok(())
}
