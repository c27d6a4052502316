//! The f32 GPU kernel against the f64 CPU reference on seeded crowds of 10,000 bodies over
//! 1,000 steps: each force type alone, then all together, with both integrators.

mod common;

use rigid_crowd::{Crowd, Deviation, GPU_TOLERANCE, Integrator, check_crowd, cross_check};

const BODIES: usize = 10_000;
const STEPS: u64 = 1_000;

fn assert_agree(label: &str, crowd: &Crowd) {
    let result = cross_check(crowd, STEPS, common::gpu()).expect("both backends run");
    let d: Deviation = result.deviation;
    // Printed so the README's quoted figures can be re-measured with --nocapture.
    println!("{label}: {d:?}");
    for (name, value) in d.named() {
        assert!(
            value <= GPU_TOLERANCE,
            "{label}: {name} deviates by {value:.3e} > {GPU_TOLERANCE:e}"
        );
    }
}

fn only(force_type: &str, seed: u64) -> Crowd {
    let mut crowd = check_crowd(BODIES, seed, Integrator::Rk4, 1e-3).unwrap();
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
fn every_force_type_together_with_rk4() {
    assert_agree(
        "all, rk4",
        &check_crowd(BODIES, 15, Integrator::Rk4, 1e-3).unwrap(),
    );
}

#[test]
fn every_force_type_together_with_euler() {
    assert_agree(
        "all, euler",
        &check_crowd(BODIES, 16, Integrator::Euler, 1e-3).unwrap(),
    );
}
