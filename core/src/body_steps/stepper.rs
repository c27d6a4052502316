//! One time step of one body: an integrator of `core/src/physics` over the derivative of
//! `body_steps::derivative`, then contact with the planes. Generic over [`Reference`]: f64
//! for the reference, f32 and dual numbers for the tangents.
//!
//! Stage times, for when the derivative takes `t`: as `physics::integrators` lists them.

use crate::body_steps::derivative::{ForceEnv, ForceTerm, Reference, derivative_of};
use crate::model::body::BodyState;
use crate::model::force::ForceKind;
use crate::model::integrator::Integrator;
use crate::model::mass::MassProperties;
use crate::physics::contact::{PlaneConstants, ShapeConstants, resolve_contacts};
use crate::physics::integrators::{renormalize, step};
use crate::physics::motion::{MassConstants, State};
use crate::physics::splitting::SplitAxes;

/// One body's steps: its integrator, mass constants, forces, what they see and the planes it
/// meets, fixed while the state and the clock move.
pub struct BodyStepper<'a, R: Reference = f64> {
    integrator: Integrator,
    constants: MassConstants<R>,
    /// The body's principal axes as the splittings read them, found once here.
    axes: SplitAxes<R>,
    forces: Vec<ForceTerm<'a, R>>,
    env: ForceEnv<'a, R::Primal>,
    contacts: Option<(ShapeConstants<R>, &'a [PlaneConstants<R>])>,
}

impl<'a, R: Reference> BodyStepper<'a, R> {
    /// The stepper of a body of `constants` under `forces`, seeing `env`, meeting no plane.
    pub(crate) fn with_constants(
        integrator: Integrator,
        constants: MassConstants<R>,
        forces: Vec<ForceTerm<'a, R>>,
        env: ForceEnv<'a, R::Primal>,
    ) -> Self {
        Self {
            integrator,
            axes: SplitAxes::for_integrator(integrator, &constants.inv_inertia),
            constants,
            forces,
            env,
            contacts: None,
        }
    }

    /// The same body, of `shape`, meeting `planes` after each step (none when empty).
    pub fn meeting(mut self, shape: ShapeConstants<R>, planes: &'a [PlaneConstants<R>]) -> Self {
        self.contacts = (!planes.is_empty()).then_some((shape, planes));
        self
    }

    /// One step of the integrator from `state` at time `t`, before `q` is renormalized: what
    /// the scheme itself makes of `|q|`.
    pub(crate) fn advance_unnormalized(&self, state: &State<R>, t: f64, h: f64) -> State<R> {
        let (constants, env, forces) = (&self.constants, &self.env, &self.forces[..]);
        let mut f = |y: &State<R>, at: R| derivative_of(y, constants, forces, at, env);
        step(
            self.integrator,
            state,
            constants,
            &self.axes,
            R::constant(t),
            R::constant(h),
            &mut f,
        )
    }

    /// One full step: the integrator's, `q` renormalized (Baraff 4), then the contacts.
    pub(crate) fn advance(&self, start: &State<R>, t: f64, h: f64) -> State<R> {
        let next = renormalize(self.advance_unnormalized(start, t, h));
        match &self.contacts {
            Some((shape, planes)) => {
                resolve_contacts(start, next, &self.constants, shape, planes, R::constant(h))
            }
            None => next,
        }
    }
}

impl<'a> BodyStepper<'a, f64> {
    /// The stepper of a body of `mass` under `forces`, seeing `env`, meeting no plane.
    pub fn new(
        integrator: Integrator,
        mass: &MassProperties,
        forces: &[&'a ForceKind],
        env: ForceEnv<'a>,
    ) -> Self {
        let forces = forces.iter().map(|kind| ForceTerm::of(kind)).collect();
        Self::with_constants(integrator, MassConstants::from(mass), forces, env)
    }

    /// `advance_unnormalized` on a body's state.
    pub fn unnormalized(&self, state: &BodyState, t: f64, h: f64) -> BodyState {
        self.advance_unnormalized(&state.into(), t, h).into()
    }

    /// `advance` on a body's state.
    pub fn step(&self, state: &BodyState, t: f64, h: f64) -> BodyState {
        self.advance(&state.into(), t, h).into()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use glam::{DQuat, DVec3};

    use super::*;
    use crate::body_steps::derivative::derivative;
    use crate::physics::exp_map::exp_rotation;
    use crate::verify::test_crowds::tumbling_brick;

    /// A body of `mass` without forces, external loads or custom forces.
    fn free(integrator: Integrator, mass: &MassProperties) -> BodyStepper<'static> {
        BodyStepper::new(integrator, mass, &[], ForceEnv::default())
    }

    #[test]
    fn exp_rotation_matches_the_axis_angle_quaternion_on_both_branches() {
        for angle in [0.0, 1e-9, 5e-4, 0.999e-3, 1.001e-3, 0.3, 2.5] {
            let axis = DVec3::new(1.0, -2.0, 0.5).normalize();
            let q = DQuat::from(exp_rotation((axis * angle).into()));
            let expected = DQuat::from_axis_angle(axis, angle);
            // Both are correctly rounded up to a few ulps of quantities of size 1.
            assert!((q - expected).length() < 4e-16, "angle {angle}: {q:?}");
        }
    }

    #[test]
    fn lie_rk4_keeps_q_on_the_unit_sphere_before_renormalization() {
        let (mut state, mass) = tumbling_brick();
        // |omega| is about 3.7 rad/s: h = 0.05 turns the body by ~0.19 rad a step, where
        // rk4's q drifts off the sphere by O(h^5) a step.
        let h = 0.05;
        let mut worst: f64 = 0.0;
        for _ in 0..2000 {
            state = free(Integrator::LieRk4, &mass).unnormalized(&state, 0.0, h);
            worst =
                crate::verify::compare::largest(worst, (state.orientation.length() - 1.0).abs());
        }
        // Each step multiplies unit quaternions (a few ulps each) and never renormalizes:
        // round-off accumulates as a random walk, ~sqrt(2000) * 1e-16.
        assert!(worst < 1e-13, "lie_rk4 | |q| - 1 | = {worst:.3e}");
        let (rk4_start, _) = tumbling_brick();
        let rk4 = free(Integrator::Rk4, &mass).unnormalized(&rk4_start, 0.0, h);
        let rk4_defect = (rk4.orientation.length() - 1.0).abs();
        assert!(
            rk4_defect > 1e3 * worst,
            "rk4 leaves the sphere ({rk4_defect:.3e}), lie_rk4 does not ({worst:.3e})"
        );
    }

    #[test]
    fn symplectic_euler_kicks_before_it_drifts() {
        let (state, mass) = tumbling_brick();
        let push = ForceKind::PointForce {
            force: DVec3::new(0.0, 0.0, 2.0),
            point: DVec3::new(0.5, 0.0, 0.0),
        };
        let h = 0.01;
        let env = ForceEnv::default();
        let forces = [&push];
        let next = BodyStepper::new(Integrator::SymplecticEuler, &mass, &forces, env)
            .unnormalized(&state, 0.0, h);
        let k = derivative(&state, &mass, [&push], 0.0, &env);
        let p1 = state.linear_momentum + k.force * h;
        let l1 = state.angular_momentum + k.torque * h;
        assert_eq!(next.linear_momentum, p1);
        assert_eq!(next.angular_momentum, l1);
        assert_eq!(next.position, state.position + p1 * mass.inv_mass() * h);
        let r0 = glam::DMat3::from_quat(state.orientation);
        let omega1 = r0 * (mass.inv_inertia_body() * (r0.transpose() * l1));
        let dq = DQuat::from_xyzw(omega1.x, omega1.y, omega1.z, 0.0) * state.orientation;
        let expected = state.orientation + dq * (0.5 * h);
        assert!((next.orientation - expected).length() < 1e-15);
    }
}
