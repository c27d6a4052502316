//! How well each integrator follows a torque-free asymmetric top on the f64 reference: its
//! error against the closed form, and the drift of the invariants over a long run. Backs
//! `rigid-crowd integrators` (docs/integrators.md).

use crate::body_steps::derivative::ForceEnv;
use crate::body_steps::stepper::BodyStepper;
use crate::model::body::Body;
use crate::model::integrator::Integrator;
use crate::verify::analytic::tumbling_top;
use crate::verify::compare::largest;

/// The largest drift of each invariant over a run, relative to its start (NaN once any
/// step is NaN).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct InvariantDrifts {
    /// `max |E - E0| / E0` (kinetic energy; no force does work).
    pub energy: f64,
    /// `max | |q| - 1 |`, after each step and before the renormalization that follows it.
    pub unit_norm: f64,
    /// `max |L - L0| / |L0|`.
    pub angular_momentum: f64,
    /// `max |P - P0| / |P0|`.
    pub linear_momentum: f64,
}

/// `|omega_body - closed form| / |closed form|` after `time` with step `time / steps`.
pub fn convergence_error(integrator: Integrator, time: f64, steps: u64) -> f64 {
    let (body, top) = tumbling_top();
    let stepper = BodyStepper::new(integrator, &body.mass, &[], ForceEnv::default());
    let h = time / steps as f64;
    let mut state = body.state;
    for step in 0..steps {
        state = stepper.step(&state, step as f64 * h, h);
    }
    let end = Body { state, ..body };
    let exact = top.body_angular_velocity(time);
    (end.body_angular_velocity() - exact).length() / exact.length()
}

/// The drifts of the invariants over `steps` torque-free steps of `h`.
pub fn long_run_drifts(integrator: Integrator, steps: u64, h: f64) -> InvariantDrifts {
    let (body, _) = tumbling_top();
    let stepper = BodyStepper::new(integrator, &body.mass, &[], ForceEnv::default());
    let (e0, l0, p0) = (
        body.kinetic_energy(),
        body.state.angular_momentum,
        body.state.linear_momentum,
    );
    let mut drifts = InvariantDrifts::default();
    let mut state = body.state;
    for step in 0..steps {
        state = stepper.unnormalized(&state, step as f64 * h, h);
        let d = &mut drifts;
        d.unit_norm = largest(d.unit_norm, (state.orientation.length() - 1.0).abs());
        state.orientation = state.orientation.normalize();
        let now = Body { state, ..body };
        d.energy = largest(d.energy, (now.kinetic_energy() - e0).abs() / e0);
        let angular = (state.angular_momentum - l0).length() / l0.length();
        d.angular_momentum = largest(d.angular_momentum, angular);
        let linear = (state.linear_momentum - p0).length() / p0.length();
        d.linear_momentum = largest(d.linear_momentum, linear);
    }
    drifts
}
