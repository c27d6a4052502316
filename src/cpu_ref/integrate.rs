//! One time step of one body. Twin of `shaders/integrate.wgsl`: keep the two in step.
//!
//! Stage times, for when the derivative takes `t`: euler and symplectic_euler evaluate at
//! `t`; rk4 and lie_rk4 at `t`, `t + h/2`, `t + h/2`, `t + h`.

use glam::{DQuat, DVec3};

use crate::body::BodyState;
use crate::cpu_ref::derivative::{Derivative, ForceEnv, auxiliaries, derivative};
use crate::force::ForceKind;
use crate::integrator::Integrator;
use crate::mass::MassProperties;

/// `Y + h k`: the state advanced along a derivative.
fn advance(state: &BodyState, k: &Derivative, h: f64) -> BodyState {
    BodyState {
        position: state.position + k.velocity * h,
        orientation: state.orientation + k.spin * h,
        linear_momentum: state.linear_momentum + k.force * h,
        angular_momentum: state.angular_momentum + k.torque * h,
    }
}

/// Explicit Euler: `Y(t + h) = Y + h f(t, Y)`.
pub(crate) fn euler_step(
    state: &BodyState,
    mass: &MassProperties,
    forces: &[&ForceKind],
    env: &ForceEnv,
    t: f64,
    h: f64,
) -> BodyState {
    let k = derivative(state, mass, forces.iter().copied(), t, env);
    advance(state, &k, h)
}

/// Semi-implicit (symplectic) Euler: kick `P`, `L` with the old state's force and torque
/// (at time `t`), then drift `x`, `q` with the new momenta seen through the old orientation.
pub(crate) fn symplectic_euler_step(
    state: &BodyState,
    mass: &MassProperties,
    forces: &[&ForceKind],
    env: &ForceEnv,
    t: f64,
    h: f64,
) -> BodyState {
    let k = derivative(state, mass, forces.iter().copied(), t, env);
    let kicked = BodyState {
        linear_momentum: state.linear_momentum + k.force * h,
        angular_momentum: state.angular_momentum + k.torque * h,
        ..*state
    };
    // v1 = P1 / M and omega1 = R0 Ibody^-1 R0^T L1: the auxiliaries of the kicked state.
    let aux = auxiliaries(&kicked, mass);
    let omega = aux.angular_velocity;
    let spin = DQuat::from_xyzw(omega.x, omega.y, omega.z, 0.0) * state.orientation * 0.5;
    BodyState {
        position: state.position + aux.velocity * h,
        orientation: state.orientation + spin * h,
        ..kicked
    }
}

/// Classic RK4: `Y(t + h) = Y + h/6 (k1 + 2 k2 + 2 k3 + k4)`, the stages evaluated at
/// `t`, `t + h/2`, `t + h/2` and `t + h`.
pub(crate) fn rk4_step(
    state: &BodyState,
    mass: &MassProperties,
    forces: &[&ForceKind],
    env: &ForceEnv,
    t: f64,
    h: f64,
) -> BodyState {
    let f = |y: &BodyState, at: f64| derivative(y, mass, forces.iter().copied(), at, env);
    let k1 = f(state, t);
    let k2 = f(&advance(state, &k1, 0.5 * h), t + 0.5 * h);
    let k3 = f(&advance(state, &k2, 0.5 * h), t + 0.5 * h);
    let k4 = f(&advance(state, &k3, h), t + h);
    let sum = Derivative {
        velocity: k1.velocity + (k2.velocity + k3.velocity) * 2.0 + k4.velocity,
        spin: k1.spin + (k2.spin + k3.spin) * 2.0 + k4.spin,
        force: k1.force + (k2.force + k3.force) * 2.0 + k4.force,
        torque: k1.torque + (k2.torque + k3.torque) * 2.0 + k4.torque,
    };
    advance(state, &sum, h / 6.0)
}

/// `|theta|` below which [`exp_rotation`] uses its Taylor series: there the dropped
/// `|theta|^6` terms are below f64 round-off, and `sin(a/2)/a` never divides by zero.
pub(crate) const EXP_SERIES_BELOW: f64 = 1e-3;

/// The unit quaternion of rotation vector `theta`: `(cos(|theta|/2), sin(|theta|/2) theta/|theta|)`,
/// the exponential map from rotation vectors to S^3.
pub(crate) fn exp_rotation(theta: DVec3) -> DQuat {
    let angle = theta.length();
    let (cos_half, sin_half_over_angle) = if angle < EXP_SERIES_BELOW {
        let a2 = angle * angle;
        (
            1.0 - a2 / 8.0 + a2 * a2 / 384.0,
            0.5 - a2 / 48.0 + a2 * a2 / 3840.0,
        )
    } else {
        let (sin, cos) = (0.5 * angle).sin_cos();
        (cos, sin / angle)
    };
    let v = theta * sin_half_over_angle;
    DQuat::from_xyzw(v.x, v.y, v.z, cos_half)
}

/// The inverse of the exponential map's derivative, truncated after the terms fourth-order
/// methods need: `dexpinv(u, v) = v - 1/2 u x v + 1/12 u x (u x v)`.
pub(crate) fn dexpinv(u: DVec3, v: DVec3) -> DVec3 {
    let uv = u.cross(v);
    v - uv * 0.5 + u.cross(uv) * (1.0 / 12.0)
}

/// World angular velocity from `dq/dt = 1/2 [0, omega] q` and a unit `q`: `[0, omega] = 2 dq/dt q*`.
fn angular_velocity(k: &Derivative, orientation: DQuat) -> DVec3 {
    let pure = k.spin * orientation.conjugate() * 2.0;
    DVec3::new(pure.x, pure.y, pure.z)
}

/// Runge–Kutta–Munthe-Kaas 4: classic RK4 stages for `x`, `P`, `L`; the orientation moves
/// on S^3 as `q_i = exp(u_i) q0`, `k_i = dexpinv(u_i, h omega_i)` (see [`Integrator::LieRk4`]).
/// Stage times as in RK4: `t`, `t + h/2`, `t + h/2`, `t + h`.
pub(crate) fn lie_rk4_step(
    state: &BodyState,
    mass: &MassProperties,
    forces: &[&ForceKind],
    env: &ForceEnv,
    t: f64,
    h: f64,
) -> BodyState {
    let q0 = state.orientation;
    // Stage i: the vector part advanced by `c h` along the previous slope, q = exp(u) q0.
    let stage = |k: &Derivative, c: f64, u: DVec3| BodyState {
        orientation: exp_rotation(u) * q0,
        ..advance(state, k, c * h)
    };
    let f = |y: &BodyState, at: f64| derivative(y, mass, forces.iter().copied(), at, env);
    let f1 = f(state, t);
    let k1 = h * angular_velocity(&f1, q0);
    let u2 = k1 * 0.5;
    let y2 = stage(&f1, 0.5, u2);
    let f2 = f(&y2, t + 0.5 * h);
    let k2 = dexpinv(u2, h * angular_velocity(&f2, y2.orientation));
    let u3 = k2 * 0.5;
    let y3 = stage(&f2, 0.5, u3);
    let f3 = f(&y3, t + 0.5 * h);
    let k3 = dexpinv(u3, h * angular_velocity(&f3, y3.orientation));
    let u4 = k3;
    let y4 = stage(&f3, 1.0, u4);
    let f4 = f(&y4, t + h);
    let k4 = dexpinv(u4, h * angular_velocity(&f4, y4.orientation));
    let sum = Derivative {
        velocity: f1.velocity + (f2.velocity + f3.velocity) * 2.0 + f4.velocity,
        spin: DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0),
        force: f1.force + (f2.force + f3.force) * 2.0 + f4.force,
        torque: f1.torque + (f2.torque + f3.torque) * 2.0 + f4.torque,
    };
    BodyState {
        orientation: exp_rotation((k1 + (k2 + k3) * 2.0 + k4) * (1.0 / 6.0)) * q0,
        ..advance(state, &sum, h / 6.0)
    }
}

/// One full step with `integrator`, before `q` is renormalized: what the scheme itself
/// makes of `|q|`.
pub(crate) fn step_unnormalized(
    integrator: Integrator,
    state: &BodyState,
    mass: &MassProperties,
    forces: &[&ForceKind],
    env: &ForceEnv,
    t: f64,
    h: f64,
) -> BodyState {
    match integrator {
        Integrator::Euler => euler_step(state, mass, forces, env, t, h),
        Integrator::SymplecticEuler => symplectic_euler_step(state, mass, forces, env, t, h),
        Integrator::Rk4 => rk4_step(state, mass, forces, env, t, h),
        Integrator::LieRk4 => lie_rk4_step(state, mass, forces, env, t, h),
    }
}

/// One full step with `integrator`, then `q` renormalized (Baraff 4).
pub(crate) fn integrate(
    integrator: Integrator,
    state: &BodyState,
    mass: &MassProperties,
    forces: &[&ForceKind],
    env: &ForceEnv,
    t: f64,
    h: f64,
) -> BodyState {
    let mut next = step_unnormalized(integrator, state, mass, forces, env, t, h);
    next.orientation = next.orientation.normalize();
    next
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::Shape;

    fn tumbling_brick() -> (BodyState, MassProperties) {
        let mass = MassProperties::from_shape(
            3.0,
            Shape::Box {
                size: DVec3::new(1.0, 2.0, 3.0),
            },
            "brick",
        )
        .unwrap();
        let body = crate::body::Body::from_kinematics(
            mass,
            DVec3::new(1.0, -2.0, 0.5),
            DQuat::from_rotation_x(0.4) * DQuat::from_rotation_z(-1.0),
            DVec3::new(0.3, 0.1, -0.2),
            DVec3::new(1.0, 2.0, 3.0),
        );
        (body.state, mass)
    }

    /// What a body without external loads or custom forces sees.
    fn no_env() -> ForceEnv<'static> {
        ForceEnv {
            body: 0,
            load: crate::custom_force::ExternalLoad::default(),
            keyframes: &[],
            custom_force: None,
        }
    }

    #[test]
    fn exp_rotation_matches_the_axis_angle_quaternion_on_both_branches() {
        for angle in [0.0, 1e-9, 5e-4, 0.999e-3, 1.001e-3, 0.3, 2.5] {
            let axis = DVec3::new(1.0, -2.0, 0.5).normalize();
            let q = exp_rotation(axis * angle);
            let expected = DQuat::from_axis_angle(axis, angle);
            // Both are correctly rounded up to a few ulps of quantities of size 1.
            assert!((q - expected).length() < 4e-16, "angle {angle}: {q:?}");
        }
    }

    #[test]
    fn lie_rk4_keeps_q_on_the_unit_sphere_before_renormalization() {
        let (mut state, mass) = tumbling_brick();
        // |omega| is about 3.7 rad/s: h = 0.05 turns the body by ~0.19 rad a step, where
        // rk4's q drifts off the sphere by O(h^5) a step.
        let h = 0.05;
        let mut worst: f64 = 0.0;
        for _ in 0..2000 {
            state = step_unnormalized(Integrator::LieRk4, &state, &mass, &[], &no_env(), 0.0, h);
            worst = worst.max((state.orientation.length() - 1.0).abs());
        }
        // Each step multiplies unit quaternions (a few ulps each) and never renormalizes:
        // round-off accumulates as a random walk, ~sqrt(2000) * 1e-16.
        assert!(worst < 1e-13, "lie_rk4 | |q| - 1 | = {worst:.3e}");
        let (rk4_start, _) = tumbling_brick();
        let rk4 = step_unnormalized(Integrator::Rk4, &rk4_start, &mass, &[], &no_env(), 0.0, h);
        let rk4_defect = (rk4.orientation.length() - 1.0).abs();
        assert!(
            rk4_defect > 1e3 * worst,
            "rk4 leaves the sphere ({rk4_defect:.3e}), lie_rk4 does not ({worst:.3e})"
        );
    }

    #[test]
    fn symplectic_euler_kicks_before_it_drifts() {
        let (state, mass) = tumbling_brick();
        let push = ForceKind::PointForce {
            force: DVec3::new(0.0, 0.0, 2.0),
            point: DVec3::new(0.5, 0.0, 0.0),
        };
        let h = 0.01;
        let env = no_env();
        let next = symplectic_euler_step(&state, &mass, &[&push], &env, 0.0, h);
        let k = derivative(&state, &mass, [&push], 0.0, &env);
        let p1 = state.linear_momentum + k.force * h;
        let l1 = state.angular_momentum + k.torque * h;
        assert_eq!(next.linear_momentum, p1);
        assert_eq!(next.angular_momentum, l1);
        assert_eq!(next.position, state.position + p1 * mass.inv_mass() * h);
        let r0 = glam::DMat3::from_quat(state.orientation);
        let omega1 = r0 * (mass.inv_inertia_body() * (r0.transpose() * l1));
        let dq = DQuat::from_xyzw(omega1.x, omega1.y, omega1.z, 0.0) * state.orientation;
        let expected = state.orientation + dq * (0.5 * h);
        assert!((next.orientation - expected).length() < 1e-15);
    }
}
