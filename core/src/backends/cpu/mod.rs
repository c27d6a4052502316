//! The fast CPU backend (`--backend cpu`): the definition in `core/src/physics` in f32, on blocks of
//! eight bodies (one lane each, structure of arrays), every core. It gives the f32 kernel's
//! bits where the adapter's arithmetic is IEEE's, and is validated against the reference.

mod block;
mod block_run;
mod contact;
mod derivative;
mod faults;
mod integrate;
mod simulation;
mod tangent_lanes;
mod tangents;

pub use simulation::CpuSimulation;
