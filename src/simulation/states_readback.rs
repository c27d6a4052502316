//! Non-blocking readback: ask for the states of the current step, keep stepping, collect them
//! when they are ready.
//!
//! On the GPU a request queues a copy of the states behind the steps queued so far, into one
//! of two staging sets that are mapped asynchronously (src/backends/gpu/device/async_readback.rs); the
//! integration queued afterwards runs while the copy lands. The CPU backends take the
//! states at once, so their tickets are ready immediately.

use super::facade::Simulation;
use crate::model::body::Body;
use crate::model::error::Result;
use crate::simulation::tickets::{StatesTicket, foreign_ticket};

impl Simulation {
    /// Asks for the states after the steps taken so far, without waiting for them.
    ///
    /// On the GPU this queues a copy behind the steps already queued and returns at once;
    /// later [`step`](Self::step) calls are queued behind the copy and run while it lands.
    /// Two requests share the staging memory at a time: a third waits for the oldest and
    /// keeps it in host memory. On the CPU backends the states are taken immediately.
    /// Recording never changes the results: the states are exactly those
    /// [`bodies`](Self::bodies) would return now.
    pub fn request_states(&mut self) -> Result<StatesTicket> {
        let id = match self.engine.gpu_mut() {
            Some(sim) => sim.request_states()?,
            None => {
                let bodies = self.bodies()?;
                self.readbacks.store(bodies)
            }
        };
        Ok(StatesTicket {
            id,
            simulation: self.readbacks.simulation,
            step: self.steps_taken,
            time: self.time(),
        })
    }

    /// The states of `ticket` if they are ready, without blocking; `None` while the GPU is
    /// still copying them. Once they have been returned the ticket is spent: using it again
    /// is an error, as is a ticket of another simulation.
    pub fn try_states(&mut self, ticket: &StatesTicket) -> Result<Option<Vec<Body>>> {
        self.check(ticket)?;
        match self.engine.gpu_mut() {
            Some(sim) => sim.try_states(ticket.id),
            None => self.readbacks.take(ticket.id).map(Some),
        }
    }

    /// The states of `ticket`, waiting for the GPU's copy if needed.
    pub fn wait_states(&mut self, ticket: StatesTicket) -> Result<Vec<Body>> {
        self.check(&ticket)?;
        match self.engine.gpu_mut() {
            Some(sim) => sim.wait_states(ticket.id),
            None => self.readbacks.take(ticket.id),
        }
    }

    pub(super) fn check(&self, ticket: &StatesTicket) -> Result<()> {
        if ticket.simulation == self.readbacks.simulation {
            Ok(())
        } else {
            Err(foreign_ticket())
        }
    }
}
