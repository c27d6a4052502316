//! The CPU backends, each an instance of the definition in `physics`: `cpu-ref` (f64, one
//! body at a time) and `cpu` (f32 lanes). The GPU's sit in the `rigid-crowd` crate above.

pub mod cpu;
pub mod cpu_ref;
