//! Closed-form solutions that integrations are measured against: Jacobi elliptic functions
//! and the torque-free symmetric and asymmetric tops.

mod elliptic;
mod tops;

pub use elliptic::{JacobiElliptic, complete_elliptic_k, jacobi_elliptic};
pub use tops::{AsymmetricTop, SymmetricTop};
