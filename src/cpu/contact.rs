//! Contact with static planes on the fast path: each lane of a block that can touch a plane is
//! widened to f64 and resolved by the reference's own code (`src/cpu_ref/contact.rs`), then
//! narrowed back. Contacts are per-lane branches, so SIMD would buy little; sharing the
//! reference's code means the two paths differ only by the f32 rounding of the state.

use crate::body::BodyState;
use crate::cpu::block::StateBlock;
use crate::cpu::lanes::LANES;
use crate::cpu_ref::contact::resolve_contacts as resolve_body;
use crate::mass::MassProperties;
use crate::plane::Plane;
use crate::shape::Shape;

/// What contact resolution needs of each lane of a block besides its state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ContactBlock {
    pub lanes: [(MassProperties, Shape); LANES],
}

/// Resolves every lane of `next` (the block after a step that started at `start`).
pub(crate) fn resolve_contacts(
    start: &StateBlock,
    next: &mut StateBlock,
    block: &ContactBlock,
    planes: &[Plane],
    h: f64,
) {
    for (lane, (mass, shape)) in block.lanes.iter().enumerate() {
        let mut state = next.state(lane);
        resolve_body(&start.state(lane), &mut state, mass, shape, planes, h);
        set_lane(next, lane, &state);
    }
}

/// Writes the f64 `state` into lane `lane`, rounded to f32.
fn set_lane(block: &mut StateBlock, lane: usize, state: &BodyState) {
    let q = state.orientation;
    for (lanes, value) in [
        (&mut block.position.x, state.position.x),
        (&mut block.position.y, state.position.y),
        (&mut block.position.z, state.position.z),
        (&mut block.orientation.w, q.w),
        (&mut block.orientation.x, q.x),
        (&mut block.orientation.y, q.y),
        (&mut block.orientation.z, q.z),
        (&mut block.linear_momentum.x, state.linear_momentum.x),
        (&mut block.linear_momentum.y, state.linear_momentum.y),
        (&mut block.linear_momentum.z, state.linear_momentum.z),
        (&mut block.angular_momentum.x, state.angular_momentum.x),
        (&mut block.angular_momentum.y, state.angular_momentum.y),
        (&mut block.angular_momentum.z, state.angular_momentum.z),
    ] {
        lanes.0[lane] = value as f32;
    }
}
