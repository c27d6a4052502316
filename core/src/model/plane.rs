//! Static half-spaces the bodies bounce off: ground planes, walls, ramps.

use glam::DVec3;

use crate::model::error::{Error, Result};
use crate::model::validate::{check_non_negative, check_vector};

/// The boundary of a static half-space. Bodies live on the side the normal points to; a
/// body point found below the surface is pushed back out and its velocity resolved with an
/// impulse (restitution and Coulomb friction, see `core/src/physics/contact.rs`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plane {
    /// Unit outward normal (normalized on construction).
    pub normal: DVec3,
    /// `normal . p` of every point `p` on the surface.
    pub offset: f64,
    /// Coefficient of restitution `e` in `[0, 1]`: the fraction of the approach speed kept.
    pub restitution: f64,
    /// Coulomb friction coefficient `mu >= 0`: tangential impulse at most `mu` times the normal one.
    pub friction: f64,
    /// A point on the surface, the one the plane was given through: a change of the normal
    /// turns the plane about it (`Simulation::start_tangents` of `planes[i].normal`).
    pub point: DVec3,
}

impl Plane {
    /// The plane through `point` with outward `normal` (any length but zero).
    pub fn through(point: DVec3, normal: DVec3, restitution: f64, friction: f64) -> Self {
        let normal = normal.normalize_or_zero();
        Self {
            normal,
            offset: normal.dot(point),
            restitution,
            friction,
            point,
        }
    }

    /// A floor at height `z = 0` with normal `+z`.
    pub fn ground(restitution: f64, friction: f64) -> Self {
        Self::through(DVec3::ZERO, DVec3::Z, restitution, friction)
    }

    /// How far `point` is below the surface (negative above it).
    pub fn depth(&self, point: DVec3) -> f64 {
        self.offset - self.normal.dot(point)
    }

    /// Checks every parameter; `field` names the plane in errors (e.g. `planes[0]`).
    pub fn validate(&self, field: &str) -> Result<()> {
        check_vector(&format!("{field}.normal"), self.normal.to_array())?;
        let length = self.normal.length();
        if (length - 1.0).abs() > 1e-9 {
            return Err(Error::invalid(
                format!("{field}.normal"),
                format!("must be a non-zero vector (got length {length})"),
            ));
        }
        check_vector(&format!("{field}.offset"), [self.offset])?;
        check_vector(&format!("{field}.point"), self.point.to_array())?;
        // The point is on the surface, to the rounding of `normal . point`.
        let scale = self.offset.abs().max(self.point.length()).max(1.0);
        if self.depth(self.point).abs() > 1e-12 * scale {
            return Err(Error::invalid(
                format!("{field}.point"),
                format!(
                    "lies {} off the surface normal . p = {}: give a point on it",
                    -self.depth(self.point),
                    self.offset
                ),
            ));
        }
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

    /// A plane keeps the point it was given through, on its surface; one whose point is off
    /// the surface is refused naming the point.
    #[test]
    fn a_plane_keeps_its_point_on_the_surface() {
        let point = DVec3::new(0.5, -2.0, 1.0);
        let plane = Plane::through(point, DVec3::new(0.2, 0.1, 1.0), 0.3, 0.7);
        assert_eq!(plane.point, point);
        assert_eq!(plane.depth(point), 0.0);
        plane.validate("planes[1]").unwrap();
        let off = Plane {
            point: point + plane.normal * 1e-6,
            ..plane
        };
        let message = off.validate("planes[1]").unwrap_err().to_string();
        assert!(
            message.starts_with("planes[1].point: lies 0.00000100000") && !message.contains('\n'),
            "{message}"
        );
    }
}
