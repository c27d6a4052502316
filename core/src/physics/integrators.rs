//! One time step of one body under each integrator, before `q` is renormalized, and the
//! renormalization (Baraff 4). `f(y, t)` evaluates the derivative of state `y` at time `t`.
//! Stage times: euler and symplectic_euler evaluate at `t`; rk4 and lie_rk4 at `t`,
//! `t + h/2`, `t + h/2`, `t + h`; lie_poisson at `t` and `t + h`, lie_poisson4 at both ends of
//! each of its three sub-steps, `t`, `t + w1 h`, `t + (1 - w1) h`, `t + h` with Yoshida's
//! `w1 = 1.35...`: past the step's end and before its start, so a force switched on at a
//! time is seen up to 0.35 h early. The splittings live in [`super::splitting`].

use std::ops::{Add, Mul};

use super::algebra::{Quat, Vec3};
use super::exp_map::exp_rotation;
use super::motion::{Derivative, MassConstants, State, advance, auxiliaries, spin};
use super::scalar::Scalar;
use super::splitting::{SplitAxes, lie_poisson, lie_poisson4};
use crate::model::integrator::Integrator;

/// Explicit Euler: `Y(t + h) = Y + h f(t, Y)`.
#[inline(always)]
pub fn euler<R: Scalar>(
    y: &State<R>,
    t: R,
    h: R,
    f: &mut impl FnMut(&State<R>, R) -> Derivative<R>,
) -> State<R> {
    advance(y, &f(y, t), h)
}

/// Semi-implicit (symplectic) Euler: kick `P`, `L` with the old state's force and torque,
/// then drift `x`, `q` with the new momenta seen through the old orientation:
/// `v1 = P1 / M`, `omega1 = R0 Ibody^-1 R0^T L1`, the auxiliaries of the kicked state.
#[inline(always)]
pub fn symplectic_euler<R: Scalar>(
    y: &State<R>,
    mass: &MassConstants<R>,
    t: R,
    h: R,
    f: &mut impl FnMut(&State<R>, R) -> Derivative<R>,
) -> State<R> {
    let k = f(y, t);
    let kicked = State {
        linear_momentum: y.linear_momentum + k.force * h,
        angular_momentum: y.angular_momentum + k.torque * h,
        ..*y
    };
    let aux = auxiliaries(&kicked, mass);
    State {
        position: y.position + aux.velocity * h,
        orientation: y.orientation + spin(aux.angular_velocity, y.orientation) * h,
        ..kicked
    }
}

/// `a + 2 (b + c) + d`: the weighted sum of four RK4 slopes (before the `h/6`).
#[inline(always)]
fn rk4_sum<R: Scalar, T: Add<Output = T> + Mul<R, Output = T>>(a: T, b: T, c: T, d: T) -> T {
    a + (b + c) * R::constant(2.0) + d
}

/// Classic RK4: `Y(t + h) = Y + h/6 (k1 + 2 k2 + 2 k3 + k4)`.
#[inline(always)]
pub fn rk4<R: Scalar>(
    y: &State<R>,
    t: R,
    h: R,
    f: &mut impl FnMut(&State<R>, R) -> Derivative<R>,
) -> State<R> {
    let half = R::constant(0.5) * h;
    let k1 = f(y, t);
    let k2 = f(&advance(y, &k1, half), t + half);
    let k3 = f(&advance(y, &k2, half), t + half);
    let k4 = f(&advance(y, &k3, h), t + h);
    let sum = Derivative {
        velocity: rk4_sum(k1.velocity, k2.velocity, k3.velocity, k4.velocity),
        spin: rk4_sum(k1.spin, k2.spin, k3.spin, k4.spin),
        force: rk4_sum(k1.force, k2.force, k3.force, k4.force),
        torque: rk4_sum(k1.torque, k2.torque, k3.torque, k4.torque),
    };
    advance(y, &sum, h / R::constant(6.0))
}

/// The inverse of the exponential map's derivative, truncated after the terms fourth-order
/// methods need: `dexpinv(u, v) = v - 1/2 u x v + 1/12 u x (u x v)`.
#[inline(always)]
pub fn dexpinv<R: Scalar>(u: Vec3<R>, v: Vec3<R>) -> Vec3<R> {
    let uv = u.cross(v);
    v - uv * R::constant(0.5) + u.cross(uv) * R::constant(1.0 / 12.0)
}

/// World angular velocity from `dq/dt = 1/2 [0, omega] q` and a unit `q`:
/// `[0, omega] = 2 dq/dt q*`.
#[inline(always)]
fn angular_velocity<R: Scalar>(k: &Derivative<R>, orientation: Quat<R>) -> Vec3<R> {
    (k.spin.product(orientation.conjugate()) * R::constant(2.0)).vector()
}

/// Runge–Kutta–Munthe-Kaas 4: classic RK4 stages for `x`, `P`, `L`; the orientation moves
/// on S^3 as `q_i = exp(u_i) q0`, `k_i = dexpinv(u_i, h omega_i)`.
#[inline(always)]
pub fn lie_rk4<R: Scalar>(
    y: &State<R>,
    t: R,
    h: R,
    f: &mut impl FnMut(&State<R>, R) -> Derivative<R>,
) -> State<R> {
    let half = R::constant(0.5) * h;
    let q0 = y.orientation;
    // Stage i: x, P, L advanced by `step` along the previous slope, q = exp(u) q0.
    let stage = |k: &Derivative<R>, step: R, u: Vec3<R>| State {
        orientation: exp_rotation(u).product(q0),
        ..advance(y, k, step)
    };
    let f1 = f(y, t);
    let k1 = angular_velocity(&f1, q0) * h;
    let u2 = k1 * R::constant(0.5);
    let y2 = stage(&f1, half, u2);
    let f2 = f(&y2, t + half);
    let k2 = dexpinv(u2, angular_velocity(&f2, y2.orientation) * h);
    let u3 = k2 * R::constant(0.5);
    let y3 = stage(&f2, half, u3);
    let f3 = f(&y3, t + half);
    let k3 = dexpinv(u3, angular_velocity(&f3, y3.orientation) * h);
    let y4 = stage(&f3, h, k3);
    let f4 = f(&y4, t + h);
    let k4 = dexpinv(k3, angular_velocity(&f4, y4.orientation) * h);
    let sixth = h / R::constant(6.0);
    State {
        position: y.position + rk4_sum(f1.velocity, f2.velocity, f3.velocity, f4.velocity) * sixth,
        orientation: exp_rotation(rk4_sum(k1, k2, k3, k4) * R::constant(1.0 / 6.0)).product(q0),
        linear_momentum: y.linear_momentum
            + rk4_sum(f1.force, f2.force, f3.force, f4.force) * sixth,
        angular_momentum: y.angular_momentum
            + rk4_sum(f1.torque, f2.torque, f3.torque, f4.torque) * sixth,
    }
}

/// `q / |q|` (Baraff 4): a step's orientation back on the unit sphere.
#[inline(always)]
pub fn renormalize<R: Scalar>(mut y: State<R>) -> State<R> {
    y.orientation = y.orientation.normalize();
    y
}

/// One step of `integrator` from time `t`, before `q` is renormalized: what the scheme
/// itself makes of `|q|`. `axes` is the body's [`SplitAxes::for_integrator`], found once
/// per body by the caller: only the splittings read it.
#[inline(always)]
pub fn step<R: Scalar>(
    integrator: Integrator,
    y: &State<R>,
    mass: &MassConstants<R>,
    axes: &SplitAxes<R>,
    t: R,
    h: R,
    f: &mut impl FnMut(&State<R>, R) -> Derivative<R>,
) -> State<R> {
    match integrator {
        Integrator::Euler => euler(y, t, h, f),
        Integrator::SymplecticEuler => symplectic_euler(y, mass, t, h, f),
        Integrator::Rk4 => rk4(y, t, h, f),
        Integrator::LieRk4 => lie_rk4(y, t, h, f),
        Integrator::LiePoisson => lie_poisson(y, mass, axes, t, h, f),
        Integrator::LiePoisson4 => lie_poisson4(y, mass, axes, t, h, f),
    }
}
