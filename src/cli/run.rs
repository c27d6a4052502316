//! `rigid-crowd run SCENE.json --out FINAL.csv`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use rigid_crowd::{
    AtomicFile, Backend, Error, Integrator, Result, Scene, Simulation, gpu::GpuContext,
    write_states_csv,
};

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Scene file (JSON, version 1).
    scene: PathBuf,
    /// Backend: `gpu` (f32 WGSL kernels), `cpu` (fast f32 CPU path) or `cpu-ref` (the f64
    /// reference).
    #[arg(long, default_value = "gpu")]
    backend: String,
    /// Where to write the final states (CSV; positions and orientations are the model frame's
    /// pose, see docs/shapes.md); replaced only when the run succeeds.
    #[arg(long)]
    out: PathBuf,
    /// Override the scene's step count.
    #[arg(long)]
    steps: Option<u64>,
    /// Override the scene's time step (seconds).
    #[arg(long, allow_negative_numbers = true)]
    dt: Option<f64>,
    /// Override the scene's integrator (`euler`, `symplectic_euler`, `rk4` or `lie_rk4`).
    #[arg(long)]
    integrator: Option<String>,
    #[command(flatten)]
    recording: super::recording::RecordArgs,
}

pub(crate) fn parse_backend(name: &str) -> Result<Backend> {
    name.parse().map_err(|m| Error::invalid("--backend", m))
}

pub fn run(args: RunArgs) -> Result<ExitCode> {
    let backend = parse_backend(&args.backend)?;
    let mut scene = Scene::load(&args.scene).map_err(|e| match e {
        Error::Invalid { field, message } => {
            Error::invalid(format!("{}: {field}", args.scene.display()), message)
        }
        other => other,
    })?;
    if let Some(dt) = args.dt {
        if !dt.is_finite() || dt <= 0.0 {
            return Err(Error::invalid(
                "--dt",
                format!("must be a finite number > 0 (got {dt})"),
            ));
        }
        scene.crowd.dt = dt;
    }
    if let Some(name) = &args.integrator {
        scene.crowd.integrator = name
            .parse::<Integrator>()
            .map_err(|m| Error::invalid("--integrator", m))?;
    }
    let steps = args.steps.unwrap_or(scene.steps);

    // Claim the output first: an unwritable path fails before any work is done, and the
    // existing file is only replaced once the new one is complete.
    let mut out = AtomicFile::create(&args.out)?;
    let mut recording =
        super::recording::Recording::prepare(&args.recording, scene.crowd.bodies.len(), steps)?;
    let (mut sim, adapter) = match backend {
        Backend::Reference => (
            Simulation::reference(&scene.crowd)?,
            "the f64 CPU reference".to_string(),
        ),
        Backend::FastCpu => (
            Simulation::fast_cpu(&scene.crowd)?,
            format!("the f32 CPU path, {} threads", rayon::current_num_threads()),
        ),
        Backend::Gpu => {
            let ctx = GpuContext::new()?;
            (Simulation::gpu(&scene.crowd, &ctx)?, ctx.describe())
        }
    };
    let start = Instant::now();
    recording.advance(&mut sim, steps)?;
    sim.finish()?;
    let elapsed = start.elapsed().as_secs_f64();
    let bodies = sim.bodies()?;
    write_states_csv(out.writer(), &bodies).map_err(|e| Error::io(&args.out, e))?;
    out.commit()?;
    let recorded = recording.commit()?;
    let body_steps = bodies.len() as f64 * steps as f64;
    eprintln!(
        "{} bodies x {steps} steps ({}, dt = {} s) on {adapter}: {elapsed:.3} s, {}body-steps/s; wrote {}{recorded}",
        bodies.len(),
        scene.crowd.integrator,
        scene.crowd.dt,
        super::rate(body_steps / elapsed.max(1e-9)),
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
