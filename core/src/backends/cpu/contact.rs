//! Contact with static planes on the fast path: the definition (`core/src/physics/contact.rs`) in
//! f32, one lane at a time. Contacts are per-lane branches, so SIMD would buy little; each
//! lane computes what the f32 kernel computes for its body.

use crate::backends::cpu::block::StateBlock;
use crate::backends::cpu::faults::LaneMask;
use crate::model::mass::MassProperties;
use crate::model::shape::Shape;
use crate::physics::algebra::{Quat, Vec3};
use crate::physics::contact::{
    PlaneConstants, ShapeConstants, clear_of_planes, near_a_plane, resolve_contacts as resolve_body,
};
use crate::physics::lanes::{LANES, LaneType, Lanes};
use crate::physics::motion::{MassConstants, State};
use crate::physics::rest::same_bits;

/// What contact resolution needs of each lane of a block besides its state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ContactBlock {
    pub lanes: [(MassConstants<f32>, ShapeConstants<f32>); LANES],
}

impl ContactBlock {
    /// The constants of one lane's body, rounded to f32 as the f32 kernel's are.
    pub fn lane(mass: &MassProperties, shape: &Shape) -> (MassConstants<f32>, ShapeConstants<f32>) {
        let m = MassConstants::<f64>::from(mass);
        let i = m.inv_inertia;
        let constants = MassConstants {
            mass: m.mass as f32,
            inv_mass: m.inv_mass as f32,
            inv_inertia: crate::physics::algebra::SymMat3 {
                xx: i.xx as f32,
                yy: i.yy as f32,
                zz: i.zz as f32,
                xy: i.xy as f32,
                xz: i.xz as f32,
                yz: i.yz as f32,
            },
        };
        (constants, ShapeConstants::of(shape).to())
    }
}

impl ContactBlock {
    /// The lanes' bounding radii and `planes`, in lanes of type `L`: what
    /// [`near_lanes`] tests each step.
    pub fn near_test<L: LaneType>(&self, planes: &[PlaneConstants<f32>]) -> NearTest<L> {
        let radii = Lanes(self.lanes.map(|(_, shape)| shape.bounding_radius));
        let splat = |v: Vec3<f32>| Vec3::new(L::splat(v.x), L::splat(v.y), L::splat(v.z));
        let planes = (planes.iter())
            .map(|p| PlaneConstants {
                normal: splat(p.normal),
                offset: L::splat(p.offset),
                restitution: L::splat(p.restitution),
                friction: L::splat(p.friction),
            })
            .collect();
        NearTest {
            radii: L::from(radii),
            planes,
        }
    }
}

/// A block's bounding radii and the planes, in lanes: [`ContactBlock::near_test`].
pub(crate) struct NearTest<L> {
    radii: L,
    planes: Vec<PlaneConstants<L>>,
}

impl<L: LaneType> NearTest<L> {
    /// The lanes whose body, at `position`, may touch a plane (one bit each): the contact
    /// code's own test, `near_a_plane`, in all lanes at once. A block with
    /// none leaves the per-lane contact code alone.
    #[inline(always)]
    pub fn near_lanes(&self, position: Vec3<L>) -> u8 {
        L::mask(near_a_plane(self.radii, &self.planes, position))
    }
}

/// Resolves every lane of `next` (the block after a step that started at `start`); the
/// lanes of `resting` are put back to `start` (at rest: the step leaves them so). Returns
/// `resting` with the lanes the step left exactly as they were where `settles`
/// (`physics::rest`).
pub(crate) fn resolve_contacts(
    start: &StateBlock,
    next: &mut StateBlock,
    block: &ContactBlock,
    planes: &[PlaneConstants<f32>],
    h: f32,
    (settles, resting): (bool, LaneMask),
) -> LaneMask {
    let mut at_rest = resting;
    for (lane, (mass, shape)) in block.lanes.iter().enumerate() {
        let before = || lane_state(start, lane);
        if resting & (1 << lane) != 0 {
            set_lane(next, lane, &before());
            continue;
        }
        // A lane clear of every plane is left as it is (as `resolve_body` would leave it),
        // without copying its states out and back.
        if clear_of_planes(shape, planes, lane_position(next, lane)) {
            continue;
        }
        let resolved = resolve_body(&before(), lane_state(next, lane), mass, shape, planes, h);
        if settles && same_bits(&before(), &resolved) {
            at_rest |= 1 << lane;
        }
        set_lane(next, lane, &resolved);
    }
    at_rest
}

/// The position of lane `lane` of `block`.
fn lane_position(block: &StateBlock, lane: usize) -> Vec3<f32> {
    let p = &block.position;
    Vec3::new(p.x.0[lane], p.y.0[lane], p.z.0[lane])
}

/// Lane `lane` of `block`.
fn lane_state(block: &StateBlock, lane: usize) -> State<f32> {
    let q = &block.orientation;
    let v = |a: &crate::physics::lanes::Vec3Lanes| Vec3::new(a.x.0[lane], a.y.0[lane], a.z.0[lane]);
    State {
        position: v(&block.position),
        orientation: Quat::new(q.w.0[lane], q.x.0[lane], q.y.0[lane], q.z.0[lane]),
        linear_momentum: v(&block.linear_momentum),
        angular_momentum: v(&block.angular_momentum),
    }
}

/// Writes `state` into lane `lane`.
fn set_lane(block: &mut StateBlock, lane: usize, state: &State<f32>) {
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
        lanes.0[lane] = value;
    }
}
