//! Running one crowd on both backends and measuring how far apart they end up.

use std::time::{Duration, Instant};

use glam::DVec3;

use crate::assembly::crowd::Crowd;
use crate::assembly::generate::CrowdSpec;
use crate::backends::gpu::GpuContext;
use crate::model::error::Result;
use crate::model::force::{Force, ForceKind};
use crate::model::integrator::Integrator;
use crate::physics::custom_force::CustomForce;
use crate::physics::force_law::{CustomForceInput, ExternalLoad};
use crate::simulation::facade::Simulation;
use crate::verify::compare::{Deviation, differing_bodies};

/// WGSL of the cross-check's custom force: quadratic drag `F = -c M |v| v`,
/// `tau = -c M |omega| omega / 100`, with `c = 0.02 (body mod 5 + 1)` (so the body index
/// reaches the kernel correctly) and `c` growing with time as `1 + t`.
///
/// Written against `real`, so it compiles in both precisions (`gpu` and `gpu-f64`).
pub(crate) const QUADRATIC_DRAG_WGSL: &str = "\
fn custom_force(position: vec3<real>, orientation: vec4<real>, velocity: vec3<real>,
                angular_velocity: vec3<real>, mass: real, time: real, body: u32) -> Load {
    let c = real(0.02) * real(body % 5u + 1u) * (real(1.0) + time);
    return Load(
        -c * mass * length(velocity) * velocity,
        real(-0.01) * c * mass * length(angular_velocity) * angular_velocity,
    );
}
";

/// The Rust twin of [`QUADRATIC_DRAG_WGSL`].
pub(crate) fn quadratic_drag(input: &CustomForceInput) -> ExternalLoad {
    let c = 0.02 * ((input.body % 5) + 1) as f64 * (1.0 + input.time);
    let (v, w) = (input.velocity, input.angular_velocity);
    ExternalLoad {
        force: -v * (c * input.mass * v.length()),
        torque: -w * (0.01 * c * input.mass * w.length()),
    }
}

/// The crowd `rigid-crowd check` compares the backends on, ready for [`cross_check`]: seeded,
/// and exercising every force type: gravity, linear drag and the custom
/// quadratic drag `F = -c M |v| v` on every body, a point force on every third body,
/// thrust on every fourth, a spring on every fifth, a sinusoidal force on every sixth, an
/// attractor on every seventh, a keyframed force on every eighth and the built-in quadratic
/// drag on every ninth.
///
/// NOTE: the per-body forces scale with each body's mass and size, so that they accelerate
/// every body alike (about 2 m/s^2, a few rad/s^2). A light body swung hard by a spring or a
/// point force is a chaotic pendulum: there f32 and f64 part ways at the rate the dynamics
/// amplify rounding, which would measure the chaos, not the kernel.
pub fn cross_check_crowd(
    count: usize,
    seed: u64,
    integrator: Integrator,
    dt: f64,
) -> Result<Crowd> {
    let bodies = CrowdSpec::new(count, seed).generate()?;
    let mut crowd = Crowd::new(bodies, dt)
        .with_integrator(integrator)
        .with_custom_force(CustomForce::new(QUADRATIC_DRAG_WGSL, quadratic_drag))
        .with_force(Force::on_all(ForceKind::Custom))
        .with_force(Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        }))
        .with_force(Force::on_all(ForceKind::LinearDrag {
            linear: 0.3,
            angular: 0.05,
        }));
    let keyframes = crowd.add_keyframes(vec![[0.0, 0.0], [0.3, 1.0], [0.7, -1.0], [1.0, 0.5]]);
    for i in 0..count {
        // Deterministic, varied directions without another random stream.
        let phase = i as f64 * 0.618_033_988_75;
        let dir = DVec3::new(phase.sin(), (1.7 * phase).cos(), (0.3 * phase).sin()).normalize();
        let body = &crowd.bodies[i];
        let mass = body.mass.mass();
        // Radius of gyration about the stiffest axis: a length that fits inside the body.
        let reach = (body.mass.inertia_body().diagonal().min_element() / mass).sqrt();
        let arm = DVec3::new((2.3 * phase).cos(), -0.5, 0.4).normalize() * (0.5 * reach);
        if i % 3 == 0 {
            crowd.forces.push(Force::on_body(
                i,
                ForceKind::PointForce {
                    force: dir * (2.0 * mass),
                    point: arm,
                },
            ));
        }
        if i % 5 == 0 {
            crowd.forces.push(Force::on_body(
                i,
                ForceKind::Spring {
                    anchor: body.state.position + dir,
                    attach: arm,
                    stiffness: 4.0 * mass,
                    damping: 0.5 * mass,
                },
            ));
        }
        // About 1 rad/s^2 from a torque along `axis` (body frame).
        let axis = DVec3::new(0.3, (1.3 * phase).sin(), 0.8).normalize();
        let spin_up = axis * body.mass.inertia_body().diagonal().min_element();
        if i % 4 == 0 {
            crowd.forces.push(Force::on_body(
                i,
                ForceKind::Thrust {
                    force: dir * (2.0 * mass),
                    torque: spin_up,
                },
            ));
        }
        if i % 6 == 0 {
            crowd.forces.push(Force::on_body(
                i,
                ForceKind::Sinusoidal {
                    force: dir * (2.0 * mass),
                    torque: spin_up * 0.5,
                    offset: 0.2,
                    amplitude: 1.0,
                    frequency: 2.0,
                    phase,
                },
            ));
        }
        if i % 7 == 0 {
            // 2 m/s^2 at the start, 2 m from the centre: mu / 2^2 = 2.
            crowd.forces.push(Force::on_body(
                i,
                ForceKind::Attractor {
                    centre: body.state.position + dir * 2.0,
                    strength: 8.0,
                    softening: 0.5,
                },
            ));
        }
        if i % 9 == 0 {
            // About 1 m/s^2 at 3 m/s and 0.2 rad/s^2 at 3 rad/s.
            crowd.forces.push(Force::on_body(
                i,
                ForceKind::QuadraticDrag {
                    linear: 0.1 * mass,
                    angular: 0.02 * body.mass.inertia_body().diagonal().min_element(),
                },
            ));
        }
        if i % 8 == 0 {
            crowd.forces.push(Force::on_body(
                i,
                ForceKind::Keyframed {
                    force: dir * (2.0 * mass),
                    torque: spin_up,
                    table: keyframes,
                },
            ));
        }
    }
    Ok(crowd)
}

/// What [`cross_check`] measured.
#[derive(Clone, Copy, Debug)]
pub struct CrossCheck {
    /// GPU (f32) against the CPU reference (f64), per quantity.
    pub gpu: Deviation,
    /// GPU in f64 against the CPU reference, per quantity: `None` where the adapter lacks
    /// `SHADER_F64`.
    pub gpu_f64: Option<Deviation>,
    /// How many bodies of the f64 GPU's result differ from the reference's in any bit, where
    /// it ran: zero on an adapter that honours IEEE arithmetic, for a crowd whose physics is
    /// all the one definition (a custom WGSL force has a Rust twin, two definitions).
    pub gpu_f64_differing_bodies: Option<usize>,
    /// Fast CPU path (f32) against the CPU reference (f64), per quantity.
    pub fast_cpu: Deviation,
    /// How many bodies of the f32 GPU's result differ in any bit from the fast CPU path's,
    /// which runs the same definition in f32: zero where the f64 pair's count is, for the
    /// same reasons.
    pub gpu_differing_bodies: usize,
    /// Wall time of the GPU steps (submit to completion, no readback).
    pub gpu_time: Duration,
    /// Wall time of the f64 GPU steps, where they ran.
    pub gpu_f64_time: Option<Duration>,
    /// Wall time of the fast CPU path's steps.
    pub fast_cpu_time: Duration,
    /// Wall time of the CPU reference steps.
    pub reference_time: Duration,
}

/// Runs `steps` steps of `sim`, timed to completion.
fn timed(mut sim: Simulation, steps: u64) -> Result<(Simulation, Duration)> {
    let start = Instant::now();
    sim.step(steps)?;
    sim.finish()?;
    Ok((sim, start.elapsed()))
}

/// Runs `crowd` for `steps` steps on the GPU of `ctx` (in f32, and in f64 where the adapter
/// has `SHADER_F64`), on the fast CPU path and on the CPU reference, and measures how far
/// each ends up from the reference.
pub fn cross_check(crowd: &Crowd, steps: u64, ctx: &GpuContext) -> Result<CrossCheck> {
    let (gpu, gpu_time) = timed(Simulation::gpu(crowd, ctx)?, steps)?;
    let gpu_f64 = match ctx.supports_f64() {
        true => Some(timed(Simulation::gpu_f64(crowd, ctx)?, steps)?),
        false => None,
    };
    let (fast_cpu, fast_cpu_time) = timed(Simulation::fast_cpu(crowd)?, steps)?;
    let (reference, reference_time) = timed(Simulation::reference(crowd)?, steps)?;
    let reference = reference.bodies()?;
    let (gpu_f64, gpu_f64_differing_bodies, gpu_f64_time) = match gpu_f64 {
        Some((sim, time)) => {
            let bodies = sim.bodies()?;
            (
                Some(Deviation::between(&bodies, &reference)),
                Some(differing_bodies(&bodies, &reference)),
                Some(time),
            )
        }
        None => (None, None, None),
    };
    let (gpu, fast_cpu) = (gpu.bodies()?, fast_cpu.bodies()?);
    Ok(CrossCheck {
        gpu: Deviation::between(&gpu, &reference),
        gpu_f64,
        gpu_f64_differing_bodies,
        fast_cpu: Deviation::between(&fast_cpu, &reference),
        gpu_differing_bodies: differing_bodies(&gpu, &fast_cpu),
        gpu_time,
        gpu_f64_time,
        fast_cpu_time,
        reference_time,
    })
}
