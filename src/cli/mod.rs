//! The `rigid-crowd` command line (feature `cli`): definition and dispatch, each subcommand
//! in its own file. Only [`main`] (for the binary, src/main.rs) and [`main_with_laws`] (for
//! a program that registers force laws of its own) are reachable from outside.

mod bench;
#[cfg(feature = "mpi")]
mod bench_ranks;
mod bench_recording;
mod check;
mod demo;
mod info;
mod integrator_table;
mod integrators;
mod progress;
mod quarantine_report;
#[cfg(feature = "mpi")]
mod ranks;
mod recording;
mod render;
mod resume;
mod run;
mod run_loop;
mod tangent_flags;
mod text;
#[cfg(feature = "mpi")]
mod world;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::{ForceLaws, Result};

/// The benches' workloads, shared with `benches/throughput.rs` so criterion and
/// `rigid-crowd bench` measure the same crowds.
pub use crate::bench::workload as bench_workload;

/// Parses the arguments, runs the subcommand and turns its error into one line on stderr.
pub fn main() -> ExitCode {
    main_with_laws(ForceLaws::new())
}

/// The `rigid-crowd` command line in a program of its own that registers force laws: its
/// scenes may name them (`run`, `render`), and `resume` attaches them again by name, as the
/// library does ([`Scene::load_with_laws`](crate::Scene::load_with_laws),
/// [`Checkpoint::with_laws`](crate::Checkpoint::with_laws)). `examples/force_law_cli.rs` is
/// one such program; like `rigid-crowd`'s own `main`, it first calls
/// [`quiet_device_select_without_wayland`](crate::gpu::quiet_device_select_without_wayland).
pub fn main_with_laws(laws: ForceLaws) -> ExitCode {
    run_with_laws(std::env::args_os(), laws)
}

/// [`main_with_laws`] on the arguments `args` (the program's name first), as a program's
/// own tests call it.
pub fn run_with_laws<I, T>(args: I, laws: ForceLaws) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args = match Cli::try_parse_from(args) {
        Ok(args) => args,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    ExitCode::from(2)
                } else {
                    ExitCode::SUCCESS
                };
            }
            // One line, like every other error of this tool.
            let rendered = e.to_string();
            let first = rendered.lines().next().unwrap_or("invalid arguments");
            eprintln!("{first} (see `rigid-crowd --help`)");
            return ExitCode::from(2);
        }
    };
    match execute(args.with_laws(laws)) {
        Ok(code) => code,
        Err(e) => {
            // Under MPI every rank ends with the same (agreed) error: rank 0 says it.
            if !is_other_mpi_rank() {
                text::say(&format!("error: {e}"));
            }
            ExitCode::FAILURE
        }
    }
}

/// Whether an MPI launcher started this process as a rank other than 0.
fn is_other_mpi_rank() -> bool {
    ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var(v).is_ok_and(|rank| rank != "0"))
}

/// A build without the `mpi` feature started by an MPI launcher as one of several ranks
/// would run the whole crowd in every rank, each writing the same files: refused.
#[cfg(not(feature = "mpi"))]
fn refuse_mpi_launch() -> Result<()> {
    let ranks = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse::<usize>().ok());
    match ranks {
        Some(ranks) if ranks > 1 => Err(crate::Error::Mpi(format!(
            "started as one of {ranks} MPI ranks, but this rigid-crowd was built without the `mpi` feature (cargo build --release --features mpi)"
        ))),
        _ => Ok(()),
    }
}

/// Integrates huge crowds of independent rigid bodies on the GPU, checked against an f64 CPU reference.
#[derive(Parser, Debug)]
#[command(name = "rigid-crowd", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a scene file and write the final states (CSV, .npy or .npz, by the extension).
    Run(run::RunArgs),
    /// Finish a run from its last checkpoint (`run --checkpoint`).
    Resume(resume::ResumeArgs),
    /// Run a seeded crowd on both backends and report their largest deviations.
    Check(check::CheckArgs),
    /// The main job: a large tumbling crowd on the best GPU adapter and on the CPU.
    Demo(demo::DemoArgs),
    /// CPU and GPU throughput side by side, with the GPU's copy-bandwidth roofline.
    Bench(bench::BenchArgs),
    /// List GPU adapters and the limits that matter for crowd size.
    Info,
    /// Every integrator side by side: order, drift of the invariants, cost per body-step.
    Integrators(integrators::IntegratorsArgs),
    /// PNG frames of a scene's crowd, drawn on the GPU from the simulation's own buffers.
    Render(render::RenderArgs),
}

impl Cli {
    /// The command, reading scenes and checkpoints with `laws` registered.
    fn with_laws(mut self, laws: ForceLaws) -> Self {
        match &mut self.command {
            Command::Run(args) => args.laws = laws,
            Command::Resume(args) => args.laws = laws,
            Command::Render(args) => args.laws = laws,
            _ => {}
        }
        self
    }
}

/// Runs the chosen subcommand.
fn execute(cli: Cli) -> Result<ExitCode> {
    #[cfg(not(feature = "mpi"))]
    if matches!(
        cli.command,
        Command::Run(_) | Command::Resume(_) | Command::Bench(_)
    ) {
        refuse_mpi_launch()?;
    }
    let started = std::time::Instant::now();
    // Under an MPI launcher, `run` and `resume` go over the ranks.
    #[cfg(feature = "mpi")]
    let cli = match cli.command {
        command @ (Command::Run(_) | Command::Resume(_)) => {
            match (command, world::World::launched()) {
                (Command::Run(args), Some(world)) => return ranks::run(args, world, started),
                (Command::Resume(args), Some(world)) => {
                    return ranks::resume(args, world, started);
                }
                (command, _) => Cli { command },
            }
        }
        command => Cli { command },
    };
    match cli.command {
        Command::Run(args) => run::run(args, started),
        Command::Resume(args) => resume::resume(args, started),
        Command::Check(args) => check::check(args),
        Command::Demo(args) => demo::demo(args),
        Command::Bench(args) => bench::bench(args),
        Command::Info => info::info(),
        Command::Integrators(args) => integrators::integrators(args),
        Command::Render(args) => render::render(args),
    }
}
