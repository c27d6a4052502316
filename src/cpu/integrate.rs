//! One time step of eight bodies at once, in f32. Twin of `shaders/integrate.wgsl`.
//!
//! Stage times, for when the derivative takes `t`: euler and symplectic_euler evaluate at
//! `t`; rk4 and lie_rk4 at `t`, `t + h/2`, `t + h/2`, `t + h`.

use crate::cpu::block::{ConstantBlock, StateBlock};
use crate::cpu::derivative::{BlockForces, Derivative, DerivativeFn, auxiliaries};
use crate::cpu::lanes::{QuatLanes, Vec3Lanes};
use crate::integrator::Integrator;

/// `Y + h k`.
#[inline(always)]
fn advance(s: &StateBlock, k: &Derivative, h: f32) -> StateBlock {
    StateBlock {
        position: s.position + k.velocity * h,
        orientation: s.orientation + k.spin * h,
        linear_momentum: s.linear_momentum + k.force * h,
        angular_momentum: s.angular_momentum + k.torque * h,
    }
}

/// Explicit Euler: `Y(t + h) = Y + h f(t, Y)`.
#[inline(always)]
fn euler_step(
    derivative: DerivativeFn,
    s: &StateBlock,
    c: &ConstantBlock,
    f: BlockForces,
    t: f32,
    h: f32,
) -> StateBlock {
    advance(s, &derivative(s, c, &f, t), h)
}

/// Semi-implicit (symplectic) Euler: kick `P`, `L` with the old state's force and torque,
/// then drift `x`, `q` with the new momenta seen through the old orientation.
#[inline(always)]
fn symplectic_euler_step(
    derivative: DerivativeFn,
    s: &StateBlock,
    c: &ConstantBlock,
    f: BlockForces,
    t: f32,
    h: f32,
) -> StateBlock {
    let k = derivative(s, c, &f, t);
    let kicked = StateBlock {
        linear_momentum: s.linear_momentum + k.force * h,
        angular_momentum: s.angular_momentum + k.torque * h,
        ..*s
    };
    // v1 = P1 / M and omega1 = R0 Ibody^-1 R0^T L1: the auxiliaries of the kicked state.
    let aux = auxiliaries(&kicked, c);
    let spin = QuatLanes::pure_mul(aux.angular_velocity, s.orientation) * 0.5;
    StateBlock {
        position: s.position + aux.velocity * h,
        orientation: s.orientation + spin * h,
        ..kicked
    }
}

/// Classic RK4: `Y(t + h) = Y + h/6 (k1 + 2 k2 + 2 k3 + k4)`, the stages evaluated at
/// `t`, `t + h/2`, `t + h/2` and `t + h`.
#[inline(always)]
fn rk4_step(
    derivative: DerivativeFn,
    s: &StateBlock,
    c: &ConstantBlock,
    f: BlockForces,
    t: f32,
    h: f32,
) -> StateBlock {
    let d = |y: &StateBlock, at: f32| derivative(y, c, &f, at);
    let k1 = d(s, t);
    let k2 = d(&advance(s, &k1, 0.5 * h), t + 0.5 * h);
    let k3 = d(&advance(s, &k2, 0.5 * h), t + 0.5 * h);
    let k4 = d(&advance(s, &k3, h), t + h);
    let sum = Derivative {
        velocity: k1.velocity + (k2.velocity + k3.velocity) * 2.0 + k4.velocity,
        spin: k1.spin + (k2.spin + k3.spin) * 2.0 + k4.spin,
        force: k1.force + (k2.force + k3.force) * 2.0 + k4.force,
        torque: k1.torque + (k2.torque + k3.torque) * 2.0 + k4.torque,
    };
    advance(s, &sum, h / 6.0)
}

/// The f32 time of step `step` (counted from the crowd's clock zero): the step count split
/// in two exact f32 integers, as the GPU stores it (twin of `step_time` in
/// shaders/integrate.wgsl).
#[inline(always)]
pub(crate) fn step_time(step: u64, dt: f32) -> f32 {
    let low = (step % STEPS_PER_OVERFLOW) as f32;
    let high = (step / STEPS_PER_OVERFLOW) as f32;
    low * dt + high * (STEPS_PER_OVERFLOW as f32 * dt)
}

/// Steps counted exactly by one f32 before the count carries (2^24).
pub(crate) const STEPS_PER_OVERFLOW: u64 = 1 << 24;

/// `|theta|` below which [`exp_rotation`] uses its Taylor series: there the dropped
/// `|theta|^6` terms are far below f32 round-off, and `sin(a/2)/a` never divides by zero.
pub(crate) const EXP_SERIES_BELOW: f32 = 1e-2;

/// `cos(a/2)` of one lane's angle `a`.
#[inline(always)]
fn cos_half(a: f32) -> f32 {
    if a < EXP_SERIES_BELOW {
        let a2 = a * a;
        1.0 - a2 / 8.0 + a2 * a2 / 384.0
    } else {
        (0.5 * a).cos()
    }
}

/// `sin(a/2) / a` of one lane's angle `a`.
#[inline(always)]
fn sin_half_over_angle(a: f32) -> f32 {
    if a < EXP_SERIES_BELOW {
        let a2 = a * a;
        0.5 - a2 / 48.0 + a2 * a2 / 3840.0
    } else {
        (0.5 * a).sin() / a
    }
}

/// The unit quaternion of rotation vector `theta`: `(cos(|theta|/2), sin(|theta|/2) theta/|theta|)`.
#[inline(always)]
fn exp_rotation(theta: Vec3Lanes) -> QuatLanes {
    let angle = theta.dot(theta).sqrt();
    let v = theta.scale(angle.map(sin_half_over_angle));
    QuatLanes {
        w: angle.map(cos_half),
        x: v.x,
        y: v.y,
        z: v.z,
    }
}

/// `dexpinv(u, v) = v - 1/2 u x v + 1/12 u x (u x v)`.
#[inline(always)]
fn dexpinv(u: Vec3Lanes, v: Vec3Lanes) -> Vec3Lanes {
    let uv = u.cross(v);
    v - uv * 0.5 + u.cross(uv) * (1.0 / 12.0)
}

/// World angular velocity from `dq/dt` and a unit `q`: `[0, omega] = 2 dq/dt q*`.
#[inline(always)]
fn angular_velocity(k: &Derivative, orientation: QuatLanes) -> Vec3Lanes {
    (k.spin.product(orientation.conjugate()) * 2.0).vector()
}

/// Runge–Kutta–Munthe-Kaas 4: classic RK4 stages for `x`, `P`, `L`; the orientation moves
/// on S^3 as `q_i = exp(u_i) q0`, `k_i = dexpinv(u_i, h omega_i)`.
/// Stage times as in RK4: `t`, `t + h/2`, `t + h/2`, `t + h`.
#[inline(always)]
fn lie_rk4_step(
    derivative: DerivativeFn,
    s: &StateBlock,
    c: &ConstantBlock,
    f: BlockForces,
    t: f32,
    h: f32,
) -> StateBlock {
    let q0 = s.orientation;
    let stage = |k: &Derivative, step: f32, u: Vec3Lanes| StateBlock {
        orientation: exp_rotation(u).product(q0),
        ..advance(s, k, step)
    };
    let d = |y: &StateBlock, at: f32| derivative(y, c, &f, at);
    let f1 = d(s, t);
    let k1 = angular_velocity(&f1, q0) * h;
    let u2 = k1 * 0.5;
    let y2 = stage(&f1, 0.5 * h, u2);
    let f2 = d(&y2, t + 0.5 * h);
    let k2 = dexpinv(u2, angular_velocity(&f2, y2.orientation) * h);
    let u3 = k2 * 0.5;
    let y3 = stage(&f2, 0.5 * h, u3);
    let f3 = d(&y3, t + 0.5 * h);
    let k3 = dexpinv(u3, angular_velocity(&f3, y3.orientation) * h);
    let u4 = k3;
    let y4 = stage(&f3, h, u4);
    let f4 = d(&y4, t + h);
    let k4 = dexpinv(u4, angular_velocity(&f4, y4.orientation) * h);
    let sum = Derivative {
        velocity: f1.velocity + (f2.velocity + f3.velocity) * 2.0 + f4.velocity,
        spin: QuatLanes::default(),
        force: f1.force + (f2.force + f3.force) * 2.0 + f4.force,
        torque: f1.torque + (f2.torque + f3.torque) * 2.0 + f4.torque,
    };
    StateBlock {
        orientation: exp_rotation((k1 + (k2 + k3) * 2.0 + k4) * (1.0 / 6.0)).product(q0),
        ..advance(s, &sum, h / 6.0)
    }
}

/// One full step of a block from time `t`, then every q renormalized (Baraff 4).
/// `derivative` is the caller's SIMD clone of [`crate::cpu::derivative::derivative`].
#[inline(always)]
pub(crate) fn integrate_step(
    integrator: Integrator,
    derivative: DerivativeFn,
    s: &StateBlock,
    c: &ConstantBlock,
    f: BlockForces,
    t: f32,
    h: f32,
) -> StateBlock {
    let mut next = match integrator {
        Integrator::Euler => euler_step(derivative, s, c, f, t, h),
        Integrator::SymplecticEuler => symplectic_euler_step(derivative, s, c, f, t, h),
        Integrator::Rk4 => rk4_step(derivative, s, c, f, t, h),
        Integrator::LieRk4 => lie_rk4_step(derivative, s, c, f, t, h),
    };
    next.orientation = next.orientation.normalize();
    next
}
