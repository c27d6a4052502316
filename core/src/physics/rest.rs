//! A body at rest: scheduling, not physics. Where a step reads nothing but the body's state
//! (no force on it reads the clock, no tangents are carried), a step that leaves every bit
//! of the state as it was leaves it so at every later step. So a backend that meets such a
//! step takes no more of that body's steps in the run: the same bits, without their cost.
//! On a floor, spheres, ellipsoids and capsules come to such a rest within a few steps
//! (their contacts' sweeps settle exactly); a box or a cylinder on four points does not.
//!
//! Bits, not `==`: `-0.0 == 0.0`, and a later step could tell them apart.

use super::motion::State;

/// A number whose bits can be compared.
pub trait Bits: Copy {
    fn bits(self) -> u64;
}

impl Bits for f64 {
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

impl Bits for f32 {
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
}

/// Whether `a` and `b` hold the same bits in every component.
pub fn same_bits<R: Bits>(a: &State<R>, b: &State<R>) -> bool {
    let components = |s: &State<R>| {
        let (x, q, p, l) = (
            s.position,
            s.orientation,
            s.linear_momentum,
            s.angular_momentum,
        );
        [
            x.x, x.y, x.z, q.w, q.x, q.y, q.z, p.x, p.y, p.z, l.x, l.y, l.z,
        ]
        .map(R::bits)
    };
    components(a) == components(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::algebra::{Quat, Vec3};

    #[test]
    fn a_zero_of_the_other_sign_is_a_change() {
        let state = |z: f64| State {
            position: Vec3::new(1.0, 2.0, z),
            orientation: Quat::new(1.0, 0.0, 0.0, 0.0),
            linear_momentum: Vec3::new(0.0, 0.0, 0.0),
            angular_momentum: Vec3::new(0.0, 0.0, 0.0),
        };
        assert!(same_bits(&state(0.0), &state(0.0)));
        assert!(!same_bits(&state(0.0), &state(-0.0)));
        assert!(!same_bits(&state(0.0), &state(1e-300)));
        let f32_state = |z: f32| State {
            position: Vec3::new(0.0, 0.0, z),
            ..state(0.0).map(|v| v as f32)
        };
        assert!(!same_bits(&f32_state(0.0), &f32_state(-0.0)));
    }

    /// Rest is sound only where a kind whose load moves with the clock says so: each kind of
    /// the crowd that has every one, evaluated at two times.
    #[test]
    fn every_kind_whose_load_moves_with_the_clock_declares_it() {
        use crate::body_steps::derivative::{ForceEnv, ForceTerm, derivative_of};
        use crate::model::force::ForceType;
        use crate::model::integrator::Integrator;
        use crate::physics::motion::MassConstants;
        use crate::verify::check_crowd::cross_check_crowd;

        let crowd = cross_check_crowd(64, 5, Integrator::Rk4, 1e-3).unwrap();
        let mut moved = Vec::new();
        for force in &crowd.forces {
            let bodies = force.body.map_or(0..crowd.bodies.len(), |b| b..b + 1);
            for body in &crowd.bodies[bodies] {
                let env = ForceEnv {
                    body: 0,
                    load: Default::default(),
                    keyframes: &crowd.keyframes,
                    custom_force: crowd.custom_force.as_ref(),
                };
                let mass = MassConstants::from(&body.mass);
                let terms = [ForceTerm::of(&force.kind)];
                let state = State::from(&body.state);
                let at = |t: f64| derivative_of(&state, &mass, &terms, t, &env);
                // Times inside and past the keyframe tables, and a sinusoid's quarter turns.
                let derivatives = [0.0, 0.137, 0.5, 1.3, 7.9].map(at);
                if derivatives.iter().any(|d| *d != derivatives[0]) {
                    moved.push(force.kind.force_type());
                }
            }
        }
        moved.dedup();
        for kind in [ForceType::Sinusoidal, ForceType::Keyframed] {
            assert!(moved.contains(&kind), "the crowd's {kind:?} never moved");
        }
        for kind in moved {
            assert!(kind.reads_the_clock(), "{kind:?} moves with the clock");
        }
    }
}
