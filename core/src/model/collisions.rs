//! Collisions between the bodies of a crowd: opt-in, and then every body collides with every
//! other (`core/src/physics/collision.rs` resolves them).

use crate::model::error::{Error, Result};
use crate::model::validate::check_non_negative;

/// How the bodies of a colliding crowd meet: one restitution and one friction coefficient
/// for every pair of bodies (each plane keeps its own).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Collisions {
    /// Coefficient of restitution `e` in `[0, 1]`: the fraction of the approach speed kept.
    pub restitution: f64,
    /// Coulomb friction coefficient `mu >= 0`: tangential impulse at most `mu` times the normal one.
    pub friction: f64,
}

impl Collisions {
    /// Collisions with restitution `e` and friction `mu`.
    pub fn new(restitution: f64, friction: f64) -> Self {
        Self {
            restitution,
            friction,
        }
    }

    /// Checks both coefficients; `field` names the setting in errors (`collisions`).
    pub fn validate(&self, field: &str) -> Result<()> {
        check_non_negative(&format!("{field}.restitution"), self.restitution)?;
        if self.restitution > 1.0 {
            return Err(Error::invalid(
                format!("{field}.restitution"),
                format!("must be in [0, 1] (got {})", self.restitution),
            ));
        }
        check_non_negative(&format!("{field}.friction"), self.friction)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coefficients_are_checked_by_name() {
        assert!(Collisions::new(0.5, 0.3).validate("collisions").is_ok());
        let message = |c: Collisions| c.validate("collisions").unwrap_err().to_string();
        assert!(message(Collisions::new(1.5, 0.0)).contains("collisions.restitution"));
        assert!(message(Collisions::new(-0.1, 0.0)).contains("collisions.restitution"));
        assert!(message(Collisions::new(0.5, -1.0)).contains("collisions.friction"));
        assert!(message(Collisions::new(f64::NAN, 0.0)).contains("collisions.restitution"));
    }
}
