//! `rigid-crowd integrators`: every integrator measured side by side, as a markdown table
//! (and JSON).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::backends::gpu::GpuContext;
use crate::checkpoint::atomic_file::AtomicFile;
use crate::cli::integrator_table::{LongReads, TablePlan, measure_integrators};
use crate::model::backend::Backend;
use crate::{Error, Result};
use clap::Args;

#[derive(Args, Debug)]
pub struct IntegratorsArgs {
    /// Coarsest step of the convergence runs (s); the next two halve it.
    #[arg(long, default_value_t = 0.02)]
    order_dt: f64,
    /// Simulated time of each convergence run (s).
    #[arg(long, default_value_t = 4.0)]
    order_time: f64,
    /// Steps of the long torque-free run that measures the drifts.
    #[arg(long, default_value_t = 100_000)]
    long_steps: u64,
    /// Step of the long run (s).
    #[arg(long, default_value_t = 0.01)]
    long_dt: f64,
    /// Torque-free asymmetric bodies in the long run: the tumbling top, then random ones.
    #[arg(long, default_value_t = 1)]
    long_bodies: usize,
    /// Run the long run as a simulation on this backend (`cpu-ref` or `gpu-f64`, which gives
    /// its bits faster), read every `--long-every` steps, instead of scanning every step of
    /// the reference stepper: for crowds and runs too long for the scan.
    #[arg(long)]
    long_backend: Option<Backend>,
    /// With `--long-backend`: steps between reads of the crowd (the plotted samples are read
    /// as well) [default: 100].
    #[arg(long)]
    long_every: Option<u64>,
    /// Bodies in each timed crowd.
    #[arg(long, default_value_t = 16_384)]
    bodies: usize,
    /// Steps of each timed run.
    #[arg(long, default_value_t = 100)]
    steps: u64,
    /// Time the CPU backends only.
    #[arg(long)]
    no_gpu: bool,
    /// Also write the table as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Also write the long run's energy error against time as an SVG plot (log-log).
    #[arg(long)]
    svg: Option<PathBuf>,
}

/// `value` must be finite and > 0; the error names the flag.
fn positive(flag: &str, value: f64) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(Error::invalid(
            flag,
            format!("must be a finite number > 0 (got {value})"),
        ))
    }
}

/// `value` must be at least 1; the error names the flag.
fn at_least_one(flag: &str, value: u64) -> Result<u64> {
    if value >= 1 {
        Ok(value)
    } else {
        Err(Error::invalid(flag, "must be at least 1 (got 0)"))
    }
}

pub fn integrators(args: IntegratorsArgs) -> Result<ExitCode> {
    let plan = TablePlan {
        order_dt: positive("--order-dt", args.order_dt)?,
        order_time: positive("--order-time", args.order_time)?,
        long_steps: at_least_one("--long-steps", args.long_steps)?,
        long_dt: positive("--long-dt", args.long_dt)?,
        long_bodies: at_least_one("--long-bodies", args.long_bodies as u64)? as usize,
        long_reads: match args.long_backend {
            None if args.long_every.is_some() => {
                return Err(Error::invalid(
                    "--long-every",
                    "reads a simulation: give --long-backend with it",
                ));
            }
            None => LongReads::EveryStep,
            Some(backend @ (Backend::Reference | Backend::GpuF64)) => LongReads::Sampled {
                backend,
                every: at_least_one("--long-every", args.long_every.unwrap_or(100))?,
            },
            Some(other) => {
                return Err(Error::invalid(
                    "--long-backend",
                    format!(
                        "the long run is measured in f64: `cpu-ref` or `gpu-f64` (got `{}`)",
                        other.name()
                    ),
                ));
            }
        },
        timing_bodies: at_least_one("--bodies", args.bodies as u64)? as usize,
        timing_steps: at_least_one("--steps", args.steps)?,
    };
    if plan.order_time < 4.0 * plan.order_dt {
        return Err(Error::invalid(
            "--order-time",
            format!(
                "must be at least 4 x --order-dt = {} (got {})",
                4.0 * plan.order_dt,
                plan.order_time
            ),
        ));
    }
    // Claim the output first: an unwritable path fails before the measuring starts.
    let json_out = args.json.as_ref().map(AtomicFile::create).transpose()?;
    let svg_out = args.svg.as_ref().map(AtomicFile::create).transpose()?;
    let long_on_gpu = args.long_backend == Some(Backend::GpuF64);
    let gpu = if args.no_gpu && !long_on_gpu {
        None
    } else {
        Some(GpuContext::new()?)
    };
    let timed_gpu = gpu.as_ref().filter(|_| !args.no_gpu);
    let table = measure_integrators(&plan, timed_gpu, gpu.as_ref())?;
    print!("{}", table.markdown());
    if let Some(mut out) = json_out {
        let target = out.target().to_path_buf();
        let text = serde_json::to_string_pretty(&table)
            .map_err(|e| Error::invalid("--json", e.to_string()))?;
        writeln!(out, "{text}").map_err(|e| Error::io(&target, e))?;
        out.commit()?;
        println!("\nwrote {}", target.display());
    }
    if let Some(mut out) = svg_out {
        let target = out.target().to_path_buf();
        write!(out, "{}", table.energy_svg()).map_err(|e| Error::io(&target, e))?;
        out.commit()?;
        println!("wrote {}", target.display());
    }
    Ok(ExitCode::SUCCESS)
}
