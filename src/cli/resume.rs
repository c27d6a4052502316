//! `rigid-crowd resume CHECKPOINT`: finishes the run a checkpoint was taken from.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use crate::{Checkpoint, Error, Result, RunPlan};
use clap::Args;

#[derive(Args, Debug)]
pub struct ResumeArgs {
    /// Checkpoint written by `rigid-crowd run --checkpoint`.
    pub(crate) checkpoint: PathBuf,
    /// Backend (default: the one that wrote the checkpoint; only that one continues bit for
    /// bit). On `gpu` the kernel takes its f32 divisions in f64 if the checkpoint's did.
    #[arg(long)]
    pub(crate) backend: Option<String>,
    /// Where to write the final states (default: the run's `--out`): `.csv`, `.npy` or
    /// `.npz`, as for `run`.
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Run this many steps from the checkpoint (default: to the run's last step).
    #[arg(long)]
    pub(crate) steps: Option<u64>,
    /// No progress bar (it is also off when stderr is not a terminal).
    #[arg(long)]
    pub(crate) quiet: bool,
    /// GPU devices to split the crowd over, as for `run` (any count continues bit for bit).
    #[arg(long, default_value = "1")]
    pub(crate) devices: String,
    /// The force laws a scene may name besides the built-in kinds: those of a program that
    /// runs this command line with its own laws (`cli::main_with_laws`).
    #[arg(skip)]
    pub(crate) laws: crate::ForceLaws,
}

/// `rigid-crowd resume` in one process; `started` is when the command began.
pub fn resume(args: ResumeArgs, started: Instant) -> Result<ExitCode> {
    let bytes = std::fs::read(&args.checkpoint).map_err(|e| Error::io(&args.checkpoint, e))?;
    let manifest = crate::checkpoint::is_manifest(&bytes);
    if manifest {
        return Err(Error::invalid(
            args.checkpoint.display().to_string(),
            "is the manifest of a checkpoint written by MPI ranks: resume it under `mpirun` with as many ranks, with a rigid-crowd built with the `mpi` feature",
        ));
    }
    let checkpoint = Checkpoint::from_bytes(&bytes)
        .and_then(|checkpoint| checkpoint.with_laws(&args.laws))
        .map_err(|e| e.within(format_args!("{}: ", args.checkpoint.display())))?;
    drop(bytes);
    let backend = match &args.backend {
        Some(name) => super::run::parse_backend(name)?,
        None => checkpoint.backend,
    };
    let step = checkpoint.step();
    let (plan, trajectory) = resume_plan(&args, checkpoint.run.as_ref(), step)?;
    if checkpoint.tangents.is_some() {
        let format = crate::record::TrajectoryFormat::from_path(&plan.out);
        if !matches!(format, Ok(crate::record::TrajectoryFormat::Npz)) {
            return Err(Error::invalid(
                "--out",
                format!(
                    "the checkpoint carries tangents, which only `.npz` output holds (--out is {})",
                    plan.out.display()
                ),
            ));
        }
    }
    let output = super::run::Output::claim(&plan.out)?;
    // Keep checkpointing to the same file, so a second interruption loses no more.
    let path = (plan.checkpoint_every > 0).then_some(args.checkpoint.as_path());
    let bodies = checkpoint.crowd.bodies.len();
    let steps = plan.end_step.saturating_sub(step);
    // The recording continues where the checkpoint left it.
    let recording = match &trajectory {
        Some(trajectory) => super::recording::Recording::resume(
            trajectory,
            bodies,
            step,
            checkpoint.crowd.dt,
            steps,
            args.quiet,
        )?,
        None => super::recording::Recording::progress_only(bodies, steps, args.quiet),
    };
    let on = crate::simulation::RunsOn::resuming(&checkpoint, backend);
    let start = super::run::RunStart {
        crowd: checkpoint.crowd,
        recipe: None,
        loads: checkpoint.external_loads,
        quarantined: checkpoint.quarantined,
        on,
        devices: super::run::parse_devices(&args.devices)?,
        tangents: checkpoint.tangents.map(super::run::Tangents::Resumed),
    };
    super::run::drive(start, &plan, output, path, recording, started)
}

/// The run to finish: `run`, the plan a checkpoint at clock step `step` kept (if it was
/// written by `rigid-crowd run`), under the flags of `args`; and the recording to continue.
/// Over MPI ranks, rank 0 (whose checkpoint keeps the plan) makes it for all.
pub(crate) fn resume_plan(
    args: &ResumeArgs,
    run: Option<&RunPlan>,
    step: u64,
) -> Result<(RunPlan, Option<crate::RecordingPlan>)> {
    let out = args
        .out
        .clone()
        .or_else(|| run.map(|r| r.out.clone()))
        .ok_or_else(|| {
            Error::invalid(
                "--out",
                "is needed: the checkpoint was not written by `rigid-crowd run`",
            )
        })?;
    let end_step = match (args.steps, run) {
        (Some(steps), _) => step + steps,
        (None, Some(run)) => run.end_step,
        (None, None) => {
            return Err(Error::invalid(
                "--steps",
                "is needed: the checkpoint was not written by `rigid-crowd run`",
            ));
        }
    };
    let trajectory = run.and_then(|r| r.recording.clone());
    if let (Some(trajectory), Some(run)) = (&trajectory, run) {
        if end_step != run.end_step {
            return Err(Error::invalid(
                "--steps",
                format!(
                    "the run ends at step {}, where its recording {} ends; it cannot end at step {end_step}",
                    run.end_step,
                    trajectory.path.display()
                ),
            ));
        }
    }
    let plan = RunPlan {
        end_step,
        out,
        checkpoint_every: run.map_or(0, |r| r.checkpoint_every),
        recording: None,
    };
    Ok((plan, trajectory))
}
