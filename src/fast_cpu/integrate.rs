//! One time step of eight bodies at once, in f32. Twin of `shaders/integrate.wgsl`.

use crate::fast_cpu::block::{ConstantBlock, ForceF32, LaneForce, StateBlock};
use crate::fast_cpu::derivative::{Derivative, derivative};
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

/// The forces of one block: those on every body and the block's own.
#[derive(Clone, Copy)]
pub(crate) struct BlockForces<'a> {
    pub global: &'a [ForceF32],
    pub own: &'a [LaneForce],
}

/// Explicit Euler: `Y(t + h) = Y + h f(Y)`.
#[inline(always)]
fn euler_step(s: &StateBlock, c: &ConstantBlock, f: BlockForces, h: f32) -> StateBlock {
    advance(s, &derivative(s, c, f.global, f.own), h)
}

/// Classic RK4: `Y(t + h) = Y + h/6 (k1 + 2 k2 + 2 k3 + k4)`.
#[inline(always)]
fn rk4_step(s: &StateBlock, c: &ConstantBlock, f: BlockForces, h: f32) -> StateBlock {
    let d = |y: &StateBlock| derivative(y, c, f.global, f.own);
    let k1 = d(s);
    let k2 = d(&advance(s, &k1, 0.5 * h));
    let k3 = d(&advance(s, &k2, 0.5 * h));
    let k4 = d(&advance(s, &k3, h));
    let sum = Derivative {
        velocity: k1.velocity + (k2.velocity + k3.velocity) * 2.0 + k4.velocity,
        spin: k1.spin + (k2.spin + k3.spin) * 2.0 + k4.spin,
        force: k1.force + (k2.force + k3.force) * 2.0 + k4.force,
        torque: k1.torque + (k2.torque + k3.torque) * 2.0 + k4.torque,
    };
    advance(s, &sum, h / 6.0)
}

/// One full step of a block, then every q renormalized (Baraff 4).
#[inline(always)]
pub(crate) fn integrate_step(
    integrator: Integrator,
    s: &StateBlock,
    c: &ConstantBlock,
    f: BlockForces,
    h: f32,
) -> StateBlock {
    let mut next = match integrator {
        Integrator::Euler => euler_step(s, c, f, h),
        Integrator::Rk4 => rk4_step(s, c, f, h),
    };
    next.orientation = next.orientation.normalize();
    next
}
