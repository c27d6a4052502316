//! A custom force written twice: in WGSL for the GPU kernel and as a Rust closure for the
//! CPU backends. Runs a small crowd on all three backends and prints how closely they agree.
//!
//! `cargo run --release --example custom_force`

use rigid_crowd::glam::DVec3;
use rigid_crowd::{
    Backend, Body, Crowd, CustomForce, CustomForceInput, Deviation, ExternalLoad, Force, ForceKind,
    GPU_F64_TOLERANCE, GPU_TOLERANCE, MassProperties, Shape, Simulation,
};

/// A vortex around the z axis whose strength pulses in time: the force pushes each body
/// tangentially, `F = k M (-y, x, 0) (1 + sin t)`, with `k` depending on the body index, and
/// a torque that damps the spin about the body's own velocity direction. Written against
/// `real` and the kernel's `sin_real`, so it runs in f32 (`gpu`) and f64 (`gpu-f64`) alike.
const VORTEX_WGSL: &str = "\
fn custom_force(position: vec3<real>, orientation: vec4<real>, velocity: vec3<real>,
                angular_velocity: vec3<real>, mass: real, time: real, body: u32) -> Load {
    let k = real(0.5) + real(0.1) * real(body % 3u);
    let swirl = vec3<real>(-position.y, position.x, real(0.0))
        * (k * mass * (real(1.0) + sin_real(time)));
    return Load(swirl, real(-0.05) * mass * angular_velocity);
}
";

/// The same force in f64.
fn vortex(input: &CustomForceInput) -> ExternalLoad {
    let k = 0.5 + 0.1 * (input.body % 3) as f64;
    let p = input.position;
    ExternalLoad {
        force: DVec3::new(-p.y, p.x, 0.0) * (k * input.mass * (1.0 + input.time.sin())),
        torque: -0.05 * input.mass * input.angular_velocity,
    }
}

fn main() -> rigid_crowd::Result<()> {
    let bodies: Vec<Body> = (0..64)
        .map(|i| {
            let angle = i as f64 * 0.3;
            let mass = MassProperties::from_shape(
                1.0 + 0.1 * i as f64,
                Shape::Box {
                    size: DVec3::new(0.2, 0.3, 0.5),
                },
                "box",
            )?;
            Ok(Body::from_kinematics(
                mass,
                DVec3::new(angle.cos(), angle.sin(), 0.1 * i as f64),
                rigid_crowd::glam::DQuat::from_rotation_x(angle),
                DVec3::ZERO,
                DVec3::new(0.0, 1.0, 2.0),
            ))
        })
        .collect::<rigid_crowd::Result<_>>()?;
    let crowd = Crowd::new(bodies, 1e-3)
        .with_custom_force(CustomForce::new(VORTEX_WGSL, vortex))
        .with_force(Force::on_all(ForceKind::Custom));

    let steps = 2000;
    let mut results = Vec::new();
    for backend in Backend::ALL {
        let mut sim = Simulation::new(&crowd, backend)?;
        sim.step(steps)?;
        results.push((backend, sim.bodies()?));
    }
    let reference = &results[0].1;
    println!(
        "{} bodies, {steps} steps of {} s, custom vortex force",
        reference.len(),
        crowd.dt
    );
    for (backend, bodies) in &results[1..] {
        let d = Deviation::between(bodies, reference);
        let accepted = match backend {
            Backend::GpuF64 => GPU_F64_TOLERANCE,
            _ => GPU_TOLERANCE,
        };
        println!(
            "{:>7} against cpu-ref: largest relative deviation {:.2e} (accepted: {accepted:e})",
            backend.name(),
            d.max()
        );
    }
    let b = &reference[0];
    println!(
        "body 0 after {} s: position {:.4?}, speed {:.4}",
        steps as f64 * crowd.dt,
        b.state.position.to_array(),
        b.velocity().length()
    );
    Ok(())
}
