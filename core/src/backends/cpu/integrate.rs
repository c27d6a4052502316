//! One time step of eight bodies at once, in f32: an integrator of `core/src/physics` on a lane
//! type over the block's derivative, then every q renormalized (Baraff 4).

use crate::backends::cpu::derivative::{BlockConstants, BlockForces, DerivativeFn};
use crate::model::integrator::Integrator;
use crate::physics::integrators::{renormalize, step};
use crate::physics::lanes::LaneType;
use crate::physics::motion::State;

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
    let next = step(
        integrator,
        s,
        &c.mass,
        &c.axes,
        L::splat(t),
        L::splat(h),
        &mut d,
    );
    renormalize(next)
}
