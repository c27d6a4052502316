//! Tickets for states requested now and collected later, and a simulation's record of them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::model::body::Body;
use crate::model::error::{Error, Result};

/// A claim on the states of one step, from [`Simulation::request_states`](crate::Simulation::request_states); redeem it with
/// [`Simulation::try_states`](crate::Simulation::try_states) or [`Simulation::wait_states`](crate::Simulation::wait_states) on the same simulation.
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
    pub(super) id: u64,
    pub(super) simulation: u64,
    pub(super) step: u64,
    pub(super) time: f64,
}

impl StatesTicket {
    /// Steps the simulation had taken when the states were requested: the states are the
    /// ones [`Simulation::bodies`](crate::Simulation::bodies) returned right then.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// Simulated time of those states, as [`Simulation::time`](crate::Simulation::time) said then.
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
    pub(super) simulation: u64,
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

pub(super) fn foreign_ticket() -> Error {
    Error::invalid(
        "states ticket",
        "was already redeemed or belongs to another simulation",
    )
}

impl Readbacks {
    pub(super) fn store(&mut self, bodies: Vec<Body>) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.on_host.insert(id, bodies);
        id
    }

    pub(super) fn take(&mut self, id: u64) -> Result<Vec<Body>> {
        self.on_host.remove(&id).ok_or_else(foreign_ticket)
    }
}
