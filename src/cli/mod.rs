//! Command-line definition and dispatch; each subcommand lives in its own file.

mod bench;
mod bench_recording;
mod check;
mod demo;
mod info;
mod integrators;
mod progress;
mod recording;
mod render;
mod resume;
mod run;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use rigid_crowd::Result;

/// Integrates huge crowds of independent rigid bodies on the GPU, checked against an f64 CPU reference.
#[derive(Parser, Debug)]
#[command(name = "rigid-crowd", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a scene file and write the final states as CSV.
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

/// Runs the chosen subcommand.
pub fn execute(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Resume(args) => resume::resume(args),
        Command::Check(args) => check::check(args),
        Command::Demo(args) => demo::demo(args),
        Command::Bench(args) => bench::bench(args),
        Command::Info => info::info(),
        Command::Integrators(args) => integrators::integrators(args),
        Command::Render(args) => render::render(args),
    }
}

/// `12.3 M` style rate with three significant digits.
pub(crate) fn rate(per_second: f64) -> String {
    let (value, unit) = if per_second >= 1e9 {
        (per_second / 1e9, " G")
    } else if per_second >= 1e6 {
        (per_second / 1e6, " M")
    } else if per_second >= 1e3 {
        (per_second / 1e3, " k")
    } else {
        (per_second, " ")
    };
    format!("{value:.3}{unit}")
}
