//! `rigid-crowd bench --record-every K`: GPU throughput recorded every K steps against
//! unrecorded, as rows after the main table.

use crate::backends::gpu::GpuContext;
use crate::bench::{BenchPlan, RecordingCost, measure_recording};
use crate::{Backend, Error, Result};

/// Refuses `--record-every 0`, or the flag without the gpu backend, before any measuring.
pub fn check(every: Option<u64>, plan: &BenchPlan) -> Result<()> {
    match every {
        Some(0) => Err(Error::invalid(
            "--record-every",
            "must be at least 1 (got 0)",
        )),
        Some(_) if !plan.backends.contains(&Backend::Gpu) => Err(Error::invalid(
            "--record-every",
            "measures the gpu backend: add gpu to --backends",
        )),
        _ => Ok(()),
    }
}

/// Measures every size and GPU variant of `plan`, printing the rows.
pub fn measure(ctx: &GpuContext, plan: &BenchPlan, every: u64) -> Result<Vec<RecordingCost>> {
    println!(
        "recording every {every} steps on the gpu (wall clock, median of {}; frames read back double-buffered and written as .npy to a temporary file):",
        plan.repeats
    );
    println!(
        "{:<28} {:>9} {:>6} {:>18} {:>18} {:>6}",
        "variant", "bodies", "steps", "unrecorded /s", "recorded /s", "kept"
    );
    let mut costs = Vec::new();
    for &bodies in &plan.bodies {
        let crowd = plan.workload.crowd(bodies, 1)?;
        for options in &plan.gpu_variants {
            let cost = measure_recording(ctx, &crowd, *options, plan.steps, every, plan.repeats)?;
            println!(
                "{:<28} {:>9} {:>6} {:>18} {:>18} {:>5.0}%",
                cost.variant,
                cost.bodies,
                cost.steps,
                format!(
                    "{}body-steps",
                    super::text::rate(cost.unrecorded_body_steps_per_second)
                ),
                format!(
                    "{}body-steps",
                    super::text::rate(cost.recorded_body_steps_per_second)
                ),
                100.0 * cost.kept
            );
            costs.push(cost);
        }
    }
    Ok(costs)
}
