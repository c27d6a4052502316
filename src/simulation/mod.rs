//! The facade: one API over every backend (build from a crowd, `step(n)`, read the bodies
//! back), and the reads that stream states out of it.

mod engine;
pub(crate) mod facade;
mod lean_reads;
mod runs_on;
mod states_readback;
mod tangents;
mod tickets;

pub use facade::Simulation;
#[cfg(any(feature = "cli", feature = "mpi"))]
pub(crate) use runs_on::RunsOn;
#[cfg(any(feature = "cli", feature = "mpi"))]
pub(crate) use tangents::tangent_refusal;
pub use tickets::StatesTicket;
