//! The same scene on the same backend gives bit-identical bodies run after run, and on the
//! CPU backends whatever the number of threads: bodies are independent, each is integrated
//! by one task in a fixed order of operations, and nothing is summed across bodies.

use crate::common;

use std::path::Path;

use common::{gpu, rigid_crowd};
use rigid_crowd::{Backend, Body, Crowd, Integrator, Scene, Simulation};

/// Every shape, raining onto a walled floor (contacts with restitution and friction), under
/// every force kind: global gravity, drag and an attractor, and per-body spring, point force,
/// thrust and the time-varying sinusoid and keyframes. 45 bodies: five blocks of eight and a
/// partial one on the fast CPU path.
const CONTACT_SCENE: &str = r#"{
  "dt": 0.002, "steps": 300, "integrator": "rk4", "start_step": 17,
  "forces": [
    {"type": "gravity", "acceleration": [0, 0, -9.81]},
    {"type": "linear_drag", "linear": 0.05, "angular": 0.02},
    {"type": "attractor", "centre": [0, 0, 3], "strength": 4, "softening": 0.5},
    {"type": "spring", "body": 0, "anchor": [0, 0, 2], "attach": [0.1, 0, 0], "stiffness": 30, "damping": 0.3},
    {"type": "point_force", "body": 1, "force": [0, 2, 0], "point": [0.2, 0, 0.1]},
    {"type": "thrust", "body": 2, "force": [1, 0, 3], "torque": [0, 0.2, 0]},
    {"type": "sinusoidal", "body": 3, "force": [0, 0, 5], "torque": [0.1, 0, 0],
     "offset": 0.2, "amplitude": 1, "frequency": 3, "phase": 0.4},
    {"type": "keyframed", "body": 4, "force": [2, 0, 1], "torque": [0, 0, 0.3],
     "keyframes": [[0, 0], [0.2, 1], [0.5, -1], [1, 0.5]]}
  ],
  "planes": [
    {"point": [0, 0, 0], "normal": [0, 0, 1], "restitution": 0.5, "friction": 0.4},
    {"point": [-2, 0, 0], "normal": [1, 0.1, 0], "restitution": 0.7, "friction": 0.2},
    {"point": [2, 0, 0], "normal": [-1, 0, 0.2], "restitution": 0.3, "friction": 0.6}
  ],
  "bodies": [
    {"mass": 2, "shape": {"box": [0.4, 0.2, 0.3]}, "position": [0, 0, 0.5], "angular_velocity": [1, 2, 3]},
    {"density": 500, "shape": {"sphere": 0.2}, "position": [0.5, 0, 0.3], "velocity": [0, 0, -2]},
    {"mass": 1, "shape": {"cylinder": {"radius": 0.1, "height": 0.5}}, "position": [-0.5, 0, 0.4],
     "orientation": [0.9238795, 0.3826834, 0, 0]},
    {"mass": 1.5, "shape": {"capsule": {"radius": 0.1, "length": 0.3}}, "position": [1, 0, 0.2],
     "angular_velocity": [0, 4, 0]},
    {"density": 800, "shape": {"ellipsoid": [0.1, 0.2, 0.3]}, "position": [-1, 0, 0.35],
     "velocity": [1, 0, 0]}
  ],
  "crowd": {"count": 40, "seed": 11, "region": [[-1.5, -1, 0.2], [1.5, 1, 1.5]],
            "mass": [0.5, 2], "size": [0.1, 0.4],
            "shapes": ["box", "sphere", "cylinder", "capsule", "ellipsoid"],
            "speed": 2, "spin": 5}
}"#;

/// A mesh body (no planes: meshes have no contact geometry) with a time-varying force.
const MESH_SCENE: &str = r#"{
  "dt": 0.001, "steps": 300,
  "forces": [
    {"type": "gravity", "acceleration": [0, 0, -9.81]},
    {"type": "sinusoidal", "body": 0, "torque": [0, 0, 1], "amplitude": 2, "frequency": 5}
  ],
  "bodies": [
    {"density": 100, "shape": {"mesh": "meshes/bracket.obj"}, "position": [0, 0, 10],
     "orientation": [0.9238795, 0, 0.3826834, 0], "velocity": [1, 0, 5], "angular_velocity": [0.5, 2, 1]},
    {"mass": 3, "inertia": [[1, 0.1, 0], [0.1, 2, 0], [0, 0, 2.5]], "angular_velocity": [3, 0.1, 0.2]}
  ]
}"#;

fn scene(text: &str) -> Scene {
    Scene::from_json_in(text, &Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes"))
        .expect("a valid scene")
}

/// The f64 bits of every state component of every body, in order.
fn state_bits(bodies: &[Body]) -> Vec<u64> {
    bodies
        .iter()
        .flat_map(|b| {
            let s = b.state;
            s.position
                .to_array()
                .into_iter()
                .chain(s.orientation.to_array())
                .chain(s.linear_momentum.to_array())
                .chain(s.angular_momentum.to_array())
                .map(f64::to_bits)
        })
        .collect()
}

fn assert_same_bits(what: &str, a: &[u64], b: &[u64]) {
    assert_eq!(a.len(), b.len(), "{what}: body counts differ");
    if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
        panic!(
            "{what}: body {} component {} differs: {} vs {}",
            i / 13,
            i % 13,
            f64::from_bits(a[i]),
            f64::from_bits(b[i])
        );
    }
}

/// Runs `crowd` for `steps` on `backend`, on a rayon pool of `threads` for the CPU backends.
fn run_bits(crowd: &Crowd, steps: u64, backend: Backend, threads: usize) -> Vec<u64> {
    let run = || {
        let mut sim = match backend {
            Backend::Gpu => Simulation::gpu(crowd, gpu()),
            cpu => Simulation::new(crowd, cpu),
        }
        .expect("the crowd builds");
        sim.step(steps).expect("steps run");
        state_bits(&sim.bodies().expect("bodies read back"))
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon pool")
        .install(run)
}

/// Something happened: the run changed every body, so equal bits are not equal idleness.
fn assert_moved(what: &str, crowd: &Crowd, after: &[u64]) {
    let before = state_bits(&crowd.bodies);
    for body in 0..crowd.bodies.len() {
        let range = body * 13..(body + 1) * 13;
        assert_ne!(
            before[range.clone()],
            after[range],
            "{what}: body {body} never moved"
        );
    }
}

#[test]
fn the_contact_scene_has_contacts() {
    // Otherwise the planes' impulses would go untested here.
    let scene = scene(CONTACT_SCENE);
    let mut without_planes = scene.crowd.clone();
    without_planes.planes.clear();
    let with = run_bits(&scene.crowd, scene.steps, Backend::Reference, 2);
    let without = run_bits(&without_planes, scene.steps, Backend::Reference, 2);
    let touched = (0..scene.crowd.bodies.len())
        .filter(|&b| with[b * 13..(b + 1) * 13] != without[b * 13..(b + 1) * 13])
        .count();
    assert!(touched >= 20, "only {touched} bodies met a plane");
}

#[test]
fn cpu_backends_repeat_bit_for_bit_with_any_thread_count() {
    for (name, text) in [("contact scene", CONTACT_SCENE), ("mesh scene", MESH_SCENE)] {
        let scene = scene(text);
        for integrator in Integrator::ALL {
            let crowd = scene.crowd.clone().with_integrator(integrator);
            for backend in [Backend::Reference, Backend::FastCpu] {
                let what = format!("{name}, {integrator}, {}", backend.name());
                let first = run_bits(&crowd, scene.steps, backend, 2);
                assert_moved(&what, &crowd, &first);
                assert_same_bits(
                    &format!("{what}, run twice"),
                    &first,
                    &run_bits(&crowd, scene.steps, backend, 2),
                );
                for threads in [1, 3, 4] {
                    assert_same_bits(
                        &format!("{what}, 2 threads vs {threads}"),
                        &first,
                        &run_bits(&crowd, scene.steps, backend, threads),
                    );
                }
            }
        }
    }
}

#[test]
fn the_gpu_repeats_bit_for_bit() {
    for (name, text) in [("contact scene", CONTACT_SCENE), ("mesh scene", MESH_SCENE)] {
        let scene = scene(text);
        let first = run_bits(&scene.crowd, scene.steps, Backend::Gpu, 1);
        assert_moved(name, &scene.crowd, &first);
        assert_same_bits(
            &format!("{name}, gpu run twice"),
            &first,
            &run_bits(&scene.crowd, scene.steps, Backend::Gpu, 1),
        );
    }
}

#[test]
fn the_command_line_writes_byte_identical_csv_run_after_run() {
    let dir = tempfile::tempdir().unwrap();
    let scene_path = dir.path().join("scene.json");
    std::fs::write(&scene_path, CONTACT_SCENE).unwrap();
    let run = |backend: &str, threads: &str, out: &str| -> Vec<u8> {
        let out = dir.path().join(out);
        let output = rigid_crowd(
            &[
                "run",
                scene_path.to_str().unwrap(),
                "--backend",
                backend,
                "--steps",
                "100",
                "--out",
                out.to_str().unwrap(),
            ],
            &[("RAYON_NUM_THREADS", threads)],
        );
        assert!(output.status.success(), "{output:?}");
        std::fs::read(out).unwrap()
    };
    for backend in ["cpu-ref", "cpu", "gpu"] {
        let first = run(backend, "2", "first.csv");
        assert!(first.len() > 1000, "{backend}: a CSV of 45 bodies");
        assert!(
            first == run(backend, "2", "second.csv"),
            "{backend}: the CSV differs between two runs"
        );
        if backend != "gpu" {
            assert!(
                first == run(backend, "1", "one_thread.csv"),
                "{backend}: the CSV differs between 2 threads and 1"
            );
        }
    }
}
