//! Per-body fault isolation: under `freeze` a body that goes non-finite or leaves the envelope
//! is frozen at its last good state and reported, the rest of the crowd goes on bit for bit as
//! if it had never existed, and a reset body rejoins; under `stop` the first fault ends the
//! run. Every backend, every integrator, faults injected at chosen steps.

use crate::common;

use rigid_crowd::glam::{DQuat, DVec3};
use rigid_crowd::gpu::GpuOptions;
use rigid_crowd::{
    Backend, Body, BodyState, Crowd, CustomForce, CustomForceInput, Envelope, Error, ExternalLoad,
    Fault, FaultRules, Force, ForceKind, Integrator, MassProperties, OnFault, QuarantinedBody,
    Shape, Simulation,
};

const H: f64 = 1.0 / 64.0;
const START: u64 = 1000;
const STEPS: u64 = 120;
const BODIES: usize = 24;
const GRAVITY: f64 = 9.81;

/// Pushed by an infinite force (the largest finite number squared, in the backend's
/// precision) from time `(START + NAN_AFTER + 1/4) h` on.
const NAN_BODY: usize = 5;
const NAN_AFTER: u64 = 30;
/// Pushed along x at 41 m/s^2 (gravity cancelled): passes `MAX_SPEED` after step 46.
const SPEED_BODY: usize = 11;
const THRUST: f64 = 41.0;
const MAX_SPEED: f64 = 30.0;
/// Glides from the origin at 25 m/s (gravity cancelled): passes `MAX_DISTANCE` after step 102.
const DISTANCE_BODY: usize = 17;
const GLIDE: f64 = 25.0;
const MAX_DISTANCE: f64 = 40.0;
/// Spun up about z at 22 rad/s^2: passes `MAX_ANGULAR_SPEED` after step 58.
const SPIN_BODY: usize = 20;
const SPIN_TORQUE: f64 = 2.2;
const MAX_ANGULAR_SPEED: f64 = 20.0;

const FAULTY: [usize; 4] = [NAN_BODY, SPEED_BODY, DISTANCE_BODY, SPIN_BODY];

/// The time from which the custom force is infinite: a quarter step after a step boundary, so
/// the stage times of every integrator fall clearly on one side.
fn nan_time() -> f64 {
    (START as f64 + NAN_AFTER as f64 + 0.25) * H
}

fn custom_force() -> CustomForce {
    let wgsl = format!(
        "fn custom_force(position: vec3<real>, orientation: vec4<real>, velocity: vec3<real>,
                angular_velocity: vec3<real>, mass: real, time: real, body: u32) -> Load {{
    let scale = select(real(0.0), LARGEST_FINITE, time >= real({t:?}));
    return Load(vec3<real>(scale * scale), vec3<real>(real(0.0)));
}}
",
        t = nan_time()
    );
    let t_nan = nan_time();
    CustomForce::new(wgsl, move |input: &CustomForceInput| {
        let scale = if input.time >= t_nan { f64::MAX } else { 0.0 };
        ExternalLoad {
            force: DVec3::splat(scale * scale),
            torque: DVec3::ZERO,
        }
    })
}

fn sphere() -> MassProperties {
    MassProperties::from_shape(1.0, Shape::Sphere { radius: 0.5 }, "sphere").unwrap()
}

/// Tumbling boxes that stay well inside the envelope for the whole run.
fn healthy_body(i: usize) -> Body {
    let k = i as f64;
    let size = DVec3::new(0.6 + 0.1 * (i % 3) as f64, 0.4, 0.2 + 0.04 * (i % 5) as f64);
    let mass = MassProperties::from_shape(1.0 + 0.1 * k, Shape::Box { size }, "box").unwrap();
    Body::from_kinematics(
        mass,
        DVec3::new(5.0 * k.cos(), 5.0 * k.sin(), 0.1 * k),
        DQuat::from_axis_angle(DVec3::new(1.0, 2.0, 3.0).normalize(), 0.3 * k),
        DVec3::new(0.5, 1.0, -0.3) * (i % 4) as f64 * 0.25,
        DVec3::new(1.0, 2.0, 0.5) * (0.2 + 0.2 * (i % 4) as f64),
    )
}

/// The crowd, with its four faulty bodies or without them (then the healthy bodies keep
/// their order and shift down). Returns the crowd and the full crowd's index of each body.
fn crowd(integrator: Integrator, on_fault: OnFault, with_faulty: &[usize]) -> (Crowd, Vec<usize>) {
    let mut bodies = Vec::new();
    let mut forces = vec![Force::on_all(ForceKind::Gravity {
        acceleration: DVec3::new(0.0, -GRAVITY, 0.0),
    })];
    let mut origin = Vec::new();
    let cancel_gravity = DVec3::new(0.0, GRAVITY, 0.0);
    for i in 0..BODIES {
        let faulty = FAULTY.contains(&i);
        if faulty && !with_faulty.contains(&i) {
            continue;
        }
        let at = bodies.len();
        let own = |kind| Force::on_body(at, kind);
        let body = match i {
            NAN_BODY => {
                forces.push(own(ForceKind::Custom));
                common::body(sphere(), DVec3::new(2.0, 0.0, 2.0), DVec3::Y, DVec3::ZERO)
            }
            SPEED_BODY => {
                forces.push(own(ForceKind::Thrust {
                    force: DVec3::new(THRUST, 0.0, 0.0) + cancel_gravity,
                    torque: DVec3::ZERO,
                }));
                common::body(
                    sphere(),
                    DVec3::new(0.0, 0.0, 3.0),
                    DVec3::ZERO,
                    DVec3::ZERO,
                )
            }
            DISTANCE_BODY => {
                forces.push(own(ForceKind::Thrust {
                    force: cancel_gravity,
                    torque: DVec3::ZERO,
                }));
                let v = DVec3::new(GLIDE, 0.0, 0.0);
                common::body(sphere(), DVec3::ZERO, v, DVec3::ZERO)
            }
            SPIN_BODY => {
                forces.push(own(ForceKind::Thrust {
                    force: DVec3::ZERO,
                    torque: DVec3::new(0.0, 0.0, SPIN_TORQUE),
                }));
                common::body(
                    sphere(),
                    DVec3::new(0.0, 0.0, -3.0),
                    DVec3::ZERO,
                    DVec3::ZERO,
                )
            }
            _ => healthy_body(i),
        };
        bodies.push(body);
        origin.push(i);
    }
    let mut crowd = Crowd::new(bodies, H)
        .with_integrator(integrator)
        .with_custom_force(custom_force())
        .with_fault_rules(FaultRules {
            on_fault,
            envelope: Envelope {
                max_speed: Some(MAX_SPEED),
                max_angular_speed: Some(MAX_ANGULAR_SPEED),
                max_distance: Some(MAX_DISTANCE),
            },
        });
    crowd.forces = forces;
    crowd.start_step = START;
    (crowd, origin)
}

/// The clock step of each faulty body's last good state, and the fault, as the set-up
/// promises: the envelope's bodies cross their limit between two steps whatever the
/// integrator; the infinite force is first seen by the first step with a stage at or after
/// `(NAN_AFTER + 1/4) h`. Stages reach `t` (the Euler schemes), `t + h` (RK4, Lie-RK4,
/// `lie_poisson`), or `t + w1 h` with Yoshida's `w1 = 1 / (2 - 2^(1/3)) > 1`
/// (`lie_poisson4`, one step earlier).
fn expected(integrator: Integrator) -> Vec<(usize, u64, Option<Fault>)> {
    let last_good = |limit: f64, per_step: f64| START + (limit / per_step).floor() as u64;
    let inertia = 0.4 * 0.5 * 0.5;
    let latest_stage = match integrator {
        Integrator::Euler | Integrator::SymplecticEuler => 0.0,
        Integrator::LiePoisson4 => 1.0 / (2.0 - 2f64.cbrt()),
        _ => 1.0,
    };
    let sees_it = (NAN_AFTER as f64 + 0.25 - latest_stage).ceil() as u64;
    vec![
        (NAN_BODY, START + sees_it, None),
        (
            SPEED_BODY,
            last_good(MAX_SPEED, THRUST * H),
            Some(Fault::Speed),
        ),
        (
            DISTANCE_BODY,
            last_good(MAX_DISTANCE, GLIDE * H),
            Some(Fault::Distance),
        ),
        (
            SPIN_BODY,
            last_good(MAX_ANGULAR_SPEED, SPIN_TORQUE / inertia * H),
            Some(Fault::AngularSpeed),
        ),
    ]
}

fn open(crowd: &Crowd, backend: Backend) -> Simulation {
    Simulation::on_backend(crowd, backend, common::gpu()).unwrap()
}

fn bits(state: &BodyState) -> [u64; 13] {
    let (x, q) = (state.position, state.orientation);
    let (p, l) = (state.linear_momentum, state.angular_momentum);
    [
        x.x, x.y, x.z, q.w, q.x, q.y, q.z, p.x, p.y, p.z, l.x, l.y, l.z,
    ]
    .map(f64::to_bits)
}

/// Runs `sim` for `steps` steps in a few calls (faults span calls) and waits.
fn run(sim: &mut Simulation, steps: u64) {
    let first = steps / 3;
    sim.step(first).unwrap();
    sim.step(steps - first).unwrap();
    sim.finish().unwrap();
}

/// Checks a finished `freeze` run of the full crowd: the report, the frozen states, and the
/// healthy bodies against a run without the faulty ones. Returns the report.
fn check_freeze_run(
    name: &str,
    sim: &mut Simulation,
    integrator: Integrator,
    backend: Backend,
) -> Vec<QuarantinedBody> {
    let quarantined = sim.quarantined().unwrap();
    let reported: Vec<usize> = quarantined.iter().map(|q| q.body).collect();
    assert_eq!(reported, FAULTY, "{name}: the bodies quarantined");
    for (q, (body, step, fault)) in quarantined.iter().zip(expected(integrator)) {
        assert_eq!((q.body, q.step), (body, step), "{name}: body {body}'s step");
        match fault {
            Some(fault) => assert_eq!(q.fault, fault, "{name}: body {body}"),
            None => assert!(
                q.fault.is_non_finite(),
                "{name}: body {body}: {:?}",
                q.fault
            ),
        }
    }
    let bodies = sim.bodies().unwrap();
    for q in &quarantined {
        assert_eq!(
            bits(&q.state),
            bits(&bodies[q.body].state),
            "{name}: body {}",
            q.body
        );
        // The frozen state is the body's state at its last good step.
        let (full, _) = crowd(integrator, OnFault::Freeze, &FAULTY);
        let mut to_there = open(&full, backend);
        to_there.step(q.step - START).unwrap();
        let there = to_there.bodies().unwrap();
        assert_eq!(
            bits(&q.state),
            bits(&there[q.body].state),
            "{name}: body {} keeps its state of step {}",
            q.body,
            q.step
        );
    }
    // Every healthy body, bit for bit, as in a crowd that never had the faulty ones.
    let (healthy, origin) = crowd(integrator, OnFault::Freeze, &[]);
    let mut alone = open(&healthy, backend);
    run(&mut alone, STEPS);
    assert!(alone.quarantined().unwrap().is_empty(), "{name}");
    for (k, body) in alone.bodies().unwrap().iter().enumerate() {
        assert_eq!(
            bits(&body.state),
            bits(&bodies[origin[k]].state),
            "{name}: healthy body {}",
            origin[k]
        );
    }
    quarantined
}

#[test]
fn frozen_bodies_are_reported_and_the_rest_run_as_if_they_never_existed() {
    for integrator in Integrator::ALL {
        let mut reference_faults = None;
        for backend in Backend::ALL {
            let name = format!("{} on {}", integrator.name(), backend.name());
            let (full, _) = crowd(integrator, OnFault::Freeze, &FAULTY);
            let mut sim = open(&full, backend);
            run(&mut sim, STEPS);
            let quarantined = check_freeze_run(&name, &mut sim, integrator, backend);
            // Every backend names the same rule as the reference.
            let faults: Vec<Fault> = quarantined.iter().map(|q| q.fault).collect();
            let reference = reference_faults.get_or_insert(faults.clone());
            assert_eq!(&faults, reference, "{name}");
        }
    }
}

/// Several steps per dispatch: a body frozen inside a fused dispatch reports the same step
/// and state as with one step per dispatch.
#[test]
fn the_fused_kernel_freezes_at_the_same_step() {
    for precision_backend in [Backend::Gpu, Backend::GpuF64] {
        let (full, _) = crowd(Integrator::Rk4, OnFault::Freeze, &FAULTY);
        let options = GpuOptions {
            steps_per_dispatch: 7,
            precision: precision_backend.gpu_precision().unwrap(),
            ..GpuOptions::default()
        };
        let mut fused = Simulation::gpu_with_options(&full, common::gpu(), options).unwrap();
        run(&mut fused, STEPS);
        let name = format!("fused {}", precision_backend.name());
        check_freeze_run(&name, &mut fused, Integrator::Rk4, precision_backend);
    }
}

#[test]
fn a_reset_body_rejoins_the_integration() {
    for backend in Backend::ALL {
        let name = backend.name();
        let (full, _) = crowd(Integrator::Rk4, OnFault::Freeze, &FAULTY);
        let mut sim = open(&full, backend);
        run(&mut sim, STEPS);
        let fresh = BodyState {
            position: DVec3::new(1.0, 1.0, 1.0),
            orientation: DQuat::IDENTITY,
            linear_momentum: DVec3::new(0.5, 0.0, 0.0),
            angular_momentum: DVec3::ZERO,
        };
        sim.set_states(&[SPEED_BODY], &[fresh]).unwrap();
        let left: Vec<usize> = sim.quarantined().unwrap().iter().map(|q| q.body).collect();
        assert_eq!(left, [NAN_BODY, DISTANCE_BODY, SPIN_BODY], "{name}");
        let clock = sim.clock_step();
        run(&mut sim, 20);
        // As a crowd of that one body, started at the reset state on the same clock.
        let (mut alone, _) = crowd(Integrator::Rk4, OnFault::Freeze, &[SPEED_BODY]);
        let speed_body = alone
            .bodies
            .iter()
            .position(|b| b.mass.shape() == Some(Shape::Sphere { radius: 0.5 }))
            .unwrap();
        alone.bodies = vec![Body {
            state: fresh,
            mass: alone.bodies[speed_body].mass,
        }];
        alone
            .forces
            .retain(|f| f.body.is_none() || f.body == Some(speed_body));
        for force in &mut alone.forces {
            force.body = force.body.map(|_| 0);
        }
        alone.start_step = clock;
        let mut reference = open(&alone, backend);
        run(&mut reference, 20);
        assert_eq!(
            bits(&sim.bodies().unwrap()[SPEED_BODY].state),
            bits(&reference.bodies().unwrap()[0].state),
            "{name}: the reset body"
        );
        // 20 steps bring it to 13.3 m/s, inside the limit; the others stay frozen.
        let left: Vec<usize> = sim.quarantined().unwrap().iter().map(|q| q.body).collect();
        assert_eq!(left, [NAN_BODY, DISTANCE_BODY, SPIN_BODY], "{name}");
    }
}

#[test]
fn under_stop_the_first_fault_ends_the_run_naming_the_body_and_the_rule() {
    for backend in Backend::ALL {
        let name = backend.name();
        // Without the infinite body the first to break a rule is the speeding one.
        let (crowd, origin) = crowd(Integrator::Rk4, OnFault::Stop, &[SPEED_BODY]);
        let speeding = origin.iter().position(|&i| i == SPEED_BODY).unwrap();
        let mut sim = open(&crowd, backend);
        let stopped = sim.step(STEPS).and_then(|()| sim.finish());
        let step = expected(Integrator::Rk4)[1].1;
        match stopped {
            Err(Error::OutsideEnvelope {
                body,
                step: s,
                fault,
            }) => {
                assert_eq!((body, s, fault), (speeding, step, Fault::Speed), "{name}");
            }
            other => panic!("{name}: expected OutsideEnvelope, got {other:?}"),
        }
        let message = sim.step(1).unwrap_err().to_string();
        assert_eq!(
            message,
            format!(
                "body {speeding} passed its speed limit in step {step}; its last state inside is kept"
            ),
            "{name}"
        );
        assert!(sim.quarantined().unwrap().is_empty(), "{name}");
    }
}

/// A `.npz` recording of a `freeze` run carries each body's status in every frame: 0 while
/// healthy, the fault's code from the first frame after it froze; the frozen body's recorded
/// state stays its last good one.
#[test]
fn a_recording_carries_each_bodys_status_frame_by_frame() {
    use rigid_crowd::record::{TrajectoryWriter, frame_count, record_run};
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("frozen.npz");
    let every = 10;
    for backend in [Backend::FastCpu, Backend::Gpu] {
        let (full, _) = crowd(Integrator::Rk4, OnFault::Freeze, &FAULTY);
        let mut sim = open(&full, backend);
        let frames = frame_count(STEPS, every);
        let mut writer = TrajectoryWriter::create(&path, BODIES, frames).unwrap();
        let mut recorded = Vec::new();
        record_run(
            &mut sim,
            STEPS,
            every,
            |step, time, bodies| {
                recorded.push(bodies.iter().map(|b| bits(&b.state)).collect::<Vec<_>>());
                writer.write_frame(step, time, bodies)
            },
            |_| {},
        )
        .unwrap();
        let quarantined = sim.quarantined().unwrap();
        writer.set_quarantined(&quarantined, START);
        writer.finish().unwrap();

        let mut archive = zip::ZipArchive::new(std::fs::File::open(&path).unwrap()).unwrap();
        let mut bytes = Vec::new();
        archive
            .by_name("status.npy")
            .unwrap()
            .read_to_end(&mut bytes)
            .unwrap();
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
        assert!(header.contains("'descr': '|u1'"), "{header}");
        assert!(
            header.contains(&format!("'shape': ({frames}, {BODIES})")),
            "{header}"
        );
        let status = &bytes[10 + header_len..];
        assert_eq!(status.len(), frames * BODIES);
        for frame in 0..frames {
            let clock = START + frame as u64 * every;
            for body in 0..BODIES {
                let code = status[frame * BODIES + body];
                match quarantined.iter().find(|q| q.body == body) {
                    Some(q) if clock > q.step => {
                        assert_eq!(code as u32, q.fault.code(), "body {body} frame {frame}");
                        assert_eq!(recorded[frame][body], bits(&q.state), "body {body}");
                    }
                    _ => assert_eq!(code, 0, "{}: body {body} frame {frame}", backend.name()),
                }
            }
        }
        // The four froze at different frames, and every frame after that shows it.
        let frozen_frames = |body: usize| {
            (0..frames)
                .filter(|f| status[f * BODIES + body] != 0)
                .count()
        };
        assert!(FAULTY.iter().all(|&body| frozen_frames(body) > 0));
    }
}

/// A checkpoint keeps the rules and the frozen bodies: a run resumed from it freezes the
/// rest at the same steps and ends bit for bit as the uninterrupted run.
#[test]
fn a_resumed_run_keeps_its_frozen_bodies_and_rules() {
    use rigid_crowd::Checkpoint;
    for backend in Backend::ALL {
        let name = backend.name();
        let (full, _) = crowd(Integrator::Rk4, OnFault::Freeze, &FAULTY);
        let mut whole = open(&full, backend);
        run(&mut whole, STEPS);
        let mut first = open(&full, backend);
        run(&mut first, 50);
        let saved = first.checkpoint().unwrap();
        assert_eq!(saved.quarantined.len(), 2, "{name}: frozen by step 50");
        let mut read = Checkpoint::from_bytes(&saved.to_bytes()).unwrap();
        assert_eq!(read.crowd.fault_rules, full.fault_rules, "{name}");
        assert_eq!(read.quarantined, saved.quarantined, "{name}");
        read.crowd = read.crowd.with_custom_force(custom_force());
        let mut resumed = match backend {
            Backend::Gpu | Backend::GpuF64 => Simulation::resume_on_gpu(&read, common::gpu()),
            _ => Simulation::resume(&read, backend),
        }
        .unwrap();
        run(&mut resumed, STEPS - 50);
        assert_eq!(
            resumed.quarantined().unwrap(),
            whole.quarantined().unwrap(),
            "{name}"
        );
        let bits_of = |sim: &Simulation| -> Vec<[u64; 13]> {
            sim.bodies()
                .unwrap()
                .iter()
                .map(|b| bits(&b.state))
                .collect()
        };
        assert_eq!(bits_of(&resumed), bits_of(&whole), "{name}");
    }
}
