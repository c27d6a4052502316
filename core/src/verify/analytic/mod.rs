//! Closed-form solutions that integrations are measured against: the torque-free symmetric
//! and asymmetric tops (through Jacobi elliptic functions), to test any integrator with.

mod elliptic;
mod tops;

pub use tops::{AsymmetricTop, SymmetricTop, tumbling_top};
