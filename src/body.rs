//! One rigid body: its constants and its momentum-form state (Baraff 2.11).

use glam::{DMat3, DQuat, DVec3};

use crate::mass::MassProperties;

/// Momentum-form state `Y = (x, q, P, L)` of one body (Baraff 2-40), world frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyState {
    /// Centre-of-mass position `x`.
    pub position: DVec3,
    /// Unit quaternion `q` rotating body space to world space.
    pub orientation: DQuat,
    /// Linear momentum `P`.
    pub linear_momentum: DVec3,
    /// Angular momentum `L` about the centre of mass.
    pub angular_momentum: DVec3,
}

impl Default for BodyState {
    /// At rest at the origin with identity orientation.
    fn default() -> Self {
        Self {
            position: DVec3::ZERO,
            orientation: DQuat::IDENTITY,
            linear_momentum: DVec3::ZERO,
            angular_momentum: DVec3::ZERO,
        }
    }
}

/// A rigid body: constant mass properties plus the current state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Body {
    /// Mass and inertia (constants).
    pub mass: MassProperties,
    /// Current state.
    pub state: BodyState,
}

impl Body {
    /// A body at rest at the origin with identity orientation.
    pub fn at_rest(mass: MassProperties) -> Self {
        Self {
            mass,
            state: BodyState::default(),
        }
    }

    /// A body from world-frame kinematics: `P = M v` and `L = I(t) omega` follow from them.
    ///
    /// `orientation` is normalized; it must not be zero.
    pub fn from_kinematics(
        mass: MassProperties,
        position: DVec3,
        orientation: DQuat,
        velocity: DVec3,
        angular_velocity: DVec3,
    ) -> Self {
        let orientation = orientation.normalize();
        let r = DMat3::from_quat(orientation);
        let inertia_world = r * mass.inertia_body() * r.transpose();
        Self {
            mass,
            state: BodyState {
                position,
                orientation,
                linear_momentum: velocity * mass.mass(),
                angular_momentum: inertia_world * angular_velocity,
            },
        }
    }

    /// Rotation matrix `R = R(normalize(q))`.
    pub fn rotation(&self) -> DMat3 {
        DMat3::from_quat(self.state.orientation.normalize())
    }

    /// Linear velocity `v = P / M`.
    pub fn velocity(&self) -> DVec3 {
        self.state.linear_momentum * self.mass.inv_mass()
    }

    /// Angular velocity `omega = R Ibody^-1 R^T L`.
    pub fn angular_velocity(&self) -> DVec3 {
        let r = self.rotation();
        r * (self.mass.inv_inertia_body() * (r.transpose() * self.state.angular_momentum))
    }

    /// Kinetic energy `1/2 M |v|^2 + 1/2 omega . L`.
    pub fn kinetic_energy(&self) -> f64 {
        let v = self.velocity();
        0.5 * self.mass.mass() * v.length_squared()
            + 0.5 * self.angular_velocity().dot(self.state.angular_momentum)
    }
}
