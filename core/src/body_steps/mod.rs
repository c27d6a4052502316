//! One body's steps under the crowd's force records, generic over the number they run in:
//! the f64 reference's steps (`cpu-ref`), and the same steps over dual numbers, which carry
//! the tangents of `cpu-ref` (in f64) and of `cpu` (in f32, bit for bit its lanes' values).

pub mod carried;
pub mod derivative;
pub mod stepper;
pub mod tangent_blocks;
pub mod tangents;
