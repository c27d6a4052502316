//! Auxiliary quantities, force and torque accumulation and the state derivative
//! (Baraff 2-42, 2-43). Twin of `shaders/derivative.wgsl`: keep the two in step.

use glam::{DMat3, DQuat, DVec3};

use crate::body::BodyState;
use crate::custom_force::{CustomForce, CustomForceInput, ExternalLoad};
use crate::force::ForceKind;
use crate::mass::MassProperties;
use crate::profile::{keyframe_scale, sinusoid_scale};

/// What the forces on one body see besides its state and the time: which body it is, the
/// load set on it from outside, and the crowd's keyframe tables and custom force.
#[derive(Clone, Copy, Debug, Default)]
pub struct ForceEnv<'a> {
    /// Index of the body in the crowd (passed to a custom force).
    pub body: usize,
    /// The external load held on the body (`Simulation::set_external_loads`).
    pub load: ExternalLoad,
    /// The crowd's keyframe tables.
    pub keyframes: &'a [Vec<[f64; 2]>],
    /// The crowd's custom force.
    pub custom_force: Option<&'a CustomForce>,
}

/// `dY/dt` for one body: `(v, dq/dt, F, tau)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Derivative {
    /// `dx/dt = v`.
    pub velocity: DVec3,
    /// `dq/dt = 1/2 [0, omega] q`.
    pub spin: DQuat,
    /// `dP/dt = F`, the total force.
    pub force: DVec3,
    /// `dL/dt = tau`, the total torque about the centre of mass.
    pub torque: DVec3,
}

/// Auxiliary quantities recomputed from the state at every evaluation (Baraff 2-42).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Auxiliaries {
    pub velocity: DVec3,
    pub rotation: DMat3,
    pub angular_velocity: DVec3,
}

/// `v = P / M`, `R = R(normalize(q))`, `omega = R (Ibody^-1 (R^T L))`.
pub(crate) fn auxiliaries(state: &BodyState, mass: &MassProperties) -> Auxiliaries {
    let rotation = DMat3::from_quat(state.orientation.normalize());
    let body_momentum = rotation.transpose() * state.angular_momentum;
    Auxiliaries {
        velocity: state.linear_momentum * mass.inv_mass(),
        rotation,
        angular_velocity: rotation * (mass.inv_inertia_body() * body_momentum),
    }
}

/// Adds one force source's force and torque (about the centre of mass) at time `t` to the
/// totals.
#[allow(clippy::too_many_arguments)] // the twin of the WGSL function, argument for argument
pub(crate) fn accumulate_force(
    kind: &ForceKind,
    state: &BodyState,
    mass: &MassProperties,
    aux: &Auxiliaries,
    t: f64,
    env: &ForceEnv,
    force: &mut DVec3,
    torque: &mut DVec3,
) {
    match *kind {
        ForceKind::Gravity { acceleration } => {
            *force += acceleration * mass.mass();
        }
        ForceKind::LinearDrag { linear, angular } => {
            *force -= aux.velocity * linear;
            *torque -= aux.angular_velocity * angular;
        }
        ForceKind::PointForce {
            force: applied,
            point,
        } => {
            let arm = aux.rotation * point;
            *force += applied;
            *torque += arm.cross(applied);
        }
        ForceKind::Spring {
            anchor,
            attach,
            stiffness,
            damping,
        } => {
            let arm = aux.rotation * attach;
            let stretch = state.position + arm - anchor;
            let attach_velocity = aux.velocity + aux.angular_velocity.cross(arm);
            let applied = -stretch * stiffness - attach_velocity * damping;
            *force += applied;
            *torque += arm.cross(applied);
        }
        ForceKind::Attractor {
            centre,
            strength,
            softening,
        } => {
            let r = state.position - centre;
            let d2 = r.length_squared() + softening * softening;
            *force -= r * (mass.mass() * strength / (d2 * d2.sqrt()));
        }
        ForceKind::Thrust {
            force: body_force,
            torque: body_torque,
        } => {
            *force += aux.rotation * body_force;
            *torque += aux.rotation * body_torque;
        }
        ForceKind::Sinusoidal {
            force: applied,
            torque: turning,
            offset,
            amplitude,
            frequency,
            phase,
        } => {
            let scale = sinusoid_scale(offset, amplitude, frequency, phase, t);
            *force += applied * scale;
            *torque += turning * scale;
        }
        ForceKind::Keyframed {
            force: applied,
            torque: turning,
            table,
        } => {
            let scale = keyframe_scale(&env.keyframes[table], t);
            *force += applied * scale;
            *torque += turning * scale;
        }
        ForceKind::Custom => {
            if let Some(custom) = env.custom_force {
                let load = custom.evaluate(&CustomForceInput {
                    position: state.position,
                    orientation: state.orientation.normalize(),
                    velocity: aux.velocity,
                    angular_velocity: aux.angular_velocity,
                    mass: mass.mass(),
                    time: t,
                    body: env.body,
                });
                *force += load.force;
                *torque += load.torque;
            }
        }
    }
}

/// The state derivative `dY/dt` of one body under `forces` and its external load at time `t`.
///
/// `dq/dt` multiplies the state's own `q` (not its normalized copy), so it stays linear in `q`
/// inside the RK4 stages; only `R` uses the normalized quaternion.
pub fn derivative<'a>(
    state: &BodyState,
    mass: &MassProperties,
    forces: impl IntoIterator<Item = &'a ForceKind>,
    t: f64,
    env: &ForceEnv,
) -> Derivative {
    let aux = auxiliaries(state, mass);
    let mut force = env.load.force;
    let mut torque = env.load.torque;
    for kind in forces {
        accumulate_force(kind, state, mass, &aux, t, env, &mut force, &mut torque);
    }
    let omega = aux.angular_velocity;
    Derivative {
        velocity: aux.velocity,
        spin: DQuat::from_xyzw(omega.x, omega.y, omega.z, 0.0) * state.orientation * 0.5,
        force,
        torque,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::Body;
    use crate::shape::Shape;

    /// Baraff 5-4 and 5-6: equal and opposite forces at opposite corners of the 6 x 1 x 4
    /// block give no net force and the torque (0, 6f, 0). tests/analytic.rs integrates the
    /// swing that follows.
    #[test]
    fn baraff_5_4_opposite_forces_sum_to_torque_0_6f_0() {
        let f = 2.0;
        let size = DVec3::new(6.0, 1.0, 4.0);
        let mass = MassProperties::from_shape(24.0, Shape::Box { size }, "block").unwrap();
        let forces = [
            ForceKind::PointForce {
                force: DVec3::new(0.0, 0.0, f),
                point: DVec3::new(-3.0, 0.0, -2.0),
            },
            ForceKind::PointForce {
                force: DVec3::new(0.0, 0.0, -f),
                point: DVec3::new(3.0, 0.0, 2.0),
            },
        ];
        let at_rest = Body::at_rest(mass).state;
        let env = ForceEnv {
            body: 0,
            load: ExternalLoad::default(),
            keyframes: &[],
            custom_force: None,
        };
        let k = derivative(&at_rest, &mass, &forces, 0.0, &env);
        assert_eq!(k.force, DVec3::ZERO);
        assert_eq!(k.torque, DVec3::new(0.0, 6.0 * f, 0.0));
    }
}
