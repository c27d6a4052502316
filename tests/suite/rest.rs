//! Bodies at rest on a plane: where a body's steps read its state alone, a step that leaves
//! every bit of it as it was ends its steps in the run (and in a GPU dispatch). That is
//! scheduling, not physics: a run in one call must give the bits of the same steps taken
//! one call at a time, which never skips one.

use crate::common;

use common::{gpu, state_bits};
use rigid_crowd::glam::{DQuat, DVec3};
use rigid_crowd::{
    Backend, Body, Crowd, Envelope, ExternalLoad, Fault, FaultRules, Force, ForceKind,
    MassProperties, OnFault, Plane, QuarantinedBody, Shape, Simulation,
};

/// The four backends, the GPU twins after their CPU twins.
const BACKENDS: [Backend; 4] = [
    Backend::Reference,
    Backend::FastCpu,
    Backend::Gpu,
    Backend::GpuF64,
];

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

/// `crowd` after `steps` steps in one call, and whether its state bits are those of the
/// same steps taken in calls of one step.
fn one_call_and_step_by_step(crowd: &Crowd, backend: Backend, steps: u64) -> (Simulation, bool) {
    let simulation = || Simulation::on_backend(crowd, backend, gpu()).expect("valid crowd");
    let mut whole = simulation();
    whole.step(steps).unwrap();
    let mut by_step = simulation();
    for _ in 0..steps {
        by_step.step(1).unwrap();
    }
    let [a, b] = [&whole, &by_step].map(|sim| state_bits(&sim.bodies().unwrap()));
    (whole, a == b)
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
    for backend in BACKENDS {
        let (mut sim, same) = one_call_and_step_by_step(&crowd, backend, steps);
        assert!(same, "{backend:?}: one call differs from single steps");
        let whole = state_bits(&sim.bodies().unwrap());
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
    for backend in BACKENDS {
        let (sim, same) = one_call_and_step_by_step(&crowd, backend, steps);
        assert!(same, "{backend:?}: one call differs from single steps");
        let moved = (sim.bodies().unwrap().iter().zip(&crowd.bodies))
            .filter(|(now, start)| now.state.position.x > start.state.position.x + 0.01)
            .count();
        assert!(
            moved == 40,
            "{backend:?}: the push moved only {moved} of 40 bodies"
        );
    }
}

/// `crowd` run 300 steps on each backend, by when body 0, a standing sphere, is at rest
/// (asserted with one more step; the GPU marks it so in its status word), then `then` done
/// to the simulation, then 100 steps more, in calls of 10 (a GPU body found at rest stays
/// marked across calls). Asserts that the GPU twins hold their CPU twins' bits and hands
/// back the four simulations.
fn after_rest(crowd: &Crowd, then: impl Fn(&mut Simulation)) -> Vec<Simulation> {
    let sims: Vec<Simulation> = (BACKENDS.iter())
        .map(|&backend| {
            let mut sim = Simulation::on_backend(crowd, backend, gpu()).unwrap();
            sim.step(300).unwrap();
            assert!(at_rest(&mut sim)[0], "{backend:?}: body 0 is not at rest");
            then(&mut sim);
            for _ in 0..10 {
                sim.step(10).unwrap();
            }
            sim
        })
        .collect();
    let bits: Vec<Vec<u64>> = (sims.iter())
        .map(|sim| state_bits(&sim.bodies().unwrap()))
        .collect();
    assert!(bits[2] == bits[1], "gpu differs from cpu");
    assert!(bits[3] == bits[0], "gpu-f64 differs from cpu-ref");
    sims
}

/// A body at rest is moved by a load set after it came to rest, and by a new state.
#[test]
fn loads_and_states_written_after_rest_move_the_body_on_every_backend() {
    let crowd = settling_crowd();
    let push = |sim: &mut Simulation| {
        let mut loads = vec![ExternalLoad::default(); 40];
        loads[0].force = DVec3::new(30.0, 0.0, 0.0);
        sim.set_external_loads(&loads).unwrap();
    };
    for sim in after_rest(&crowd, push) {
        let x = sim.bodies().unwrap()[0].state.position.x;
        assert!(
            x > 0.05,
            "{:?}: the pushed body is at x = {x}",
            sim.backend()
        );
    }
    let lift = |sim: &mut Simulation| {
        let mut state = sim.bodies().unwrap()[0].state;
        state.position.z += 0.05;
        state.linear_momentum.x += 0.5;
        sim.set_states(&[0], &[state]).unwrap();
    };
    for sim in after_rest(&crowd, lift) {
        let x = sim.bodies().unwrap()[0].state.position.x;
        assert!(
            x > 0.01,
            "{:?}: the lifted body is at x = {x}",
            sim.backend()
        );
    }
}

/// Tangents started once bodies rest move on with every step, as the twins' do.
#[test]
fn tangents_started_after_rest_are_those_of_every_step_on_every_backend() {
    let crowd = settling_crowd();
    let mut sims = after_rest(&crowd, |sim| sim.start_tangents(&["state"]).unwrap());
    let columns: Vec<Vec<u64>> = (sims.iter_mut())
        .map(|sim| {
            let mut out = vec![0.0; 40 * 13 * 13];
            sim.read_tangents("state", &mut out).unwrap();
            // A NaN as any NaN: the columns of body 6, a capsule lying on the floor, grow
            // through its contacts to 6e294 in f64, past f32's range and into NaN both ways.
            let bits = |x: f64| {
                if x.is_nan() {
                    f64::NAN.to_bits()
                } else {
                    x.to_bits()
                }
            };
            out.into_iter().map(bits).collect()
        })
        .collect();
    assert!(columns[2] == columns[1], "gpu tangents differ from cpu's");
    assert!(
        columns[3] == columns[0],
        "gpu-f64 tangents differ from cpu-ref's"
    );
    // Body 0's tangent of its x along its x momentum at step 301 moved on over 100 steps.
    let (row, column) = (0, 7);
    let dx_dp = f64::from_bits(columns[0][row * 13 + column]);
    assert!(dx_dp > 0.01, "d x / d P_x(300) = {dx_dp}");
}

/// A body found at rest and then pushed past the envelope is quarantined at the step it
/// broke it, as on the reference: the GPU kept its clock while it rested, and its resting
/// neighbours are not taken for frozen ones.
#[test]
fn a_body_that_leaves_rest_past_the_envelope_is_quarantined_at_its_step() {
    let crowd = settling_crowd().with_fault_rules(FaultRules {
        on_fault: OnFault::Freeze,
        envelope: Envelope {
            max_speed: Some(2.0),
            ..Envelope::default()
        },
    });
    let push = |sim: &mut Simulation| {
        let mut loads = vec![ExternalLoad::default(); 40];
        loads[0].force = DVec3::new(300.0, 0.0, 0.0);
        sim.set_external_loads(&loads).unwrap();
    };
    let lists: Vec<_> = (after_rest(&crowd, push).iter_mut())
        .map(|sim| sim.quarantined().unwrap())
        .collect();
    let reference = &lists[0];
    assert_eq!(reference.len(), 1, "{reference:?}");
    assert_eq!((reference[0].body, reference[0].fault), (0, Fault::Speed));
    assert!(reference[0].step > 300, "{reference:?}");
    for list in &lists[1..] {
        let said = |l: &[QuarantinedBody]| {
            l.iter()
                .map(|q| (q.body, q.step, q.fault))
                .collect::<Vec<_>>()
        };
        assert_eq!(said(list), said(reference));
    }
}
