//! `rigid-crowd demo`: the main job. A large tumbling crowd on the best adapter and on the
//! CPU reference, with the throughput of each and how well they agree.

use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use glam::DVec3;
use rigid_crowd::{
    Crowd, CrowdSpec, Deviation, Error, Force, ForceKind, GPU_TOLERANCE, Result, Simulation,
    gpu::GpuContext,
};

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

pub fn demo(args: DemoArgs) -> Result<ExitCode> {
    let crowd = Crowd::new(CrowdSpec::new(args.bodies, args.seed).generate()?, 1e-3)
        .with_force(Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        }))
        .with_force(Force::on_all(ForceKind::LinearDrag {
            linear: 0.3,
            angular: 0.05,
        }));
    let body_steps = args.bodies as f64 * args.steps as f64;
    println!(
        "rigid-crowd demo: {} tumbling boxes and spheres under gravity and drag, {}, dt = {} s, {} steps",
        args.bodies, crowd.integrator, crowd.dt, args.steps
    );

    let gpu = match GpuContext::new() {
        Ok(ctx) => {
            let mut sim = Simulation::gpu(&crowd, &ctx)?;
            let start = Instant::now();
            sim.step(args.steps)?;
            sim.finish()?;
            let seconds = start.elapsed().as_secs_f64();
            println!(
                "GPU  {:<48} {seconds:>8.3} s  {:>12}body-steps/s",
                ctx.describe(),
                super::rate(body_steps / seconds)
            );
            Some(sim.bodies()?)
        }
        Err(Error::NoAdapter(message)) => {
            println!("GPU  skipped: {message}");
            None
        }
        Err(other) => return Err(other),
    };

    let mut sim = Simulation::cpu(&crowd)?;
    let start = Instant::now();
    sim.step(args.steps)?;
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "CPU  {:<48} {seconds:>8.3} s  {:>12}body-steps/s",
        format!("f64 reference, {} threads", rayon::current_num_threads()),
        super::rate(body_steps / seconds)
    );

    let Some(gpu_bodies) = gpu else {
        println!("agreement: not measured (no GPU adapter)");
        return Ok(ExitCode::SUCCESS);
    };
    let deviation = Deviation::between(&gpu_bodies, &sim.bodies()?);
    let parts: Vec<String> = deviation
        .named()
        .iter()
        .map(|(n, v)| format!("{n} {v:.1e}"))
        .collect();
    println!(
        "agreement (largest relative deviation, GPU f32 vs CPU f64): {}",
        parts.join(", ")
    );
    if deviation.max() <= GPU_TOLERANCE {
        println!("within the documented tolerance {GPU_TOLERANCE:e}");
        Ok(ExitCode::SUCCESS)
    } else {
        println!("OUTSIDE the documented tolerance {GPU_TOLERANCE:e}");
        Ok(ExitCode::FAILURE)
    }
}
