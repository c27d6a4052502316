//! The facade: one API over every backend (build from a crowd, `step(n)`, read the bodies
//! back), and the reads that stream states out of it.

pub(crate) mod facade;
mod lean_reads;
pub(crate) mod states_readback;

pub use facade::Simulation;
pub use states_readback::StatesTicket;
