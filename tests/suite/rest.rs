//! Bodies at rest on a plane: where a body's steps read its state alone, a step that leaves
//! every bit of it as it was ends its steps in the run (and in a GPU dispatch). That is
//! scheduling, not physics: a run in one call must give the bits of the same steps taken
//! one call at a time, which never skips one.

use crate::common;

use common::{gpu, state_bits};
use rigid_crowd::glam::{DQuat, DVec3};
use rigid_crowd::{
    Backend, Body, Crowd, Force, ForceKind, MassProperties, Plane, Shape, Simulation,
};

/// Forty bodies on a floor: spheres, lying capsules, ellipsoids, boxes and upright
/// cylinders, half standing at their resting height (spheres and ellipsoids come to exact
/// rest within two steps; capsules rock, boxes and cylinders on four points never rest), the
/// rest dropped from up to 6 cm with a little sideways speed, to bounce, slide and settle.
fn settling_crowd() -> Crowd {
    let lying = DQuat::from_rotation_x(std::f64::consts::FRAC_PI_2);
    let kinds = [
        (Shape::Sphere { radius: 0.2 }, DQuat::IDENTITY, 0.2),
        (
            Shape::Capsule {
                radius: 0.1,
                length: 0.4,
            },
            lying,
            0.1,
        ),
        (
            Shape::Ellipsoid {
                semi_axes: DVec3::new(0.3, 0.2, 0.1),
            },
            DQuat::IDENTITY,
            0.1,
        ),
        (
            Shape::Box {
                size: DVec3::new(0.5, 0.3, 0.2),
            },
            DQuat::from_rotation_z(0.3),
            0.1,
        ),
        (
            Shape::Cylinder {
                radius: 0.15,
                height: 0.5,
            },
            DQuat::IDENTITY,
            0.25,
        ),
    ];
    let bodies = (0..40)
        .map(|i| {
            let (shape, orientation, rest) = kinds[i % kinds.len()];
            let mass = MassProperties::from_shape(1.0 + 0.1 * i as f64, shape, "body").unwrap();
            let dropped = i % 2 == 1;
            let lift = if dropped { 0.015 * (i % 5) as f64 } else { 0.0 };
            let speed = if dropped { 0.05 * (i % 3) as f64 } else { 0.0 };
            Body::from_kinematics(
                mass,
                DVec3::new((i % 8) as f64, (i / 8) as f64, rest + lift),
                orientation,
                DVec3::new(speed, -0.5 * speed, 0.0),
                DVec3::ZERO,
            )
        })
        .collect();
    Crowd::new(bodies, 1e-3)
        .with_force(Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        }))
        .with_force(Force::on_all(ForceKind::LinearDrag {
            linear: 0.3,
            angular: 0.05,
        }))
        .with_plane(Plane::ground(0.4, 0.5))
}

/// The state bits after `steps` steps in one call and in calls of one step.
fn one_call_and_step_by_step(crowd: &Crowd, backend: Backend, steps: u64) -> [Vec<u64>; 2] {
    let simulation = || Simulation::on_backend(crowd, backend, gpu()).expect("valid crowd");
    let mut whole = simulation();
    whole.step(steps).unwrap();
    let mut by_step = simulation();
    for _ in 0..steps {
        by_step.step(1).unwrap();
    }
    [&whole, &by_step].map(|sim| state_bits(&sim.bodies().unwrap()))
}

/// Which bodies one more step of `sim` leaves with every bit as they were.
fn at_rest(sim: &mut Simulation) -> Vec<bool> {
    let before = sim.bodies().unwrap();
    sim.step(1).unwrap();
    let after = sim.bodies().unwrap();
    (before.iter().zip(&after))
        .map(|(a, b)| state_bits(&[*a]) == state_bits(&[*b]))
        .collect()
}

#[test]
fn bodies_at_rest_give_the_bits_of_every_step_taken_on_every_backend() {
    let crowd = settling_crowd();
    let steps = 300;
    let mut runs = Vec::new();
    for backend in [
        Backend::Reference,
        Backend::FastCpu,
        Backend::Gpu,
        Backend::GpuF64,
    ] {
        let [whole, by_step] = one_call_and_step_by_step(&crowd, backend, steps);
        assert!(
            whole == by_step,
            "{backend:?}: one call differs from single steps"
        );
        let mut sim = Simulation::on_backend(&crowd, backend, gpu()).unwrap();
        sim.step(steps).unwrap();
        let resting = at_rest(&mut sim);
        // The run exercised rest: every standing sphere and ellipsoid is at rest (they are
        // within two steps), while bodies dropped or on four corners still move.
        let standing_round = (0..40).filter(|i| i % 2 == 0 && [0, 2].contains(&(i % 5)));
        for i in standing_round {
            assert!(resting[i], "{backend:?}: standing body {i} is not at rest");
        }
        let moving = resting.iter().filter(|&&rests| !rests).count();
        assert!(moving >= 20, "{backend:?}: only {moving} of 40 bodies move");
        runs.push(whole);
    }
    assert!(runs[2] == runs[1], "gpu differs from cpu");
    assert!(runs[3] == runs[0], "gpu-f64 differs from cpu-ref");
}

/// A force that reads the clock ends rest: the crowd stands still until a keyframed push
/// starts at 0.1 s, and every backend must take the steps that push it.
#[test]
fn a_force_that_reads_the_clock_wakes_bodies_at_rest_on_every_backend() {
    let mut crowd = settling_crowd();
    let table = crowd.add_keyframes(vec![[0.0, 0.0], [0.1, 0.0], [0.2, 1.0]]);
    let crowd = crowd.with_force(Force::on_all(ForceKind::Keyframed {
        force: DVec3::new(60.0, 0.0, 0.0),
        torque: DVec3::ZERO,
        table,
    }));
    let steps = 300;
    for backend in [
        Backend::Reference,
        Backend::FastCpu,
        Backend::Gpu,
        Backend::GpuF64,
    ] {
        let [whole, by_step] = one_call_and_step_by_step(&crowd, backend, steps);
        assert!(
            whole == by_step,
            "{backend:?}: one call differs from single steps"
        );
        let mut sim = Simulation::on_backend(&crowd, backend, gpu()).unwrap();
        sim.step(steps).unwrap();
        let moved = (sim.bodies().unwrap().iter().zip(&crowd.bodies))
            .filter(|(now, start)| now.state.position.x > start.state.position.x + 0.01)
            .count();
        assert!(
            moved == 40,
            "{backend:?}: the push moved only {moved} of 40 bodies"
        );
    }
}
