//! What a run does when one body goes wrong: the fault kinds, the envelope a user sets, and the
//! policy (`stop` the run, or `freeze` the body and go on). Each backend checks every new state
//! with the same rules; [`state_fault`] is the f64 definition, `lane_faults` in
//! src/cpu/faults.rs and `state_fault` in shaders/integrate.wgsl are its twins.

use crate::model::body::BodyState;
use crate::model::codes::Coded;
use crate::model::error::{Error, Result};
use crate::model::validate::check_number;
use crate::physics::envelope::envelope_breaches;

/// Why a body was stopped: the first quantity of its new state that broke a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// The position turned NaN or infinite.
    NonFinitePosition,
    /// The orientation turned NaN or infinite.
    NonFiniteOrientation,
    /// The linear momentum turned NaN or infinite.
    NonFiniteLinearMomentum,
    /// The angular momentum turned NaN or infinite.
    NonFiniteAngularMomentum,
    /// The speed `|P| / M` passed [`Envelope::max_speed`].
    Speed,
    /// The angular speed `|omega|` passed [`Envelope::max_angular_speed`].
    AngularSpeed,
    /// The distance `|x|` from the origin passed [`Envelope::max_distance`].
    Distance,
}

impl Coded for Fault {
    const ALL: &'static [Self] = &[
        Fault::NonFinitePosition,
        Fault::NonFiniteOrientation,
        Fault::NonFiniteLinearMomentum,
        Fault::NonFiniteAngularMomentum,
        Fault::Speed,
        Fault::AngularSpeed,
        Fault::Distance,
    ];
    const WGSL_PREFIX: &'static str = "FAULT";
    /// 0 is a healthy body: the status word of a GPU record and of a recording.
    const FIRST_CODE: u32 = 1;

    fn name(self) -> &'static str {
        match self {
            Fault::NonFinitePosition => "non_finite_position",
            Fault::NonFiniteOrientation => "non_finite_orientation",
            Fault::NonFiniteLinearMomentum => "non_finite_linear_momentum",
            Fault::NonFiniteAngularMomentum => "non_finite_angular_momentum",
            Fault::Speed => "speed",
            Fault::AngularSpeed => "angular_speed",
            Fault::Distance => "distance",
        }
    }
}

impl Fault {
    /// The name reports and recordings use: `non_finite_position`, `speed`, ...
    pub fn name(self) -> &'static str {
        Coded::name(self)
    }

    /// The status code recordings and checkpoints store (0 is a healthy body).
    pub fn code(self) -> u32 {
        Coded::code(self)
    }

    /// The fault of status `code`, if it is one (0, healthy, is none).
    pub fn from_code(code: u32) -> Option<Self> {
        <Self as Coded>::from_code(code)
    }

    /// Whether a number went NaN or infinite (rather than out of the envelope).
    pub fn is_non_finite(self) -> bool {
        matches!(
            self,
            Fault::NonFinitePosition
                | Fault::NonFiniteOrientation
                | Fault::NonFiniteLinearMomentum
                | Fault::NonFiniteAngularMomentum
        )
    }
}

/// Status code of a healthy body.
pub const HEALTHY_STATUS: u32 = 0;

/// What a run does with a body whose new state breaks a rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnFault {
    /// Stop the whole run with an error naming the body (the body keeps its last good state).
    #[default]
    Stop,
    /// Quarantine the body at its last good state, leave it out of further steps, and go on
    /// with the rest of the crowd.
    Freeze,
}

impl OnFault {
    /// Every policy, in the order `--on-fault` lists them.
    pub const ALL: [OnFault; 2] = [OnFault::Stop, OnFault::Freeze];

    /// The name the command line and scene files use.
    pub fn name(self) -> &'static str {
        match self {
            OnFault::Stop => "stop",
            OnFault::Freeze => "freeze",
        }
    }

    /// The policy's code in the GPU's dispatch parameters: its position in [`Self::ALL`].
    pub(crate) fn code(self) -> u32 {
        Self::ALL.iter().position(|&p| p == self).expect("listed") as u32
    }

    /// The policy called `name`; the error names `field`.
    pub fn parse(name: &str, field: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                Error::invalid(
                    field,
                    format!("unknown fault policy `{name}` (expected stop or freeze)"),
                )
            })
    }
}

/// Limits a healthy body stays within; `None` is no limit. A body is out when its quantity
/// is strictly greater than the limit.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Envelope {
    /// Largest speed `|v| = |P| / M`.
    pub max_speed: Option<f64>,
    /// Largest angular speed `|omega|` (radians per second).
    pub max_angular_speed: Option<f64>,
    /// Largest distance `|x|` of the centre of mass from the origin.
    pub max_distance: Option<f64>,
}

impl Envelope {
    /// Whether any limit is set (the GPU kernel is specialized on it).
    pub fn is_set(&self) -> bool {
        self.limits().iter().any(|(_, limit)| limit.is_some())
    }

    /// The limits with their field names, in [`Fault`] order.
    fn limits(&self) -> [(&'static str, Option<f64>); 3] {
        [
            ("max_speed", self.max_speed),
            ("max_angular_speed", self.max_angular_speed),
            ("max_distance", self.max_distance),
        ]
    }

    /// The squared limits (speed, angular speed, distance) in the backend's precision,
    /// infinite where unset: the kernels compare squared lengths against them.
    pub(crate) fn squared_limits<R: From<f32> + std::ops::Mul<Output = R> + Copy>(
        &self,
        narrow: impl Fn(f64) -> R,
    ) -> [R; 3] {
        self.limits().map(|(_, limit)| match limit {
            Some(limit) => narrow(limit) * narrow(limit),
            None => R::from(f32::INFINITY),
        })
    }
}

/// How a run treats bodies that go wrong: the policy and the envelope.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FaultRules {
    /// Stop the run or freeze the body.
    pub on_fault: OnFault,
    /// Limits beyond which a body counts as faulty, as if it had gone non-finite.
    pub envelope: Envelope,
}

impl FaultRules {
    /// Every limit finite and > 0; `field` names the rules (`fault_rules`).
    pub(crate) fn validate(&self, field: &str) -> Result<()> {
        for (name, limit) in self.envelope.limits() {
            if let Some(limit) = limit {
                let field = format!("{field}.{name}");
                check_number(&field, limit)?;
                if limit <= 0.0 {
                    return Err(Error::invalid(field, format!("must be > 0 (got {limit})")));
                }
            }
        }
        Ok(())
    }

    /// The error `stop` reports for `fault` of `body` in the step from clock step `step`.
    pub(crate) fn stop_error(body: usize, step: u64, fault: Fault) -> Error {
        match fault.is_non_finite() {
            true => Error::NonFinite { body, step },
            false => Error::OutsideEnvelope { body, step, fault },
        }
    }
}

/// A body left out of the integration, and why.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuarantinedBody {
    /// Its index in the crowd.
    pub body: usize,
    /// The clock step of its last good state: the step whose integration broke a rule.
    pub step: u64,
    /// The rule it broke.
    pub fault: Fault,
    /// Its last good state, which it keeps until reset.
    pub state: BodyState,
}

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

    #[test]
    fn limits_must_be_positive_and_finite() {
        let rules = |max_speed| FaultRules {
            envelope: Envelope {
                max_speed: Some(max_speed),
                ..Envelope::default()
            },
            ..FaultRules::default()
        };
        assert!(rules(1.0).validate("fault_rules").is_ok());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let message = rules(bad).validate("fault_rules").unwrap_err().to_string();
            assert!(message.contains("fault_rules.max_speed"), "{message}");
        }
    }

    #[test]
    fn policies_parse_by_name() {
        for policy in OnFault::ALL {
            assert_eq!(OnFault::parse(policy.name(), "on_fault").unwrap(), policy);
        }
        let message = OnFault::parse("ignore", "--on-fault")
            .unwrap_err()
            .to_string();
        assert!(message.contains("--on-fault"), "{message}");
    }
}
