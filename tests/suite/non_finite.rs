//! A state that turns NaN or infinite stops the run with an error naming the body and the
//! step, on every backend, and the body keeps its last finite state for inspection.

use crate::common;

use common::rigid_crowd;
use rigid_crowd::glam::DVec3;
use rigid_crowd::{
    Backend, Body, Crowd, Error, Force, ForceKind, Integrator, MassProperties, Shape, Simulation,
};

/// The body that falls into the singular centre.
const DOOMED: usize = 5;
/// Steps it takes to get there: `x0 = -1` at speed 1 with `h = 1/64`, exact in f32 and f64.
const STEPS_TO_CENTRE: u64 = 64;
const START_STEP: u64 = 1000;

/// Twenty bodies; an attractor of strength 0 and no softening pulls nobody (its force is
/// exactly zero) except at its very centre, where `0 * M / 0` is NaN. Body 5 glides into it.
fn crowd() -> Crowd {
    let mass = MassProperties::from_shape(1.0, Shape::Sphere { radius: 0.1 }, "body").unwrap();
    let bodies = (0..20)
        .map(|i| {
            let (position, velocity) = if i == DOOMED {
                (DVec3::new(-1.0, 0.0, 0.0), DVec3::X)
            } else {
                (DVec3::new(i as f64, 3.0, 0.0), DVec3::Y)
            };
            common::body(mass, position, velocity, DVec3::ZERO)
        })
        .collect();
    let mut crowd = Crowd::new(bodies, 1.0 / 64.0)
        .with_integrator(Integrator::Euler)
        .with_force(Force::on_all(ForceKind::Attractor {
            centre: DVec3::ZERO,
            strength: 0.0,
            softening: 0.0,
        }));
    crowd.start_step = START_STEP;
    crowd
}

fn open(crowd: &Crowd, backend: Backend) -> Simulation {
    match backend {
        Backend::Gpu => Simulation::gpu(crowd, common::gpu()),
        other => Simulation::new(crowd, other),
    }
    .unwrap()
}

/// Steps and waits: on the GPU the fault surfaces when the submission completes.
fn run(sim: &mut Simulation, steps: u64) -> Result<(), Error> {
    sim.step(steps)?;
    sim.finish()
}

/// Asserts `result` is the doomed body's fault, at the step of its last finite state.
fn assert_doomed<T: std::fmt::Debug>(result: Result<T, Error>, name: &str) {
    match result {
        Err(Error::NonFinite { body, step }) => {
            assert_eq!(
                (body, step),
                (DOOMED, START_STEP + STEPS_TO_CENTRE),
                "{name}"
            );
        }
        other => panic!("{name}: expected NonFinite, got {other:?}"),
    }
}

#[test]
fn a_non_finite_state_names_the_body_and_step_and_keeps_the_last_finite_state() {
    let crowd = crowd();
    for backend in Backend::ALL {
        let name = backend.name();
        let mut sim = open(&crowd, backend);
        // Up to the centre every state is finite.
        run(&mut sim, STEPS_TO_CENTRE).unwrap_or_else(|e| panic!("{name}: {e}"));
        let expected_step = START_STEP + STEPS_TO_CENTRE;
        assert_doomed(run(&mut sim, 10), name);
        // Every later step fails the same way; the message names body and step.
        let again = run(&mut sim, 1).unwrap_err().to_string();
        assert!(
            again.contains(&format!("body {DOOMED}")) && again.contains(&expected_step.to_string()),
            "{name}: {again}"
        );
        let bodies: Vec<Body> = sim.bodies().unwrap();
        assert!(bodies.iter().all(|b| b.state.is_finite()), "{name}");
        // The last finite state: exactly at the centre, still moving at speed 1.
        let doomed = &bodies[DOOMED];
        assert_eq!(doomed.state.position, DVec3::ZERO, "{name}");
        assert_eq!(doomed.velocity(), DVec3::X, "{name}");
    }
}

/// A read right after the steps, with no wait between, reports the fault as the CPU
/// backends' `step` does, instead of handing back states frozen at it.
#[test]
fn a_read_after_a_fault_not_yet_waited_for_is_an_error() {
    let crowd = crowd();
    for backend in Backend::ALL {
        let name = backend.name();
        let mut sim = open(&crowd, backend);
        let stepped = sim.step(STEPS_TO_CENTRE + 10);
        assert_doomed(stepped.and_then(|()| sim.bodies()), name);
    }
}

#[test]
fn a_run_that_goes_non_finite_exits_with_one_line_and_keeps_the_last_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("doomed.json");
    std::fs::write(
        &scene,
        r#"{"version": 1, "dt": 0.015625, "steps": 100, "integrator": "euler",
            "forces": [{"type": "attractor", "centre": [0, 0, 0], "strength": 0, "softening": 0}],
            "bodies": [
              {"mass": 1, "shape": {"sphere": 0.1}, "position": [3, 3, 0], "velocity": [0, 1, 0]},
              {"mass": 1, "shape": {"sphere": 0.1}, "position": [-1, 0, 0], "velocity": [1, 0, 0]}
            ]}"#,
    )
    .unwrap();
    for backend in ["cpu-ref", "cpu", "gpu"] {
        let out = dir.path().join(format!("{backend}.csv"));
        let ckpt = dir.path().join(format!("{backend}.ckpt"));
        let output = rigid_crowd(
            &[
                "run",
                scene.to_str().unwrap(),
                "--backend",
                backend,
                "--out",
                out.to_str().unwrap(),
                "--checkpoint",
                ckpt.to_str().unwrap(),
                "--checkpoint-every",
                "40",
            ],
            &[],
        );
        assert_eq!(output.status.code(), Some(1), "{backend}: {output:?}");
        let stderr = common::error_line(&output);
        assert!(
            stderr.contains("body 1 became non-finite") && stderr.contains("step 64"),
            "{backend}: {stderr}"
        );
        assert!(
            stderr.contains("the last checkpoint is"),
            "{backend}: {stderr}"
        );
        assert!(stderr.contains("(step 40)"), "{backend}: {stderr}");
        assert!(!out.exists(), "{backend}: no output from a failed run");
        let kept = rigid_crowd::Checkpoint::read(&ckpt).unwrap();
        assert_eq!(kept.step(), 40, "{backend}");
        assert!(kept.crowd.bodies.iter().all(|b| b.state.is_finite()));
    }
}
