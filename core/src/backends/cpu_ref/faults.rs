//! The reference's fault check: the first rule a body's new state breaks, in f64. The
//! envelope's comparisons are the definition's (`physics::envelope`); `cpu` and the GPU run
//! the same definition on their own number types.

use crate::model::body::BodyState;
use crate::model::fault::Fault;
use crate::physics::envelope::envelope_breaches;

/// The first rule `next`, a body's new state, breaks, given its velocity `v` and angular
/// velocity `omega` (computed from `next`, only looked at once every number is finite).
pub(crate) fn state_fault(
    envelope_squared: &[f64; 3],
    next: &BodyState,
    motion: impl FnOnce() -> (glam::DVec3, glam::DVec3),
) -> Option<Fault> {
    let finite = [
        (next.position.is_finite(), Fault::NonFinitePosition),
        (next.orientation.is_finite(), Fault::NonFiniteOrientation),
        (
            next.linear_momentum.is_finite(),
            Fault::NonFiniteLinearMomentum,
        ),
        (
            next.angular_momentum.is_finite(),
            Fault::NonFiniteAngularMomentum,
        ),
    ];
    if let Some(&(_, fault)) = finite.iter().find(|(ok, _)| !ok) {
        return Some(fault);
    }
    let [speed, angular_speed, distance] = *envelope_squared;
    if speed.is_infinite() && angular_speed.is_infinite() && distance.is_infinite() {
        return None;
    }
    let (velocity, omega) = motion();
    let breaches = envelope_breaches(
        next.position.into(),
        velocity.into(),
        omega.into(),
        [speed, angular_speed, distance],
    );
    let rules = [Fault::Speed, Fault::AngularSpeed, Fault::Distance];
    breaches
        .iter()
        .zip(rules)
        .find(|(broken, _)| **broken)
        .map(|(_, fault)| fault)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fault_rules::Envelope;
    use glam::{DQuat, DVec3};

    fn state(position: DVec3) -> BodyState {
        BodyState {
            position,
            orientation: DQuat::IDENTITY,
            linear_momentum: DVec3::ZERO,
            angular_momentum: DVec3::ZERO,
        }
    }

    #[test]
    fn every_quantity_is_named_in_fault_order() {
        let limits = Envelope {
            max_speed: Some(2.0),
            max_angular_speed: Some(3.0),
            max_distance: Some(4.0),
        }
        .squared_limits(|v| v);
        let calm = || (DVec3::X, DVec3::Y);
        assert_eq!(state_fault(&limits, &state(DVec3::X), calm), None);
        // Exactly on a limit is inside; just past it is out.
        assert_eq!(state_fault(&limits, &state(DVec3::Z * 4.0), calm), None);
        let far = state(DVec3::Z * 4.000001);
        assert_eq!(state_fault(&limits, &far, calm), Some(Fault::Distance));
        let fast = || (DVec3::X * 2.000001, DVec3::ZERO);
        assert_eq!(state_fault(&limits, &far, fast), Some(Fault::Speed));
        let spinning = || (DVec3::ZERO, DVec3::Y * 3.000001);
        assert_eq!(
            state_fault(&limits, &far, spinning),
            Some(Fault::AngularSpeed)
        );
        let mut broken = far;
        broken.angular_momentum.y = f64::NAN;
        assert_eq!(
            state_fault(&limits, &broken, fast),
            Some(Fault::NonFiniteAngularMomentum)
        );
        broken.position.x = f64::INFINITY;
        assert_eq!(
            state_fault(&limits, &broken, fast),
            Some(Fault::NonFinitePosition)
        );
        let none = Envelope::default().squared_limits(|v| v);
        assert_eq!(state_fault(&none, &far, fast), None);
    }
}
