//! The fault rules on eight lanes at once: the non-finite test as a mask, the envelope
//! as the definition's `envelope_breaches` on lanes (as `state_fault` in core/src/backends/cpu_ref/faults.rs and the
//! kernel run it). The healthy path is one mask per block and step; which rule a lane broke
//! is worked out only once one did.

use crate::model::fault::Fault;
use crate::physics::envelope::envelope_breaches;
use crate::physics::lanes::{LANES, LaneType};
use crate::physics::motion::{MassConstants, State, auxiliaries};

/// One bit per lane of a block.
pub(crate) type LaneMask = u8;
const _: () = assert!(LANES <= LaneMask::BITS as usize);

/// The lanes where a component holds a NaN or an infinity: `x * 0` is 0 for a finite `x`
/// and NaN otherwise, so one running sum per lane checks every component; a NaN is the one
/// number not equal to itself.
#[inline(always)]
fn non_finite<L: LaneType>(components: &[L]) -> LaneMask {
    let zero = L::splat(0.0);
    let sum = components.iter().fold(zero, |sum, &v| sum + v * zero);
    L::mask(L::not(sum.equals(sum)))
}

/// For each rule in [`Fault`] order, the lanes of `next` that break it; the envelope
/// (squared limits, `None` when no limit is set) only where every number is finite.
#[inline(always)]
fn broken_by_rule<L: LaneType>(
    next: &State<L>,
    mass: &MassConstants<L>,
    envelope_squared: Option<&[f32; 3]>,
) -> [LaneMask; 7] {
    let (p, q) = (&next.position, &next.orientation);
    let (m, l) = (&next.linear_momentum, &next.angular_momentum);
    let position = non_finite(&[p.x, p.y, p.z]);
    let orientation = non_finite(&[q.w, q.x, q.y, q.z]);
    let linear = non_finite(&[m.x, m.y, m.z]);
    let angular = non_finite(&[l.x, l.y, l.z]);
    let mut rules = [position, orientation, linear, angular, 0, 0, 0];
    if let Some(limits) = envelope_squared {
        let finite = !(position | orientation | linear | angular);
        let aux = auxiliaries(next, mass);
        let breaches = envelope_breaches(
            next.position,
            aux.velocity,
            aux.angular_velocity,
            [
                L::splat(limits[0]),
                L::splat(limits[1]),
                L::splat(limits[2]),
            ],
        );
        for (rule, broken) in rules[4..].iter_mut().zip(breaches) {
            *rule = finite & L::mask(broken);
        }
    }
    rules
}

/// The lanes of `next`, a block's new state, that break a rule: non-finite, or outside the
/// envelope when one is set.
#[inline(always)]
pub(crate) fn broken_lanes<L: LaneType>(
    next: &State<L>,
    mass: &MassConstants<L>,
    envelope_squared: Option<&[f32; 3]>,
) -> LaneMask {
    let (p, q) = (&next.position, &next.orientation);
    let (m, l) = (&next.linear_momentum, &next.angular_momentum);
    let components = [
        p.x, p.y, p.z, q.w, q.x, q.y, q.z, m.x, m.y, m.z, l.x, l.y, l.z,
    ];
    let broken = non_finite(&components);
    match envelope_squared {
        None => broken,
        Some(_) => broken_by_rule(next, mass, envelope_squared)
            .into_iter()
            .fold(broken, |all, rule| all | rule),
    }
}

/// The first rule lane `lane` of `next` breaks (the lane is one [`broken_lanes`] named).
pub(crate) fn lane_fault<L: LaneType>(
    next: &State<L>,
    mass: &MassConstants<L>,
    envelope_squared: Option<&[f32; 3]>,
    lane: usize,
) -> Fault {
    let rules = broken_by_rule(next, mass, envelope_squared);
    let first = rules.iter().position(|&mask| mask & (1 << lane) != 0);
    // `Fault::ALL` is in rule order; a lane named by `broken_lanes` breaks one of them.
    first.map_or(Fault::NonFinitePosition, |rule| {
        <Fault as crate::model::codes::Coded>::ALL[rule]
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::cpu::block::{ConstantBlock, StateBlock};
    use crate::model::body::BodyState;
    use crate::physics::lanes::Lanes;
    use glam::{DQuat, DVec3};

    fn block() -> (StateBlock, ConstantBlock) {
        let mut state = StateBlock::default();
        for lane in 0..LANES {
            state.set(
                lane,
                &BodyState {
                    position: DVec3::X,
                    orientation: DQuat::IDENTITY,
                    linear_momentum: DVec3::ZERO,
                    angular_momentum: DVec3::ZERO,
                },
            );
        }
        let (one, zero) = (Lanes::splat(1.0), Lanes::splat(0.0));
        let constants = ConstantBlock {
            mass: crate::physics::motion::MassConstants {
                mass: Lanes::splat(2.0),
                inv_mass: Lanes::splat(0.5),
                inv_inertia: crate::physics::algebra::SymMat3 {
                    xx: one,
                    yy: one,
                    zz: one,
                    xy: zero,
                    xz: zero,
                    yz: zero,
                },
            },
            ..ConstantBlock::default()
        };
        (state, constants)
    }

    /// Each lane breaks one rule, and the same rules in f64 name the same fault.
    #[test]
    fn each_lane_names_the_rule_the_reference_names() {
        let (mut s, c) = block();
        let limits = [2.0f32, 3.0, 4.0].map(|v| v * v);
        let limits64 = [2.0f64, 3.0, 4.0].map(|v| v * v);
        s.position.y.0[0] = f32::NAN;
        s.orientation.w.0[1] = f32::INFINITY;
        s.linear_momentum.z.0[2] = f32::NEG_INFINITY;
        s.angular_momentum.x.0[3] = f32::NAN;
        s.linear_momentum.x.0[4] = 4.1; // speed 2.05
        s.angular_momentum.z.0[5] = 3.1; // |omega| 3.1 with a unit inverse inertia
        s.position.x.0[6] = 4.1;
        // Lane 7 stays inside: speed 2, exactly on the limit.
        s.linear_momentum.x.0[7] = 4.0;
        let broken = broken_lanes(&s, &c.mass, Some(&limits));
        assert_eq!(broken, 0b0111_1111);
        assert_eq!(broken_lanes(&s, &c.mass, None), 0b0000_1111);
        for lane in 0..7 {
            let fault = lane_fault(&s, &c.mass, Some(&limits), lane);
            assert_eq!(
                fault,
                <Fault as crate::model::codes::Coded>::ALL[lane],
                "lane {lane}"
            );
            let state = s.state(lane);
            let motion = || {
                let inv_mass = 0.5;
                (state.linear_momentum * inv_mass, state.angular_momentum)
            };
            let reference =
                crate::backends::cpu_ref::faults::state_fault(&limits64, &state, motion);
            assert_eq!(reference, Some(fault), "lane {lane}");
        }
    }
}
