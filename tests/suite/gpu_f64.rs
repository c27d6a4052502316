//! The GPU kernels against the CPU backends of their precision: `gpu-f64` against the f64
//! reference and `gpu` against the f32 `cpu` path. Each pair runs one definition of the
//! physics (core/src/physics), so on an adapter with IEEE arithmetic (lavapipe) they give the same
//! bits; and the evidence that the tolerance checks left for other adapters are sharp: a
//! scheme or a force term changed by a part in a million fails the f64 check while the f32
//! check cannot see it.

use crate::common;

use rigid_crowd::glam::{DQuat, DVec3};
use rigid_crowd::gpu::{GpuOptions, Precision};
use rigid_crowd::{
    Backend, Body, Crowd, CrowdSpec, Deviation, ForceKind, GPU_F64_STEP_TOLERANCE,
    GPU_F64_TOLERANCE, GPU_TOLERANCE, Integrator, MassProperties, Plane, Scene, Shape, ShapeKind,
    Simulation, cross_check_crowd, differing_bodies,
};
use rigid_crowd::{CustomForce, ForceInput, ForceLaw, Load, Real, sin_cos};

fn run(crowd: &Crowd, steps: u64, backend: Backend) -> Vec<Body> {
    common::run(crowd, steps, backend)
}

fn f64_against_reference(crowd: &Crowd, steps: u64) -> Deviation {
    let reference = run(crowd, steps, Backend::Reference);
    Deviation::between(&run(crowd, steps, Backend::GpuF64), &reference)
}

/// Every shape kind, so the inertia of each reaches the kernel.
fn every_shape(count: usize, seed: u64, integrator: Integrator, dt: f64) -> Crowd {
    let mut crowd = cross_check_crowd(count, seed, integrator, dt).unwrap();
    let spec = CrowdSpec {
        shapes: ShapeKind::EVERY.to_vec(),
        ..CrowdSpec::new(count, seed)
    };
    for (body, generated) in crowd.bodies.iter_mut().zip(spec.generate().unwrap()) {
        body.mass = generated.mass;
    }
    crowd
}

#[test]
fn one_step_agrees_to_round_off_for_every_force_type_integrator_and_shape() {
    for integrator in Integrator::ALL {
        let crowd = every_shape(300, 41, integrator, 1e-3);
        // Each force type once (the crowd's forces interleave them body by body).
        let mut types: Vec<&str> = crowd.forces.iter().map(|f| f.type_name()).collect();
        types.sort_unstable();
        types.dedup();
        for force_type in types {
            let mut alone = crowd.clone();
            alone.forces.retain(|f| f.type_name() == force_type);
            let d = f64_against_reference(&alone, 1);
            println!("one step, {integrator}, {force_type}: {d:?}");
            assert!(
                d.max() <= GPU_F64_STEP_TOLERANCE,
                "{integrator}, {force_type}: {d:?} > {GPU_F64_STEP_TOLERANCE:e}"
            );
        }
        let d = f64_against_reference(&crowd, 1);
        println!("one step, {integrator}, every force type: {d:?}");
        assert!(d.max() <= GPU_F64_STEP_TOLERANCE, "{integrator}: {d:?}");
    }
}

#[test]
fn a_thousand_steps_agree_for_every_integrator_and_shape() {
    for integrator in Integrator::ALL {
        let crowd = every_shape(1_000, 42, integrator, 1e-3);
        let d = f64_against_reference(&crowd, 1_000);
        println!("1,000 steps, {integrator}, every force type and shape: {d:?}");
        assert!(d.max() <= GPU_F64_TOLERANCE, "{integrator}: {d:?}");
    }
}

/// Every scene of `scenes/`, cut to its first 1,000 bodies (300 where it has planes, whose
/// contacts lavapipe pays for in f64): bodies are independent, so they test the same physics
/// at a cost CI can pay (their targeted forces go with them).
fn every_scene() -> Vec<(std::path::PathBuf, Scene)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes");
    let mut scenes = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let mut scene = Scene::load(&path).unwrap();
        let keep = if scene.crowd.planes.is_empty() {
            1_000
        } else {
            300
        };
        scene.crowd.bodies.truncate(keep);
        scene
            .crowd
            .forces
            .retain(|f| f.body.is_none_or(|b| b < keep));
        scenes.push((path, scene));
    }
    scenes.sort_by(|a, b| a.0.cmp(&b.0));
    scenes
}

/// 300 bodies of every shape raining onto a floor and a slanted wall under gravity and drag.
fn raining_onto_planes(integrator: Integrator) -> Crowd {
    let drag = ForceKind::LinearDrag {
        linear: 0.05,
        angular: 0.01,
    };
    common::raining_onto_planes(300, 43, drag).with_integrator(integrator)
}

/// Contacts amplify a last-bit difference tenfold every few dozen steps (a body rocking on
/// the floor), so only the same bits keep the f64 cross-check: the contact resolution is one
/// definition (core/src/physics/contact.rs), and `gpu-f64` computes exactly what `cpu-ref` does,
/// over 2,000 steps, every integrator, fused and unfused.
#[test]
fn bodies_falling_onto_planes_are_bit_identical_to_the_reference() {
    let steps = 2_001; // not a multiple of 8: the remainder runs unfused
    for integrator in Integrator::ALL {
        let crowd = raining_onto_planes(integrator);
        let reference = run(&crowd, steps, Backend::Reference);
        let resting = reference
            .iter()
            .filter(|b| b.state.linear_momentum.length() < 1e-3 * b.mass.mass())
            .count();
        println!("{integrator}: {resting} of 300 bodies at rest after {steps} steps");
        let configs = [(1, true), (8, false)];
        assert_gpu_matches(Precision::F64, &crowd, steps, &reference, &configs);
        let fast = run(&crowd, steps, Backend::FastCpu);
        assert_gpu_matches(Precision::F32, &crowd, steps, &fast, &configs);
    }
}

/// Bodies kilometres from the origin thrown at planes there, which they reach at every step
/// of a dispatch: the plain kernel hands a body over to the contact code before the first
/// step that leaves the ball in which it is clear of every plane, a bound whose margin must
/// cover the rounding at such coordinates (a unit in the last place of f32 is 0.2 mm there,
/// the margin a few centimetres, less than a body's radius). A body handed over a step late
/// would miss its contact and part from the reference.
#[test]
fn bodies_far_from_the_origin_meet_planes_on_the_references_step() {
    let far = DVec3::new(2.0e3, -1.0e3, 1.5e3);
    let shapes = [
        Shape::Sphere { radius: 0.3 },
        Shape::Box {
            size: DVec3::new(0.4, 0.7, 0.5),
        },
        Shape::Capsule {
            radius: 0.2,
            length: 0.6,
        },
    ];
    let bodies = (0..96)
        .map(|i| {
            let shape = shapes[i % shapes.len()];
            let mass = MassProperties::from_shape(1.0 + 0.1 * (i % 5) as f64, shape, "b").unwrap();
            // Lined up across the wall at x = far.x + 2, 0.5 to 1.4 m from it, at 10 to 57 m/s.
            let gap = 0.5 + 0.01 * i as f64;
            let position = far + DVec3::new(2.0 - gap, 1.5 * i as f64, 0.8);
            let velocity = DVec3::new(10.0 + 0.5 * i as f64, 0.0, -3.0);
            let spin = DVec3::new(0.5, 1.0 + 0.1 * i as f64, -2.0);
            Body::from_kinematics(mass, position, DQuat::IDENTITY, velocity, spin)
        })
        .collect();
    let crowd = Crowd::new(bodies, 1e-3)
        .with_force(rigid_crowd::Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        }))
        .with_plane(Plane::through(far + DVec3::X * 2.0, DVec3::NEG_X, 0.5, 0.3))
        .with_plane(Plane::through(far, DVec3::Z, 0.3, 0.5));
    let steps = 301;
    let reference = run(&crowd, steps, Backend::Reference);
    let hit = (reference.iter())
        .filter(|b| b.state.linear_momentum.x < 0.0)
        .count();
    assert_eq!(hit, 96, "every body bounced off the wall");
    assert_both_precisions_match(&crowd, steps, &[(8, true), (5, false)]);
}

/// The dispatch parameters carry the first 8 planes' surfaces, which the plain kernel
/// reads once a dispatch for each body's clearance; a crowd with more reads them from the
/// planes' buffer. Here the planes the bodies land on come last, at the 8th and 9th places
/// and at the 9th and 10th, behind planes none comes near.
#[test]
fn planes_past_the_eighth_are_met_as_the_first_are() {
    let raining = raining_onto_planes(Integrator::Rk4);
    for distant in [7, 8] {
        let mut crowd = raining.clone();
        crowd.planes = (0..distant)
            .map(|i| {
                let normal = DVec3::new(1.0, 0.1 * i as f64, -0.5).normalize();
                Plane::through(-200.0 * normal, normal, 0.5, 0.5)
            })
            .chain(raining.planes.iter().cloned())
            .collect();
        assert_both_precisions_match(&crowd, 401, &[(8, true)]);
    }
}

/// A spring scene at dt = 0.02, where lie_rk4 and rk4 differ by about 1e-5.
fn springs(integrator: Integrator, damping_scale: f64) -> Crowd {
    let mut crowd = cross_check_crowd(500, 45, integrator, 0.02).unwrap();
    crowd.forces.retain(|f| f.type_name() == "spring");
    for force in &mut crowd.forces {
        if let ForceKind::Spring { damping, .. } = &mut force.kind {
            *damping *= damping_scale;
        }
    }
    crowd
}

#[test]
fn the_f64_check_tells_a_changed_scheme_or_force_term_where_the_f32_check_cannot() {
    let steps = 200;
    let rk4 = run(&springs(Integrator::Rk4, 1.0), steps, Backend::Reference);
    let lie = run(&springs(Integrator::LieRk4, 1.0), steps, Backend::Reference);
    let schemes_apart = Deviation::between(&lie, &rk4).max();
    println!("lie_rk4 against rk4 in f64: {schemes_apart:.3e}");

    // The wrong scheme: gpu lie_rk4 checked against the reference's rk4.
    let f64_lie = run(&springs(Integrator::LieRk4, 1.0), steps, Backend::GpuF64);
    let f32_lie = run(&springs(Integrator::LieRk4, 1.0), steps, Backend::Gpu);
    let f64_right = Deviation::between(&f64_lie, &lie).max();
    let f64_wrong = Deviation::between(&f64_lie, &rk4).max();
    let f32_right = Deviation::between(&f32_lie, &lie).max();
    let f32_wrong = Deviation::between(&f32_lie, &rk4).max();
    println!("gpu-f64 lie_rk4: {f64_right:.3e} from lie_rk4, {f64_wrong:.3e} from rk4");
    println!("gpu f32 lie_rk4: {f32_right:.3e} from lie_rk4, {f32_wrong:.3e} from rk4");
    assert!(f64_right <= GPU_F64_TOLERANCE, "{f64_right:.3e}");
    assert!(
        f64_wrong > GPU_F64_TOLERANCE,
        "the f64 check missed the scheme"
    );
    assert!(
        f32_wrong <= GPU_TOLERANCE && f32_right <= GPU_TOLERANCE,
        "the f32 check was expected to pass both: {f32_right:.3e}, {f32_wrong:.3e}"
    );

    // The wrong force term: the springs' damping off by one part in a million.
    let off = springs(Integrator::Rk4, 1.0 + 1e-6);
    let f64_off = Deviation::between(&run(&off, steps, Backend::GpuF64), &rk4).max();
    let f32_off = Deviation::between(&run(&off, steps, Backend::Gpu), &rk4).max();
    println!("damping off by 1e-6: gpu-f64 {f64_off:.3e}, gpu f32 {f32_off:.3e}");
    assert!(
        f64_off > GPU_F64_TOLERANCE,
        "the f64 check missed the damping"
    );
    assert!(f32_off <= GPU_TOLERANCE, "{f32_off:.3e}");
}

#[test]
fn an_f32_custom_force_is_refused_on_gpu_f64_with_a_clear_error() {
    let crowd = cross_check_crowd(10, 46, Integrator::Rk4, 1e-3).unwrap();
    let f32_only = rigid_crowd::CustomForce::new(
        "fn custom_force(position: vec3<f32>, orientation: vec4<f32>, velocity: vec3<f32>,
                angular_velocity: vec3<f32>, mass: f32, time: f32, body: u32) -> Load {
    return Load(-mass * position, vec3<f32>(0.0));
}",
        |input| rigid_crowd::ExternalLoad {
            force: -input.position * input.mass,
            torque: DVec3::ZERO,
        },
    );
    let crowd = crowd.with_custom_force(f32_only);
    // It runs in f32 ...
    Simulation::gpu(&crowd, common::gpu()).expect("an f32 custom force runs on gpu");
    // ... and is refused in f64, naming the cause.
    let error = Simulation::gpu_f64(&crowd, common::gpu())
        .unwrap_err()
        .to_string();
    println!("{error}");
    assert!(error.contains("custom_force"), "{error}");
    assert!(error.contains("real"), "{error}");
    assert_eq!(error.lines().count(), 1, "{error}");
}

#[test]
fn a_custom_force_calling_a_32_bit_only_built_in_is_refused_on_gpu_f64() {
    let crowd = cross_check_crowd(10, 47, Integrator::Rk4, 1e-3).unwrap();
    let uses_sin = rigid_crowd::CustomForce::new(
        "fn custom_force(position: vec3<real>, orientation: vec4<real>, velocity: vec3<real>,
                angular_velocity: vec3<real>, mass: real, time: real, body: u32) -> Load {
    return Load(vec3<real>(real(0.0), real(0.0), sin(time)), vec3<real>(real(0.0)));
}",
        |input| rigid_crowd::ExternalLoad {
            force: DVec3::new(0.0, 0.0, input.time.sin()),
            torque: DVec3::ZERO,
        },
    );
    let crowd = crowd.with_custom_force(uses_sin);
    Simulation::gpu(&crowd, common::gpu()).expect("sin is fine in f32");
    let error = Simulation::gpu_f64(&crowd, common::gpu())
        .unwrap_err()
        .to_string();
    println!("{error}");
    assert!(error.contains("sin"), "{error}");
    assert!(error.contains("sin_real"), "{error}");
}

/// The GPU kernel of `precision` runs `crowd` for `steps` steps under each
/// `(steps per dispatch, trusted shader)` of `configs`, and every body ends with
/// `reference`'s bits (`cpu-ref`'s for f64, `cpu`'s for f32).
fn assert_gpu_matches(
    precision: Precision,
    crowd: &Crowd,
    steps: u64,
    reference: &[Body],
    configs: &[(u32, bool)],
) {
    for &(steps_per_dispatch, trusted_shader) in configs {
        let options = GpuOptions {
            steps_per_dispatch,
            trusted_shader,
            precision,
            ..GpuOptions::default()
        };
        let mut sim = Simulation::gpu_with_options(crowd, common::gpu(), options).unwrap();
        sim.step(steps).unwrap();
        let differing = differing_bodies(&sim.bodies().unwrap(), reference);
        assert_eq!(
            differing,
            0,
            "{precision:?}, {}, {steps_per_dispatch} steps a dispatch, trusted {trusted_shader}: \
             {differing} of {} bodies differ",
            crowd.integrator,
            reference.len()
        );
    }
}

/// `gpu-f64` against `cpu-ref` and `gpu` against `cpu`, each under `configs`.
fn assert_both_precisions_match(crowd: &Crowd, steps: u64, configs: &[(u32, bool)]) {
    let reference = run(crowd, steps, Backend::Reference);
    assert_gpu_matches(Precision::F64, crowd, steps, &reference, configs);
    let fast = run(crowd, steps, Backend::FastCpu);
    assert_gpu_matches(Precision::F32, crowd, steps, &fast, configs);
}

/// The physics is one definition (core/src/physics): `cpu-ref` runs it in f64 and `gpu-f64` runs
/// the WGSL traced from it, compiled with exact float arithmetic (gpu/exact_spirv.rs), so on
/// an adapter with IEEE arithmetic (lavapipe) the two give the same bits, not merely close
/// ones. Every force kind but the custom one (a WGSL string with a Rust twin, two
/// definitions), every shape, every integrator, fused and unfused, checked and trusted.
#[test]
fn every_force_kind_and_integrator_is_bit_identical_to_the_reference() {
    let steps = 301; // not a multiple of 8: the remainder runs unfused
    for integrator in Integrator::ALL {
        let mut crowd = every_shape(300, 43, integrator, 1e-3);
        crowd.forces.retain(|f| f.type_name() != "custom");
        crowd.custom_force = None;
        assert_both_precisions_match(&crowd, steps, &[(1, true), (8, true), (8, false)]);
    }
}

/// Quadratic drag scaled by mass, `F = -c M |v| v`, with a spin-down torque that varies over
/// time and from body to body: a custom force written once, as a law.
struct TurbulentDrag {
    c: f64,
}

impl ForceLaw for TurbulentDrag {
    fn load<R: Real>(&self, b: &ForceInput<R>) -> Load<R> {
        let (sin, _) = sin_cos(b.time * R::constant(3.0) + b.body);
        let speed = b.velocity.length();
        Load {
            force: b.velocity * (-(R::constant(self.c) * b.mass * speed)),
            torque: b.angular_velocity * (R::constant(-0.01) * (R::constant(1.5) + sin)),
        }
    }
}

/// A custom force written once as a law runs on `cpu-ref` in f64 and on `gpu-f64` as the WGSL
/// traced from it: the same bits, with every other force kind, every integrator.
#[test]
fn a_custom_force_law_is_bit_identical_to_the_reference() {
    for integrator in Integrator::ALL {
        let mut crowd = every_shape(300, 48, integrator, 1e-3);
        crowd.custom_force = Some(CustomForce::from_law(TurbulentDrag { c: 0.05 }));
        assert!(crowd.forces.iter().any(|f| f.type_name() == "custom"));
        assert_both_precisions_match(&crowd, 301, &[(8, false)]);
    }
}

/// With `f32_divisions_in_f64` the f32 kernel takes each division and square root in f64
/// and rounds it to f32: where the f64 ones are exact (lavapipe; NVIDIA's, as BENCHMARKS.md
/// measured) that is the correctly rounded f32 result, so `gpu` still gives `cpu`'s bits:
/// every shape, every integrator, and a custom force law (its speed a square root).
#[test]
fn f32_divisions_in_f64_keep_the_cpus_bits() {
    let steps = 301;
    for integrator in Integrator::ALL {
        let mut crowd = every_shape(300, 49, integrator, 1e-3);
        crowd.custom_force = Some(CustomForce::from_law(TurbulentDrag { c: 0.05 }));
        let fast = run(&crowd, steps, Backend::FastCpu);
        let options = GpuOptions {
            f32_divisions_in_f64: true,
            ..GpuOptions::default()
        };
        let mut sim = Simulation::gpu_with_options(&crowd, common::gpu(), options).unwrap();
        sim.step(steps).unwrap();
        let differing = differing_bodies(&sim.bodies().unwrap(), &fast);
        assert_eq!(
            differing, 0,
            "{integrator}: {differing} of 300 bodies differ"
        );
    }
}

/// A checkpoint of a `gpu` run with `f32_divisions_in_f64` records it, and both ways of
/// resuming it on the GPU build the kernel the same way, continuing bit for bit; resumed on
/// `gpu-f64` the setting, which has no f32 kernel to change, is dropped.
#[test]
fn f32_divisions_in_f64_are_resumed_from_a_checkpoint() {
    let crowd = every_shape(64, 5, Integrator::Rk4, 1e-3);
    let options = GpuOptions {
        f32_divisions_in_f64: true,
        ..GpuOptions::default()
    };
    let mut sim = Simulation::gpu_with_options(&crowd, common::gpu(), options).unwrap();
    sim.step(20).unwrap();
    let checkpoint = sim.checkpoint().unwrap();
    assert!(checkpoint.f32_divisions_in_f64);
    sim.step(30).unwrap();
    let whole = sim.bodies().unwrap();
    for mut resumed in [
        Simulation::resume(&checkpoint, Backend::Gpu).unwrap(),
        Simulation::resume_on_gpu(&checkpoint, common::gpu()).unwrap(),
    ] {
        assert!(resumed.gpu_options().unwrap().f32_divisions_in_f64);
        resumed.step(30).unwrap();
        assert_eq!(differing_bodies(&resumed.bodies().unwrap(), &whole), 0);
    }
    let on_f64 = Simulation::resume(&checkpoint, Backend::GpuF64).unwrap();
    assert!(!on_f64.gpu_options().unwrap().f32_divisions_in_f64);
    let mut plain = Simulation::gpu(&crowd, common::gpu()).unwrap();
    assert!(!plain.checkpoint().unwrap().f32_divisions_in_f64);
}

/// Every scene of `scenes/`, contacts included, under every integrator, for its own step
/// count or 2,000 steps, whichever is longer.
#[test]
fn every_scene_is_bit_identical_to_the_reference() {
    let scenes = every_scene();
    assert!(
        scenes
            .iter()
            .filter(|(_, s)| !s.crowd.planes.is_empty())
            .count()
            >= 2
            && scenes.len() >= 5,
        "the scenes with and without planes were not found"
    );
    for (path, scene) in scenes {
        let steps = scene.steps.max(2_000);
        for integrator in Integrator::ALL {
            let crowd = Crowd {
                integrator,
                ..scene.crowd.clone()
            };
            println!("{}, {integrator}", path.display());
            assert_both_precisions_match(&crowd, steps, &[(8, false)]);
        }
    }
}
