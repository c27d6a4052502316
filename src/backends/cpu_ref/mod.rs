//! The f64 CPU reference (`--backend cpu-ref`): the definition in `src/physics` in f64, one
//! body at a time, written for clarity; the oracle every other backend is validated against.

pub(crate) mod derivative;
pub(crate) mod faults;
pub(crate) mod integrate;
mod simulation;
pub(crate) mod tangents;

pub use simulation::CpuRefSimulation;
