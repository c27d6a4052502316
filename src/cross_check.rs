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
    /// GPU (f32) against CPU reference (f64), per quantity.
    pub deviation: Deviation,
    /// Wall time of the GPU steps (submit to completion, no readback).
    pub gpu_time: Duration,
    /// Wall time of the CPU reference steps.
    pub cpu_time: Duration,
}

/// Runs `crowd` for `steps` steps on the GPU of `ctx` and on the CPU reference.
pub fn cross_check(crowd: &Crowd, steps: u64, ctx: &GpuContext) -> Result<CrossCheck> {
    let mut gpu = Simulation::gpu(crowd, ctx)?;
    let start = Instant::now();
    gpu.step(steps)?;
    gpu.finish()?;
    let gpu_time = start.elapsed();

    let mut cpu = Simulation::cpu(crowd)?;
    let start = Instant::now();
    cpu.step(steps)?;
    let cpu_time = start.elapsed();

    Ok(CrossCheck {
        deviation: Deviation::between(&gpu.bodies()?, &cpu.bodies()?),
        gpu_time,
        cpu_time,
    })
}
