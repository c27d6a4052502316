//! The physics, written once over the number type ([`scalar::Scalar`]): what a user reads to know
//! what the library computes. `cpu-ref` runs it in `f64`; `gpu` and `gpu-f64` run the WGSL
//! that [`wgsl`] prints from it by tracing ([`trace`]), in f32 and f64. The same operations
//! in the same order give the same bits wherever the arithmetic is IEEE's.

pub mod algebra;
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx;
pub mod clock;
pub mod collision;
pub mod contact;
pub mod custom_force;
pub mod dual;
pub mod dual_wgsl;
pub mod envelope;
pub mod exp_map;
pub mod force_law;
pub mod forces;
pub mod integrators;
pub(crate) mod lanes;
pub mod motion;
pub mod neighbours;
pub mod principal_axes;
pub(crate) mod profile;
pub mod rest;
pub mod scalar;
pub mod splitting;
pub mod trace;
pub(crate) mod traced_dual;
pub mod trig;
pub mod wgsl;
