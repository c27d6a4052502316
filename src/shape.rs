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
    /// A solid circular cylinder along the body z axis.
    Cylinder {
        /// Radius.
        radius: f64,
        /// Full height along z.
        height: f64,
    },
    /// A cylinder of `length` along the body z axis capped by two hemispheres.
    Capsule {
        /// Radius of the cylinder and the caps.
        radius: f64,
        /// Length of the cylindrical part (the total height is `length + 2 radius`).
        length: f64,
    },
    /// A solid ellipsoid with semi-axes along the body x, y, z axes.
    Ellipsoid {
        /// Semi-axes.
        semi_axes: DVec3,
    },
}

impl Shape {
    /// Body-space inertia tensor of the shape with total mass `mass`.
    pub fn inertia(&self, mass: f64) -> DMat3 {
        let diagonal = match *self {
            // Baraff (5-3): Ibody = M/12 diag(y0^2 + z0^2, x0^2 + z0^2, x0^2 + y0^2).
            Shape::Box { size } => {
                let s = size * size;
                DVec3::new(s.y + s.z, s.x + s.z, s.x + s.y) * (mass / 12.0)
            }
            Shape::Sphere { radius } => DVec3::splat(0.4 * mass * radius * radius),
            Shape::Cylinder { radius, height } => {
                let r2 = radius * radius;
                let side = mass * (3.0 * r2 + height * height) / 12.0;
                DVec3::new(side, side, 0.5 * mass * r2)
            }
            Shape::Capsule { radius, length } => {
                let (r, l) = (radius, length);
                let cylinder = l * r * r;
                let caps = 4.0 / 3.0 * r * r * r;
                let mc = mass * cylinder / (cylinder + caps);
                let ms = mass - mc;
                // Each cap's centre of mass sits 3r/8 beyond its flat face (parallel axes).
                let side = mc * (3.0 * r * r + l * l) / 12.0
                    + ms * (0.4 * r * r + 0.25 * l * l + 0.375 * r * l);
                DVec3::new(side, side, 0.5 * mc * r * r + 0.4 * ms * r * r)
            }
            Shape::Ellipsoid { semi_axes } => {
                let s = semi_axes * semi_axes;
                DVec3::new(s.y + s.z, s.x + s.z, s.x + s.y) * (mass / 5.0)
            }
        };
        DMat3::from_diagonal(diagonal)
    }
}

impl Shape {
    /// Whether every dimension is finite and positive.
    pub fn is_valid(&self) -> bool {
        let positive = |v: f64| v.is_finite() && v > 0.0;
        match *self {
            Shape::Box { size } => size.is_finite() && size.min_element() > 0.0,
            Shape::Sphere { radius } => positive(radius),
            Shape::Cylinder { radius, height } => positive(radius) && positive(height),
            Shape::Capsule { radius, length } => {
                positive(radius) && length.is_finite() && length >= 0.0
            }
            Shape::Ellipsoid { semi_axes } => {
                semi_axes.is_finite() && semi_axes.min_element() > 0.0
            }
        }
    }
}
