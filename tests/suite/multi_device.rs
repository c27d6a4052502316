//! One crowd on several devices (lavapipe opened two or three times): the results do not
//! depend on the sharding, bit for bit, and every index is a crowd index.

use crate::common;

use rigid_crowd::glam::DVec3;
use rigid_crowd::gpu::{DeviceCount, GpuContext};
use rigid_crowd::{
    Backend, Body, BodyState, Crowd, CustomForce, CustomForceInput, Envelope, Error, ExternalLoad,
    Fault, FaultRules, Force, ForceInput, ForceKind, ForceLaw, Integrator, Load, OnFault, Plane,
    Real, Simulation, cross_check_crowd,
};
use std::sync::OnceLock;

/// Three devices, opened once for the whole binary; a run on `n` uses the first `n`.
fn devices() -> &'static [GpuContext] {
    static DEVICES: OnceLock<Vec<GpuContext>> = OnceLock::new();
    DEVICES.get_or_init(|| {
        GpuContext::open_devices(DeviceCount::Count(3))
            .unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"))
    })
}

const GPU_BACKENDS: [Backend; 2] = [Backend::Gpu, Backend::GpuF64];

fn bits(bodies: &[Body]) -> Vec<u64> {
    common::state_bits(bodies)
}

/// A force that depends on the body's crowd index: a shard that numbered its bodies from 0
/// would push them differently.
fn indexed_force() -> CustomForce {
    const WGSL: &str = "\
fn custom_force(position: vec3<real>, orientation: vec4<real>, velocity: vec3<real>,
                angular_velocity: vec3<real>, mass: real, time: real, body: u32) -> Load {
    return Load(vec3<real>(real(body % 7u), real(0.0), real(0.0)) * mass,
                vec3<real>(real(0.0), real(0.01) * real(body % 5u), real(0.0)));
}
";
    CustomForce::new(WGSL, |input: &CustomForceInput| ExternalLoad {
        force: DVec3::new((input.body % 7) as f64, 0.0, 0.0) * input.mass,
        torque: DVec3::new(0.0, 0.01 * (input.body % 5) as f64, 0.0),
    })
}

/// Seeded boxes and spheres under gravity and drag, with a custom force that reads the
/// body's index and own forces on bodies spread through the crowd; a floor when `contacts`.
fn crowd(count: usize, integrator: Integrator, contacts: bool) -> Crowd {
    let mut crowd = cross_check_crowd(count, 17, integrator, 1.0 / 128.0)
        .unwrap()
        .with_custom_force(indexed_force())
        .with_force(Force::on_all(ForceKind::Custom));
    for body in (0..count).step_by(count / 5 + 1) {
        crowd = crowd.with_force(Force::on_body(
            body,
            ForceKind::Spring {
                anchor: DVec3::new(0.0, 1.0, 0.0),
                attach: DVec3::new(0.05, 0.0, 0.0),
                stiffness: 3.0,
                damping: 0.1,
            },
        ));
    }
    if contacts {
        crowd = crowd.with_plane(Plane::ground(0.5, 0.4));
    }
    crowd
}

fn run(crowd: &Crowd, backend: Backend, count: usize, steps: u64) -> Simulation {
    let mut sim = Simulation::on_devices(crowd, backend, &devices()[..count]).unwrap();
    assert_eq!(sim.device_count(), count);
    sim.step(steps / 2).unwrap();
    sim.step(steps - steps / 2).unwrap();
    sim.finish().unwrap();
    sim
}

#[test]
fn two_or_three_devices_give_the_bits_of_one_for_every_integrator() {
    for backend in GPU_BACKENDS {
        for integrator in Integrator::ALL {
            let crowd = crowd(97, integrator, false);
            let one = bits(&run(&crowd, backend, 1, 40).bodies().unwrap());
            for devices in [2, 3] {
                let many = bits(&run(&crowd, backend, devices, 40).bodies().unwrap());
                assert_eq!(
                    many,
                    one,
                    "{} {} on {devices} devices",
                    backend.name(),
                    integrator.name()
                );
            }
        }
    }
}

#[test]
fn a_contact_scene_on_several_devices_matches_one() {
    for backend in GPU_BACKENDS {
        let crowd = crowd(64, Integrator::Rk4, true);
        let one = bits(&run(&crowd, backend, 1, 200).bodies().unwrap());
        let three = bits(&run(&crowd, backend, 3, 200).bodies().unwrap());
        assert_eq!(three, one, "{}", backend.name());
    }
}

/// Bodies of every shape raining onto a floor and a slanted wall, on two devices, give the
/// CPU's bits over 2,001 steps: `gpu-f64` those of `cpu-ref`, `gpu` those of `cpu`. Contacts
/// amplify a last-bit difference tenfold every few dozen steps, so only the same arithmetic
/// on every shard passes.
#[test]
fn contacts_on_two_devices_give_the_bits_of_the_cpu() {
    let drag = ForceKind::QuadraticDrag {
        linear: 0.05,
        angular: 0.01,
    };
    let crowd = common::raining_onto_planes(120, 44, drag);
    let steps = 2_001;
    for (gpu, cpu) in [
        (Backend::GpuF64, Backend::Reference),
        (Backend::Gpu, Backend::FastCpu),
    ] {
        let expected = bits(&common::run(&crowd, steps, cpu));
        let two = bits(&run(&crowd, gpu, 2, steps).bodies().unwrap());
        let differing = two
            .chunks(13)
            .zip(expected.chunks(13))
            .filter(|(a, b)| a != b);
        assert_eq!(differing.count(), 0, "{} on two devices", gpu.name());
    }
}

/// A force law that reads the body's crowd index (a shard that numbered its bodies from 0
/// would push them differently): written once, its tangents come from its dual instance.
struct IndexedPull;

impl ForceLaw for IndexedPull {
    fn load<R: Real>(&self, b: &ForceInput<R>) -> Load<R> {
        let c = R::constant;
        let pull = (b.body * c(0.01) + c(0.5)) * b.mass;
        Load {
            force: b.position * (-pull) + b.velocity * c(-0.2),
            torque: b.angular_velocity * (c(-0.05) - b.time * c(0.01)),
        }
    }
}

/// Tangents on two and three devices are those of one, bit for bit, and `gpu-f64`'s are
/// `cpu-ref`'s: along the state, the mass, a spring that acts on bodies of every shard
/// (each shard renumbers its own forces), the force law's crowd indices and a floor's
/// friction.
#[test]
fn tangents_on_several_devices_are_those_of_one() {
    let mut crowd =
        crowd(64, Integrator::Rk4, true).with_custom_force(CustomForce::from_law(IndexedPull));
    for body in &mut crowd.bodies {
        body.state.position.z = body.state.position.z.abs().min(0.6);
    }
    let spring = crowd
        .forces
        .iter()
        .rposition(|f| f.type_name() == "spring" && f.body.is_some())
        .unwrap();
    let spring_name = format!("forces[{spring}].stiffness");
    let names = ["state", "mass", spring_name.as_str(), "planes[0].friction"];
    let tangents = |sim: &mut Simulation| {
        let mut all = Vec::new();
        for name in names {
            let width = sim.tangent_plan().unwrap().columns(name).unwrap().len();
            let mut out = vec![0.0; 64 * 13 * width];
            sim.read_tangents(name, &mut out).unwrap();
            all.extend(out.into_iter().map(f64::to_bits));
        }
        all
    };
    let on = |backend, count: usize| {
        let mut sim = Simulation::on_devices(&crowd, backend, &devices()[..count]).unwrap();
        sim.start_tangents(&names).unwrap();
        sim.step(15).unwrap();
        sim.step(10).unwrap();
        tangents(&mut sim)
    };
    let mut reference = Simulation::reference(&crowd).unwrap();
    reference.start_tangents(&names).unwrap();
    reference.step(25).unwrap();
    let reference = tangents(&mut reference);
    for backend in GPU_BACKENDS {
        let one = on(backend, 1);
        if backend == Backend::GpuF64 {
            assert_eq!(one, reference, "gpu-f64 against cpu-ref");
        }
        for count in [2, 3] {
            assert_eq!(
                on(backend, count),
                one,
                "{} on {count} devices",
                backend.name()
            );
        }
    }
}

/// A registered force law runs on several devices as on one, bit for bit, states and the
/// sensitivities along its numbers, for a force on every body and one on a single body (which
/// the shard holding it renumbers); `gpu-f64` on one device gives `cpu-ref`'s bits.
#[test]
fn a_registered_law_and_its_numbers_on_several_devices_are_those_of_one() {
    let text = r#"{"dt": 0.01, "steps": 20, "integrator": "rk4",
      "forces": [
        {"type": "gravity", "acceleration": [0, 0, -9.81]},
        {"type": "soft_tether", "anchor": [0, 0, 2], "stiffness": 30},
        {"type": "soft_tether", "body": 29, "anchor": [1, -1, 0.5], "stiffness": 12.5}
      ],
      "crowd": {"count": 36, "seed": 5}}"#;
    let laws = crate::force_laws::force_law::laws().unwrap();
    let scene =
        rigid_crowd::Scene::from_json_with_laws(text, std::path::Path::new(""), &laws).unwrap();
    let names = ["forces[1].anchor", "forces[2].stiffness"];
    let outcome = |sim: &mut Simulation| {
        sim.start_tangents(&names).unwrap();
        sim.step(12).unwrap();
        sim.step(8).unwrap();
        let mut all = bits(&sim.bodies().unwrap());
        for (name, width) in names.iter().zip([3, 1]) {
            let mut out = vec![0.0; 36 * 13 * width];
            sim.read_tangents(name, &mut out).unwrap();
            assert!(out.iter().any(|v| *v != 0.0), "{name}");
            all.extend(out.into_iter().map(f64::to_bits));
        }
        all
    };
    let reference = outcome(&mut Simulation::reference(&scene.crowd).unwrap());
    for backend in GPU_BACKENDS {
        let on = |count: usize| {
            outcome(
                &mut Simulation::on_devices(&scene.crowd, backend, &devices()[..count]).unwrap(),
            )
        };
        let one = on(1);
        if backend == Backend::GpuF64 {
            assert_eq!(one, reference, "gpu-f64 against cpu-ref");
        }
        for count in [2, 3] {
            assert_eq!(on(count), one, "{} on {count} devices", backend.name());
        }
    }
}

/// A crowd larger than three source chunks is cut on chunk boundaries (the path a generated
/// crowd of millions takes); the non-blocking reads see every device.
#[test]
fn a_large_crowd_is_cut_on_chunk_boundaries_and_read_whole() {
    let crowd = crowd(3 * 16384 + 500, Integrator::Rk4, false);
    let one = run(&crowd, Backend::Gpu, 1, 4);
    let mut three = run(&crowd, Backend::Gpu, 3, 4);
    let expected = bits(&one.bodies().unwrap());
    assert_eq!(bits(&three.bodies().unwrap()), expected);
    let first = three.request_states().unwrap();
    three.step(2).unwrap();
    let second = three.request_states().unwrap();
    // Redeemed out of order, one polled until it lands.
    let later = three.wait_states(second).unwrap();
    let now = loop {
        if let Some(bodies) = three.try_states(&first).unwrap() {
            break bodies;
        }
    };
    assert_eq!(bits(&now), expected);
    let mut reference = run(&crowd, Backend::Gpu, 1, 6);
    reference.finish().unwrap();
    assert_eq!(bits(&later), bits(&reference.bodies().unwrap()));
}

#[test]
fn faults_resets_and_loads_use_crowd_indices() {
    let count = 30;
    // Body 25 (on the third device) is launched far faster than the others.
    let mut base = crowd(count, Integrator::Rk4, false);
    let launched = &mut base.bodies[25];
    launched.state.linear_momentum = DVec3::new(400.0, 0.0, 0.0) * launched.mass.mass();
    let envelope = Envelope {
        max_speed: Some(100.0),
        ..Envelope::default()
    };
    for on_fault in [OnFault::Freeze, OnFault::Stop] {
        let crowd = base
            .clone()
            .with_fault_rules(FaultRules { on_fault, envelope });
        let mut sims: Vec<Simulation> = [1, 3]
            .iter()
            .map(|&n| Simulation::on_devices(&crowd, Backend::Gpu, &devices()[..n]).unwrap())
            .collect();
        let mut outcomes = Vec::new();
        for sim in &mut sims {
            let loads: Vec<ExternalLoad> = (0..count)
                .map(|i| ExternalLoad {
                    force: DVec3::new(0.0, i as f64 * 0.1, 0.0),
                    torque: DVec3::ZERO,
                })
                .collect();
            sim.set_external_loads(&loads).unwrap();
            let stepped = sim.step(60).and_then(|()| sim.finish());
            outcomes.push((
                stepped.map_err(|e| e.to_string()),
                sim.quarantined().unwrap(),
            ));
        }
        assert_eq!(outcomes[1], outcomes[0], "{on_fault:?}");
        match on_fault {
            OnFault::Freeze => {
                let frozen = &outcomes[0].1;
                assert_eq!(frozen.len(), 1);
                assert_eq!((frozen[0].body, frozen[0].fault), (25, Fault::Speed));
                // A reset on the third device, by crowd index, rejoins.
                let fresh = BodyState {
                    linear_momentum: DVec3::ZERO,
                    ..frozen[0].state
                };
                for sim in &mut sims {
                    sim.set_states(&[25], &[fresh]).unwrap();
                    sim.step(5).unwrap();
                    assert!(sim.quarantined().unwrap().is_empty());
                }
                assert_eq!(
                    bits(&sims[1].bodies().unwrap()),
                    bits(&sims[0].bodies().unwrap())
                );
            }
            OnFault::Stop => match &outcomes[0].0 {
                Err(message) => assert!(message.starts_with("body 25 passed"), "{message}"),
                Ok(()) => panic!("the run should have stopped"),
            },
        }
    }
}

#[test]
fn a_crowd_smaller_than_the_devices_is_refused() {
    let crowd = crowd(2, Integrator::Rk4, false);
    match Simulation::on_devices(&crowd, Backend::Gpu, devices()) {
        Err(Error::Invalid { field, message }) => {
            assert_eq!(field, "devices");
            assert!(
                message.contains("2 bodies") && message.contains("3 devices"),
                "{message}"
            );
        }
        other => panic!(
            "expected an error naming devices, got {:?}",
            other.map(|_| ())
        ),
    }
}

/// From the command line: a run on two devices, checkpointed, cut short and resumed on three,
/// writes the file one device writes.
#[test]
fn the_command_line_splits_runs_and_resumes_over_any_device_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let scene = "scenes/floor.json";
    let run = |extra: &[&str]| {
        let mut args = vec!["run", scene, "--steps", "60"];
        args.extend_from_slice(extra);
        let output = common::rigid_crowd(&args, &[]);
        assert!(output.status.success(), "{extra:?}: {output:?}");
    };
    let one = path("one.csv");
    run(&["--out", &one]);
    let two = path("two.csv");
    run(&["--out", &two, "--devices", "2"]);
    assert_eq!(std::fs::read(&two).unwrap(), std::fs::read(&one).unwrap());
    // A run of the first 20 steps on two devices, checkpointed, continued for 40 on three.
    let ckpt = path("run.ckpt");
    let first_part = path("first.csv");
    let output = common::rigid_crowd(
        &[
            "run",
            scene,
            "--steps",
            "20",
            "--out",
            &first_part,
            "--devices",
            "2",
            "--checkpoint",
            &ckpt,
        ],
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    let resumed = path("resumed.csv");
    let output = common::rigid_crowd(
        &[
            "resume",
            &ckpt,
            "--steps",
            "40",
            "--out",
            &resumed,
            "--devices",
            "3",
            "--quiet",
        ],
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        std::fs::read(&resumed).unwrap(),
        std::fs::read(&one).unwrap()
    );
    let refused = common::rigid_crowd(&["run", scene, "--out", &one, "--devices", "0"], &[]);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--devices"), "{stderr}");
}

/// The second of two devices lost mid-run: the run fails with one line naming that device
/// and its shard and the last checkpoint, writes no output, and the checkpoint (whole)
/// resumes on two devices to the bytes of an uninterrupted run on one.
#[test]
fn a_lost_device_of_several_names_its_shard_and_keeps_the_last_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let scene = "scenes/floor.json";
    let whole = path("whole.csv");
    let run = common::rigid_crowd(&["run", scene, "--steps", "120", "--out", &whole], &[]);
    assert!(run.status.success(), "{run:?}");
    let (part, ckpt) = (path("part.csv"), path("run.ckpt"));
    let args = [
        "run",
        scene,
        "--steps",
        "120",
        "--out",
        &part,
        "--devices",
        "2",
        "--checkpoint",
        &ckpt,
        "--checkpoint-every",
        "50",
    ];
    let failed = common::rigid_crowd(&args, &[("RIGID_CROWD_INJECT_DEVICE_LOSS_AT", "60:1")]);
    assert_eq!(failed.status.code(), Some(1), "{failed:?}");
    let stderr = String::from_utf8_lossy(&failed.stderr);
    let line = stderr.lines().last().unwrap();
    // floor.json's 5,000 bodies on two devices of one adapter: 2,500 each.
    assert!(
        line.contains("GPU device lost: device 1 (shard of bodies 2500..5000)"),
        "{line}"
    );
    assert!(
        line.contains(&format!("the last checkpoint is {ckpt} (step 50)")),
        "{line}"
    );
    assert!(
        !std::path::Path::new(&part).exists(),
        "no half-written output"
    );
    let resumed = common::rigid_crowd(&["resume", &ckpt, "--devices", "2", "--quiet"], &[]);
    assert!(resumed.status.success(), "{resumed:?}");
    assert_eq!(
        std::fs::read(&part).unwrap(),
        std::fs::read(&whole).unwrap()
    );
}
