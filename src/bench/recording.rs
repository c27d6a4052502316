//! What recording costs: GPU throughput with the states written every K steps against the
//! same run unrecorded, both on the host's wall clock (the recorded run's extra work is on
//! the host, so device timestamps would hide it).

use std::time::Instant;

use serde::Serialize;

use crate::assembly::crowd::Crowd;
use crate::backends::gpu::{GpuContext, GpuOptions};
use crate::model::error::Result;
use crate::record::{TrajectoryWriter, frame_count, record_run};
use crate::simulation::facade::Simulation;

/// GPU throughput recorded every `every` steps against unrecorded, one crowd size.
#[derive(Clone, Debug, Serialize)]
pub struct RecordingCost {
    /// Bodies in the crowd.
    pub bodies: usize,
    /// Steps per timed run.
    pub steps: u64,
    /// Steps between recorded frames.
    pub every: u64,
    /// The GPU kernel options (as the bench table shows them).
    pub variant: String,
    /// Median body-steps per second without recording (wall clock, submit to finish).
    pub unrecorded_body_steps_per_second: f64,
    /// Median body-steps per second while recording (wall clock, including the readback
    /// and the writing of every frame).
    pub recorded_body_steps_per_second: f64,
    /// Recorded over unrecorded throughput.
    pub kept: f64,
    /// Every timed unrecorded run, in seconds.
    pub unrecorded_runs: Vec<f64>,
    /// Every timed recorded run, in seconds.
    pub recorded_runs: Vec<f64>,
}

/// Times `steps` steps of `crowd` on the GPU `repeats` times unrecorded and `repeats` times
/// recorded every `every` steps (alternating, after one warm-up of each). The recorded run
/// is what `rigid-crowd run --record FILE.npy` does: each frame is read back with the
/// double-buffered non-blocking readback, converted and written to a `.npy` file in the
/// temporary directory (never synced, then removed: the disk is not what is measured).
pub fn measure_recording(
    ctx: &GpuContext,
    crowd: &Crowd,
    options: GpuOptions,
    steps: u64,
    every: u64,
    repeats: usize,
) -> Result<RecordingCost> {
    let mut sim = Simulation::gpu_with_options(crowd, ctx, options)?;
    let bodies = crowd.bodies.len();
    let path = std::env::temp_dir().join(format!(
        "rigid-crowd-bench-recording-{}.npy",
        std::process::id()
    ));
    let unrecorded = |sim: &mut Simulation| -> Result<f64> {
        sim.finish()?;
        let start = Instant::now();
        sim.step(steps)?;
        sim.finish()?;
        Ok(start.elapsed().as_secs_f64())
    };
    let recorded = |sim: &mut Simulation| -> Result<f64> {
        sim.finish()?;
        let mut writer = TrajectoryWriter::create(&path, bodies, frame_count(steps, every))?;
        let start = Instant::now();
        record_run(
            sim,
            steps,
            every,
            |step, time, frame| writer.write_frame(step, time, frame),
            |_| {},
        )?;
        sim.finish()?;
        // Dropped unfinished: the temporary file is removed, nothing is synced.
        Ok(start.elapsed().as_secs_f64())
    };
    unrecorded(&mut sim)?;
    recorded(&mut sim)?;
    let (mut plain_runs, mut recorded_runs) = (Vec::new(), Vec::new());
    for _ in 0..repeats.max(1) {
        plain_runs.push(unrecorded(&mut sim)?);
        recorded_runs.push(recorded(&mut sim)?);
    }
    let rate = |runs: &[f64]| bodies as f64 * steps as f64 / median(runs).max(1e-12);
    let (plain, with_recording) = (rate(&plain_runs), rate(&recorded_runs));
    Ok(RecordingCost {
        bodies,
        steps,
        every,
        variant: crate::bench::labels::describe_options(&options.for_crowd(crowd)),
        unrecorded_body_steps_per_second: plain,
        recorded_body_steps_per_second: with_recording,
        kept: with_recording / plain,
        unrecorded_runs: plain_runs,
        recorded_runs,
    })
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}
