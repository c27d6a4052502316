//! A custom force written once, as a law over the number type: the CPU backends run it in
//! f64, the GPU kernels the WGSL traced from it. Runs a small crowd on every backend and
//! prints how closely they agree: `gpu-f64` to the bit, on an adapter with IEEE arithmetic.
//!
//! `cargo run --release --example custom_force`

use rigid_crowd::glam::DVec3;
use rigid_crowd::{
    Backend, Body, Crowd, CustomForce, Deviation, Force, ForceInput, ForceKind, ForceLaw,
    GPU_F64_TOLERANCE, GPU_TOLERANCE, Load, MassProperties, Real, Shape, Simulation, Vec3,
    differing_bodies, sin_cos,
};

/// A vortex around the z axis whose strength pulses in time: the force pushes each body
/// tangentially, `F = k M (-y, x, 0) (1 + sin t)`, with `k = 0.5 + 0.1 (body mod 3)`, and a
/// torque `-0.05 M omega` that damps the spin.
struct Vortex;

impl ForceLaw for Vortex {
    fn load<R: Real>(&self, b: &ForceInput<R>) -> Load<R> {
        let c = R::constant;
        let three = c(3.0);
        let body_mod_3 = b.body - three * (b.body / three).floor();
        let k = c(0.5) + c(0.1) * body_mod_3;
        let (sin, _) = sin_cos(b.time);
        let p = b.position;
        let swirl = Vec3::new(-p.y, p.x, c(0.0)) * (k * b.mass * (c(1.0) + sin));
        Load {
            force: swirl,
            torque: b.angular_velocity * (c(-0.05) * b.mass),
        }
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
        .with_custom_force(CustomForce::from_law(Vortex))
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
        let differing = differing_bodies(bodies, reference);
        println!(
            "{:>7} against cpu-ref: largest relative deviation {:.2e} (accepted: {accepted:e}), \
             {differing} of {} bodies differ in any bit",
            backend.name(),
            d.max(),
            bodies.len()
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
