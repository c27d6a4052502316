//! One body's steps under the crowd's force records, generic over the number they run in:
//! the f64 reference's steps (`cpu-ref`), and the same steps over dual numbers, which carry
//! the tangents of `cpu-ref` (in f64) and of `cpu` (in f32, bit for bit its lanes' values).

pub(crate) mod carried;
pub(crate) mod derivative;
pub(crate) mod stepper;
pub(crate) mod tangent_blocks;
pub(crate) mod tangents;
