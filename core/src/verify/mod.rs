//! What the checks grade against and need below the GPU: the analytic solutions, the crowd
//! `check` compares the backends on, a NaN-propagating maximum and reproducible test numbers.
//! The comparisons of whole runs sit in the `rigid-crowd` crate's `verify`.

pub mod analytic;
pub mod check_crowd;
pub mod compare;
#[doc(hidden)]
pub mod test_crowds;
pub mod xorshift;
