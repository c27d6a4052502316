//! Mass and body-space inertia of one body, validated for physical sense.

use glam::{DMat3, DQuat, DVec3};

use crate::model::eigen::symmetric_eigen;
use crate::model::error::{Error, Result};
use crate::model::mesh::{MeshIntegrals, TriangleMesh};
use crate::model::shape::Shape;
use crate::model::validate::MAX_MAGNITUDE;

/// Relative slack allowed when checking symmetry and the triangle inequality, so that
/// tensors computed in floating point (a thin plate has `A + B = C` exactly) are accepted.
const RELATIVE_SLACK: f64 = 1e-9;

/// Smallest mass or principal moment accepted: the least normal f32, so that the f32
/// backends hold it and its inverse (at most 1 / 1.2e-38 = 8.5e37) as finite numbers.
const MIN_MAGNITUDE: f64 = f32::MIN_POSITIVE as f64;

/// `{field}.mass` must be finite, > 0, and within what the f32 backends hold.
fn check_mass(mass: f64, field: &str) -> Result<()> {
    if !mass.is_finite() || mass <= 0.0 {
        return Err(Error::invalid(
            format!("{field}.mass"),
            format!("must be a finite number > 0 (got {mass})"),
        ));
    }
    if !(MIN_MAGNITUDE..=MAX_MAGNITUDE).contains(&mass) {
        return Err(Error::invalid(
            format!("{field}.mass"),
            format!(
                "{mass:e} is out of range (must be between {MIN_MAGNITUDE:e} and {MAX_MAGNITUDE:e}, what the f32 backends hold)"
            ),
        ));
    }
    Ok(())
}

/// Principal `moments` (of a valid tensor) within what the f32 backends hold; `field` names
/// what the user wrote that gave them (`bodies[2].inertia`, `bodies[2].shape`), and is only
/// called on failure (a generated crowd checks millions of bodies).
fn check_moments(moments: DVec3, field: impl FnOnce() -> String) -> Result<()> {
    let in_range = |m: f64| (MIN_MAGNITUDE..=MAX_MAGNITUDE).contains(&m);
    if moments.to_array().into_iter().all(in_range) {
        return Ok(());
    }
    Err(Error::invalid(
        field(),
        format!(
            "gives principal moments of inertia {:e}, {:e}, {:e}, out of range (each must be between {MIN_MAGNITUDE:e} and {MAX_MAGNITUDE:e}, what the f32 backends hold)",
            moments.x, moments.y, moments.z
        ),
    ))
}

/// The mass of `volume` at `density`, named `{field}.density` when it is out of range.
pub(crate) fn mass_from_density(density: f64, volume: f64, field: &str) -> Result<f64> {
    check_density(density, field)?;
    let mass = density * volume;
    if !(MIN_MAGNITUDE..=MAX_MAGNITUDE).contains(&mass) {
        return Err(Error::invalid(
            format!("{field}.density"),
            format!(
                "gives a mass of {mass:e} for a volume of {volume:e}, out of range (must be between {MIN_MAGNITUDE:e} and {MAX_MAGNITUDE:e}, what the f32 backends hold)"
            ),
        ));
    }
    Ok(mass)
}

/// Mass and body-space inertia tensor of a rigid body, with their inverses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MassProperties {
    mass: f64,
    inertia_body: DMat3,
    inv_inertia_body: DMat3,
    /// The solid the properties were computed from, if any: contacts need its geometry.
    shape: Option<Shape>,
    /// Where the body frame sits in the user's model frame (identity unless from a mesh).
    model_frame: ModelFrame,
}

/// The pose of the body frame (origin at the centre of mass, axes along the principal axes)
/// inside the model frame the user described the body in, e.g. an OBJ file's coordinates.
///
/// A point with body coordinates `b` has model coordinates `offset + rotation * b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelFrame {
    /// The centre of mass, in model coordinates.
    pub offset: DVec3,
    /// Rotation from body axes to model axes: its columns are the principal axes in model
    /// coordinates. A proper rotation (det +1).
    pub rotation: DQuat,
}

impl ModelFrame {
    /// The model frame is the body frame.
    pub const IDENTITY: Self = Self {
        offset: DVec3::ZERO,
        rotation: DQuat::IDENTITY,
    };

    /// Model coordinates of the body-frame point `body_point`.
    pub fn to_model(&self, body_point: DVec3) -> DVec3 {
        self.offset + self.rotation * body_point
    }

    /// Body coordinates of the model-frame point `model_point`.
    pub fn to_body(&self, model_point: DVec3) -> DVec3 {
        self.rotation.inverse() * (model_point - self.offset)
    }
}

impl Default for ModelFrame {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl MassProperties {
    /// Builds mass properties from a mass and a full symmetric body-space inertia tensor.
    ///
    /// `field` names where the values came from (e.g. `bodies[3]`) for error messages.
    /// Rejects a non-positive or non-finite mass, and an inertia that is not symmetric, not
    /// positive definite, or whose principal moments break `A + B >= C`.
    pub fn new(mass: f64, inertia_body: DMat3, field: &str) -> Result<Self> {
        check_mass(mass, field)?;
        let inertia_field = || format!("{field}.inertia");
        let entries = inertia_body.to_cols_array();
        if entries.iter().any(|x| !x.is_finite()) {
            return Err(Error::invalid(inertia_field(), "must be finite"));
        }
        let scale = entries.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let m = inertia_body;
        let asymmetry = (m.x_axis.y - m.y_axis.x)
            .abs()
            .max((m.x_axis.z - m.z_axis.x).abs())
            .max((m.y_axis.z - m.z_axis.y).abs());
        if asymmetry > RELATIVE_SLACK * scale {
            return Err(Error::invalid(
                inertia_field(),
                format!("must be symmetric (off-diagonal entries differ by {asymmetry})"),
            ));
        }
        let moments = symmetric_eigen(m).values;
        if moments.min_element() <= RELATIVE_SLACK * scale {
            return Err(Error::invalid(
                inertia_field(),
                format!(
                    "must be positive definite (principal moments {}, {}, {})",
                    moments.x, moments.y, moments.z
                ),
            ));
        }
        // Sorted ascending, so the only inequality that can fail is A + B >= C with C largest.
        if moments.x + moments.y < moments.z * (1.0 - RELATIVE_SLACK) {
            return Err(Error::invalid(
                inertia_field(),
                format!(
                    "is physically impossible: principal moments {}, {}, {} break A + B >= C",
                    moments.x, moments.y, moments.z
                ),
            ));
        }
        check_moments(moments, inertia_field)?;
        let inv_inertia_body = inertia_body.inverse();
        if !inv_inertia_body.is_finite() {
            return Err(Error::invalid(
                inertia_field(),
                "cannot be inverted in floating point (its entries are too large or too small)",
            ));
        }
        Ok(Self {
            mass,
            inertia_body,
            inv_inertia_body,
            shape: None,
            model_frame: ModelFrame::IDENTITY,
        })
    }

    /// Mass properties from principal moments along the body axes.
    pub fn from_principal(mass: f64, moments: DVec3, field: &str) -> Result<Self> {
        Self::new(mass, DMat3::from_diagonal(moments), field)
    }

    /// Mass properties of a uniform solid `shape` of total `mass`.
    ///
    /// Errors name `{field}.shape.<parameter>` for a bad dimension.
    pub fn from_shape(mass: f64, shape: Shape, field: &str) -> Result<Self> {
        // Named only on failure: a generated crowd checks millions of shapes.
        if shape.check("").is_err() {
            shape.check(&format!("{field}.shape"))?;
        }
        check_mass(mass, field)?;
        check_moments(shape.principal_moments(mass), || format!("{field}.shape"))?;
        Self::new(mass, shape.inertia(mass), field)?;
        Ok(Self::rebuild_from_shape(mass, shape))
    }

    /// What [`Self::from_shape`] gives for a mass and shape it has accepted, without checking
    /// them again: how a crowd's compact store recovers a body's properties bit for bit.
    pub(crate) fn rebuild_from_shape(mass: f64, shape: Shape) -> Self {
        let inertia_body = shape.inertia(mass);
        Self {
            mass,
            inertia_body,
            inv_inertia_body: inertia_body.inverse(),
            shape: Some(shape),
            model_frame: ModelFrame::IDENTITY,
        }
    }

    /// Mass properties of a uniform solid `shape` of the given `density` (mass per volume).
    pub fn from_shape_density(density: f64, shape: Shape, field: &str) -> Result<Self> {
        shape.check(&format!("{field}.shape"))?;
        Self::from_shape(
            mass_from_density(density, shape.volume(), field)?,
            shape,
            field,
        )
    }

    /// Mass properties of the uniform solid a closed triangle mesh bounds, with total `mass`.
    ///
    /// The body frame is the mesh's centre of mass and principal axes; [`Self::model_frame`]
    /// says where that lies in the mesh's coordinates. Mesh errors are reported under
    /// `{field}.shape.mesh`.
    pub fn from_mesh(mass: f64, mesh: &TriangleMesh, field: &str) -> Result<Self> {
        let integrals = mesh.integrals(&format!("{field}.shape.mesh"))?;
        Self::from_mesh_integrals(mass, &integrals, field)
    }

    /// Like [`Self::from_mesh`], with the mass from a `density` (mass per volume).
    pub fn from_mesh_density(density: f64, mesh: &TriangleMesh, field: &str) -> Result<Self> {
        let integrals = mesh.integrals(&format!("{field}.shape.mesh"))?;
        let mass = mass_from_density(density, integrals.volume, field)?;
        Self::from_mesh_integrals(mass, &integrals, field)
    }

    /// Mass properties from already computed mesh integrals (so that many bodies can share
    /// one mesh without re-reading it), with total `mass`.
    pub fn from_mesh_integrals(mass: f64, integrals: &MeshIntegrals, field: &str) -> Result<Self> {
        let (moments_per_density, rotation) = integrals.principal_axes();
        let density = mass / integrals.volume;
        check_mass(mass, field)?;
        check_moments(moments_per_density * density, || {
            format!("{field}.shape.mesh")
        })?;
        let properties = Self::from_principal(mass, moments_per_density * density, field)?;
        Ok(Self {
            model_frame: ModelFrame {
                offset: integrals.centroid,
                rotation,
            },
            ..properties
        })
    }

    /// The same mass and inertia with the given geometry: how a checkpoint restores
    /// properties first rebuilt (and revalidated) by [`MassProperties::new`].
    pub fn with_geometry(self, shape: Option<Shape>, model_frame: ModelFrame) -> Self {
        Self {
            shape,
            model_frame,
            ..self
        }
    }

    /// The pose of the body frame in the model frame; the identity except for meshes.
    pub fn model_frame(&self) -> ModelFrame {
        self.model_frame
    }

    /// The solid these properties belong to; `None` when the inertia was given directly.
    pub fn shape(&self) -> Option<Shape> {
        self.shape
    }

    /// Total mass `M`.
    pub fn mass(&self) -> f64 {
        self.mass
    }

    /// `1 / M`.
    pub fn inv_mass(&self) -> f64 {
        1.0 / self.mass
    }

    /// Body-space inertia tensor `Ibody`.
    pub fn inertia_body(&self) -> DMat3 {
        self.inertia_body
    }

    /// `Ibody^-1`.
    pub fn inv_inertia_body(&self) -> DMat3 {
        self.inv_inertia_body
    }

    /// `Ibody^-1` as the six entries every backend integrates with: `[xx, yy, zz, xy, xz,
    /// yz]`, the off-diagonal ones from the upper triangle (an inverse computed in floating
    /// point need not be exactly symmetric).
    pub fn inv_inertia_entries(&self) -> [f64; 6] {
        let m = self.inv_inertia_body;
        [
            m.x_axis.x, m.y_axis.y, m.z_axis.z, m.y_axis.x, m.z_axis.x, m.z_axis.y,
        ]
    }
}

/// `{field}.density` must be a finite number > 0.
pub(crate) fn check_density(density: f64, field: &str) -> Result<()> {
    if density.is_finite() && density > 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(
            format!("{field}.density"),
            format!("must be a finite number > 0 (got {density})"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_a_thin_plate_and_rejects_impossible_moments() {
        assert!(MassProperties::from_principal(1.0, DVec3::new(1.0, 2.0, 3.0), "b").is_ok());
        let err = MassProperties::from_principal(1.0, DVec3::new(1.0, 1.0, 3.0), "b")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("b.inertia: is physically impossible"),
            "{err}"
        );
    }
}
