//! `rigid-crowd bench`: CPU and GPU throughput side by side, with the GPU's copy-bandwidth
//! roofline, as a table, JSON and an SVG plot.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::backends::gpu::{DeviceCount, GpuContext, GpuOptions};
use crate::bench::plot::{Series, throughput_svg};
use crate::bench::{
    BenchPlan, BenchReport, FLOP_PER_BODY_STEP, Measurement, Workload, arithmetic_intensity,
};
use crate::checkpoint::atomic_file::AtomicFile;
use crate::model::tangent::TangentPlan;
use crate::{Backend, Error, Result};
use clap::Args;

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Crowd sizes: a list (`1000,1e5`) and/or decade ranges (`1e3..1e7`).
    #[arg(long, default_value = "1e3..1e6")]
    bodies: String,
    /// Steps per timed run.
    #[arg(long, default_value_t = 100)]
    steps: u64,
    /// Backends: any of `cpu-ref`, `cpu`, `gpu`, `gpu-f64` (by default `gpu-f64` runs where
    /// the adapter has `SHADER_F64`).
    #[arg(long, default_value = DEFAULT_BACKENDS)]
    backends: String,
    /// Timed runs per configuration; the median is reported (after one warm-up run).
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    /// GPU steps fused per dispatch; one row per value.
    #[arg(long, default_value = "1,8")]
    fuse: String,
    /// GPU workgroup sizes; one row per value (a sweep).
    #[arg(long, default_value = "64")]
    workgroup_sizes: String,
    /// GPU kernel compilation: `trusted` (no injected bounds checks), `checked`, or both.
    #[arg(long, default_value = "trusted")]
    shader: String,
    /// GPU kernel: `specialized` (compiled for the crowd's integrator, force kinds and
    /// contacts), `general` (every force kind and shape, under the crowd's integrator;
    /// bit-identical results, for comparison), or both.
    #[arg(long, default_value = "specialized")]
    kernel: String,
    /// f32 GPU kernel's divisions and square roots: `native` (the driver's f32 ones) or
    /// `f64` (taken in f64 and rounded to f32: correctly rounded where the adapter's f64
    /// ones are, as `rigid-crowd info` probes; needs SHADER_F64), or both.
    #[arg(long, default_value = "native")]
    f32_division: String,
    /// The widest block of directions the GPU tangent kernels carry at once: `4`, `1`,
    /// `auto` (the adapter's: 1 on a GPU; on a CPU adapter such as lavapipe, 1 until a run
    /// has carried 2^19 body-steps and 4 from then on, the width `ops/step` counts), or a
    /// list (`4,1`), one row each.
    #[arg(long, default_value = "auto")]
    tangent_blocks: String,
    /// What the crowd feels: `gravity-drag`, `every-force` (every force kind, keyframes and
    /// a custom force), `contacts` (gravity and drag in a pit of five planes),
    /// `distant-planes` (the pit's planes 10 km away) or `resting` (a settled pile: bodies of
    /// five shapes at rest on the pit's floor).
    #[arg(long, default_value = "gravity-drag")]
    workload: String,
    /// CPU thread counts; one row per value (default: every core).
    #[arg(long)]
    threads: Option<String>,
    /// Also write every measurement as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Also write a log-log plot of body-steps/s against bodies (SVG).
    #[arg(long)]
    plot: Option<PathBuf>,
    /// GPU device counts, one row each (`1,2`), or `all` (one and every adapter's): the
    /// crowd is split over that many devices, opened round-robin over the adapters; a count
    /// above one also reports its parallel efficiency against one device, and every GPU row
    /// is then timed by the host's wall clock.
    #[arg(long, default_value = "1")]
    devices: String,
    /// Also time the GPU recording every K steps against unrecorded (wall clock both),
    /// for each size and GPU variant; see docs/recording.md.
    #[arg(long)]
    record_every: Option<u64>,
    /// Tangents to carry, one row each on every backend: `none` (the plain run), `state`
    /// (the 13-column Jacobian), `mass`, `inertia` or a force's number (`forces[1].linear`).
    /// Each such row gives the bytes per body the tangents take on the device or the host
    /// and, in the JSON, its cost over `none`'s.
    #[arg(long, default_value = "none")]
    tangents: String,
}

const DEFAULT_BACKENDS: &str = "cpu-ref,cpu,gpu,gpu-f64";

/// Comma-separated items, each parsed by `item`; errors name `field`.
fn list<T>(field: &str, text: &str, item: impl Fn(&str) -> Option<Vec<T>>) -> Result<Vec<T>> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim) {
        match item(part) {
            Some(values) => out.extend(values),
            None => return Err(Error::invalid(field, format!("cannot read `{part}`"))),
        }
    }
    if out.is_empty() {
        return Err(Error::invalid(field, "must name at least one value"));
    }
    Ok(out)
}

/// [`list`] of words, each one of `named`'s names, read as its value.
fn choices<T: Copy>(field: &str, text: &str, named: &[(&str, T)]) -> Result<Vec<T>> {
    list(field, text, |p| {
        (named.iter())
            .find(|(name, _)| *name == p)
            .map(|&(_, value)| vec![value])
    })
}

/// A positive whole number written as `1000` or `1e3`.
fn count(text: &str) -> Option<usize> {
    let value: f64 = text.parse().ok()?;
    ((1.0..=1e12).contains(&value) && value.fract() == 0.0).then_some(value as usize)
}

/// `1e3..1e6` as every power of ten from the first to the last.
fn decades(text: &str) -> Option<Vec<usize>> {
    let (low, high) = text.split_once("..")?;
    let (low, high) = (count(low)?, count(high)?);
    let mut sizes = Vec::new();
    let mut n = low;
    while n <= high {
        sizes.push(n);
        n = n.checked_mul(10)?;
    }
    (!sizes.is_empty()).then_some(sizes)
}

pub(crate) fn parse_sizes(text: &str) -> Result<Vec<usize>> {
    list("--bodies", text, |p| {
        decades(p).or_else(|| count(p).map(|n| vec![n]))
    })
}

fn parse_u32s(field: &str, text: &str) -> Result<Vec<u32>> {
    list(field, text, |p| p.parse::<u32>().ok().map(|n| vec![n]))
}

fn plan(args: &BenchArgs) -> Result<BenchPlan> {
    let backends = list("--backends", &args.backends, |p| {
        p.parse::<Backend>().ok().map(|b| vec![b])
    })?;
    let trusted = choices(
        "--shader",
        &args.shader,
        &[("trusted", true), ("checked", false)],
    )?;
    let divisions_in_f64 = choices(
        "--f32-division",
        &args.f32_division,
        &[("native", false), ("f64", true)],
    )?;
    let tangent_blocks = choices(
        "--tangent-blocks",
        &args.tangent_blocks,
        &[("auto", None), ("4", Some(4)), ("1", Some(1))],
    )?;
    let specialized = choices(
        "--kernel",
        &args.kernel,
        &[("specialized", true), ("general", false)],
    )?;
    let fuse = parse_u32s("--fuse", &args.fuse)?;
    let workgroup_sizes = parse_u32s("--workgroup-sizes", &args.workgroup_sizes)?;
    let mut gpu_variants = Vec::new();
    for &workgroup_size in &workgroup_sizes {
        for &steps_per_dispatch in &fuse {
            for &trusted_shader in &trusted {
                for &specialized in &specialized {
                    for &f32_divisions_in_f64 in &divisions_in_f64 {
                        for &widest_tangent_block in &tangent_blocks {
                            gpu_variants.push(GpuOptions {
                                workgroup_size,
                                steps_per_dispatch,
                                trusted_shader,
                                specialized,
                                f32_divisions_in_f64,
                                widest_tangent_block,
                                ..GpuOptions::default()
                            });
                        }
                    }
                }
            }
        }
    }
    let cpu_threads = match &args.threads {
        Some(text) => list("--threads", text, |p| {
            count(p).filter(|&n| n <= 4096).map(|n| vec![n])
        })?,
        None => vec![rayon::current_num_threads()],
    };
    if args.steps == 0 {
        return Err(Error::invalid("--steps", "must be at least 1"));
    }
    if args.repeats == 0 {
        return Err(Error::invalid("--repeats", "must be at least 1"));
    }
    let workload: crate::bench::Workload = args
        .workload
        .parse()
        .map_err(|e: String| Error::invalid("--workload", e))?;
    let tangents = list("--tangents", &args.tangents, |p| match p {
        "none" => Some(vec![None]),
        name => Some(vec![Some(name.to_string())]),
    })?;
    let crowd = workload.crowd(1, 1)?;
    for name in tangents.iter().flatten() {
        TangentPlan::parse(
            &[name],
            &crowd.forces,
            &crowd.planes,
            &crowd.keyframes,
            "--tangents",
        )?;
    }
    Ok(BenchPlan {
        bodies: parse_sizes(&args.bodies)?,
        steps: args.steps,
        repeats: args.repeats,
        backends,
        gpu_variants,
        cpu_threads,
        workload,
        tangents,
        // `all` is known once the adapters are open (see `open_gpus`).
        devices: match args.devices.as_str() {
            "all" => vec![1],
            text => list("--devices", text, |part| {
                part.parse::<usize>()
                    .ok()
                    .filter(|&n| n > 0)
                    .map(|n| vec![n])
            })?,
        },
    })
}

/// The devices the GPU rows run on: one (the best adapter's) unless more are asked for,
/// then the most asked for, or every adapter's for `all` (which adds that count's rows).
fn open_gpus(args: &BenchArgs, plan: &mut BenchPlan) -> Result<Vec<GpuContext>> {
    if !plan.backends.iter().any(|b| b.gpu_precision().is_some()) {
        return Ok(Vec::new());
    }
    if args.devices == "all" {
        let gpus = GpuContext::open_devices(DeviceCount::All)?;
        if gpus.len() > 1 {
            plan.devices.push(gpus.len());
        }
        return Ok(gpus);
    }
    match plan.devices.iter().max() {
        Some(&most) if most > 1 => GpuContext::open_devices(DeviceCount::Count(most)),
        _ => Ok(vec![GpuContext::new()?]),
    }
}

/// What the GPU rows' kernels do per byte they move, so a figure for another adapter can be
/// predicted from its FLOP/s and bandwidth.
fn intensity_line(plan: &BenchPlan) -> String {
    let mut seen: Vec<String> = Vec::new();
    for options in &plan.gpu_variants {
        for precision in plan.backends.iter().filter_map(|b| b.gpu_precision()) {
            let fuse = options.steps_per_dispatch;
            let entry = format!(
                "{:.1} at fuse {fuse} ({})",
                arithmetic_intensity(precision, fuse),
                precision.wgsl_type()
            );
            if !seen.contains(&entry) {
                seen.push(entry);
            }
        }
    }
    format!(
        "kernel: {FLOP_PER_BODY_STEP} FLOP per body-step (counted from the WGSL); FLOP per byte moved: {}",
        seen.join(", ")
    )
}

const HEADER: &str = "backend  prec variant                        bodies  steps    time (s) clock      body-steps/s   eff GB/s  copy frac  GFLOP/s  x cpu-ref    x cpu  par eff  ops/step  compile s";

fn optional(value: Option<f64>, width: usize, digits: usize) -> String {
    match value {
        Some(v) => format!("{v:>width$.digits$}"),
        None => format!("{:>width$}", "-"),
    }
}

fn table_row(r: &Measurement) -> String {
    format!(
        "{:<8} {:<4} {:<28} {:>9} {:>6} {:>11.4} {:<9} {:>14} {:>10.2} {} {} {} {} {} {} {}",
        r.backend,
        r.precision,
        r.variant,
        r.bodies,
        r.steps,
        r.seconds,
        r.clock,
        super::text::rate(r.body_steps_per_second),
        r.effective_gb_per_second,
        optional(r.fraction_of_copy_bandwidth, 10, 3),
        optional(r.gflop_per_second, 8, 1),
        optional(r.speedup_over_cpu_ref, 10, 2),
        optional(r.speedup_over_cpu, 8, 2),
        optional(r.parallel_efficiency, 8, 2),
        optional(r.ops_per_body_step, 9, 0),
        optional(r.compile_seconds, 10, 2),
    )
}

fn plot_series(report: &BenchReport) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for row in &report.rows {
        let label = format!("{} ({})", row.backend, row.variant);
        let point = (row.bodies as f64, row.body_steps_per_second);
        match series.iter_mut().find(|s| s.label == label) {
            Some(s) => s.points.push(point),
            None => series.push(Series {
                label,
                points: vec![point],
            }),
        }
    }
    series
}

fn commit(mut out: AtomicFile, contents: &[u8]) -> Result<()> {
    let target = out.target().to_path_buf();
    out.writer()
        .write_all(contents)
        .map_err(|e| Error::io(&target, e))?;
    out.commit()?;
    println!("wrote {}", target.display());
    Ok(())
}

pub fn bench(args: BenchArgs) -> Result<ExitCode> {
    #[cfg(feature = "mpi")]
    if let Some(world) = super::world::World::launched() {
        let outcome = crate::mpi::agree_on(world.comm(), plan(&args))
            .and_then(|plan| super::bench_ranks::bench(&plan, &world, args.json.as_deref()));
        return Ok(super::world::conclude(&world, outcome));
    }
    let mut plan = plan(&args)?;
    super::bench_recording::check(args.record_every, &plan)?;
    let gpus = open_gpus(&args, &mut plan)?;
    let ctx = gpus.first();
    if let Some(ctx) = ctx
        && !ctx.supports_f64()
        && args.backends == DEFAULT_BACKENDS
    {
        println!(
            "note: {} lacks SHADER_F64; the gpu-f64 rows are left out",
            ctx.describe()
        );
        plan.backends.retain(|&b| b != Backend::GpuF64);
    }
    // Claim the outputs first: an unwritable path fails before an hour of measuring, and an
    // existing file is only replaced once the new one is complete.
    let json_out = args.json.as_ref().map(AtomicFile::create).transpose()?;
    let plot_out = args.plot.as_ref().map(AtomicFile::create).transpose()?;
    println!(
        "rigid-crowd bench: {} steps per run, median of {} runs after one warm-up; workload {}: {}",
        plan.steps,
        plan.repeats,
        plan.workload.name(),
        plan.workload.describe()
    );
    println!("cpu: {}", crate::bench::cpu_description());
    if let Some(ctx) = ctx {
        let clock = if ctx.has_timestamps() && plan.devices == [1] {
            "timestamp queries"
        } else {
            "submit-and-wait wall clock (no timestamp queries)"
        };
        println!("gpu: {} - kernel timed by {clock}", ctx.describe());
        if plan.workload == Workload::GravityDrag {
            println!("{}", intensity_line(&plan));
        }
    }
    // Each row appears on stderr as it is measured; the table with speed-ups (against the
    // fastest cpu-ref and cpu rows of the same size) follows on stdout.
    let mut report = plan.run(&gpus, |row| eprintln!("measured: {}", table_row(row)))?;
    println!("{HEADER}");
    for row in &report.rows {
        println!("{}", table_row(row));
    }
    for copy in &report.copy_bandwidth {
        println!(
            "copy bandwidth at {} bodies ({} bytes copied, {} clock): {:.2} GB/s",
            copy.bodies,
            (crate::bench::BYTES_PER_BODY_STEP / 2.0) as usize * copy.bodies,
            copy.clock,
            copy.gb_per_second
        );
    }
    if let (Some(every), Some(ctx)) = (args.record_every, ctx) {
        report.recording = super::bench_recording::measure(ctx, &plan, every)?;
    }
    if let Some(out) = json_out {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| Error::invalid("--json", e.to_string()))?;
        commit(out, text.as_bytes())?;
    }
    if let Some(out) = plot_out {
        let title = match &report.adapter {
            Some(a) => format!("rigid-crowd bench: {} / {a}", report.cpu),
            None => format!("rigid-crowd bench: {}", report.cpu),
        };
        commit(
            out,
            throughput_svg(&title, &plot_series(&report)).as_bytes(),
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_lists_and_decades() {
        assert_eq!(
            parse_sizes("1e3..1e5").unwrap(),
            vec![1000, 10_000, 100_000]
        );
        assert_eq!(
            parse_sizes("10, 2e3,1e1..1e2").unwrap(),
            vec![10, 2000, 10, 100]
        );
        for bad in ["", "0", "1.5", "1e3..1e2", "x", "-5", "1e13"] {
            let e = parse_sizes(bad).unwrap_err().to_string();
            assert!(e.starts_with("--bodies: "), "{bad}: {e}");
        }
    }
}
