//! The user's rules for a body that goes wrong: the envelope it must stay in, the policy
//! (`stop` the run, or `freeze` the body and go on), and the record of a frozen body.

use crate::model::body::BodyState;
use crate::model::error::{Error, Result};
use crate::model::fault::Fault;
use crate::model::validate::check_number;

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
    pub fn code(self) -> u32 {
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
    pub fn squared_limits<R: From<f32> + std::ops::Mul<Output = R> + Copy>(
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
    pub fn stop_error(body: usize, step: u64, fault: Fault) -> Error {
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

#[cfg(test)]
mod tests {
    use super::*;

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
