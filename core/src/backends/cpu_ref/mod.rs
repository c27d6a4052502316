//! The f64 CPU reference (`--backend cpu-ref`): the definition in `core/src/physics` in f64, one
//! body at a time (`core/src/body_steps`), written for clarity; the oracle every other backend is
//! validated against.

pub(crate) mod collide;
pub(crate) mod faults;
mod simulation;

pub use simulation::CpuRefSimulation;
