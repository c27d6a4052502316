//! Non-blocking readback: ask for the states of the current step, keep stepping, collect them
//! when they are ready.
//!
//! On the GPU a request queues a copy of the states behind the steps queued so far, into one
//! of two staging sets that are mapped asynchronously (src/gpu/async_readback.rs); the
//! integration queued afterwards runs while the copy lands. The CPU backends take the
//! states at once, so their tickets are ready immediately.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use super::facade::{Engine, Simulation};
use crate::model::body::Body;
use crate::model::error::{Error, Result};

/// A claim on the states of one step, from [`Simulation::request_states`]; redeem it with
/// [`Simulation::try_states`] or [`Simulation::wait_states`] on the same simulation.
///
/// ```
/// use rigid_crowd::{Backend, Crowd, CrowdSpec, Simulation};
///
/// let crowd = Crowd::new(CrowdSpec::new(100, 1).generate()?, 1e-3);
/// let mut sim = Simulation::new(&crowd, Backend::FastCpu)?; // or Backend::Gpu
/// sim.step(10)?;
/// let ticket = sim.request_states()?; // the states after step 10, not waited for
/// sim.step(10)?; // on the GPU: queued behind the copy, integrating while it lands
/// let bodies = match sim.try_states(&ticket)? {
///     Some(bodies) => bodies, // never blocks
///     None => sim.wait_states(ticket)?, // blocks until the copy lands
/// };
/// assert_eq!(bodies.len(), 100);
/// # Ok::<(), rigid_crowd::Error>(())
/// ```
#[derive(Debug)]
#[must_use = "a ticket holds a copy of the states until it is redeemed"]
pub struct StatesTicket {
    id: u64,
    simulation: u64,
    step: u64,
    time: f64,
}

impl StatesTicket {
    /// Steps the simulation had taken when the states were requested: the states are the
    /// ones [`Simulation::bodies`] returned right then.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// Simulated time of those states, as [`Simulation::time`] said then.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// The request this ticket redeems, within its simulation.
    pub(super) fn id(&self) -> u64 {
        self.id
    }
}

/// Tickets of one simulation: its identity, and the CPU backends' states already taken.
#[derive(Debug)]
pub(super) struct Readbacks {
    simulation: u64,
    next_id: u64,
    on_host: HashMap<u64, Vec<Body>>,
}

impl Readbacks {
    pub(super) fn new() -> Self {
        // Tells tickets of different simulations apart.
        static SIMULATIONS: AtomicU64 = AtomicU64::new(0);
        Self {
            simulation: SIMULATIONS.fetch_add(1, Ordering::Relaxed),
            next_id: 0,
            on_host: HashMap::new(),
        }
    }
}

fn foreign_ticket() -> Error {
    Error::invalid(
        "states ticket",
        "was already redeemed or belongs to another simulation",
    )
}

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
        let id = match &mut self.engine {
            Engine::Gpu(sim) => sim.request_states()?,
            Engine::Reference(_) | Engine::FastCpu(_) => {
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
        match &mut self.engine {
            Engine::Gpu(sim) => sim.try_states(ticket.id),
            Engine::Reference(_) | Engine::FastCpu(_) => self.readbacks.take(ticket.id).map(Some),
        }
    }

    /// The states of `ticket`, waiting for the GPU's copy if needed.
    pub fn wait_states(&mut self, ticket: StatesTicket) -> Result<Vec<Body>> {
        self.check(&ticket)?;
        match &mut self.engine {
            Engine::Gpu(sim) => sim.wait_states(ticket.id),
            Engine::Reference(_) | Engine::FastCpu(_) => self.readbacks.take(ticket.id),
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

impl Readbacks {
    fn store(&mut self, bodies: Vec<Body>) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.on_host.insert(id, bodies);
        id
    }

    pub(super) fn take(&mut self, id: u64) -> Result<Vec<Body>> {
        self.on_host.remove(&id).ok_or_else(foreign_ticket)
    }
}
