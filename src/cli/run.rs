//! `rigid-crowd run SCENE.json --out FINAL.csv|.npy|.npz [--checkpoint FILE --checkpoint-every K]`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;

use super::quarantine_report::QuarantineReport;
use super::recording::Recording;
use super::run_loop::{Stepping, run_to_end};
use super::text::say;
use crate::assembly::body_source::BodySource;
use crate::checkpoint::TangentColumns;
use crate::checkpoint::atomic_file::AtomicFile;
use crate::model::fault_rules::{FaultRules, OnFault};
use crate::model::tangent::TangentPlan;
use crate::record::{TrajectoryFormat, write_final_states};
use crate::simulation::RunsOn;
use crate::{
    Backend, Crowd, CrowdSpec, Error, ExternalLoad, Integrator, QuarantinedBody, Result, RunPlan,
    Scene, Simulation,
    backends::gpu::{DeviceCount, GpuContext},
};

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Scene file (JSON, version 1).
    pub(crate) scene: PathBuf,
    /// Backend: `gpu` (f32 WGSL kernels), `cpu` (fast f32 CPU path) or `cpu-ref` (the f64
    /// reference).
    #[arg(long, default_value = "gpu")]
    pub(crate) backend: String,
    /// Where to write the final states, in the format of the extension: `.csv`, `.npy` (shape
    /// (bodies, 19), float32 on `gpu` and `cpu`, float64 on `cpu-ref` and `gpu-f64`) or
    /// `.npz` (`states`, `step`, `time`); positions and orientations are the model frame's
    /// pose (see docs/shapes.md). Replaced only when the run succeeds.
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// Override the scene's step count.
    #[arg(long)]
    steps: Option<u64>,
    /// Override the scene's time step (seconds).
    #[arg(long, allow_negative_numbers = true)]
    dt: Option<f64>,
    /// Override the scene's integrator (`euler`, `symplectic_euler`, `rk4`, `lie_rk4`, `lie_poisson` or `lie_poisson4`).
    #[arg(long)]
    integrator: Option<String>,
    /// Write a checkpoint here every `--checkpoint-every` steps (atomically: a crash
    /// mid-write leaves the previous one intact); continue with `rigid-crowd resume FILE`.
    #[arg(long)]
    pub(crate) checkpoint: Option<PathBuf>,
    /// Steps between checkpoints (default: a tenth of the run).
    #[arg(long)]
    checkpoint_every: Option<u64>,
    /// What a body whose state turns NaN or infinite, or leaves the envelope
    /// (`--max-speed`, `--max-angular-speed`, `--max-distance`), does: `stop` the run (the
    /// default) or `freeze` it alone at its last good state and go on; the frozen bodies are
    /// listed in `OUT.quarantine.json` beside `--out`. Overrides the scene's `fault_rules`.
    #[arg(long)]
    on_fault: Option<String>,
    /// The envelope's largest speed |v| (m/s).
    #[arg(long, allow_negative_numbers = true)]
    max_speed: Option<f64>,
    /// The envelope's largest angular speed |omega| (rad/s).
    #[arg(long, allow_negative_numbers = true)]
    max_angular_speed: Option<f64>,
    /// The envelope's largest distance |x| of a centre of mass from the origin (m).
    #[arg(long, allow_negative_numbers = true)]
    max_distance: Option<f64>,
    /// GPU devices to split the crowd over: a count (opened round-robin over the adapters;
    /// on a machine with one adapter, all on it) or `all` (one per adapter). Results are bit
    /// for bit those of one device.
    #[arg(long, default_value = "1")]
    pub(crate) devices: String,
    /// `--backend gpu` only: take the f32 kernel's divisions and square roots in f64 and
    /// round them to f32, so that `gpu` gives `cpu`'s bits on adapters whose f32 ones are
    /// approximate (`rigid-crowd info` says which; needs SHADER_F64). A checkpoint keeps
    /// it, and `resume` continues with it.
    #[arg(long)]
    pub(crate) f32_divisions_in_f64: bool,
    #[command(flatten)]
    pub(crate) recording: super::recording::RecordArgs,
    #[command(flatten)]
    pub(crate) tangents: super::tangent_flags::TangentArgs,
    /// The force laws a scene may name besides the built-in kinds: those of a program that
    /// runs this command line with its own laws (`cli::main_with_laws`).
    #[arg(skip)]
    pub(crate) laws: crate::ForceLaws,
}

/// What a run starts from: a scene's crowd (and recipe), or a checkpoint's crowd with its
/// external loads and frozen bodies; and where it runs.
pub(crate) struct RunStart {
    pub crowd: Crowd,
    pub recipe: Option<CrowdSpec>,
    pub loads: Option<Vec<ExternalLoad>>,
    pub quarantined: Vec<QuarantinedBody>,
    /// The backend, and on `gpu` how its kernel divides.
    pub on: RunsOn,
    pub devices: DeviceCount,
    /// The tangents to carry.
    pub tangents: Option<Tangents>,
}

/// The tangents a run carries: started by its flags, or carried on from a checkpoint.
pub(crate) enum Tangents {
    /// `--jacobian`, `--sensitivity`, from the start.
    Started(TangentPlan),
    /// A checkpoint's, from where it left them.
    Resumed(TangentColumns),
}

/// `--on-fault` and the envelope's flags, over the scene's rules.
fn apply_fault_flags(args: &RunArgs, rules: &mut FaultRules) -> Result<()> {
    if let Some(name) = &args.on_fault {
        rules.on_fault = OnFault::parse(name, "--on-fault")?;
    }
    let envelope = &mut rules.envelope;
    for (flag, given, limit) in [
        ("--max-speed", args.max_speed, &mut envelope.max_speed),
        (
            "--max-angular-speed",
            args.max_angular_speed,
            &mut envelope.max_angular_speed,
        ),
        (
            "--max-distance",
            args.max_distance,
            &mut envelope.max_distance,
        ),
    ] {
        if let Some(value) = given {
            if !value.is_finite() || value <= 0.0 {
                return Err(Error::invalid(
                    flag,
                    format!("must be a finite number > 0 (got {value})"),
                ));
            }
            *limit = Some(value);
        }
    }
    Ok(())
}

/// `--devices`: a count of at least 1 or `all`.
pub(crate) fn parse_devices(text: &str) -> Result<DeviceCount> {
    text.parse().map_err(|m| Error::invalid("--devices", m))
}

pub(crate) fn parse_backend(name: &str) -> Result<Backend> {
    name.parse().map_err(|m| Error::invalid("--backend", m))
}

/// The final states' file, claimed before any work is done: the format its extension
/// names (anything else is an error naming `--out`) and the temporary file it is written
/// to, so an unwritable path fails at once too.
pub(crate) struct Output {
    pub file: AtomicFile,
    pub format: TrajectoryFormat,
}

impl Output {
    pub(crate) fn claim(path: &Path) -> Result<Self> {
        let format = TrajectoryFormat::from_path(path);
        if format.is_err() && path.is_dir() {
            // A directory is named as one, whatever its name ends in.
            AtomicFile::create(path)?;
        }
        let format = format.map_err(|m| Error::invalid("--out", m))?;
        Ok(Self {
            file: AtomicFile::create(path)?,
            format,
        })
    }
}

/// What the summary line adds to the adapter when `gpu`'s kernel takes its f32 divisions in
/// f64 (nothing otherwise).
pub(crate) fn divisions_note(sim: &Simulation) -> &'static str {
    match sim.gpu_options().is_some_and(|o| o.divides_in_f64()) {
        true => ", f32 divisions and square roots in f64",
        false => "",
    }
}

/// `rigid-crowd run` in one process; `started` is when the command began.
pub fn run(args: RunArgs, started: Instant) -> Result<ExitCode> {
    let backend = parse_backend(&args.backend)?;
    let output = Output::claim(&args.out)?;
    let planned = PlannedRun::of(&args, backend)?;
    let recording = planned.prepare_recording(&args)?;
    drive(
        planned.start,
        &planned.plan,
        output,
        args.checkpoint.as_deref(),
        recording,
        started,
    )
}

/// A run as its flags and scene describe it, before anything is claimed or opened.
pub(crate) struct PlannedRun {
    pub start: RunStart,
    pub plan: RunPlan,
    /// Steps to take.
    pub steps: u64,
}

impl PlannedRun {
    /// Loads the scene of `args` and applies the flags over it.
    pub(crate) fn of(args: &RunArgs, backend: Backend) -> Result<Self> {
        let (mut scene, recipe) = Scene::load_with_recipe(&args.scene, &args.laws)
            .map_err(|e| e.within(format_args!("{}: ", args.scene.display())))?;
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
        apply_fault_flags(args, &mut scene.crowd.fault_rules)?;
        let steps = args.steps.unwrap_or(scene.steps);
        let checkpoint_every = match (&args.checkpoint, args.checkpoint_every) {
            (None, Some(_)) => {
                return Err(Error::invalid(
                    "--checkpoint-every",
                    "needs --checkpoint FILE to say where checkpoints go",
                ));
            }
            (_, Some(0)) => return Err(Error::invalid("--checkpoint-every", "must be at least 1")),
            (Some(_), None) => steps.div_ceil(10).max(1),
            (None, None) => 0,
            (_, Some(every)) => every,
        };
        let tangents = args.tangents.plan(&scene.crowd, &args.out)?;
        let plan = RunPlan {
            end_step: scene.crowd.start_step + steps,
            out: args.out.clone(),
            checkpoint_every,
            recording: None,
        };
        Ok(Self {
            start: RunStart {
                crowd: scene.crowd,
                recipe,
                loads: None,
                quarantined: Vec::new(),
                on: RunsOn::new(backend, args.f32_divisions_in_f64, "--f32-divisions-in-f64")?,
                devices: parse_devices(&args.devices)?,
                tangents: tangents.map(Tangents::Started),
            },
            plan,
            steps,
        })
    }

    /// The recording `args` ask for, its file claimed (resumable with `--checkpoint`).
    pub(crate) fn prepare_recording(&self, args: &RunArgs) -> Result<Recording> {
        let resumable = args.checkpoint.is_some();
        Recording::prepare(&args.recording, self.body_count(), self.steps, resumable)
    }

    /// Bodies in the crowd: the scene's and its recipe's.
    pub(crate) fn body_count(&self) -> usize {
        self.start.crowd.bodies.len() + self.start.recipe.as_ref().map_or(0, |r| r.count)
    }
}

/// Opens the backend of `start` on its crowd, followed by the bodies of its recipe if any,
/// generated straight into the backend (with a checkpoint's external loads and frozen bodies
/// if resuming), runs to
/// `plan.end_step` writing checkpoints on the way, then writes the final states to `output`
/// (claimed from `plan.out` before any work, so a bad path has failed already; an existing
/// file is only replaced once the new one is complete). The summary line gives the time
/// since `started` in three phases: set-up, integration, output. The crowd is dropped once
/// the simulation holds it, so the host keeps one copy of the bodies, not two.
pub(crate) fn drive(
    start: RunStart,
    plan: &RunPlan,
    output: Output,
    checkpoint_path: Option<&Path>,
    recording: Recording,
    started: Instant,
) -> Result<ExitCode> {
    let RunStart {
        crowd,
        recipe,
        loads,
        quarantined,
        on,
        devices,
        tangents,
    } = start;
    let report = QuarantineReport::claim(&plan.out, crowd.fault_rules)?;
    let source = match &recipe {
        Some(spec) => BodySource::with_generated(&crowd.bodies, spec)?,
        None => BodySource::given(&crowd.bodies),
    };
    let (mut sim, adapter) = match on.backend {
        Backend::Reference => (
            Simulation::from_source(&crowd, &source, on, &[])?,
            "the f64 CPU reference".to_string(),
        ),
        Backend::FastCpu => (
            Simulation::from_source(&crowd, &source, on, &[])?,
            format!("the f32 CPU path, {} threads", rayon::current_num_threads()),
        ),
        Backend::Gpu | Backend::GpuF64 => {
            let gpus = match devices {
                DeviceCount::Count(1) => vec![GpuContext::new()?],
                more => GpuContext::open_devices(more)?,
            };
            let sim = Simulation::from_source(&crowd, &source, on, &gpus)?;
            let mut adapter = match gpus.len() {
                1 => gpus[0].describe(),
                n => format!("{n} devices of {}", gpus[0].describe()),
            };
            adapter += divisions_note(&sim);
            (sim, adapter)
        }
    };
    drop(source);
    if let Some(loads) = loads {
        sim.set_external_loads(&loads)?;
    }
    sim.freeze(&quarantined)?;
    match tangents {
        Some(Tangents::Started(plan)) => sim.carry_tangents(plan)?,
        Some(Tangents::Resumed(columns)) => sim.restore_tangents(&columns)?,
        None => {}
    }
    let (integrator, dt) = (crowd.integrator, crowd.dt);
    drop(crowd);
    let start_step = sim.clock_step();
    let steps = plan.end_step.saturating_sub(start_step);
    let mut local = LocalRun {
        sim,
        recording,
        #[cfg(feature = "fault-injection")]
        device_loss: injected_device_loss()?,
    };
    let integration = match run_to_end(&mut local, plan, checkpoint_path) {
        Ok(integration) => integration,
        Err(stopped) => {
            say(&stopped.line(checkpoint_path, "rigid-crowd resume"));
            return Ok(ExitCode::FAILURE);
        }
    };
    let LocalRun {
        mut sim, recording, ..
    } = local;
    let elapsed = integration.seconds();
    write_final_states(output.file, output.format, &mut sim)?;
    let recorded = recording.commit(&mut sim)?;
    let set_up = (integration.began - started).as_secs_f64();
    let written = integration.ended.elapsed().as_secs_f64();
    let body_steps = sim.body_count() as f64 * steps as f64;
    let peak = match peak_memory_bytes() {
        Some(bytes) => format!(", peak memory {:.1} MB", bytes as f64 / 1e6),
        None => String::new(),
    };
    eprintln!(
        "{} bodies x {steps} steps ({}, dt = {} s) on {adapter}: {elapsed:.3} s, {}body-steps/s; wrote {}{recorded}; set-up {set_up:.3} s, integration {elapsed:.3} s, output {written:.3} s{peak}",
        sim.body_count(),
        integrator,
        dt,
        super::text::rate(body_steps / elapsed.max(1e-9)),
        plan.out.display()
    );
    if let Some(report) = report {
        eprintln!("{}", report.write(&mut sim)?);
    }
    Ok(ExitCode::SUCCESS)
}

/// A run in one process, as the run loop drives it.
struct LocalRun {
    sim: Simulation,
    recording: Recording,
    /// `RIGID_CROWD_INJECT_DEVICE_LOSS_AT`'s step and device, in test builds.
    #[cfg(feature = "fault-injection")]
    device_loss: Option<(u64, usize)>,
}

impl Stepping for LocalRun {
    fn clock_step(&self) -> u64 {
        self.sim.clock_step()
    }

    fn advance(&mut self, steps: u64) -> Result<()> {
        self.recording.advance(&mut self.sim, steps)?;
        #[cfg(feature = "fault-injection")]
        if let Some((at, device)) = self.device_loss {
            if self.sim.clock_step() >= at {
                if let Some(ctx) = self.sim.gpu_device(device) {
                    ctx.destroy_device();
                }
            }
        }
        Ok(())
    }

    fn checkpoint(&mut self, path: &Path, plan: &RunPlan) -> Result<()> {
        let mut checkpoint = self.sim.checkpoint()?;
        let recording = self.recording.sync(&mut self.sim)?;
        checkpoint.run = Some(RunPlan {
            recording,
            ..plan.clone()
        });
        checkpoint.write(path)
    }

    fn finish(&mut self) -> Result<()> {
        self.sim.finish()
    }
}

/// The process's peak resident memory (`VmHWM`, Linux only): what a run of this size needs.
fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kilobytes: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kilobytes * 1024)
}

/// `RIGID_CROWD_INJECT_DEVICE_LOSS_AT=STEP[:DEVICE]`: destroy GPU device `DEVICE` (default
/// 0, the first of a run over several) once the clock passes STEP, as a driver reset would.
/// Only in test builds (feature `fault-injection`).
#[cfg(feature = "fault-injection")]
fn injected_device_loss() -> Result<Option<(u64, usize)>> {
    const VAR: &str = "RIGID_CROWD_INJECT_DEVICE_LOSS_AT";
    let Ok(text) = std::env::var(VAR) else {
        return Ok(None);
    };
    let (step, device) = text.split_once(':').unwrap_or((&text, "0"));
    match (step.parse(), device.parse()) {
        (Ok(step), Ok(device)) => Ok(Some((step, device))),
        _ => Err(Error::invalid(
            VAR,
            format!("must be a step count, optionally `:DEVICE` (got `{text}`)"),
        )),
    }
}
