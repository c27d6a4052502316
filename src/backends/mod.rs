//! The backends, side by side, each an instance of the definition in `core/src/physics`:
//! `cpu-ref` (f64, one body at a time), `cpu` (f32 lanes) and `gpu`/`gpu-f64` (generated WGSL).

pub(crate) use rigid_crowd_core::backends::{cpu, cpu_ref};
pub mod gpu;
