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
    /// Inverse-square attraction to a fixed point with Plummer softening:
    /// `F = -M mu r / (|r|^2 + eps^2)^(3/2)`, `r = x - centre`, no torque. Its potential
    /// energy is `-M mu / sqrt(|r|^2 + eps^2)`.
    Attractor {
        /// World-frame centre of attraction.
        centre: DVec3,
        /// Gravitational parameter `mu` (m^3 / s^2): `G` times the attracting mass.
        strength: f64,
        /// Softening length `eps >= 0`; keeps the force finite at the centre.
        softening: f64,
    },
    /// A constant force and torque fixed in the body frame: `F = R f_body`, `tau = R tau_body`
    /// (a rocket motor and a reaction wheel turning with the body).
    Thrust {
        /// Body-frame force `f_body`, acting through the centre of mass.
        force: DVec3,
        /// Body-frame torque `tau_body`.
        torque: DVec3,
    },
    /// A world-frame force and torque scaled by a sinusoid:
    /// `s(t) = offset + amplitude sin(2 pi frequency t + phase)`, `F = s(t) force`,
    /// `tau = s(t) torque`.
    Sinusoidal {
        /// World-frame force at `s = 1`.
        force: DVec3,
        /// World-frame torque at `s = 1`.
        torque: DVec3,
        /// Constant part of `s`.
        offset: f64,
        /// Amplitude of the oscillating part of `s`.
        amplitude: f64,
        /// Frequency (Hz).
        frequency: f64,
        /// Phase (radians).
        phase: f64,
    },
    /// A world-frame force and torque scaled by a piecewise-linear profile:
    /// `F = s(t) force`, `tau = s(t) torque`, `s` interpolated linearly between the keyframes
    /// `(t_i, s_i)` of `Crowd::keyframes[table]` and held constant before the first and
    /// after the last.
    Keyframed {
        /// World-frame force at `s = 1`.
        force: DVec3,
        /// World-frame torque at `s = 1`.
        torque: DVec3,
        /// Index of the keyframe table in `Crowd::keyframes`.
        table: usize,
    },
    /// The crowd's [`CustomForce`](crate::CustomForce): a WGSL function on the GPU, its Rust
    /// closure on the CPU backends. It returns a world force and the torque about the centre
    /// of mass.
    Custom,
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
            ForceKind::Attractor { .. } => "attractor",
            ForceKind::Thrust { .. } => "thrust",
            ForceKind::Sinusoidal { .. } => "sinusoidal",
            ForceKind::Keyframed { .. } => "keyframed",
            ForceKind::Custom => "custom",
        }
    }
}
