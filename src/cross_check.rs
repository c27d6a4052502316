//! Running one crowd on both backends and measuring how far apart they end up.

use std::time::{Duration, Instant};

use glam::DVec3;

use crate::compare::Deviation;
use crate::crowd::Crowd;
use crate::error::Result;
use crate::force::{Force, ForceKind};
use crate::generate::CrowdSpec;
use crate::gpu::GpuContext;
use crate::integrator::Integrator;
use crate::simulation::Simulation;

/// A seeded crowd that exercises every force type: gravity and linear drag on every body,
/// a point force on every third body and a spring on every fifth.
///
/// NOTE: the per-body forces scale with each body's mass and size, so that they accelerate
/// every body alike (about 2 m/s^2, a few rad/s^2). A light body swung hard by a spring or a
/// point force is a chaotic pendulum: there f32 and f64 part ways at the rate the dynamics
/// amplify rounding, which would measure the chaos, not the kernel.
pub fn check_crowd(count: usize, seed: u64, integrator: Integrator, dt: f64) -> Result<Crowd> {
    let bodies = CrowdSpec::new(count, seed).generate()?;
    let mut crowd = Crowd::new(bodies, dt)
        .with_integrator(integrator)
        .with_force(Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        }))
        .with_force(Force::on_all(ForceKind::LinearDrag {
            linear: 0.3,
            angular: 0.05,
        }));
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
    }
    Ok(crowd)
}

/// What [`cross_check`] measured.
#[derive(Clone, Copy, Debug)]
pub struct CrossCheck {
    /// GPU (f32) against the CPU reference (f64), per quantity.
    pub gpu: Deviation,
    /// Fast CPU path (f32) against the CPU reference (f64), per quantity.
    pub fast_cpu: Deviation,
    /// Wall time of the GPU steps (submit to completion, no readback).
    pub gpu_time: Duration,
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

/// Runs `crowd` for `steps` steps on the GPU of `ctx`, on the fast CPU path and on the
/// CPU reference, and measures how far each fast path ends up from the reference.
pub fn cross_check(crowd: &Crowd, steps: u64, ctx: &GpuContext) -> Result<CrossCheck> {
    let (gpu, gpu_time) = timed(Simulation::gpu(crowd, ctx)?, steps)?;
    let (fast_cpu, fast_cpu_time) = timed(Simulation::fast_cpu(crowd)?, steps)?;
    let (reference, reference_time) = timed(Simulation::reference(crowd)?, steps)?;
    let reference = reference.bodies()?;
    Ok(CrossCheck {
        gpu: Deviation::between(&gpu.bodies()?, &reference),
        fast_cpu: Deviation::between(&fast_cpu.bodies()?, &reference),
        gpu_time,
        fast_cpu_time,
        reference_time,
    })
}
