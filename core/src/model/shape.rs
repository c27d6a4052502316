//! Solid shapes whose mass properties are known in closed form.

use std::f64::consts::PI;

use glam::{DMat3, DVec3};

use serde::Deserialize;

use crate::model::codes::Coded;
use crate::model::error::{Error, Result};

/// The kinds of [`Shape`], without their dimensions: what a generated body may take, and
/// what the kernel's generated `SHAPE_*` constants and the checkpoint's shape tags number
/// (from 1; 0 is a body without a shape).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShapeKind {
    /// A box with random edge lengths in the size range.
    Box,
    /// A sphere with a random diameter in the size range.
    Sphere,
    /// A cylinder (axis along body z) with a random diameter and height in the size range.
    Cylinder,
    /// A capsule with a random diameter and straight length in the size range.
    Capsule,
    /// An ellipsoid with random full axes (twice the semi-axes) in the size range.
    Ellipsoid,
}

/// A solid of uniform density, centred on its centre of mass, axes along the body frame.
///
/// Every shape is symmetric about the three body planes, so its body axes are principal axes
/// and its inertia tensor is diagonal.
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
    /// A solid circular cylinder with its axis along body z, spanning `z` in `[-height/2, height/2]`.
    Cylinder {
        /// Radius of the circular cross-section.
        radius: f64,
        /// Full height along z.
        height: f64,
    },
    /// A cylinder of `length` along body z capped by two hemispheres of the same radius; its
    /// total height is `length + 2 radius`. `length = 0` is a sphere.
    Capsule {
        /// Radius of the cylinder and of the hemispherical caps.
        radius: f64,
        /// Length of the straight part (between the caps' flat faces), `>= 0`.
        length: f64,
    },
    /// A solid ellipsoid `(x/a)^2 + (y/b)^2 + (z/c)^2 <= 1` with `semi_axes = (a, b, c)`.
    Ellipsoid {
        /// Semi-axes along body x, y, z.
        semi_axes: DVec3,
    },
}

impl ShapeKind {
    /// Every kind of solid, in code order.
    pub const EVERY: [ShapeKind; 5] = [
        ShapeKind::Box,
        ShapeKind::Sphere,
        ShapeKind::Cylinder,
        ShapeKind::Capsule,
        ShapeKind::Ellipsoid,
    ];
}

impl Coded for ShapeKind {
    const ALL: &'static [Self] = &Self::EVERY;
    const WGSL_PREFIX: &'static str = "SHAPE";
    const FIRST_CODE: u32 = 1;

    fn name(self) -> &'static str {
        match self {
            ShapeKind::Box => "box",
            ShapeKind::Sphere => "sphere",
            ShapeKind::Cylinder => "cylinder",
            ShapeKind::Capsule => "capsule",
            ShapeKind::Ellipsoid => "ellipsoid",
        }
    }
}

/// The code of a body without a shape (`SHAPE_NONE` in the kernel).
pub const NO_SHAPE_CODE: u32 = 0;

impl Shape {
    /// The shape's dimensions as three numbers, unused ones zero: a box's `size`, a sphere's
    /// `(radius, 0, 0)`, a cylinder's `(radius, height, 0)`, a capsule's `(radius, length, 0)`,
    /// an ellipsoid's `semi_axes`. With [`kind`](Self::kind), what checkpoints and the crowd's
    /// compact mass table keep of a shape.
    pub fn dimensions(&self) -> [f64; 3] {
        match *self {
            Shape::Box { size } => size.to_array(),
            Shape::Sphere { radius } => [radius, 0.0, 0.0],
            Shape::Cylinder { radius, height } => [radius, height, 0.0],
            Shape::Capsule { radius, length } => [radius, length, 0.0],
            Shape::Ellipsoid { semi_axes } => semi_axes.to_array(),
        }
    }

    /// The shape of `kind` with [`dimensions`](Self::dimensions) `[a, b, c]`.
    pub fn from_dimensions(kind: ShapeKind, [a, b, c]: [f64; 3]) -> Shape {
        match kind {
            ShapeKind::Box => Shape::Box {
                size: DVec3::new(a, b, c),
            },
            ShapeKind::Sphere => Shape::Sphere { radius: a },
            ShapeKind::Cylinder => Shape::Cylinder {
                radius: a,
                height: b,
            },
            ShapeKind::Capsule => Shape::Capsule {
                radius: a,
                length: b,
            },
            ShapeKind::Ellipsoid => Shape::Ellipsoid {
                semi_axes: DVec3::new(a, b, c),
            },
        }
    }

    /// The kind of this shape.
    pub fn kind(&self) -> ShapeKind {
        match self {
            Shape::Box { .. } => ShapeKind::Box,
            Shape::Sphere { .. } => ShapeKind::Sphere,
            Shape::Cylinder { .. } => ShapeKind::Cylinder,
            Shape::Capsule { .. } => ShapeKind::Capsule,
            Shape::Ellipsoid { .. } => ShapeKind::Ellipsoid,
        }
    }

    /// Volume of the solid.
    pub fn volume(&self) -> f64 {
        match *self {
            Shape::Box { size } => size.x * size.y * size.z,
            Shape::Sphere { radius } => 4.0 / 3.0 * PI * radius.powi(3),
            Shape::Cylinder { radius, height } => PI * radius * radius * height,
            Shape::Capsule { radius, length } => {
                PI * radius * radius * length + 4.0 / 3.0 * PI * radius.powi(3)
            }
            Shape::Ellipsoid { semi_axes: a } => 4.0 / 3.0 * PI * a.x * a.y * a.z,
        }
    }

    /// Body-space inertia tensor of the shape with total mass `mass` (uniform density).
    pub fn inertia(&self, mass: f64) -> DMat3 {
        DMat3::from_diagonal(self.principal_moments(mass))
    }

    /// Principal moments of inertia about the body x, y, z axes, for total mass `mass`.
    pub fn principal_moments(&self, mass: f64) -> DVec3 {
        match *self {
            // Baraff (5-3): Ibody = M/12 diag(y0^2 + z0^2, x0^2 + z0^2, x0^2 + y0^2).
            Shape::Box { size } => {
                let s = size * size;
                DVec3::new(s.y + s.z, s.x + s.z, s.x + s.y) * (mass / 12.0)
            }
            Shape::Sphere { radius } => DVec3::splat(0.4 * mass * radius * radius),
            Shape::Cylinder { radius, height } => {
                let r2 = radius * radius;
                let transverse = mass * (3.0 * r2 + height * height) / 12.0;
                DVec3::new(transverse, transverse, 0.5 * mass * r2)
            }
            Shape::Capsule { radius, length } => {
                let (r, l) = (radius, length);
                // Mass splits between the straight part and the two caps by volume.
                let cylinder_volume = PI * r * r * l;
                let caps_volume = 4.0 / 3.0 * PI * r * r * r;
                let cylinder_mass = mass * cylinder_volume / (cylinder_volume + caps_volume);
                let caps_mass = mass - cylinder_mass;
                // About a diameter of its flat face a hemisphere has 2/5 m r^2, like the ball.
                // Its centre of mass sits 3r/8 off that face, so about its own centre it has
                // 2/5 m r^2 - m (3r/8)^2, and about the capsule's centre, l/2 + 3r/8 away:
                // m (2/5 r^2 - 9/64 r^2 + (l/2 + 3r/8)^2) = m (2/5 r^2 + l^2/4 + 3 l r/8).
                let transverse = cylinder_mass * (3.0 * r * r + l * l) / 12.0
                    + caps_mass * (0.4 * r * r + 0.25 * l * l + 0.375 * l * r);
                let axial = 0.5 * cylinder_mass * r * r + 0.4 * caps_mass * r * r;
                DVec3::new(transverse, transverse, axial)
            }
            Shape::Ellipsoid { semi_axes: a } => {
                let s = a * a;
                DVec3::new(s.y + s.z, s.x + s.z, s.x + s.y) * (mass / 5.0)
            }
        }
    }

    /// Whether every dimension is finite and positive (a capsule's `length` may be 0).
    pub fn is_valid(&self) -> bool {
        self.check("shape").is_ok()
    }

    /// Checks every dimension; `field` names the shape (e.g. `bodies[2].shape`) and the error
    /// names the offending parameter, e.g. `bodies[2].shape.cylinder.radius`.
    pub fn check(&self, field: &str) -> Result<()> {
        let positive = |name: String, value: f64| -> Result<()> {
            if value.is_finite() && value > 0.0 {
                Ok(())
            } else {
                Err(Error::invalid(
                    name,
                    format!("must be a finite number > 0 (got {value})"),
                ))
            }
        };
        let each_positive = |name: &str, values: DVec3| -> Result<()> {
            for (i, value) in values.to_array().into_iter().enumerate() {
                positive(format!("{field}.{name}[{i}]"), value)?;
            }
            Ok(())
        };
        match *self {
            Shape::Box { size } => each_positive("box", size),
            Shape::Sphere { radius } => positive(format!("{field}.sphere"), radius),
            Shape::Cylinder { radius, height } => {
                positive(format!("{field}.cylinder.radius"), radius)?;
                positive(format!("{field}.cylinder.height"), height)
            }
            Shape::Capsule { radius, length } => {
                positive(format!("{field}.capsule.radius"), radius)?;
                if length.is_finite() && length >= 0.0 {
                    Ok(())
                } else {
                    Err(Error::invalid(
                        format!("{field}.capsule.length"),
                        format!("must be a finite number >= 0 (got {length})"),
                    ))
                }
            }
            Shape::Ellipsoid { semi_axes } => each_positive("ellipsoid", semi_axes),
        }
    }

    /// Whether the body-space point `p` lies inside the solid (boundary included).
    pub fn contains(&self, p: DVec3) -> bool {
        match *self {
            Shape::Box { size } => (p.abs() * 2.0).cmple(size).all(),
            Shape::Sphere { radius } => p.length_squared() <= radius * radius,
            Shape::Cylinder { radius, height } => {
                p.truncate().length_squared() <= radius * radius && 2.0 * p.z.abs() <= height
            }
            Shape::Capsule { radius, length } => {
                // Distance to the axis segment z in [-l/2, l/2].
                let nearest = DVec3::new(0.0, 0.0, p.z.clamp(-0.5 * length, 0.5 * length));
                (p - nearest).length_squared() <= radius * radius
            }
            Shape::Ellipsoid { semi_axes } => (p / semi_axes).length_squared() <= 1.0,
        }
    }

    /// Half-extents of the axis-aligned body-space box that bounds the solid.
    pub fn half_extents(&self) -> DVec3 {
        match *self {
            Shape::Box { size } => 0.5 * size,
            Shape::Sphere { radius } => DVec3::splat(radius),
            Shape::Cylinder { radius, height } => DVec3::new(radius, radius, 0.5 * height),
            Shape::Capsule { radius, length } => DVec3::new(radius, radius, radius + 0.5 * length),
            Shape::Ellipsoid { semi_axes } => semi_axes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Volume and inertia per unit mass by a midpoint sum over an `n^3` grid of cells
    /// covering the bounding box: no closed form involved, only `contains`.
    fn grid_mass_properties(shape: &Shape, n: usize) -> (f64, DVec3) {
        let half = shape.half_extents();
        let cell = 2.0 * half / n as f64;
        let cell_volume = cell.x * cell.y * cell.z;
        let (mut volume, mut second) = (0.0, DVec3::ZERO);
        for i in 0..n {
            for j in 0..n {
                for k in 0..n {
                    let p = -half + (DVec3::new(i as f64, j as f64, k as f64) + 0.5) * cell;
                    if shape.contains(p) {
                        volume += cell_volume;
                        second += p * p * cell_volume;
                    }
                }
            }
        }
        // I_xx = integral of y^2 + z^2, and so on, divided by the volume for unit mass.
        let moments = DVec3::new(
            second.y + second.z,
            second.x + second.z,
            second.x + second.y,
        ) / volume;
        (volume, moments)
    }

    fn relative(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    #[test]
    fn closed_forms_match_a_grid_sum() {
        // Cell faces fall on every flat face (box, cylinder ends), so only curved surfaces
        // cost accuracy. Counting lattice points in a smooth convex body of R cells across
        // errs by O(R^(3/2)) points in 3D and O(R^(2/3)) rows in 2D (the sphere and circle
        // problems), relative O(R^-1.5) and O(R^-1.3): about 2e-4 at R = 120. TOLERANCE
        // leaves a factor of 10 for the constants.
        const N: usize = 240;
        const TOLERANCE: f64 = 2e-3;
        let shapes = [
            Shape::Box {
                size: DVec3::new(0.6, 1.0, 1.7),
            },
            Shape::Sphere { radius: 0.8 },
            Shape::Cylinder {
                radius: 0.5,
                height: 1.3,
            },
            Shape::Capsule {
                radius: 0.4,
                length: 1.1,
            },
            Shape::Ellipsoid {
                semi_axes: DVec3::new(0.5, 0.9, 1.4),
            },
        ];
        for shape in shapes {
            let (volume, moments) = grid_mass_properties(&shape, N);
            let exact = shape.principal_moments(1.0);
            let volume_error = relative(volume, shape.volume());
            let moment_error = (0..3)
                .map(|i| relative(moments[i], exact[i]))
                .fold(0.0, crate::verify::compare::largest);
            eprintln!(
                "{shape:?}: volume error {volume_error:.2e}, moment error {moment_error:.2e}"
            );
            assert!(
                volume_error < TOLERANCE && moment_error < TOLERANCE,
                "{shape:?}: volume error {volume_error:.2e}, moment error {moment_error:.2e}"
            );
        }
    }

    #[test]
    fn a_capsule_without_length_is_a_sphere() {
        let capsule = Shape::Capsule {
            radius: 0.7,
            length: 0.0,
        };
        let sphere = Shape::Sphere { radius: 0.7 };
        assert!(relative(capsule.volume(), sphere.volume()) < 1e-15);
        let (a, b) = (
            capsule.principal_moments(3.0),
            sphere.principal_moments(3.0),
        );
        assert!((a - b).abs().max_element() < 1e-15 * b.max_element());
    }

    #[test]
    fn a_long_thin_capsule_tends_to_its_cylinder() {
        // The caps weigh 4r/(3l) of the straight part, so the relative difference from the
        // cylinder of the same radius and length shrinks like r/l.
        for ratio in [1e-2, 1e-3, 1e-4] {
            let (radius, length) = (ratio, 1.0);
            let capsule = Shape::Capsule { radius, length }.principal_moments(1.0);
            let cylinder = Shape::Cylinder {
                radius,
                height: length,
            }
            .principal_moments(1.0);
            for i in 0..3 {
                assert!(
                    relative(capsule[i], cylinder[i]) < 4.0 * ratio,
                    "r/l = {ratio}, axis {i}: {capsule} vs {cylinder}"
                );
            }
        }
    }

    #[test]
    fn a_sphere_ellipsoid_is_a_sphere() {
        let e = Shape::Ellipsoid {
            semi_axes: DVec3::splat(0.3),
        };
        let s = Shape::Sphere { radius: 0.3 };
        assert!(relative(e.volume(), s.volume()) < 1e-15);
        let (a, b) = (e.principal_moments(2.0), s.principal_moments(2.0));
        assert!((a - b).abs().max_element() < 1e-15 * b.max_element());
    }

    #[test]
    fn bad_dimensions_are_named() {
        let cases = [
            (
                Shape::Cylinder {
                    radius: -1.0,
                    height: 1.0,
                },
                "s.cylinder.radius: must be a finite number > 0 (got -1)",
            ),
            (
                Shape::Capsule {
                    radius: 1.0,
                    length: -0.5,
                },
                "s.capsule.length: must be a finite number >= 0 (got -0.5)",
            ),
            (
                Shape::Ellipsoid {
                    semi_axes: DVec3::new(1.0, f64::NAN, 1.0),
                },
                "s.ellipsoid[1]: must be a finite number > 0 (got NaN)",
            ),
            (
                Shape::Box {
                    size: DVec3::new(1.0, 1.0, 0.0),
                },
                "s.box[2]: must be a finite number > 0 (got 0)",
            ),
        ];
        for (shape, expected) in cases {
            assert!(!shape.is_valid());
            assert_eq!(shape.check("s").unwrap_err().to_string(), expected);
        }
        assert!(
            Shape::Capsule {
                radius: 1.0,
                length: 0.0
            }
            .is_valid()
        );
    }
}
