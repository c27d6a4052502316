//! Force sources and the bodies they act on.

use glam::DVec3;

/// What a force source does to a body (Baraff 2.8: forces and torques about the centre of mass).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum ForceKind {
    /// Uniform acceleration field: `F = M g`, no torque (Baraff 5.2).
    Gravity {
        /// Acceleration `g`.
        acceleration: DVec3,
    },
    /// Viscous drag: `F = -linear v`, `tau = -angular omega`.
    LinearDrag {
        /// Linear coefficient (N s / m).
        linear: f64,
        /// Angular coefficient (N m s).
        angular: f64,
    },
    /// A world-frame force applied at a body-space point: torque `(R p) x F`.
    PointForce {
        /// World-frame force.
        force: DVec3,
        /// Body-space point of application (relative to the centre of mass).
        point: DVec3,
    },
    /// A spring-damper from a fixed world anchor to a body-space attach point:
    /// `F = -stiffness (x + R p - anchor) - damping (v + omega x R p)`, applied at `R p`.
    Spring {
        /// World-frame anchor.
        anchor: DVec3,
        /// Body-space attach point.
        attach: DVec3,
        /// Stiffness (N/m).
        stiffness: f64,
        /// Damping on the attach point's velocity (N s / m).
        damping: f64,
    },
}

/// A force source and the body it targets (`None`: every body).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Force {
    /// What the force does.
    pub kind: ForceKind,
    /// Index of the one body it acts on, or `None` for every body.
    pub body: Option<usize>,
}

impl Force {
    /// A force acting on every body.
    pub fn on_all(kind: ForceKind) -> Self {
        Self { kind, body: None }
    }

    /// A force acting on body `index` only.
    pub fn on_body(index: usize, kind: ForceKind) -> Self {
        Self {
            kind,
            body: Some(index),
        }
    }

    /// The scene-file name of the force type.
    pub fn type_name(&self) -> &'static str {
        match self.kind {
            ForceKind::Gravity { .. } => "gravity",
            ForceKind::LinearDrag { .. } => "linear_drag",
            ForceKind::PointForce { .. } => "point_force",
            ForceKind::Spring { .. } => "spring",
        }
    }
}
