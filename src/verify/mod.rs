//! Verification: comparing states, the cross-check of every backend against the reference,
//! and the analytic solutions the tests grade against.

#[cfg(test)]
pub(crate) use rigid_crowd_core::verify::test_crowds;
#[cfg(any(test, feature = "cli"))]
pub(crate) use rigid_crowd_core::verify::xorshift;
pub use rigid_crowd_core::verify::{analytic, check_crowd};
pub(crate) mod compare;
pub(crate) mod cross_check;
#[cfg(feature = "cli")]
pub(crate) mod integrator_accuracy;
#[cfg(feature = "cli")]
pub(crate) mod long_run_on_backend;
