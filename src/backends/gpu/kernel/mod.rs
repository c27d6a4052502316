//! The kernel's WGSL source, with no device in it: assembled per precision and compiled for
//! each crowd's integrator, force kinds and planes, the storage layouts' Rust twins, the
//! operation count the bench prints, and the scan for 32-bit-only built-ins.

pub(crate) mod builtins;
pub(crate) mod kernel_spec;
pub(crate) mod layout;
#[cfg(any(test, feature = "cli"))]
pub(crate) mod op_count;
pub(crate) mod shader;
pub(crate) mod tangent_kernel;
