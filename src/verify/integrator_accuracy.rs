//! How well each integrator follows a torque-free asymmetric top on the f64 reference: its
//! error against the closed form, and the drift of the invariants over a long run. Backs
//! `rigid-crowd integrators` (docs/integrators.md).

use glam::{DMat3, DQuat, DVec3};

use crate::body_steps::derivative::ForceEnv;
use crate::body_steps::stepper::BodyStepper;
use crate::model::body::Body;
use crate::model::integrator::Integrator;
use crate::model::mass::MassProperties;
use crate::physics::integrators::renormalize;
use crate::physics::motion::State;
use crate::verify::analytic::tumbling_top;
use crate::verify::compare::largest;
use crate::verify::xorshift::Xorshift64;

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

/// A long torque-free run of a crowd: the largest drift of each invariant over every body,
/// and the largest `|E - E0| / E0` reached by each sampled time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LongRun {
    pub drifts: InvariantDrifts,
    /// `(t, largest |E - E0| / E0 over the bodies and the steps up to t)`, at steps spaced
    /// evenly in log(t), [`SAMPLES_PER_DECADE`] to a decade, and at the last step.
    pub energy_history: Vec<(f64, f64)>,
}

/// Samples of the energy history in each decade of the run length.
pub const SAMPLES_PER_DECADE: u32 = 10;

/// The steps `1..=steps` at which the energy history is sampled.
pub(crate) fn sample_steps(steps: u64) -> Vec<u64> {
    let mut out: Vec<u64> = (0..)
        .map(|k| 10f64.powf(k as f64 / SAMPLES_PER_DECADE as f64).round() as u64)
        .take_while(|&n| n < steps)
        .collect();
    out.push(steps);
    out.dedup();
    out
}

/// The tumbling top ([`tumbling_top`]) and `count - 1` more torque-free asymmetric bodies:
/// principal moments 1 to 4 (the triangle inequality kept), every third given as a full
/// tensor, at rest in translation, turning at 1 to 3 rad/s about a random axis.
pub fn long_run_bodies(count: usize) -> Vec<Body> {
    let mut rng = Xorshift64(0x2f6b_9c3d_51e7_a804);
    let mut uniform = move || rng.unit();
    let mut bodies = vec![tumbling_top().0];
    while bodies.len() < count {
        let (a, b) = (1.0 + 3.0 * uniform(), 1.0 + 3.0 * uniform());
        let c = (a - b).abs() + 0.1 + (a + b - (a - b).abs() - 0.2) * uniform();
        let moments = DVec3::new(a, b, c);
        let mass = if bodies.len() % 3 == 0 {
            let turn = DMat3::from_quat(DQuat::from_rotation_y(0.4 + uniform()));
            let tensor = turn * DMat3::from_diagonal(moments) * turn.transpose();
            MassProperties::new(1.0, tensor, "long-run body")
        } else {
            MassProperties::from_principal(1.0, moments, "long-run body")
        }
        .expect("moments within the triangle inequality");
        let axis = DVec3::new(uniform() - 0.5, uniform() - 0.5, uniform() - 0.5).normalize();
        let q = DQuat::from_rotation_z(6.0 * uniform()) * DQuat::from_rotation_x(uniform());
        let spin = axis * (1.0 + 2.0 * uniform());
        bodies.push(Body::from_kinematics(
            mass,
            DVec3::ZERO,
            q,
            DVec3::ZERO,
            spin,
        ));
    }
    bodies
}

/// A body's invariants at the start of a run: what its drifts are measured against.
pub(crate) struct StartInvariants {
    energy: f64,
    angular_momentum: DVec3,
    linear_momentum: DVec3,
    /// `|P0|`, or 1 for a body at rest in translation (which keeps `P = 0`).
    linear_scale: f64,
}

impl StartInvariants {
    pub(crate) fn of(body: &Body) -> Self {
        let p0 = body.state.linear_momentum;
        Self {
            energy: body.kinetic_energy(),
            angular_momentum: body.state.angular_momentum,
            linear_momentum: p0,
            linear_scale: if p0.length() > 0.0 { p0.length() } else { 1.0 },
        }
    }

    /// Raises the energy and momentum drifts of `drifts` to those of `now`, where they are
    /// larger.
    pub(crate) fn record(&self, now: &Body, drifts: &mut InvariantDrifts) {
        let d = drifts;
        d.energy = largest(
            d.energy,
            (now.kinetic_energy() - self.energy).abs() / self.energy,
        );
        let l = &now.state.angular_momentum;
        let angular = (*l - self.angular_momentum).length() / self.angular_momentum.length();
        d.angular_momentum = largest(d.angular_momentum, angular);
        let linear =
            (now.state.linear_momentum - self.linear_momentum).length() / self.linear_scale;
        d.linear_momentum = largest(d.linear_momentum, linear);
    }
}

/// One body's long run: its drifts and its energy history at `samples`.
fn body_long_run(integrator: Integrator, body: &Body, samples: &[u64], h: f64) -> LongRun {
    let stepper = BodyStepper::new(integrator, &body.mass, &[], ForceEnv::default());
    let start = StartInvariants::of(body);
    let mut run = LongRun::default();
    let mut state = body.state;
    let mut next_sample = samples.iter().peekable();
    let last = samples.last().copied().unwrap_or(0);
    for step in 0..last {
        let next = stepper.unnormalized(&state, step as f64 * h, h);
        let d = &mut run.drifts;
        d.unit_norm = largest(d.unit_norm, (next.orientation.length() - 1.0).abs());
        // The renormalization of the physics (not glam's), so the scan holds the state the
        // reference backend does, bit for bit.
        state = renormalize(State::from(&next)).into();
        start.record(&Body { state, ..*body }, d);
        if next_sample.next_if_eq(&&(step + 1)).is_some() {
            run.energy_history.push(((step + 1) as f64 * h, d.energy));
        }
    }
    run
}

/// The long run of `bodies` under `integrator`: `steps` torque-free steps of `h`, the bodies
/// shared among the machine's threads.
pub fn long_run(integrator: Integrator, bodies: &[Body], steps: u64, h: f64) -> LongRun {
    let samples = sample_steps(steps);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per_thread = bodies.len().div_ceil(threads).max(1);
    let runs: Vec<LongRun> = std::thread::scope(|scope| {
        let handles: Vec<_> = bodies
            .chunks(per_thread)
            .map(|chunk| {
                let samples = &samples;
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|body| body_long_run(integrator, body, samples, h))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().expect("a long-run thread panicked"))
            .collect()
    });
    runs.into_iter()
        .reduce(|mut all, run| {
            let (a, b) = (&mut all.drifts, run.drifts);
            a.energy = largest(a.energy, b.energy);
            a.unit_norm = largest(a.unit_norm, b.unit_norm);
            a.angular_momentum = largest(a.angular_momentum, b.angular_momentum);
            a.linear_momentum = largest(a.linear_momentum, b.linear_momentum);
            for (mine, theirs) in all.energy_history.iter_mut().zip(run.energy_history) {
                mine.1 = largest(mine.1, theirs.1);
            }
            all
        })
        .unwrap_or_default()
}

/// `(p, c)` of the least-squares fit `e = c t^p` to the history's samples with
/// `t >= t_end / 100` (the last two decades), where the error is positive and finite; `None`
/// with fewer than three such samples.
pub fn growth_fit(history: &[(f64, f64)]) -> Option<(f64, f64)> {
    let end = history.last()?.0;
    let points: Vec<(f64, f64)> = history
        .iter()
        .filter(|&&(t, e)| t >= end / 100.0 && e > 0.0 && e.is_finite())
        .map(|&(t, e)| (t.log10(), e.log10()))
        .collect();
    if points.len() < 3 {
        return None;
    }
    let n = points.len() as f64;
    let (mx, my) = points
        .iter()
        .fold((0.0, 0.0), |(x, y), p| (x + p.0 / n, y + p.1 / n));
    let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(sxy, sxx), p| {
        (sxy + (p.0 - mx) * (p.1 - my), sxx + (p.0 - mx) * (p.0 - mx))
    });
    let slope = sxy / sxx;
    Some((slope, 10f64.powf(my - slope * mx)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_samples_are_spaced_in_log_time_and_end_at_the_last_step() {
        assert_eq!(sample_steps(1), vec![1]);
        let samples = sample_steps(1000);
        assert_eq!(samples.first(), Some(&1));
        assert_eq!(samples.last(), Some(&1000));
        assert!(samples.windows(2).all(|w| w[0] < w[1]));
        // 10 to a decade: 1, 2, 3, 4, 5, 6, 8, 10, 13, 16, 20, ... (some round alike).
        assert!(samples.contains(&100) && samples.contains(&158) && samples.contains(&794));
    }

    #[test]
    fn the_growth_fit_recovers_a_power_law() {
        let history: Vec<(f64, f64)> = sample_steps(100_000)
            .iter()
            .map(|&n| (n as f64 * 0.01, 3e-12 * (n as f64 * 0.01).powf(0.5)))
            .collect();
        let (p, c) = growth_fit(&history).unwrap();
        assert!(
            (p - 0.5).abs() < 1e-9 && (c / 3e-12 - 1.0).abs() < 1e-9,
            "{p} {c}"
        );
        assert_eq!(growth_fit(&history[..2]), None);
    }

    /// Every body is run, and the history is the largest over them: one body alone and in a
    /// crowd of others reaches no more than the crowd, and the crowd's drifts are a body's.
    #[test]
    fn the_long_run_of_a_crowd_is_the_worst_of_its_bodies() {
        let bodies = long_run_bodies(5);
        let crowd = long_run(Integrator::Rk4, &bodies, 300, 0.05);
        let each: Vec<LongRun> = bodies
            .iter()
            .map(|b| long_run(Integrator::Rk4, std::slice::from_ref(b), 300, 0.05))
            .collect();
        let worst = each.iter().map(|r| r.drifts.energy).fold(0.0, f64::max);
        assert_eq!(crowd.drifts.energy, worst);
        assert!(worst > 0.0);
        for (k, &(t, e)) in crowd.energy_history.iter().enumerate() {
            let most = each
                .iter()
                .map(|r| r.energy_history[k].1)
                .fold(0.0, f64::max);
            assert_eq!((t, e), (each[0].energy_history[k].0, most));
        }
        // Histories never fall: each sample is the largest so far.
        assert!(crowd.energy_history.windows(2).all(|w| w[0].1 <= w[1].1));
    }
}
