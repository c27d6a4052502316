//! `rigid-crowd demo`: the main job. A large tumbling crowd on the best adapter, on the fast
//! CPU path and on the f64 reference, with the throughput of each and how well they agree.

use std::process::ExitCode;
use std::time::Instant;

use crate::bench::workload;
use crate::{
    Backend, Body, Deviation, Error, GPU_TOLERANCE, Result, Simulation, backends::gpu::GpuContext,
};
use clap::Args;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Number of bodies.
    #[arg(long, default_value_t = 100_000)]
    bodies: usize,
    /// Steps to run on each backend.
    #[arg(long, default_value_t = 200)]
    steps: u64,
    /// Seed of the crowd.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Runs `sim` for `steps` steps and prints one timing row.
fn timed_row(mut sim: Simulation, steps: u64, label: &str, what: &str) -> Result<Vec<Body>> {
    let start = Instant::now();
    sim.step(steps)?;
    sim.finish()?;
    let seconds = start.elapsed().as_secs_f64();
    let bodies = sim.bodies()?;
    let body_steps = bodies.len() as f64 * steps as f64;
    println!(
        "{label:<8} {what:<48} {seconds:>8.3} s  {:>12}body-steps/s",
        super::text::rate(body_steps / seconds.max(1e-9))
    );
    Ok(bodies)
}

pub fn demo(args: DemoArgs) -> Result<ExitCode> {
    let crowd = workload(args.bodies, args.seed)?;
    println!(
        "rigid-crowd demo: {} tumbling boxes and spheres under gravity and drag, {}, dt = {} s, {} steps",
        args.bodies, crowd.integrator, crowd.dt, args.steps
    );
    let threads = rayon::current_num_threads();

    let gpu = match GpuContext::new() {
        Ok(ctx) => Some(timed_row(
            Simulation::gpu(&crowd, &ctx)?,
            args.steps,
            "gpu",
            &ctx.describe(),
        )?),
        Err(Error::NoAdapter(message)) => {
            println!("gpu      skipped: {message}");
            None
        }
        Err(other) => return Err(other),
    };
    let cpu_row = |backend: Backend, what: &str| -> Result<Vec<Body>> {
        let sim = Simulation::new(&crowd, backend)?;
        let what = format!("{what}, {threads} threads");
        timed_row(sim, args.steps, backend.name(), &what)
    };
    let fast_cpu = cpu_row(Backend::FastCpu, "f32 fast path")?;
    let reference = cpu_row(Backend::Reference, "f64 reference")?;

    let mut worst: f64 = 0.0;
    let checked = [("gpu", gpu), ("cpu", Some(fast_cpu))];
    for (name, bodies) in checked {
        let Some(bodies) = bodies else {
            println!("{name} agreement: not measured (no GPU adapter)");
            continue;
        };
        let deviation = Deviation::between(&bodies, &reference);
        worst = crate::verify::compare::largest(worst, deviation.max());
        let parts: Vec<String> = deviation
            .named()
            .iter()
            .map(|(n, v)| format!("{n} {v:.1e}"))
            .collect();
        println!(
            "{name} agreement with cpu-ref (largest relative deviation): {}",
            parts.join(", ")
        );
    }
    if worst <= GPU_TOLERANCE {
        println!("within the documented tolerance {GPU_TOLERANCE:e}");
        Ok(ExitCode::SUCCESS)
    } else {
        println!("OUTSIDE the documented tolerance {GPU_TOLERANCE:e}");
        Ok(ExitCode::FAILURE)
    }
}
