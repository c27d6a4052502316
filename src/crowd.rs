//! A crowd: the bodies, the forces acting on them, the integrator and the time step.

use crate::body::Body;
use crate::error::{Error, Result};
use crate::force::{Force, ForceKind};
use crate::integrator::Integrator;
use crate::plane::Plane;

/// Largest magnitude any input number may have: the GPU backend works in f32.
pub const MAX_MAGNITUDE: f64 = f32::MAX as f64;

/// Everything needed to integrate a crowd of independent rigid bodies.
#[derive(Clone, Debug, PartialEq)]
pub struct Crowd {
    /// The bodies, in index order.
    pub bodies: Vec<Body>,
    /// Force sources; each acts on one body or on all of them.
    pub forces: Vec<Force>,
    /// Time-integration scheme.
    pub integrator: Integrator,
    /// Time step `h` (seconds).
    pub dt: f64,
    /// Static planes every body bounces off; each body then needs a shape (for its contact points).
    pub planes: Vec<Plane>,
}

impl Crowd {
    /// A crowd with RK4 and the given step, no forces.
    pub fn new(bodies: Vec<Body>, dt: f64) -> Self {
        Self {
            bodies,
            forces: Vec::new(),
            integrator: Integrator::Rk4,
            dt,
            planes: Vec::new(),
        }
    }

    /// Adds a static plane (builder style).
    pub fn with_plane(mut self, plane: Plane) -> Self {
        self.planes.push(plane);
        self
    }

    /// Adds a force source (builder style).
    pub fn with_force(mut self, force: Force) -> Self {
        self.forces.push(force);
        self
    }

    /// Sets the integrator (builder style).
    pub fn with_integrator(mut self, integrator: Integrator) -> Self {
        self.integrator = integrator;
        self
    }

    /// Checks what the types alone cannot: `dt`, force parameters and force targets.
    pub fn validate(&self) -> Result<()> {
        check_number("dt", self.dt)?;
        if self.dt <= 0.0 {
            return Err(Error::invalid(
                "dt",
                format!("must be > 0 (got {})", self.dt),
            ));
        }
        for (i, force) in self.forces.iter().enumerate() {
            let field = format!("forces[{i}]");
            if let Some(body) = force.body {
                if body >= self.bodies.len() {
                    return Err(Error::invalid(
                        format!("{field}.body"),
                        format!(
                            "names body {body}, but the scene has {} bodies",
                            self.bodies.len()
                        ),
                    ));
                }
            }
            validate_force_kind(&force.kind, &field)?;
        }
        for (i, plane) in self.planes.iter().enumerate() {
            plane.validate(&format!("planes[{i}]"))?;
        }
        if !self.planes.is_empty() {
            if let Some(i) = self.bodies.iter().position(|b| b.mass.shape().is_none()) {
                return Err(Error::invalid(
                    format!("bodies[{i}].shape"),
                    "has no contact geometry: `planes` collide with box, sphere, capsule, cylinder and ellipsoid bodies, not meshes or bodies given by their inertia",
                ));
            }
        }
        for (i, body) in self.bodies.iter().enumerate() {
            let s = &body.state;
            let values = [
                s.position.to_array(),
                s.linear_momentum.to_array(),
                s.angular_momentum.to_array(),
            ];
            // Fast path for crowds of millions: name fields only when something is wrong.
            if values.iter().flatten().all(|&v| in_range(v))
                && s.orientation.to_array().iter().all(|&v| in_range(v))
            {
                continue;
            }
            let field = format!("bodies[{i}]");
            check_vector(&format!("{field}.position"), s.position.to_array())?;
            check_vector(&format!("{field}.orientation"), s.orientation.to_array())?;
            check_vector(
                &format!("{field}.linear_momentum"),
                s.linear_momentum.to_array(),
            )?;
            check_vector(
                &format!("{field}.angular_momentum"),
                s.angular_momentum.to_array(),
            )?;
        }
        Ok(())
    }
}

fn validate_force_kind(kind: &ForceKind, field: &str) -> Result<()> {
    match *kind {
        ForceKind::Gravity { acceleration } => {
            check_vector(&format!("{field}.acceleration"), acceleration.to_array())
        }
        ForceKind::LinearDrag { linear, angular } => {
            check_non_negative(&format!("{field}.linear"), linear)?;
            check_non_negative(&format!("{field}.angular"), angular)
        }
        ForceKind::PointForce { force, point } => {
            check_vector(&format!("{field}.force"), force.to_array())?;
            check_vector(&format!("{field}.point"), point.to_array())
        }
        ForceKind::Spring {
            anchor,
            attach,
            stiffness,
            damping,
        } => {
            check_vector(&format!("{field}.anchor"), anchor.to_array())?;
            check_vector(&format!("{field}.attach"), attach.to_array())?;
            check_non_negative(&format!("{field}.stiffness"), stiffness)?;
            check_non_negative(&format!("{field}.damping"), damping)
        }
    }
}

/// A number must be finite and within the f32 range the GPU uses.
pub(crate) fn check_number(field: &str, value: f64) -> Result<()> {
    if !value.is_finite() {
        return Err(Error::invalid(
            field,
            format!("must be finite (got {value})"),
        ));
    }
    if value.abs() > MAX_MAGNITUDE {
        return Err(Error::invalid(
            field,
            format!("{value} is out of range (magnitude must be <= {MAX_MAGNITUDE:e})"),
        ));
    }
    Ok(())
}

/// Finite and within the f32 range.
fn in_range(value: f64) -> bool {
    value.is_finite() && value.abs() <= MAX_MAGNITUDE
}

pub(crate) fn check_vector<const N: usize>(field: &str, values: [f64; N]) -> Result<()> {
    for (i, v) in values.into_iter().enumerate() {
        if !in_range(v) {
            check_number(&format!("{field}[{i}]"), v)?;
        }
    }
    Ok(())
}

pub(crate) fn check_non_negative(field: &str, value: f64) -> Result<()> {
    check_number(field, value)?;
    if value < 0.0 {
        return Err(Error::invalid(field, format!("must be >= 0 (got {value})")));
    }
    Ok(())
}
