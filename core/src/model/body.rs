//! One rigid body: its constants and its momentum-form state (Baraff 2.11).

use glam::{DMat3, DQuat, DVec3};

use crate::model::mass::MassProperties;

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

impl BodyState {
    /// Whether every component is finite (no NaN, no infinity).
    pub fn is_finite(&self) -> bool {
        self.position.is_finite()
            && self.orientation.is_finite()
            && self.linear_momentum.is_finite()
            && self.angular_momentum.is_finite()
    }
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

/// Where the user's model frame is in the world: the pose a mesh body is reported in.
///
/// A point with model coordinates `p` is at `position + orientation * p` in the world.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelPose {
    /// World position of the model frame's origin.
    pub position: DVec3,
    /// Unit quaternion rotating model axes to world axes.
    pub orientation: DQuat,
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

    /// A body placed by the pose of its model frame (see [`MassProperties::model_frame`]);
    /// for shapes given in closed form that is the same as [`Body::from_kinematics`].
    ///
    /// `velocity` is the velocity of the centre of mass (not of the model origin, which moves
    /// at `velocity + angular_velocity x (model_position - centre of mass)`);
    /// `angular_velocity` is in world axes. `model_orientation` is normalized; it must not be
    /// zero.
    pub fn from_model_kinematics(
        mass: MassProperties,
        model_position: DVec3,
        model_orientation: DQuat,
        velocity: DVec3,
        angular_velocity: DVec3,
    ) -> Self {
        let frame = mass.model_frame();
        let model_orientation = model_orientation.normalize();
        // Body point b is model point offset + Rm b, so the world sees it at
        // X + Q (offset + Rm b) = (X + Q offset) + (Q Rm) b.
        Self::from_kinematics(
            mass,
            model_position + model_orientation * frame.offset,
            model_orientation * frame.rotation,
            velocity,
            angular_velocity,
        )
    }

    /// The pose of the model frame in the world, from the centre-of-mass state: the inverse of
    /// [`Body::from_model_kinematics`].
    pub fn model_pose(&self) -> ModelPose {
        model_pose(&self.mass, &self.state)
    }

    /// Rotation matrix `R = R(normalize(q))`.
    pub fn rotation(&self) -> DMat3 {
        rotation(&self.state)
    }

    /// Linear velocity `v = P / M`.
    pub fn velocity(&self) -> DVec3 {
        velocity(&self.mass, &self.state)
    }

    /// Angular velocity `omega = R Ibody^-1 R^T L`.
    pub fn angular_velocity(&self) -> DVec3 {
        angular_velocity(&self.mass, &self.state)
    }

    /// Body-frame angular velocity `Ibody^-1 R^T L`: what Euler's equations and the
    /// closed-form tops of [`analytic`](crate::verify::analytic) describe.
    pub fn body_angular_velocity(&self) -> DVec3 {
        self.rotation().transpose() * self.angular_velocity()
    }

    /// Kinetic energy `1/2 M |v|^2 + 1/2 omega . L`.
    pub fn kinetic_energy(&self) -> f64 {
        let v = self.velocity();
        0.5 * self.mass.mass() * v.length_squared()
            + 0.5 * self.angular_velocity().dot(self.state.angular_momentum)
    }
}

/// Linear velocity `v = P / M` of a body with mass properties `mass` in `state`.
pub fn velocity(mass: &MassProperties, state: &BodyState) -> DVec3 {
    state.linear_momentum * mass.inv_mass()
}

/// The pose of the model frame of a body with mass properties `mass` in `state`.
pub(crate) fn model_pose(mass: &MassProperties, state: &BodyState) -> ModelPose {
    let frame = mass.model_frame();
    let orientation = (state.orientation.normalize() * frame.rotation.inverse()).normalize();
    ModelPose {
        position: state.position - orientation * frame.offset,
        orientation,
    }
}

/// Rotation matrix `R = R(normalize(q))` of `state`.
fn rotation(state: &BodyState) -> DMat3 {
    DMat3::from_quat(state.orientation.normalize())
}

/// Angular velocity `omega = R Ibody^-1 R^T L` (Baraff 2-40).
pub fn angular_velocity(mass: &MassProperties, state: &BodyState) -> DVec3 {
    let r = rotation(state);
    r * (mass.inv_inertia_body() * (r.transpose() * state.angular_momentum))
}
