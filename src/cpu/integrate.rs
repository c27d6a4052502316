//! One time step of one body. Twin of `shaders/integrate.wgsl`: keep the two in step.

use crate::body::BodyState;
use crate::cpu::derivative::{Derivative, ForceEnv, derivative};
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

/// One full step from time `t` with `integrator`, then `q` renormalized (Baraff 4).
pub(crate) fn integrate(
    integrator: Integrator,
    state: &BodyState,
    mass: &MassProperties,
    forces: &[&ForceKind],
    env: &ForceEnv,
    t: f64,
    h: f64,
) -> BodyState {
    let mut next = match integrator {
        Integrator::Euler => euler_step(state, mass, forces, env, t, h),
        Integrator::Rk4 => rk4_step(state, mass, forces, env, t, h),
    };
    next.orientation = next.orientation.normalize();
    next
}
