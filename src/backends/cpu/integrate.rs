//! One time step of eight bodies at once, in f32: an integrator of `src/physics` on a lane
//! type over the block's derivative, then every q renormalized (Baraff 4).

use crate::backends::cpu::derivative::{BlockConstants, BlockForces, DerivativeFn};
use crate::model::integrator::Integrator;
use crate::physics::integrators::{renormalize, step};
use crate::physics::lanes::LaneType;
use crate::physics::motion::State;

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

/// One full step of a block from time `t`, then every q renormalized.
/// `derivative` is the caller's SIMD clone of [`crate::backends::cpu::derivative::derivative`].
#[inline(always)]
pub(crate) fn integrate_step<L: LaneType>(
    integrator: Integrator,
    derivative: DerivativeFn<L>,
    s: &State<L>,
    c: &BlockConstants<L>,
    f: BlockForces,
    t: f32,
    h: f32,
) -> State<L> {
    let mut d = |y: &State<L>, at: L| derivative(y, c, &f, at);
    let next = step(integrator, s, &c.mass, L::splat(t), L::splat(h), &mut d);
    renormalize(next)
}
