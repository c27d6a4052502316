//! The fast CPU backend (`--backend cpu`): the same equations as the f64 reference, in f32,
//! structure of arrays in blocks of eight bodies, every core. Validated against the reference.

#[cfg(target_arch = "x86_64")]
mod avx;
mod block;
mod contact;
mod derivative;
mod faults;
mod integrate;
pub(crate) mod lanes;
mod simulation;

pub use simulation::CpuSimulation;

pub(crate) use integrate::STEPS_PER_OVERFLOW;
