//! Verification: comparing states, the cross-check of every backend against the reference,
//! and the analytic solutions the tests grade against.

pub mod analytic;
pub(crate) mod check_crowd;
pub(crate) mod compare;
pub(crate) mod cross_check;
#[cfg(feature = "cli")]
pub(crate) mod integrator_accuracy;
#[cfg(feature = "cli")]
pub(crate) mod long_run_on_backend;
#[cfg(any(test, feature = "cli"))]
pub(crate) mod xorshift;
