//! Solid shapes whose mass properties are known in closed form.

use glam::{DMat3, DVec3};

/// A solid of uniform density, centred on its centre of mass, axes along the body frame.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Shape {
    /// A rectangular block with full edge lengths `size` along x, y, z (Baraff 5.1).
    Box {
        /// Full edge lengths.
        size: DVec3,
    },
    /// A ball of the given radius.
    Sphere {
        /// Radius.
        radius: f64,
    },
}

impl Shape {
    /// Body-space inertia tensor of the shape with total mass `mass`.
    pub fn inertia(&self, mass: f64) -> DMat3 {
        match *self {
            // Baraff (5-3): Ibody = M/12 diag(y0^2 + z0^2, x0^2 + z0^2, x0^2 + y0^2).
            Shape::Box { size } => {
                let s = size * size;
                DMat3::from_diagonal(DVec3::new(s.y + s.z, s.x + s.z, s.x + s.y) * (mass / 12.0))
            }
            Shape::Sphere { radius } => {
                DMat3::from_diagonal(DVec3::splat(0.4 * mass * radius * radius))
            }
        }
    }
}

impl Shape {
    /// Whether every dimension is finite and positive.
    pub fn is_valid(&self) -> bool {
        match *self {
            Shape::Box { size } => size.is_finite() && size.min_element() > 0.0,
            Shape::Sphere { radius } => radius.is_finite() && radius > 0.0,
        }
    }
}
