//! The backends, side by side, each an instance of the definition in `src/physics`:
//! `cpu-ref` (f64, one body at a time), `cpu` (f32 lanes) and `gpu`/`gpu-f64` (generated WGSL).

pub(crate) mod cpu;
pub(crate) mod cpu_ref;
pub mod gpu;
