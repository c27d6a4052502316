//! The fault rules on eight lanes at once; twin of `state_fault` in src/fault.rs and
//! shaders/integrate.wgsl. The healthy path is one mask per block and step; which rule a
//! lane broke is worked out only once one did.

use crate::cpu::block::{ConstantBlock, StateBlock};
use crate::cpu::derivative::auxiliaries;
use crate::cpu::lanes::{LANES, Lanes};
use crate::fault::Fault;

/// One bit per lane of a block.
pub(crate) type LaneMask = u8;
const _: () = assert!(LANES <= LaneMask::BITS as usize);

/// The lanes where a component holds a NaN or an infinity: `x * 0` is 0 for a finite `x`
/// and NaN otherwise, so one running sum per lane checks every component.
#[inline(always)]
fn non_finite(components: &[Lanes]) -> LaneMask {
    let sum = components
        .iter()
        .fold(Lanes::splat(0.0), |sum, &v| sum + v * 0.0);
    unordered(sum)
}

/// The lanes where `v > limit`.
#[inline(always)]
fn above(v: Lanes, limit: f32) -> LaneMask {
    (0..LANES).fold(0, |mask, lane| {
        mask | (((v.0[lane] > limit) as LaneMask) << lane)
    })
}

/// The lanes holding a NaN.
#[inline(always)]
fn unordered(v: Lanes) -> LaneMask {
    (0..LANES).fold(0, |mask, lane| {
        mask | ((v.0[lane].is_nan() as LaneMask) << lane)
    })
}

/// For each rule in [`Fault`] order, the lanes of `next` that break it; the envelope
/// (squared limits, `None` when no limit is set) only where every number is finite.
#[inline(always)]
fn broken_by_rule(
    next: &StateBlock,
    constants: &ConstantBlock,
    envelope_squared: Option<&[f32; 3]>,
) -> [LaneMask; 7] {
    let (p, q) = (&next.position, &next.orientation);
    let (m, l) = (&next.linear_momentum, &next.angular_momentum);
    let position = non_finite(&[p.x, p.y, p.z]);
    let orientation = non_finite(&[q.w, q.x, q.y, q.z]);
    let linear = non_finite(&[m.x, m.y, m.z]);
    let angular = non_finite(&[l.x, l.y, l.z]);
    let mut rules = [position, orientation, linear, angular, 0, 0, 0];
    if let Some(&[speed, angular_speed, distance]) = envelope_squared {
        let finite = !(position | orientation | linear | angular);
        let aux = auxiliaries(next, constants);
        rules[4] = finite & above(aux.velocity.dot(aux.velocity), speed);
        rules[5] = finite
            & above(
                aux.angular_velocity.dot(aux.angular_velocity),
                angular_speed,
            );
        rules[6] = finite & above(p.dot(*p), distance);
    }
    rules
}

/// The lanes of `next`, a block's new state, that break a rule: non-finite, or outside the
/// envelope when one is set.
#[inline(always)]
pub(crate) fn broken_lanes(
    next: &StateBlock,
    constants: &ConstantBlock,
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
        Some(_) => broken_by_rule(next, constants, envelope_squared)
            .into_iter()
            .fold(broken, |all, rule| all | rule),
    }
}

/// The first rule lane `lane` of `next` breaks (the lane is one [`broken_lanes`] named).
pub(crate) fn lane_fault(
    next: &StateBlock,
    constants: &ConstantBlock,
    envelope_squared: Option<&[f32; 3]>,
    lane: usize,
) -> Fault {
    let rules = broken_by_rule(next, constants, envelope_squared);
    let first = rules.iter().position(|&mask| mask & (1 << lane) != 0);
    // `Fault::ALL` is in rule order; a lane named by `broken_lanes` breaks one of them.
    first.map_or(Fault::NonFinitePosition, |rule| {
        <Fault as crate::codes::Coded>::ALL[rule]
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::BodyState;
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
        let constants = ConstantBlock {
            mass: Lanes::splat(2.0),
            inv_mass: Lanes::splat(0.5),
            inv_inertia: [
                Lanes::splat(1.0),
                Lanes::splat(1.0),
                Lanes::splat(1.0),
                Lanes::splat(0.0),
                Lanes::splat(0.0),
                Lanes::splat(0.0),
            ],
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
        let broken = broken_lanes(&s, &c, Some(&limits));
        assert_eq!(broken, 0b0111_1111);
        assert_eq!(broken_lanes(&s, &c, None), 0b0000_1111);
        for lane in 0..7 {
            let fault = lane_fault(&s, &c, Some(&limits), lane);
            assert_eq!(
                fault,
                <Fault as crate::codes::Coded>::ALL[lane],
                "lane {lane}"
            );
            let state = s.state(lane);
            let motion = || {
                let inv_mass = 0.5;
                (state.linear_momentum * inv_mass, state.angular_momentum)
            };
            let reference = crate::fault::state_fault(&limits64, &state, motion);
            assert_eq!(reference, Some(fault), "lane {lane}");
        }
    }
}
