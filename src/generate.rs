//! Seeded random crowds, so nobody has to write a million bodies by hand.

use glam::{DQuat, DVec3};
use serde::Deserialize;

use crate::body::Body;
use crate::error::{Error, Result};
use crate::mass::MassProperties;
use crate::shape::{Shape, ShapeKind};

/// Recipe for a random crowd; the same recipe and seed always give the same bodies.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CrowdSpec {
    /// Number of bodies.
    pub count: usize,
    /// Seed of the random stream.
    pub seed: u64,
    /// Opposite corners of the box the centres are drawn from, uniformly.
    pub region: [[f64; 3]; 2],
    /// Mass range (kg), uniform.
    pub mass: [f64; 2],
    /// Size range (m), uniform per dimension: box edge lengths, sphere, cylinder and capsule
    /// diameters, cylinder heights, capsule straight lengths, ellipsoid full axes.
    pub size: [f64; 2],
    /// Shapes to pick from, uniformly.
    pub shapes: Vec<ShapeKind>,
    /// Largest initial speed (m/s); directions are uniform on the sphere.
    pub speed: f64,
    /// Largest initial angular speed (rad/s); axes are uniform on the sphere.
    pub spin: f64,
}

impl Default for CrowdSpec {
    /// 100,000 boxes and spheres tumbling in a 100 m cube.
    fn default() -> Self {
        Self {
            count: 100_000,
            seed: 1,
            region: [[-50.0, -50.0, 0.0], [50.0, 50.0, 100.0]],
            mass: [0.5, 5.0],
            size: [0.2, 2.0],
            shapes: vec![ShapeKind::Box, ShapeKind::Sphere],
            speed: 5.0,
            spin: 10.0,
        }
    }
}

impl CrowdSpec {
    /// A default recipe with `count` bodies and the given seed.
    pub fn new(count: usize, seed: u64) -> Self {
        Self {
            count,
            seed,
            ..Self::default()
        }
    }

    /// Checks the recipe; `field` names it in errors (e.g. `crowd`).
    pub fn validate(&self, field: &str) -> Result<()> {
        use crate::validate::{check_non_negative, check_vector};
        check_vector(&format!("{field}.region[0]"), self.region[0])?;
        check_vector(&format!("{field}.region[1]"), self.region[1])?;
        check_vector(&format!("{field}.mass"), self.mass)?;
        check_vector(&format!("{field}.size"), self.size)?;
        check_non_negative(&format!("{field}.speed"), self.speed)?;
        check_non_negative(&format!("{field}.spin"), self.spin)?;
        for axis in 0..3 {
            let span = (self.region[1][axis] - self.region[0][axis]).abs();
            if span > crate::validate::MAX_MAGNITUDE {
                return Err(Error::invalid(
                    format!("{field}.region"),
                    format!(
                        "spans {span:e} along axis {axis}, out of range (at most {:e})",
                        crate::validate::MAX_MAGNITUDE
                    ),
                ));
            }
        }
        for (name, [lo, hi]) in [("mass", self.mass), ("size", self.size)] {
            if lo <= 0.0 || hi < lo {
                return Err(Error::invalid(
                    format!("{field}.{name}"),
                    format!("must be a range [low, high] with 0 < low <= high (got [{lo}, {hi}])"),
                ));
            }
        }
        if self.shapes.is_empty() {
            return Err(Error::invalid(
                format!("{field}.shapes"),
                "must name at least one shape",
            ));
        }
        Ok(())
    }

    /// Generates the bodies.
    pub fn generate(&self) -> Result<Vec<Body>> {
        self.validate("crowd")?;
        let mut rng = SplitMix64::new(self.seed);
        let lo = DVec3::from(self.region[0]).min(DVec3::from(self.region[1]));
        let hi = DVec3::from(self.region[0]).max(DVec3::from(self.region[1]));
        let mut bodies = Vec::new();
        // A typo like 1e12 bodies must be an error, not an allocation abort.
        bodies.try_reserve_exact(self.count).map_err(|_| {
            Error::invalid(
                "crowd.count",
                format!("{} bodies do not fit in this machine's memory", self.count),
            )
        })?;
        for _ in 0..self.count {
            let mass = rng.range(self.mass[0], self.mass[1]);
            let shape = match self.shapes[rng.below(self.shapes.len())] {
                ShapeKind::Box => Shape::Box {
                    size: DVec3::new(
                        rng.range(self.size[0], self.size[1]),
                        rng.range(self.size[0], self.size[1]),
                        rng.range(self.size[0], self.size[1]),
                    ),
                },
                ShapeKind::Sphere => Shape::Sphere {
                    radius: 0.5 * rng.range(self.size[0], self.size[1]),
                },
                // NOTE: new kinds draw only in their own arms, so the bodies a seed gives
                // for boxes and spheres are unchanged.
                ShapeKind::Cylinder => Shape::Cylinder {
                    radius: 0.5 * rng.range(self.size[0], self.size[1]),
                    height: rng.range(self.size[0], self.size[1]),
                },
                ShapeKind::Capsule => Shape::Capsule {
                    radius: 0.5 * rng.range(self.size[0], self.size[1]),
                    length: rng.range(self.size[0], self.size[1]),
                },
                ShapeKind::Ellipsoid => Shape::Ellipsoid {
                    semi_axes: 0.5
                        * DVec3::new(
                            rng.range(self.size[0], self.size[1]),
                            rng.range(self.size[0], self.size[1]),
                            rng.range(self.size[0], self.size[1]),
                        ),
                },
            };
            let out_of_range = |e: Error| {
                Error::invalid(
                    "crowd",
                    format!(
                        "generated body {} is out of range ({e}): narrow the recipe's `mass` or `size`",
                        bodies.len()
                    ),
                )
            };
            let properties =
                MassProperties::from_shape(mass, shape, "body").map_err(out_of_range)?;
            let position = lo + (hi - lo) * DVec3::new(rng.unit(), rng.unit(), rng.unit());
            let orientation = rng.orientation();
            let velocity = rng.direction() * self.speed * rng.unit();
            let angular_velocity = rng.direction() * self.spin * rng.unit();
            let body = Body::from_kinematics(
                properties,
                position,
                orientation,
                velocity,
                angular_velocity,
            );
            // Momenta grow with mass and size: a fast, heavy, large body can leave the range.
            crate::crowd::check_state(&body.state, "body").map_err(|e| {
                Error::invalid(
                    "crowd",
                    format!(
                        "generated body {} is out of range ({e}): narrow the recipe's `speed`, `spin`, `mass` or `size`",
                        bodies.len()
                    ),
                )
            })?;
            bodies.push(body);
        }
        Ok(bodies)
    }
}

/// SplitMix64 (Steele, Lea & Flood 2014): tiny, fast, and its stream is fixed forever, so a
/// seed names the same crowd in every version of the crate.
struct SplitMix64(u64);

impl SplitMix64 {
    fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 random bits.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    fn below(&mut self, n: usize) -> usize {
        ((self.unit() * n as f64) as usize).min(n - 1)
    }

    /// Uniform on the unit sphere (Marsaglia's z-and-angle method).
    fn direction(&mut self) -> DVec3 {
        let z = self.range(-1.0, 1.0);
        let phi = self.range(0.0, std::f64::consts::TAU);
        let r = (1.0 - z * z).sqrt();
        DVec3::new(r * phi.cos(), r * phi.sin(), z)
    }

    /// Uniform random rotation (Shoemake, Graphics Gems III).
    fn orientation(&mut self) -> DQuat {
        let (u1, u2, u3) = (self.unit(), self.unit(), self.unit());
        let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
        let (t2, t3) = (std::f64::consts::TAU * u2, std::f64::consts::TAU * u3);
        DQuat::from_xyzw(a * t2.sin(), a * t2.cos(), b * t3.sin(), b * t3.cos()).normalize()
    }
}
