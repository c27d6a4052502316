//! Lean reads: the states as structure of arrays (one array per quantity, one entry per
//! body), written into storage the caller owns, so a read allocates nothing that grows with
//! the crowd. See `Simulation::read_states`.

use crate::model::body::{BodyState, angular_velocity, model_pose, velocity};
use crate::model::error::{Error, Result};
use crate::model::mass::MassProperties;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The element type of a lean read: `f32` or `f64`.
///
/// Reads are exact when the type is at least the backend's precision (every backend but
/// `cpu-ref` and `gpu-f64` computes in f32); reading an f64 backend into `f32` rounds each
/// value to nearest.
pub trait Scalar:
    Copy + Default + Send + Sync + std::fmt::Debug + sealed::Sealed + 'static
{
    /// `value` in this type (rounded to nearest for `f32`).
    fn from_f64(value: f64) -> Self;
}

impl Scalar for f32 {
    fn from_f64(value: f64) -> Self {
        value as f32
    }
}

impl Scalar for f64 {
    fn from_f64(value: f64) -> Self {
        value
    }
}

/// Where a lean read writes: one caller-owned slice per quantity wanted, `None` to skip it.
/// Every slice given holds exactly one entry per body, in crowd order.
///
/// Positions and orientations are the pose of each body's model frame, the frame its scene
/// entry or arrays gave it in (for a shape or principal moments: the centre of mass and the
/// principal axes), with orientations as unit quaternions `w, x, y, z` (scalar first): the
/// same numbers as the `x, y, z, q*` columns of every file this crate writes. Velocities
/// are the centre of mass's, derived on the host from the momenta (`v = P / M`,
/// `omega = R Ibody^-1 R^T L`), so they cost nothing unless asked for.
///
/// A flat `&mut [f32]` of `3 * N` values (a numpy `(N, 3)` array, say) becomes the
/// `&mut [[f32; 3]]` asked for here with `bytemuck::cast_slice_mut`.
#[derive(Debug, Default)]
pub struct StatesMut<'a, T: Scalar> {
    /// Positions of the model frames' origins.
    pub position: Option<&'a mut [[T; 3]]>,
    /// Orientations of the model frames as `w, x, y, z`.
    pub orientation: Option<&'a mut [[T; 4]]>,
    /// Linear momenta `P`.
    pub linear_momentum: Option<&'a mut [[T; 3]]>,
    /// Angular momenta `L` about the centre of mass.
    pub angular_momentum: Option<&'a mut [[T; 3]]>,
    /// Linear velocities `v`.
    pub velocity: Option<&'a mut [[T; 3]]>,
    /// Angular velocities `omega` (world frame).
    pub angular_velocity: Option<&'a mut [[T; 3]]>,
}

impl<'a, T: Scalar> StatesMut<'a, T> {
    /// Positions and orientations only: what drawing a crowd needs.
    pub fn poses(position: &'a mut [[T; 3]], orientation: &'a mut [[T; 4]]) -> Self {
        Self {
            position: Some(position),
            orientation: Some(orientation),
            ..Self::default()
        }
    }

    /// An error naming the first slice whose length is not `body_count`.
    pub fn check_lengths(&self, body_count: usize) -> Result<()> {
        let lengths = [
            ("position", self.position.as_ref().map(|s| s.len())),
            ("orientation", self.orientation.as_ref().map(|s| s.len())),
            (
                "linear_momentum",
                self.linear_momentum.as_ref().map(|s| s.len()),
            ),
            (
                "angular_momentum",
                self.angular_momentum.as_ref().map(|s| s.len()),
            ),
            ("velocity", self.velocity.as_ref().map(|s| s.len())),
            (
                "angular_velocity",
                self.angular_velocity.as_ref().map(|s| s.len()),
            ),
        ];
        for (field, length) in lengths {
            if let Some(length) = length.filter(|&l| l != body_count) {
                return Err(Error::invalid(
                    field,
                    format!("needs one entry per body: {body_count} bodies, got {length}"),
                ));
            }
        }
        Ok(())
    }

    /// Writes body `i`'s quantities (lengths checked by `check_lengths`).
    pub fn put(&mut self, i: usize, mass: &MassProperties, state: &BodyState) {
        let v3 = |v: glam::DVec3| v.to_array().map(T::from_f64);
        if self.position.is_some() || self.orientation.is_some() {
            let pose = model_pose(mass, state);
            if let Some(out) = self.position.as_deref_mut() {
                out[i] = v3(pose.position);
            }
            if let Some(out) = self.orientation.as_deref_mut() {
                let q = pose.orientation;
                out[i] = [q.w, q.x, q.y, q.z].map(T::from_f64);
            }
        }
        if let Some(out) = self.linear_momentum.as_deref_mut() {
            out[i] = v3(state.linear_momentum);
        }
        if let Some(out) = self.angular_momentum.as_deref_mut() {
            out[i] = v3(state.angular_momentum);
        }
        if let Some(out) = self.velocity.as_deref_mut() {
            out[i] = v3(velocity(mass, state));
        }
        if let Some(out) = self.angular_velocity.as_deref_mut() {
            out[i] = v3(angular_velocity(mass, state));
        }
    }
}

/// Owned arrays for lean reads, allocated once and read into again and again with
/// `Simulation::read_states``(arrays.as_mut())`. An empty
/// array is a quantity not read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StateArrays<T: Scalar> {
    /// Positions of the model frames' origins.
    pub position: Vec<[T; 3]>,
    /// Orientations of the model frames as `w, x, y, z`.
    pub orientation: Vec<[T; 4]>,
    /// Linear momenta `P`.
    pub linear_momentum: Vec<[T; 3]>,
    /// Angular momenta `L` about the centre of mass.
    pub angular_momentum: Vec<[T; 3]>,
    /// Linear velocities `v` (empty unless made [`with_velocities`](Self::with_velocities)).
    pub velocity: Vec<[T; 3]>,
    /// Angular velocities `omega` (empty unless made `with_velocities`).
    pub angular_velocity: Vec<[T; 3]>,
}

impl<T: Scalar> StateArrays<T> {
    /// The state of `body_count` bodies: position, orientation and both momenta.
    pub fn state(body_count: usize) -> Self {
        Self {
            linear_momentum: vec![[T::default(); 3]; body_count],
            angular_momentum: vec![[T::default(); 3]; body_count],
            ..Self::poses(body_count)
        }
    }

    /// Positions and orientations of `body_count` bodies, for drawing.
    pub fn poses(body_count: usize) -> Self {
        Self {
            position: vec![[T::default(); 3]; body_count],
            orientation: vec![[T::default(); 4]; body_count],
            ..Self::default()
        }
    }

    /// The same arrays plus linear and angular velocities.
    pub fn with_velocities(self) -> Self {
        let body_count = self.position.len().max(self.orientation.len());
        Self {
            velocity: vec![[T::default(); 3]; body_count],
            angular_velocity: vec![[T::default(); 3]; body_count],
            ..self
        }
    }

    /// Every non-empty array, as the target of a read.
    pub fn as_mut(&mut self) -> StatesMut<'_, T> {
        fn wanted<U>(v: &mut [U]) -> Option<&mut [U]> {
            (!v.is_empty()).then_some(v)
        }
        StatesMut {
            position: wanted(&mut self.position),
            orientation: wanted(&mut self.orientation),
            linear_momentum: wanted(&mut self.linear_momentum),
            angular_momentum: wanted(&mut self.angular_momentum),
            velocity: wanted(&mut self.velocity),
            angular_velocity: wanted(&mut self.angular_velocity),
        }
    }
}
