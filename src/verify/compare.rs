//! How far two integrations of the same crowd are apart, quantity by quantity.

use glam::DVec3;

use crate::model::body::Body;
use crate::physics::motion::State;
use crate::physics::rest::same_bits;

pub(crate) use rigid_crowd_core::verify::compare::largest;

/// Largest relative deviation of each quantity between a tested run and a reference run.
///
/// For every body, `|tested - reference| / max(|reference|, crowd scale)`, where the crowd
/// scale is the RMS magnitude of that quantity over the reference crowd: a body at rest is
/// measured against the crowd's typical magnitude instead of dividing by zero.
/// Orientations are unit quaternions, compared up to sign (`q` and `-q` are one rotation).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Deviation {
    /// Centre-of-mass position `x`.
    pub position: f64,
    /// Orientation `q`.
    pub orientation: f64,
    /// Velocity `v`.
    pub velocity: f64,
    /// Angular velocity `omega`.
    pub angular_velocity: f64,
    /// Linear momentum `P`.
    pub linear_momentum: f64,
    /// Angular momentum `L`.
    pub angular_momentum: f64,
}

impl Deviation {
    /// Compares `tested` against `reference`, body by body (same length and order).
    pub fn between(tested: &[Body], reference: &[Body]) -> Self {
        assert_eq!(tested.len(), reference.len(), "crowds differ in size");
        let vector = |f: &dyn Fn(&Body) -> DVec3| {
            let scale = rms(reference.iter().map(f));
            tested
                .iter()
                .zip(reference)
                .map(|(t, r)| {
                    (f(t) - f(r)).length() / f(r).length().max(scale).max(f64::MIN_POSITIVE)
                })
                .fold(0.0, largest)
        };
        let orientation = tested
            .iter()
            .zip(reference)
            .map(|(t, r)| {
                let (a, b) = (t.state.orientation, r.state.orientation);
                (a - b).length().min((a + b).length())
            })
            .fold(0.0, largest);
        Self {
            position: vector(&|b| b.state.position),
            orientation,
            velocity: vector(&|b| b.velocity()),
            angular_velocity: vector(&|b| b.angular_velocity()),
            linear_momentum: vector(&|b| b.state.linear_momentum),
            angular_momentum: vector(&|b| b.state.angular_momentum),
        }
    }

    /// The largest of all quantities.
    pub fn max(&self) -> f64 {
        self.named().iter().map(|(_, v)| *v).fold(0.0, largest)
    }

    /// Each quantity with its name, in a fixed order.
    pub fn named(&self) -> [(&'static str, f64); 6] {
        [
            ("position", self.position),
            ("orientation", self.orientation),
            ("velocity", self.velocity),
            ("angular_velocity", self.angular_velocity),
            ("linear_momentum", self.linear_momentum),
            ("angular_momentum", self.angular_momentum),
        ]
    }
}

/// How many bodies of `tested` differ from `reference` in any bit of their state
/// `(x, q, P, L)` (same length and order): zero where two backends computed the same thing.
pub fn differing_bodies(tested: &[Body], reference: &[Body]) -> usize {
    assert_eq!(tested.len(), reference.len(), "crowds differ in size");
    let state = |b: &Body| State::<f64>::from(&b.state);
    tested
        .iter()
        .zip(reference)
        .filter(|(t, r)| !same_bits(&state(t), &state(r)))
        .count()
}

fn rms(values: impl Iterator<Item = DVec3>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v.length_squared(), n + 1));
    if n == 0 { 0.0 } else { (sum / n as f64).sqrt() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::body::BodyState;
    use crate::model::mass::MassProperties;
    use glam::DQuat;

    fn body(position: DVec3) -> Body {
        let state = BodyState {
            position,
            orientation: DQuat::IDENTITY,
            linear_momentum: DVec3::X,
            angular_momentum: DVec3::Y,
        };
        let mass = MassProperties::from_principal(1.0, DVec3::ONE, "mass").unwrap();
        Body { mass, state }
    }

    #[test]
    fn a_nan_anywhere_fails_every_comparison() {
        let reference = [body(DVec3::X), body(DVec3::Y)];
        let fine = Deviation::between(&[body(DVec3::X), body(DVec3::Y * 1.5)], &reference);
        assert!(fine.max() > 0.0 && fine.max() <= 1.0, "{fine:?}");
        // The NaN body first and last: a fold with f64::max would keep only the finite one.
        for tested in [
            [body(DVec3::NAN), body(DVec3::Y)],
            [body(DVec3::X), body(DVec3::NAN)],
        ] {
            let deviation = Deviation::between(&tested, &reference);
            assert!(deviation.position.is_nan(), "{deviation:?}");
            let passes = deviation.max() <= 1e-3;
            assert!(!passes, "a NaN passed a tolerance: {deviation:?}");
        }
        assert!(largest(f64::NAN, 1.0).is_nan() && largest(1.0, f64::NAN).is_nan());
        assert_eq!(largest(1.0, 2.0), 2.0);
    }
}
