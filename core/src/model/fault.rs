//! Why a body is stopped: the fault kinds, each with the status code that recordings,
//! checkpoints and the GPU's records store.

use crate::model::codes::Coded;

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
    /// The speed `|P| / M` passed [`Envelope::max_speed`](crate::model::fault_rules::Envelope::max_speed).
    Speed,
    /// The angular speed `|omega|` passed [`Envelope::max_angular_speed`](crate::model::fault_rules::Envelope::max_angular_speed).
    AngularSpeed,
    /// The distance `|x|` from the origin passed [`Envelope::max_distance`](crate::model::fault_rules::Envelope::max_distance).
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

/// Status code the GPU kernel gives a healthy body it found at rest (`physics::rest`): its
/// state is a fixed point of its step, so later dispatches move its clock alone, until the
/// host writes it a new state or new external loads. Not a fault, and never a fault's code.
pub const RESTING_STATUS: u32 = 0x8000_0000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resting_status_is_neither_healthy_nor_a_fault() {
        assert_ne!(RESTING_STATUS, HEALTHY_STATUS);
        assert_eq!(Fault::from_code(RESTING_STATUS), None);
        assert!(Fault::ALL.iter().all(|f| f.code() != RESTING_STATUS));
    }
}
