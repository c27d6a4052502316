//! The crowd `rigid-crowd check` and the cross-check tests run: seeded, with every force kind
//! and a custom force written twice (WGSL and a Rust twin).

use glam::DVec3;

use crate::assembly::crowd::Crowd;
use crate::assembly::generate::CrowdSpec;
use crate::model::error::Result;
use crate::model::force::{Force, ForceKind};
use crate::model::integrator::Integrator;
use crate::physics::custom_force::CustomForce;
use crate::physics::force_law::{CustomForceInput, ExternalLoad};

/// WGSL of the cross-check's custom force: quadratic drag `F = -c M |v| v`,
/// `tau = -c M |omega| omega / 100`, with `c = 0.02 (body mod 5 + 1)` (so the body index
/// reaches the kernel correctly) and `c` growing with time as `1 + t`.
///
/// Written against `real`, so it compiles in both precisions (`gpu` and `gpu-f64`).
pub const QUADRATIC_DRAG_WGSL: &str = "\
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
pub(crate) fn custom_drag(input: &CustomForceInput) -> ExternalLoad {
    let c = 0.02 * ((input.body % 5) + 1) as f64 * (1.0 + input.time);
    let (v, w) = (input.velocity, input.angular_velocity);
    ExternalLoad {
        force: -v * (c * input.mass * v.length()),
        torque: -w * (0.01 * c * input.mass * w.length()),
    }
}

/// The crowd `rigid-crowd check` compares the backends on, ready for `cross_check`: seeded,
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
        .with_custom_force(CustomForce::new(QUADRATIC_DRAG_WGSL, custom_drag))
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
        // A force of its own on every `k`-th body.
        let mut on_every = |k: usize, kind: ForceKind| {
            if i % k == 0 {
                crowd.forces.push(Force::on_body(i, kind));
            }
        };
        let body = &crowd.bodies[i];
        let mass = body.mass.mass();
        // Radius of gyration about the stiffest axis: a length that fits inside the body.
        let reach = (body.mass.inertia_body().diagonal().min_element() / mass).sqrt();
        let arm = DVec3::new((2.3 * phase).cos(), -0.5, 0.4).normalize() * (0.5 * reach);
        on_every(
            3,
            ForceKind::PointForce {
                force: dir * (2.0 * mass),
                point: arm,
            },
        );
        on_every(
            5,
            ForceKind::Spring {
                anchor: body.state.position + dir,
                attach: arm,
                stiffness: 4.0 * mass,
                damping: 0.5 * mass,
            },
        );
        // About 1 rad/s^2 from a torque along `axis` (body frame).
        let axis = DVec3::new(0.3, (1.3 * phase).sin(), 0.8).normalize();
        let spin_up = axis * body.mass.inertia_body().diagonal().min_element();
        on_every(
            4,
            ForceKind::Thrust {
                force: dir * (2.0 * mass),
                torque: spin_up,
            },
        );
        on_every(
            6,
            ForceKind::Sinusoidal {
                force: dir * (2.0 * mass),
                torque: spin_up * 0.5,
                offset: 0.2,
                amplitude: 1.0,
                frequency: 2.0,
                phase,
            },
        );
        // 2 m/s^2 at the start, 2 m from the centre: mu / 2^2 = 2.
        on_every(
            7,
            ForceKind::Attractor {
                centre: body.state.position + dir * 2.0,
                strength: 8.0,
                softening: 0.5,
            },
        );
        // About 1 m/s^2 at 3 m/s and 0.2 rad/s^2 at 3 rad/s.
        on_every(
            9,
            ForceKind::QuadraticDrag {
                linear: 0.1 * mass,
                angular: 0.02 * body.mass.inertia_body().diagonal().min_element(),
            },
        );
        on_every(
            8,
            ForceKind::Keyframed {
                force: dir * (2.0 * mass),
                torque: spin_up,
                table: keyframes,
            },
        );
    }
    Ok(crowd)
}
