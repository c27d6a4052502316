//! The GPU kernel (f32 and f64) and the f32 fast CPU path against the f64 CPU reference on
//! seeded crowds of 10,000 bodies over 1,000 steps: each force type alone, then all together,
//! with every integrator. The f64 kernel runs the reference's algorithm in its precision, so
//! it must agree to `GPU_F64_TOLERANCE`, a thousand times sharper than the f32 paths.

use crate::common;

use rigid_crowd::glam::DVec3;
use rigid_crowd::gpu::GpuOptions;
use rigid_crowd::{
    Backend, Body, Crowd, Deviation, ExternalLoad, GPU_F64_TOLERANCE, GPU_TOLERANCE, Integrator,
    Simulation, cross_check, cross_check_crowd,
};

const BODIES: usize = 10_000;
const STEPS: u64 = 1_000;

fn assert_agree(label: &str, crowd: &Crowd) {
    let result = cross_check(crowd, STEPS, common::gpu()).expect("every backend runs");
    let gpu_f64 = result
        .gpu_f64
        .expect("the f64 cross-check needs an adapter with SHADER_F64 (lavapipe has it)");
    for (backend, d, tolerance) in [
        ("gpu", result.gpu, GPU_TOLERANCE),
        ("cpu", result.fast_cpu, GPU_TOLERANCE),
        ("gpu-f64", gpu_f64, GPU_F64_TOLERANCE),
    ] {
        // Printed so the README's quoted figures can be re-measured with --nocapture.
        println!("{label}, {backend}: {d:?}");
        for (name, value) in d.named() {
            assert!(
                value <= tolerance,
                "{label}, {backend}: {name} deviates by {value:.3e} > {tolerance:e}"
            );
        }
    }
}

fn only(force_type: &str, seed: u64) -> Crowd {
    let mut crowd = cross_check_crowd(BODIES, seed, Integrator::Rk4, 1e-3).unwrap();
    crowd.forces.retain(|f| f.type_name() == force_type);
    assert!(!crowd.forces.is_empty());
    crowd
}

#[test]
fn gravity_alone() {
    assert_agree("gravity", &only("gravity", 11));
}

#[test]
fn linear_drag_alone() {
    assert_agree("linear_drag", &only("linear_drag", 12));
}

#[test]
fn point_forces_alone() {
    assert_agree("point_force", &only("point_force", 13));
}

#[test]
fn springs_alone() {
    assert_agree("spring", &only("spring", 14));
}

#[test]
fn attractors_alone() {
    assert_agree("attractor", &only("attractor", 31));
}

#[test]
fn thrust_alone() {
    assert_agree("thrust", &only("thrust", 32));
}

#[test]
fn sinusoidal_forces_alone() {
    assert_agree("sinusoidal", &only("sinusoidal", 33));
}

#[test]
fn quadratic_drag_alone() {
    assert_agree("quadratic_drag", &only("quadratic_drag", 36));
}

#[test]
fn keyframed_forces_alone() {
    assert_agree("keyframed", &only("keyframed", 34));
}

#[test]
fn the_custom_force_alone() {
    assert_agree("custom", &only("custom", 35));
}

/// Loads that differ per body and change every 100 steps, on top of every force type.
#[test]
fn external_loads_changed_between_steps() {
    let crowd = cross_check_crowd(BODIES, 36, Integrator::Rk4, 1e-3).unwrap();
    let mut sims: Vec<Simulation> = Backend::ALL
        .iter()
        .map(|&backend| Simulation::on_backend(&crowd, backend, common::gpu()))
        .collect::<Result<_, _>>()
        .unwrap();
    for round in 0..10 {
        let loads: Vec<ExternalLoad> = crowd
            .bodies
            .iter()
            .enumerate()
            .map(|(i, body)| {
                let phase = (i * 7 + round * 3) as f64;
                let mass = body.mass.mass();
                let inertia = body.mass.inertia_body().diagonal().min_element();
                ExternalLoad {
                    force: DVec3::new(phase.sin(), phase.cos(), 0.5) * (2.0 * mass),
                    torque: DVec3::new(0.2, (0.5 * phase).sin(), -0.4) * inertia,
                }
            })
            .collect();
        for sim in &mut sims {
            sim.set_external_loads(&loads).unwrap();
            sim.step(100).unwrap();
        }
    }
    let bodies: Vec<Vec<Body>> = sims.iter().map(|s| s.bodies().unwrap()).collect();
    let reference = &bodies[Backend::ALL
        .iter()
        .position(|&b| b == Backend::Reference)
        .unwrap()];
    for (backend, tested) in Backend::ALL.iter().zip(&bodies) {
        let d = Deviation::between(tested, reference);
        println!("external loads, {backend:?}: {d:?}");
        let tolerance = match backend {
            Backend::GpuF64 => GPU_F64_TOLERANCE,
            _ => GPU_TOLERANCE,
        };
        assert!(d.max() <= tolerance, "{backend:?}: {d:?}");
    }
}

#[test]
fn every_force_type_together_with_rk4() {
    assert_agree(
        "all, rk4",
        &cross_check_crowd(BODIES, 15, Integrator::Rk4, 1e-3).unwrap(),
    );
}

#[test]
fn every_force_type_together_with_euler() {
    assert_agree(
        "all, euler",
        &cross_check_crowd(BODIES, 16, Integrator::Euler, 1e-3).unwrap(),
    );
}

#[test]
fn every_force_type_together_with_symplectic_euler() {
    assert_agree(
        "all, symplectic_euler",
        &cross_check_crowd(BODIES, 19, Integrator::SymplecticEuler, 1e-3).unwrap(),
    );
}

#[test]
fn every_force_type_together_with_lie_rk4() {
    assert_agree(
        "all, lie_rk4",
        &cross_check_crowd(BODIES, 20, Integrator::LieRk4, 1e-3).unwrap(),
    );
}

fn run_with(crowd: &Crowd, steps: u64, options: GpuOptions) -> Vec<Body> {
    let mut sim = Simulation::gpu_with_options(crowd, common::gpu(), options).unwrap();
    sim.step(steps).unwrap();
    sim.bodies().unwrap()
}

/// Relative agreement between two f32 runs of the same kernel arithmetic: a few ulps.
const ROUND_OFF: f64 = 1e-6;

#[test]
fn fused_and_unfused_steps_agree_to_round_off() {
    let crowd = cross_check_crowd(BODIES, 17, Integrator::Rk4, 1e-3).unwrap();
    let steps = 101; // not a multiple of 8 or 7: the remainder runs as single steps
    let options = |steps_per_dispatch| GpuOptions {
        steps_per_dispatch,
        ..GpuOptions::default()
    };
    let unfused = run_with(&crowd, steps, options(1));
    for fuse in [7, 8] {
        let fused = run_with(&crowd, steps, options(fuse));
        let d = Deviation::between(&fused, &unfused);
        println!("fused K={fuse} against unfused: {d:?}");
        assert!(d.max() <= ROUND_OFF, "K={fuse}: {d:?}");
    }
}

#[test]
fn trusted_and_checked_kernels_agree_to_round_off() {
    let mut crowd = cross_check_crowd(BODIES, 18, Integrator::Rk4, 1e-3).unwrap();
    // A custom force always compiles checked; without it the trusted kernel is used.
    crowd.forces.retain(|f| f.type_name() != "custom");
    crowd.custom_force = None;
    let options = |trusted_shader| GpuOptions {
        trusted_shader,
        ..GpuOptions::default()
    };
    let checked = run_with(&crowd, 100, options(false));
    let trusted = run_with(&crowd, 100, options(true));
    let d = Deviation::between(&trusted, &checked);
    println!("trusted against checked: {d:?}");
    assert!(d.max() <= ROUND_OFF, "{d:?}");
}
