//! Seeded random crowds, so nobody has to write a million bodies by hand.

use glam::{DQuat, DVec3};
use serde::Deserialize;

use crate::model::body::Body;
use crate::model::error::{Error, Result};
use crate::model::mass::MassProperties;
use crate::model::shape::{Shape, ShapeKind};

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
        use crate::model::validate::{check_non_negative, check_vector};
        check_vector(&format!("{field}.region[0]"), self.region[0])?;
        check_vector(&format!("{field}.region[1]"), self.region[1])?;
        check_vector(&format!("{field}.mass"), self.mass)?;
        check_vector(&format!("{field}.size"), self.size)?;
        check_non_negative(&format!("{field}.speed"), self.speed)?;
        check_non_negative(&format!("{field}.spin"), self.spin)?;
        for axis in 0..3 {
            let span = (self.region[1][axis] - self.region[0][axis]).abs();
            if span > crate::model::validate::MAX_MAGNITUDE {
                return Err(Error::invalid(
                    format!("{field}.region"),
                    format!(
                        "spans {span:e} along axis {axis}, out of range (at most {:e})",
                        crate::model::validate::MAX_MAGNITUDE
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
        // Backends index bodies with u32; a typo like 1e15 must fail here, not after a scan.
        if self.count > u32::MAX as usize {
            return Err(Error::invalid(
                format!("{field}.count"),
                format!(
                    "{} bodies do not fit: a crowd holds at most {} bodies",
                    self.count,
                    u32::MAX
                ),
            ));
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
        let stream = GeneratedBodies::new(self, 0)?;
        let mut bodies = Vec::new();
        // A typo like 1e12 bodies must be an error, not an allocation abort.
        bodies.try_reserve_exact(self.count).map_err(|_| {
            Error::invalid(
                "crowd.count",
                format!("{} bodies do not fit in this machine's memory", self.count),
            )
        })?;
        for chunk in 0..stream.chunk_count() {
            stream.generate_chunk(chunk, &mut bodies)?;
        }
        Ok(bodies)
    }

    /// Draws one body from `rng`; `index` (its place among the generated bodies) names it in
    /// errors. Every draw is made here, in this order: `skip_body` mirrors the count.
    fn draw_body(&self, rng: &mut SplitMix64, index: usize, lo: DVec3, hi: DVec3) -> Result<Body> {
        let mass = rng.range(self.mass[0], self.mass[1]);
        let kind = self.shapes[rng.below(self.shapes.len())];
        let shape = match kind {
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
        let out_of_range = |e: Error, knobs: &str| {
            Error::invalid(
                "crowd",
                format!(
                    "generated body {index} is out of range ({e}): narrow the recipe's {knobs}"
                ),
            )
        };
        let properties = MassProperties::from_shape(mass, shape, "body")
            .map_err(|e| out_of_range(e, "`mass` or `size`"))?;
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
        crate::assembly::crowd::check_state(&body.state, "body")
            .map_err(|e| out_of_range(e, "`speed`, `spin`, `mass` or `size`"))?;
        Ok(body)
    }

    /// Moves `rng` past one body, as `draw_body` would, drawing only the shape's pick.
    fn skip_body(&self, rng: &mut SplitMix64) {
        rng.skip(1); // mass
        let kind = self.shapes[rng.below(self.shapes.len())];
        let dimensions = match kind {
            ShapeKind::Sphere => 1,
            ShapeKind::Cylinder | ShapeKind::Capsule => 2,
            ShapeKind::Box | ShapeKind::Ellipsoid => 3,
        };
        // position 3, orientation 3, velocity 3, angular velocity 3
        rng.skip(dimensions + 12);
    }
}

/// Bodies generated per chunk of a [`GeneratedBodies`] stream: a multiple of every backend's
/// block, small enough that a chunk of [`Body`] values per thread is a few megabytes.
pub(crate) const GENERATED_CHUNK: usize = 1 << 14;

/// A recipe's bodies cut into chunks that can be generated independently, in parallel, and
/// come out exactly as [`CrowdSpec::generate`] would give them. One pass over the random
/// stream, which draws only each body's shape, finds where each chunk starts in it.
#[derive(Clone)]
pub(crate) struct GeneratedBodies<'a> {
    spec: &'a CrowdSpec,
    /// The random stream's state at the start of each chunk.
    starts: Vec<u64>,
    /// Bodies of the crowd before the first generated one, so chunks line up with the
    /// crowd's chunks of [`GENERATED_CHUNK`] bodies: the first chunk is shorter by this much.
    offset: usize,
    lo: DVec3,
    hi: DVec3,
}

impl<'a> GeneratedBodies<'a> {
    /// Validates `spec` and finds its chunks' starts; the generated bodies follow `offset`
    /// other bodies in the crowd.
    pub fn new(spec: &'a CrowdSpec, offset: usize) -> Result<Self> {
        spec.validate("crowd")?;
        let mut rng = SplitMix64::new(spec.seed);
        let lead = (GENERATED_CHUNK - offset % GENERATED_CHUNK) % GENERATED_CHUNK;
        let mut starts = Vec::new();
        for body in 0..spec.count {
            if body == 0 || body >= lead && (body - lead).is_multiple_of(GENERATED_CHUNK) {
                starts.push(rng.0);
            }
            spec.skip_body(&mut rng);
        }
        Ok(Self {
            spec,
            starts,
            offset,
            lo: DVec3::from(spec.region[0]).min(DVec3::from(spec.region[1])),
            hi: DVec3::from(spec.region[0]).max(DVec3::from(spec.region[1])),
        })
    }

    /// Number of chunks.
    pub fn chunk_count(&self) -> usize {
        self.starts.len()
    }

    /// The generated bodies' indices in chunk `chunk` (counted among the generated bodies).
    pub fn chunk_range(&self, chunk: usize) -> std::ops::Range<usize> {
        let lead = self.lead();
        let start = match chunk {
            0 => 0,
            c if lead == 0 => c * GENERATED_CHUNK,
            c => lead + (c - 1) * GENERATED_CHUNK,
        };
        let end = match chunk {
            0 if lead > 0 => lead,
            _ => start + GENERATED_CHUNK,
        };
        start.min(self.spec.count)..end.min(self.spec.count)
    }

    /// The chunk holding generated body `index`.
    pub fn chunk_of(&self, index: usize) -> usize {
        let lead = self.lead();
        match index.checked_sub(lead) {
            None => 0,
            Some(past) => usize::from(lead > 0) + past / GENERATED_CHUNK,
        }
    }

    /// Bodies in a first chunk shortened to line up with the crowd's chunks (0 if none is).
    fn lead(&self) -> usize {
        (GENERATED_CHUNK - self.offset % GENERATED_CHUNK) % GENERATED_CHUNK
    }

    /// Appends chunk `chunk`'s bodies to `bodies`.
    pub fn generate_chunk(&self, chunk: usize, bodies: &mut Vec<Body>) -> Result<()> {
        let mut rng = SplitMix64(self.starts[chunk]);
        for index in self.chunk_range(chunk) {
            bodies.push(self.spec.draw_body(&mut rng, index, self.lo, self.hi)?);
        }
        Ok(())
    }
}

/// SplitMix64 (Steele, Lea & Flood 2014): tiny, fast, and its stream is fixed forever, so a
/// seed names the same crowd in every version of the crate.
struct SplitMix64(u64);

impl SplitMix64 {
    fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// Moves past `draws` draws without computing them: the state is a counter.
    fn skip(&mut self, draws: u64) {
        self.0 = self
            .0
            .wrapping_add(draws.wrapping_mul(0x9E37_79B9_7F4A_7C15));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every chunking, whatever the bodies before it, gives the bodies one pass over the
    /// random stream gives, for every shape kind (each draws a different count).
    #[test]
    fn chunks_give_the_bodies_of_one_pass() {
        let spec = CrowdSpec {
            count: 2 * GENERATED_CHUNK + 77,
            shapes: ShapeKind::EVERY.to_vec(),
            ..CrowdSpec::new(0, 9)
        };
        let mut rng = SplitMix64::new(spec.seed);
        let lo = DVec3::from(spec.region[0]).min(DVec3::from(spec.region[1]));
        let hi = DVec3::from(spec.region[0]).max(DVec3::from(spec.region[1]));
        let one_pass: Vec<Body> = (0..spec.count)
            .map(|i| spec.draw_body(&mut rng, i, lo, hi).unwrap())
            .collect();
        for offset in [
            0,
            5,
            GENERATED_CHUNK - 1,
            GENERATED_CHUNK,
            3 * GENERATED_CHUNK + 8,
        ] {
            let stream = GeneratedBodies::new(&spec, offset).unwrap();
            let mut bodies = Vec::new();
            for chunk in 0..stream.chunk_count() {
                let range = stream.chunk_range(chunk);
                assert_eq!(range.start, bodies.len(), "offset {offset}, chunk {chunk}");
                // Chunks end where the crowd's chunks do.
                assert!(
                    range.end == spec.count || (offset + range.end).is_multiple_of(GENERATED_CHUNK),
                    "offset {offset}, chunk {chunk}: {range:?}"
                );
                assert_eq!(stream.chunk_of(range.start), chunk);
                assert_eq!(stream.chunk_of(range.end - 1), chunk);
                stream.generate_chunk(chunk, &mut bodies).unwrap();
            }
            assert_eq!(bodies, one_pass, "offset {offset}");
        }
        assert_eq!(spec.generate().unwrap(), one_pass);
    }
}
