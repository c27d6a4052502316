//! Running one crowd on both backends and measuring how far apart they end up.

use std::time::{Duration, Instant};

use crate::assembly::crowd::Crowd;
use crate::backends::gpu::{GpuContext, GpuOptions, Precision};
use crate::model::error::Result;
use crate::simulation::facade::Simulation;
use crate::verify::compare::{Deviation, differing_bodies};

/// What [`cross_check`] measured.
#[derive(Clone, Copy, Debug)]
pub struct CrossCheck {
    /// GPU (f32) against the CPU reference (f64), per quantity.
    pub gpu: Deviation,
    /// GPU in f64 against the CPU reference, per quantity: `None` where the adapter lacks
    /// `SHADER_F64`.
    pub gpu_f64: Option<Deviation>,
    /// How many bodies of the f64 GPU's result differ from the reference's in any bit, where
    /// it ran: zero on an adapter that honours IEEE arithmetic, for a crowd whose physics is
    /// all the one definition (a custom WGSL force has a Rust twin, two definitions).
    pub gpu_f64_differing_bodies: Option<usize>,
    /// Fast CPU path (f32) against the CPU reference (f64), per quantity.
    pub fast_cpu: Deviation,
    /// How many bodies of the f32 GPU's result differ in any bit from the fast CPU path's,
    /// which runs the same definition in f32: zero where the f64 pair's count is, for the
    /// same reasons.
    pub gpu_differing_bodies: usize,
    /// Wall time of the GPU steps (submit to completion, no readback).
    pub gpu_time: Duration,
    /// Wall time of the f64 GPU steps, where they ran.
    pub gpu_f64_time: Option<Duration>,
    /// Wall time of the fast CPU path's steps.
    pub fast_cpu_time: Duration,
    /// Wall time of the CPU reference steps.
    pub reference_time: Duration,
}

/// Runs `steps` steps of `sim`, timed to completion.
fn timed(mut sim: Simulation, steps: u64) -> Result<(Simulation, Duration)> {
    let start = Instant::now();
    sim.step(steps)?;
    sim.finish()?;
    Ok((sim, start.elapsed()))
}

/// Runs `crowd` for `steps` steps on the GPU of `ctx` (in f32, and in f64 where the adapter
/// has `SHADER_F64`), on the fast CPU path and on the CPU reference, and measures how far
/// each ends up from the reference.
pub fn cross_check(crowd: &Crowd, steps: u64, ctx: &GpuContext) -> Result<CrossCheck> {
    cross_check_with(crowd, steps, ctx, GpuOptions::default())
}

/// [`cross_check`] with the f32 GPU run built per `f32_options` (its precision is f32
/// whatever they say).
pub fn cross_check_with(
    crowd: &Crowd,
    steps: u64,
    ctx: &GpuContext,
    f32_options: GpuOptions,
) -> Result<CrossCheck> {
    let f32_options = GpuOptions {
        precision: Precision::F32,
        ..f32_options
    };
    let gpu = Simulation::gpu_with_options(crowd, ctx, f32_options)?;
    let (gpu, gpu_time) = timed(gpu, steps)?;
    let gpu_f64 = match ctx.supports_f64() {
        true => Some(timed(Simulation::gpu_f64(crowd, ctx)?, steps)?),
        false => None,
    };
    let (fast_cpu, fast_cpu_time) = timed(Simulation::fast_cpu(crowd)?, steps)?;
    let (reference, reference_time) = timed(Simulation::reference(crowd)?, steps)?;
    let reference = reference.bodies()?;
    let (gpu_f64, gpu_f64_differing_bodies, gpu_f64_time) = match gpu_f64 {
        Some((sim, time)) => {
            let bodies = sim.bodies()?;
            (
                Some(Deviation::between(&bodies, &reference)),
                Some(differing_bodies(&bodies, &reference)),
                Some(time),
            )
        }
        None => (None, None, None),
    };
    let (gpu, fast_cpu) = (gpu.bodies()?, fast_cpu.bodies()?);
    Ok(CrossCheck {
        gpu: Deviation::between(&gpu, &reference),
        gpu_f64,
        gpu_f64_differing_bodies,
        fast_cpu: Deviation::between(&fast_cpu, &reference),
        gpu_differing_bodies: differing_bodies(&gpu, &fast_cpu),
        gpu_time,
        gpu_f64_time,
        fast_cpu_time,
        reference_time,
    })
}
