//! The f64 CPU reference (`--backend cpu-ref`): a direct rendering of Baraff's equations, the
//! oracle every other backend is validated against. Each file is the twin of the shader with
//! the same stem.

pub(crate) mod contact;
pub(crate) mod derivative;
pub(crate) mod integrate;
mod simulation;

pub use simulation::CpuRefSimulation;
