//! The integrators measured side by side: order of convergence, long-run drift of the
//! invariants, and cost per body-step. Backs `rigid-crowd integrators` (docs/integrators.md).

use std::time::Instant;

use serde::Serialize;

use crate::backends::gpu::GpuContext;
use crate::bench::plot::{Series, log_log_svg};
use crate::bench::workload;
use crate::model::backend::Backend;
use crate::model::body::Body;
use crate::model::error::Result;
use crate::model::integrator::Integrator;
use crate::simulation::facade::Simulation;
use crate::verify::integrator_accuracy::{
    LongRun, convergence_error, growth_fit, long_run, long_run_bodies,
};
use crate::verify::long_run_on_backend::long_run_on;

/// What to measure, and how long (recorded next to the results).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TablePlan {
    /// The coarsest step of the convergence runs; each later run halves it (three runs).
    pub order_dt: f64,
    /// Simulated time of each convergence run (s).
    pub order_time: f64,
    /// Steps of the long torque-free run that measures the drifts.
    pub long_steps: u64,
    /// Step of the long run (s).
    pub long_dt: f64,
    /// Torque-free asymmetric bodies in the long run: the tumbling top, then random ones.
    pub long_bodies: usize,
    /// How the long run is read.
    pub long_reads: LongReads,
    /// Bodies in the timed crowd.
    pub timing_bodies: usize,
    /// Steps of each timed run (after one warm-up step).
    pub timing_steps: u64,
}

impl Default for TablePlan {
    fn default() -> Self {
        Self {
            order_dt: 0.02,
            order_time: 4.0,
            long_steps: 100_000,
            long_dt: 0.01,
            long_bodies: 1,
            long_reads: LongReads::EveryStep,
            timing_bodies: 16_384,
            timing_steps: 100,
        }
    }
}

/// How the long run is read.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LongReads {
    /// The reference stepper after every step, `|q|` before renormalizing included.
    EveryStep,
    /// A simulation on `backend`, read every `every` steps and at the history's samples
    /// (`|q|` before renormalizing unseen): for long runs of many bodies on `gpu-f64`, which
    /// gives the reference's bits.
    Sampled {
        #[serde(serialize_with = "backend_name")]
        backend: Backend,
        every: u64,
    },
}

fn backend_name<S: serde::Serializer>(
    backend: &Backend,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(backend.name())
}

impl LongReads {
    /// The long run of `bodies` under `integrator`, `steps` of `h`, read as `self` says; a
    /// GPU backend runs on `gpu`.
    fn run(
        self,
        gpu: Option<&GpuContext>,
        integrator: Integrator,
        bodies: &[Body],
        steps: u64,
        h: f64,
    ) -> Result<LongRun> {
        match self {
            LongReads::EveryStep => Ok(long_run(integrator, bodies, steps, h)),
            LongReads::Sampled { backend, every } => {
                long_run_on(backend, gpu, integrator, bodies, steps, h, every)
            }
        }
    }

    /// What the table's header says of the reads.
    fn describe(self) -> String {
        match self {
            LongReads::EveryStep => "f64, cpu-ref, every step".to_string(),
            LongReads::Sampled { backend, every } => format!(
                "{}, read every {every} steps and at the plotted samples",
                backend.name()
            ),
        }
    }
}

/// One integrator's row of the table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IntegratorRow {
    /// The integrator's name (`rk4`, ...).
    pub integrator: String,
    /// The order the scheme is designed to have.
    pub design_order: u32,
    /// `log2(e(h) / e(h/2))` for the two finest convergence runs: `e` is the error of the
    /// body-frame angular velocity against the closed-form asymmetric top.
    pub measured_order: f64,
    /// The errors `e(h)`, `e(h/2)`, `e(h/4)` of the convergence runs.
    pub order_errors: [f64; 3],
    /// `max |E - E0| / E0` over the long run (kinetic energy; no force does work).
    pub energy_drift: f64,
    /// `(p, c)` of the fit `|E - E0| / E0 = c t^p` over the long run's last two decades:
    /// `p` near 1 is a secular drift, near 0 a bounded error, near 0.5 round-off's random walk.
    pub energy_growth: Option<(f64, f64)>,
    /// `(t, max |E - E0| / E0 up to t)` over the long run, spaced evenly in log(t).
    pub energy_history: Vec<(f64, f64)>,
    /// `max | |q| - 1 |` over the long run, measured after each step and before the
    /// renormalization that follows it; NaN where the long run is sampled, which cannot see it.
    pub unit_norm_drift: f64,
    /// `max |L - L0| / |L0|` over the long run.
    pub angular_momentum_drift: f64,
    /// `max |P - P0| / |P0|` over the long run.
    pub linear_momentum_drift: f64,
    /// Wall time per body-step (ns) on each timed backend, by backend name.
    pub ns_per_body_step: Vec<(String, f64)>,
}

/// The whole measurement, with where it ran.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IntegratorTable {
    /// What was measured.
    pub plan: TablePlan,
    /// The host CPU.
    pub cpu: String,
    /// The GPU adapter, when the GPU was timed.
    pub gpu: Option<String>,
    /// One row per integrator, in [`Integrator::ALL`] order.
    pub rows: Vec<IntegratorRow>,
    /// `lie_poisson4`'s long run at the step that spends `rk4`'s force evaluations per
    /// simulated second (`6/4 long_dt`): the two compared at equal cost.
    pub equal_cost: EqualCost,
}

/// `lie_poisson4` against `rk4` at equal force evaluations per simulated second.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EqualCost {
    /// `lie_poisson4`'s step: `long_dt` times its force evaluations over rk4's (6 / 4).
    pub dt: f64,
    /// Its energy history at that step, as the rows'.
    pub energy_history: Vec<(f64, f64)>,
    /// Its growth fit, as the rows'.
    pub energy_growth: Option<(f64, f64)>,
    /// The earliest sampled time from which `lie_poisson4`'s largest energy error stays
    /// below `rk4`'s to the end of the run; `None` when it does not within the run.
    pub overtakes_at: Option<f64>,
    /// Where the two growth fits cross (s), when they do: the run length from which
    /// `lie_poisson4` would be the more accurate if both kept their fitted growth.
    pub fits_cross_at: Option<f64>,
}

/// Force evaluations per step of the integrators compared at equal cost.
const RK4_EVALUATIONS: f64 = 4.0;
const LIE_POISSON4_EVALUATIONS: f64 = 6.0;

/// The earliest sample from which `low`'s history stays below `high`'s (same sample times).
fn stays_below_from(low: &[(f64, f64)], high: &[(f64, f64)]) -> Option<f64> {
    let mut from = None;
    for (&(t, a), &(_, b)) in low.iter().zip(high) {
        if a < b {
            from = from.or(Some(t));
        } else {
            from = None;
        }
    }
    from
}

/// Where `c1 t^p1` and `c2 t^p2` cross at a positive time, when they do.
fn crossing((p1, c1): (f64, f64), (p2, c2): (f64, f64)) -> Option<f64> {
    let t = (c2 / c1).powf(1.0 / (p1 - p2));
    (t.is_finite() && t > 0.0 && p1 != p2).then_some(t)
}

/// Nanoseconds per body-step of the benchmark crowd (gravity and drag) on `backend`.
fn cost(
    integrator: Integrator,
    backend: Backend,
    gpu: Option<&GpuContext>,
    plan: &TablePlan,
) -> Result<f64> {
    let crowd = workload(plan.timing_bodies, 7)?.with_integrator(integrator);
    let mut sim = match (backend, gpu) {
        (Backend::Gpu, Some(ctx)) => Simulation::gpu(&crowd, ctx)?,
        _ => Simulation::new(&crowd, backend)?,
    };
    // One warm-up step: pipelines, buffers and thread pools are ready before the clock runs.
    sim.step(1)?;
    sim.finish()?;
    let start = Instant::now();
    sim.step(plan.timing_steps)?;
    sim.finish()?;
    let body_steps = plan.timing_bodies as f64 * plan.timing_steps as f64;
    Ok(start.elapsed().as_secs_f64() * 1e9 / body_steps)
}

/// Measures every integrator per `plan`; the GPU is timed only when `gpu` is given, and a
/// long run on a GPU backend runs on `long_gpu`.
pub fn measure_integrators(
    plan: &TablePlan,
    gpu: Option<&GpuContext>,
    long_gpu: Option<&GpuContext>,
) -> Result<IntegratorTable> {
    let mut backends = vec![Backend::Reference, Backend::FastCpu];
    if gpu.is_some() {
        backends.push(Backend::Gpu);
    }
    let mut rows = Vec::new();
    let bodies = long_run_bodies(plan.long_bodies);
    for integrator in Integrator::ALL {
        let base = (plan.order_time / plan.order_dt).round().max(1.0) as u64;
        let order_errors =
            [1, 2, 4].map(|refine| convergence_error(integrator, plan.order_time, base * refine));
        let LongRun {
            drifts,
            energy_history,
        } = plan
            .long_reads
            .run(long_gpu, integrator, &bodies, plan.long_steps, plan.long_dt)?;
        let mut ns_per_body_step = Vec::new();
        for &backend in &backends {
            ns_per_body_step.push((
                backend.name().to_string(),
                cost(integrator, backend, gpu, plan)?,
            ));
        }
        rows.push(IntegratorRow {
            integrator: integrator.name().to_string(),
            design_order: integrator.order(),
            measured_order: (order_errors[1] / order_errors[2]).log2(),
            order_errors,
            energy_drift: drifts.energy,
            energy_growth: growth_fit(&energy_history),
            energy_history,
            unit_norm_drift: drifts.unit_norm,
            angular_momentum_drift: drifts.angular_momentum,
            linear_momentum_drift: drifts.linear_momentum,
            ns_per_body_step,
        });
    }
    let dt = plan.long_dt * LIE_POISSON4_EVALUATIONS / RK4_EVALUATIONS;
    // The same simulated time as the rows' long run, in fewer, longer steps.
    let steps = ((plan.long_steps as f64 * plan.long_dt / dt).round() as u64).max(1);
    let history = plan
        .long_reads
        .run(long_gpu, Integrator::LiePoisson4, &bodies, steps, dt)?
        .energy_history;
    let row = |integrator: Integrator| {
        &rows[Integrator::ALL
            .iter()
            .position(|&i| i == integrator)
            .unwrap_or(0)]
    };
    let rk4 = row(Integrator::Rk4);
    let rk4_at = |t: f64| {
        rk4.energy_history
            .iter()
            .rev()
            .find(|&&(at, _)| at <= t * (1.0 + 1e-12))
            .map_or(0.0, |p| p.1)
    };
    // rk4's history at lie_poisson4's sample times (the largest error reached by then).
    let rk4_resampled: Vec<(f64, f64)> = history.iter().map(|&(t, _)| (t, rk4_at(t))).collect();
    let growth = growth_fit(&history);
    let equal_cost = EqualCost {
        dt,
        overtakes_at: stays_below_from(&history, &rk4_resampled),
        fits_cross_at: rk4
            .energy_growth
            .zip(growth)
            .and_then(|(a, b)| crossing(a, b)),
        energy_growth: growth,
        energy_history: history,
    };
    Ok(IntegratorTable {
        plan: plan.clone(),
        cpu: crate::bench::cpu_description(),
        gpu: gpu.map(GpuContext::describe),
        rows,
        equal_cost,
    })
}

impl IntegratorTable {
    /// The table in markdown, one row per integrator, with a line saying where it ran.
    pub fn markdown(&self) -> String {
        let p = &self.plan;
        let backends: Vec<&str> = self.rows[0]
            .ns_per_body_step
            .iter()
            .map(|(name, _)| name.as_str())
            .collect();
        let mut out = format!(
            "order: body-frame omega of a torque-free asymmetric top vs its closed form after \
             {} s, dt = {}, {}, {}; drifts: max over {} steps of dt = {} and {} bodies \
             ({}), energy growth `p` fitted as `c t^p` over its last two decades; \
             cost: {} bodies x {} steps under gravity and drag\n\
             cpu: {}\ngpu: {}\n\n",
            p.order_time,
            p.order_dt,
            p.order_dt / 2.0,
            p.order_dt / 4.0,
            p.long_steps,
            p.long_dt,
            p.long_bodies,
            p.long_reads.describe(),
            p.timing_bodies,
            p.timing_steps,
            self.cpu,
            self.gpu.as_deref().unwrap_or("not timed"),
        );
        out += "| integrator | order (design) | order (measured) | energy drift | energy growth p | max \\| \\|q\\| - 1 \\| before renormalizing | \\|L\\| drift | P drift |";
        for b in &backends {
            out += &format!(" ns/body-step {b} |");
        }
        out += "\n|---|---|---|---|---|---|---|---|";
        out += &"---|".repeat(backends.len());
        out += "\n";
        for r in &self.rows {
            out += &format!(
                "| {} | {} | {:.2} | {:.2e} | {} | {} | {:.1e} | {:.1e} |",
                r.integrator,
                r.design_order,
                r.measured_order,
                r.energy_drift,
                exponent(r.energy_growth),
                match p.long_reads {
                    LongReads::EveryStep => format!("{:.2e}", r.unit_norm_drift),
                    // A sampled run sees `q` only after its renormalization.
                    LongReads::Sampled { .. } => "unseen".to_string(),
                },
                r.angular_momentum_drift,
                r.linear_momentum_drift,
            );
            for (_, ns) in &r.ns_per_body_step {
                out += &format!(" {ns:.1} |");
            }
            out += "\n";
        }
        let e = &self.equal_cost;
        let at =
            |t: Option<f64>, none: &str| t.map_or(none.to_string(), |t| format!("t = {t:.3e} s"));
        out += &format!(
            "\nAt equal cost (rk4's force evaluations per simulated second: lie_poisson4 at dt = \
             {}): lie_poisson4's energy error {:.2e} (growth p {}) against rk4's {:.2e}; \
             lie_poisson4 stays the more accurate from {}; the growth fits cross at {}.\n",
            e.dt,
            e.energy_history.last().map_or(f64::NAN, |p| p.1),
            exponent(e.energy_growth),
            self.rows
                .iter()
                .find(|r| r.integrator == Integrator::Rk4.name())
                .map_or(f64::NAN, |r| r.energy_drift),
            at(e.overtakes_at, "no sample of this run"),
            at(e.fits_cross_at, "no positive time"),
        );
        out
    }

    /// The largest relative energy error reached against time, log-log, one line per
    /// integrator and one for lie_poisson4 at rk4's cost; errors above 10 are left off.
    pub fn energy_svg(&self) -> String {
        // Errors past 10 (Euler's, blowing up) would stretch the axis over decades that say
        // nothing more; they are left off.
        let shown =
            |history: &[(f64, f64)]| history.iter().copied().filter(|p| p.1 <= 10.0).collect();
        let mut series: Vec<Series> = self
            .rows
            .iter()
            .map(|r| Series {
                label: r.integrator.clone(),
                points: shown(&r.energy_history),
            })
            .collect();
        series.push(Series {
            label: format!("lie_poisson4, dt = {} (rk4's cost)", self.equal_cost.dt),
            points: shown(&self.equal_cost.energy_history),
        });
        let p = &self.plan;
        log_log_svg(
            &format!(
                "largest |E - E0| / E0 so far, {} torque-free bod{}, dt = {}, f64",
                p.long_bodies,
                if p.long_bodies == 1 { "y" } else { "ies" },
                p.long_dt
            ),
            ("simulated time (s)", "relative energy error"),
            &series,
        )
    }
}

/// A growth exponent to two places, or `-` when there was too little to fit.
fn exponent(fit: Option<(f64, f64)>) -> String {
    fit.map_or("-".to_string(), |(p, _)| format!("{p:.2}"))
}
