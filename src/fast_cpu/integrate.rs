//! One time step of eight bodies at once, in f32. Twin of `shaders/integrate.wgsl`.

use crate::fast_cpu::block::{ConstantBlock, StateBlock};
use crate::fast_cpu::derivative::{BlockForces, Derivative, derivative};
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
fn euler_step(s: &StateBlock, c: &ConstantBlock, f: BlockForces, t: f32, h: f32) -> StateBlock {
    advance(s, &derivative(s, c, &f, t), h)
}

/// Classic RK4: `Y(t + h) = Y + h/6 (k1 + 2 k2 + 2 k3 + k4)`, the stages evaluated at
/// `t`, `t + h/2`, `t + h/2` and `t + h`.
#[inline(always)]
fn rk4_step(s: &StateBlock, c: &ConstantBlock, f: BlockForces, t: f32, h: f32) -> StateBlock {
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

/// One full step of a block from time `t`, then every q renormalized (Baraff 4).
#[inline(always)]
pub(crate) fn integrate_step(
    integrator: Integrator,
    s: &StateBlock,
    c: &ConstantBlock,
    f: BlockForces,
    t: f32,
    h: f32,
) -> StateBlock {
    let mut next = match integrator {
        Integrator::Euler => euler_step(s, c, f, t, h),
        Integrator::Rk4 => rk4_step(s, c, f, t, h),
    };
    next.orientation = next.orientation.normalize();
    next
}
