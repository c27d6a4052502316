//! `rigid-crowd check`: the GPU (f32, and f64 where the adapter has it) and the fast CPU path
//! against the f64 reference on a seeded crowd.

use std::process::ExitCode;

use crate::{
    Error, ForceKind, GPU_F64_TOLERANCE, GPU_TOLERANCE, Integrator, Result,
    backends::gpu::{GpuContext, GpuOptions},
    cross_check_crowd, cross_check_with,
};
use clap::Args;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Number of bodies in the seeded crowd.
    #[arg(long, default_value_t = 10_000)]
    bodies: usize,
    /// Steps to run on each backend.
    #[arg(long, default_value_t = 1_000)]
    steps: u64,
    /// Seed of the crowd.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Time step (seconds).
    #[arg(long, default_value_t = 1e-3, allow_negative_numbers = true)]
    dt: f64,
    /// Integrator (`euler`, `symplectic_euler`, `rk4`, `lie_rk4`, `lie_poisson` or `lie_poisson4`).
    #[arg(long, default_value = "rk4")]
    integrator: String,
    /// Leave out the custom WGSL force (quadratic drag, with a Rust twin): the rest of the
    /// crowd is the one definition of the physics, so `gpu-f64` can match `cpu-ref` bit for bit.
    #[arg(long)]
    no_custom_force: bool,
    /// Take the f32 GPU kernel's divisions and square roots in f64 (correctly rounded where
    /// the adapter's f64 ones are), so that `gpu` can match `cpu` bit for bit on adapters
    /// whose f32 ones are approximate; needs SHADER_F64.
    #[arg(long)]
    f32_divisions_in_f64: bool,
}

pub fn check(args: CheckArgs) -> Result<ExitCode> {
    let integrator: Integrator = args
        .integrator
        .parse()
        .map_err(|m| Error::invalid("--integrator", m))?;
    if !args.dt.is_finite() || args.dt <= 0.0 {
        return Err(Error::invalid(
            "--dt",
            format!("must be a finite number > 0 (got {})", args.dt),
        ));
    }
    let mut crowd = cross_check_crowd(args.bodies, args.seed, integrator, args.dt)?;
    if args.no_custom_force {
        crowd
            .forces
            .retain(|f| !matches!(f.kind, ForceKind::Custom));
        crowd.custom_force = None;
    }
    let ctx = GpuContext::new()?;
    println!(
        "check: {} bodies x {} steps ({integrator}, dt = {} s, seed {}), every force type{}",
        args.bodies,
        args.steps,
        args.dt,
        args.seed,
        if args.no_custom_force {
            " but the custom one"
        } else {
            ""
        }
    );
    println!("GPU: {}", ctx.describe());
    let f32_options = GpuOptions {
        f32_divisions_in_f64: args.f32_divisions_in_f64,
        ..GpuOptions::default()
    };
    if args.f32_divisions_in_f64 {
        println!("gpu (f32): divisions and square roots taken in f64");
    }
    let result = cross_check_with(&crowd, args.steps, &ctx, f32_options)?;
    println!("largest relative deviation from the CPU reference (f64):");
    println!(
        "  {:<17} {:>10} {:>10} {:>10}",
        "quantity", "gpu f32", "cpu f32", "gpu-f64"
    );
    for (i, ((name, gpu), (_, cpu))) in result
        .gpu
        .named()
        .into_iter()
        .zip(result.fast_cpu.named())
        .enumerate()
    {
        let f64_column = match &result.gpu_f64 {
            Some(d) => format!("{:>10.3e}", d.named()[i].1),
            None => format!("{:>10}", "-"),
        };
        println!("  {name:<17} {gpu:>10.3e} {cpu:>10.3e} {f64_column}");
    }
    let worst = result.gpu.max().max(result.fast_cpu.max());
    let mut pass = worst <= GPU_TOLERANCE;
    let verdict = |ok: bool| if ok { "PASS" } else { "FAIL" };
    println!(
        "{}: f32 backends {worst:.3e} (tolerance {GPU_TOLERANCE:e})",
        verdict(pass)
    );
    let why = if crowd.custom_force.is_some() {
        "the custom WGSL force and its Rust twin are two definitions"
    } else {
        "this adapter does not honour IEEE arithmetic"
    };
    let f32_why =
        if crowd.custom_force.is_none() && ctx.supports_f64() && !args.f32_divisions_in_f64 {
            "this adapter does not honour IEEE arithmetic in f32 (`rigid-crowd info` says which \
         operations depart; --f32-divisions-in-f64 takes / and sqrt in f64)"
        } else {
            why
        };
    match result.gpu_differing_bodies {
        0 => println!(
            "gpu bit-identical to cpu (every bit of all {} bodies, f32)",
            args.bodies
        ),
        differing => println!(
            "gpu and cpu: {differing} of {} bodies not bit-identical: {f32_why}",
            args.bodies
        ),
    }
    match (&result.gpu_f64, result.gpu_f64_differing_bodies) {
        (Some(_), Some(0)) => println!(
            "PASS: gpu-f64 bit-identical to cpu-ref (every bit of all {} bodies)",
            args.bodies
        ),
        (Some(d), differing) => {
            let ok = d.max() <= GPU_F64_TOLERANCE;
            pass &= ok;
            println!(
                "{}: gpu-f64 {:.3e} (tolerance {GPU_F64_TOLERANCE:e}; {} of {} bodies not bit-identical: {why})",
                verdict(ok),
                d.max(),
                differing.unwrap_or(args.bodies),
                args.bodies
            );
        }
        (None, _) => println!("gpu-f64: not run ({} lacks SHADER_F64)", ctx.describe()),
    }
    Ok(if pass {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
