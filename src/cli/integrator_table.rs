//! The integrators measured side by side: order of convergence, long-run drift of the
//! invariants, and cost per body-step. Backs `rigid-crowd integrators` (docs/integrators.md).

use std::time::Instant;

use serde::Serialize;

use crate::backends::gpu::GpuContext;
use crate::bench::workload;
use crate::model::backend::Backend;
use crate::model::error::Result;
use crate::model::integrator::Integrator;
use crate::simulation::facade::Simulation;
use crate::verify::integrator_accuracy::{convergence_error, long_run_drifts};

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
            timing_bodies: 16_384,
            timing_steps: 100,
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
    /// `max | |q| - 1 |` over the long run, measured after each step and before the
    /// renormalization that follows it.
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

/// Measures every integrator per `plan`; the GPU is timed only when `gpu` is given.
pub fn measure_integrators(plan: &TablePlan, gpu: Option<&GpuContext>) -> Result<IntegratorTable> {
    let mut backends = vec![Backend::Reference, Backend::FastCpu];
    if gpu.is_some() {
        backends.push(Backend::Gpu);
    }
    let mut rows = Vec::new();
    for integrator in Integrator::ALL {
        let base = (plan.order_time / plan.order_dt).round().max(1.0) as u64;
        let order_errors =
            [1, 2, 4].map(|refine| convergence_error(integrator, plan.order_time, base * refine));
        let drifts = long_run_drifts(integrator, plan.long_steps, plan.long_dt);
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
            unit_norm_drift: drifts.unit_norm,
            angular_momentum_drift: drifts.angular_momentum,
            linear_momentum_drift: drifts.linear_momentum,
            ns_per_body_step,
        });
    }
    Ok(IntegratorTable {
        plan: plan.clone(),
        cpu: crate::bench::cpu_description(),
        gpu: gpu.map(GpuContext::describe),
        rows,
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
             {} s, dt = {}, {}, {}; drifts: max over {} steps of dt = {} (f64, cpu-ref); \
             cost: {} bodies x {} steps under gravity and drag\n\
             cpu: {}\ngpu: {}\n\n",
            p.order_time,
            p.order_dt,
            p.order_dt / 2.0,
            p.order_dt / 4.0,
            p.long_steps,
            p.long_dt,
            p.timing_bodies,
            p.timing_steps,
            self.cpu,
            self.gpu.as_deref().unwrap_or("not timed"),
        );
        out += "| integrator | order (design) | order (measured) | energy drift | max \\| \\|q\\| - 1 \\| before renormalizing | \\|L\\| drift | P drift |";
        for b in &backends {
            out += &format!(" ns/body-step {b} |");
        }
        out += "\n|---|---|---|---|---|---|---|";
        out += &"---|".repeat(backends.len());
        out += "\n";
        for r in &self.rows {
            out += &format!(
                "| {} | {} | {:.2} | {:.2e} | {:.2e} | {:.1e} | {:.1e} |",
                r.integrator,
                r.design_order,
                r.measured_order,
                r.energy_drift,
                r.unit_norm_drift,
                r.angular_momentum_drift,
                r.linear_momentum_drift,
            );
            for (_, ns) in &r.ns_per_body_step {
                out += &format!(" {ns:.1} |");
            }
            out += "\n";
        }
        out
    }
}
