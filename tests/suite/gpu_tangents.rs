//! Tangents on the GPU: the kernel traced over dual numbers carries the same derivatives as
//! the CPU backends of its precision, bit for bit on an IEEE-honest adapter (lavapipe):
//! `gpu-f64` as `cpu-ref`, `gpu` as `cpu`, under every integrator, every force kind with
//! numbers (own forces, keyframes), along keyframe tables, external loads, plane contacts
//! and fused steps.

use crate::common;

use rigid_crowd::glam::DVec3;
use rigid_crowd::gpu::GpuOptions;
use rigid_crowd::{
    Backend, Crowd, Envelope, ExternalLoad, FaultRules, Force, ForceKind, Integrator, OnFault,
    STATE_COMPONENTS, Simulation, Tangent, cross_check_crowd,
};

/// The cross-check crowd (every force kind, own forces, keyframes) without its custom
/// force, and with a keyframed force on every body whose table's segments a run crosses.
fn crowd(integrator: Integrator) -> Crowd {
    let mut crowd = cross_check_crowd(45, 11, integrator, 1e-2).unwrap();
    crowd.forces.retain(|f| f.kind != ForceKind::Custom);
    crowd.custom_force = None;
    let table = crowd.add_keyframes(vec![[0.013, 0.5], [0.071, 1.5], [0.152, -0.5]]);
    crowd.with_force(Force::on_all(ForceKind::Keyframed {
        force: DVec3::new(0.2, -0.1, 0.4),
        torque: DVec3::new(0.0, 0.03, -0.02),
        table,
    }))
}

/// The state, the mass, the inertia and every numeric field of the first force of each
/// kind (on every body or a body's own).
fn every_name(crowd: &Crowd) -> Vec<String> {
    let mut names = vec!["state".to_string(), "mass".into(), "inertia".into()];
    let mut seen = Vec::new();
    for (i, force) in crowd.forces.iter().enumerate() {
        let kind = (force.type_name(), force.body.is_some());
        if seen.contains(&kind) {
            continue;
        }
        seen.push(kind);
        for field in Tangent::force_numbers(force, &crowd.keyframes) {
            names.push(format!("forces[{i}].{field}"));
        }
    }
    names
}

/// Every tangent of `crowd` on `backend` after two calls of steps under external loads,
/// the GPU fusing `fuse` steps per dispatch: each name's columns, in order, and how many
/// bodies froze.
fn tangents(crowd: &Crowd, backend: Backend, fuse: u32) -> (Vec<f64>, usize) {
    tangents_of(crowd, backend, fuse, &every_name(crowd), 23)
}

/// The tangents `names` of `crowd` on `backend` after `steps` in two calls under external
/// loads, the GPU fusing `fuse` steps per dispatch in blocks of 4 (the widest kernels,
/// which runs this short would not reach by themselves:
/// `tangents_start_in_blocks_of_one_and_widen_to_blocks_of_four_in_a_long_run`):
/// each name's columns, in order, and how many bodies froze.
fn tangents_of(
    crowd: &Crowd,
    backend: Backend,
    fuse: u32,
    names: &[String],
    steps: u64,
) -> (Vec<f64>, usize) {
    let options = GpuOptions {
        steps_per_dispatch: fuse,
        widest_tangent_block: Some(4),
        ..GpuOptions::default()
    };
    tangents_with(crowd, backend, options, names, steps)
}

/// [`tangents_of`] with the GPU kernel built per `options` (its precision `backend`'s).
fn tangents_with(
    crowd: &Crowd,
    backend: Backend,
    options: GpuOptions,
    names: &[String],
    steps: u64,
) -> (Vec<f64>, usize) {
    let mut sim = match backend {
        Backend::Gpu | Backend::GpuF64 => Simulation::gpu_with_options(
            crowd,
            common::gpu(),
            GpuOptions {
                precision: backend.precision(),
                ..options
            },
        ),
        _ => Simulation::on_backend(crowd, backend, common::gpu()),
    }
    .unwrap();
    let loads: Vec<ExternalLoad> = (0..crowd.bodies.len())
        .map(|i| ExternalLoad {
            force: DVec3::new(0.1 * i as f64, -0.3, 0.2),
            torque: DVec3::new(0.0, 0.05, -0.01 * i as f64),
        })
        .collect();
    sim.set_external_loads(&loads).unwrap();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    sim.start_tangents(&names).unwrap();
    let first = steps * 3 / 4;
    sim.step(first).unwrap();
    sim.step(steps - first).unwrap();
    let frozen = sim.quarantined().unwrap().len();
    let plan = sim.tangent_plan().unwrap().clone();
    let mut all = Vec::new();
    for name in names {
        let width = plan.columns(name).unwrap().len();
        let mut out = vec![0.0; crowd.bodies.len() * STATE_COMPONENTS * width];
        sim.read_tangents(name, &mut out).unwrap();
        all.extend(out);
    }
    (all, frozen)
}

/// How many of `a`'s numbers differ from `b`'s in any bit.
fn differing(a: &[f64], b: &[f64]) -> usize {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .filter(|(x, y)| x.to_bits() != y.to_bits())
        .count()
}

/// One test of `check` per integrator, named `module::integrator_name`, the integrators
/// listed once here: each test compiles its own kernels, which a machine with more cores
/// than the suite's two then shares out. `every_integrator_has_a_test` keeps the list whole.
macro_rules! per_integrator {
    ($module:ident, $check:ident) => {
        per_integrator!(@tests $module, $check, euler => Euler,
            symplectic_euler => SymplecticEuler, rk4 => Rk4, lie_rk4 => LieRk4,
            lie_poisson => LiePoisson, lie_poisson4 => LiePoisson4);
    };
    (@tests $module:ident, $check:ident, $($test:ident => $integrator:ident),*) => {
        mod $module {
            use rigid_crowd::Integrator;

            pub(super) const COVERED: &[Integrator] = &[$(Integrator::$integrator),*];

            $(
                #[test]
                fn $test() {
                    super::$check(Integrator::$integrator);
                }
            )*
        }
    };
}

per_integrator!(
    gpu_tangents_are_the_cpu_backends_bit_for_bit,
    gpu_tangents_match_the_cpu_backends
);
per_integrator!(
    position_free_forces_keep_the_position_columns_and_the_bits,
    position_free_forces_keep_the_position_columns
);

#[test]
fn every_integrator_has_a_test() {
    assert_eq!(
        gpu_tangents_are_the_cpu_backends_bit_for_bit::COVERED,
        &Integrator::ALL[..]
    );
    assert_eq!(
        position_free_forces_keep_the_position_columns_and_the_bits::COVERED,
        &Integrator::ALL[..]
    );
}

/// Every tangent of the cross-check crowd under `integrator` (a test each): `gpu-f64`
/// carries `cpu-ref`'s bits, fused and not, and `gpu` carries `cpu`'s.
fn gpu_tangents_match_the_cpu_backends(integrator: Integrator) {
    let crowd = crowd(integrator);
    let (reference, _) = tangents(&crowd, Backend::Reference, 1);
    let moved = reference.iter().filter(|t| **t != 0.0).count();
    println!(
        "{integrator}: {moved} of {} tangents moved",
        reference.len()
    );
    assert!(
        moved > reference.len() / 50,
        "{integrator}: {moved} tangents moved"
    );
    for fuse in [1, 4] {
        let (f64_gpu, _) = tangents(&crowd, Backend::GpuF64, fuse);
        assert_eq!(
            differing(&f64_gpu, &reference),
            0,
            "{integrator}, gpu-f64, fuse {fuse}"
        );
    }
    let (cpu, _) = tangents(&crowd, Backend::FastCpu, 1);
    let (gpu, _) = tangents(&crowd, Backend::Gpu, 4);
    assert_eq!(differing(&gpu, &cpu), 0, "{integrator}, gpu against cpu");
    // The kernels leave out terms with a literal-zero factor, which the CPU adds: the
    // two may differ in the sign of a zero, so every zero is read out as +0.
    let negative_zero = |v: &[f64]| v.iter().any(|x| x.to_bits() == (-0.0f64).to_bits());
    assert!(!negative_zero(&reference) && !negative_zero(&gpu) && !negative_zero(&cpu));
}

/// Bodies frozen mid-run (under `freeze`) keep the tangents of their last good state, on
/// the GPU as on the CPU: the last block alone reports the fault, and every block stops at
/// the same step.
/// With `f32_divisions_in_f64` the f32 tangent kernel takes its divisions and square roots
/// in f64 and rounds them to f32: where the f64 ones are exact (lavapipe) those are the
/// correctly rounded f32 results, so `gpu` still carries `cpu`'s tangents bit for bit.
#[test]
fn f32_divisions_in_f64_keep_the_cpus_tangents() {
    for integrator in [Integrator::Rk4, Integrator::LiePoisson] {
        let crowd = crowd(integrator);
        let names = [
            "state".to_string(),
            "mass".to_string(),
            "inertia".to_string(),
        ];
        let options = GpuOptions {
            f32_divisions_in_f64: true,
            widest_tangent_block: Some(4),
            ..GpuOptions::default()
        };
        let (gpu, gpu_frozen) = tangents_with(&crowd, Backend::Gpu, options, &names, 17);
        let (cpu, cpu_frozen) = tangents_of(&crowd, Backend::FastCpu, 8, &names, 17);
        assert_eq!(gpu_frozen, cpu_frozen);
        assert!(gpu.iter().any(|x| *x != 0.0));
        assert_eq!(differing(&gpu, &cpu), 0, "{integrator}: of {}", gpu.len());
    }
}

/// Blocks of one direction each (`widest_tangent_block: Some(1)`, a GPU's default) carry each direction through
/// the same operations as blocks of four: the tangents are the CPU backends' bits in both
/// precisions.
#[test]
fn blocks_of_one_direction_carry_the_same_tangents() {
    let crowd = crowd(Integrator::LieRk4);
    let names = ["state".to_string(), "forces[1].linear".to_string()];
    for (gpu, cpu) in [
        (Backend::Gpu, Backend::FastCpu),
        (Backend::GpuF64, Backend::Reference),
    ] {
        let options = GpuOptions {
            widest_tangent_block: Some(1),
            ..GpuOptions::default()
        };
        let (ones, frozen) = tangents_with(&crowd, gpu, options, &names, 19);
        let (reference, cpu_frozen) = tangents_of(&crowd, cpu, 8, &names, 19);
        assert_eq!(frozen, cpu_frozen);
        assert!(ones.iter().any(|x| *x != 0.0));
        assert_eq!(
            differing(&ones, &reference),
            0,
            "{gpu:?}: of {}",
            ones.len()
        );
    }
}

#[test]
fn frozen_bodies_keep_their_tangents_on_the_gpu_as_on_the_cpu() {
    let crowd = crowd(Integrator::Rk4).with_fault_rules(FaultRules {
        on_fault: OnFault::Freeze,
        envelope: Envelope {
            max_speed: Some(3.0),
            ..Envelope::default()
        },
    });
    let (reference, frozen) = tangents(&crowd, Backend::Reference, 1);
    assert!(frozen > 0 && frozen < crowd.bodies.len(), "{frozen} frozen");
    let (f64_gpu, gpu_frozen) = tangents(&crowd, Backend::GpuF64, 4);
    assert_eq!(gpu_frozen, frozen);
    assert_eq!(differing(&f64_gpu, &reference), 0, "gpu-f64");
    let (cpu, _) = tangents(&crowd, Backend::FastCpu, 1);
    let (gpu, _) = tangents(&crowd, Backend::Gpu, 4);
    assert_eq!(differing(&gpu, &cpu), 0, "gpu against cpu");
}

/// Tangents whose block width is not asked for start, on a CPU adapter such as lavapipe, in
/// blocks of 1, and widen to blocks of 4 once the run has carried `WIDEN_AFTER_BODY_STEPS`
/// (2^19) body-steps: a short run compiles no width-4 kernel, a long one does, and the
/// tangents are bit for bit those of blocks of 1 or of 4 throughout, in both precisions.
#[test]
fn tangents_start_in_blocks_of_one_and_widen_to_blocks_of_four_in_a_long_run() {
    let bodies = rigid_crowd::CrowdSpec::new(4096, 29).generate().unwrap();
    let crowd = Crowd::new(bodies, 1e-3)
        .with_force(Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        }))
        .with_force(Force::on_all(ForceKind::QuadraticDrag {
            linear: 0.02,
            angular: 0.01,
        }));
    // 4096 bodies: 100 steps carry 409,600 body-steps; the next call takes the run past
    // 2^19, so it widens before its steps.
    let calls = [100, 30, 20];
    for precision in [
        rigid_crowd::gpu::Precision::F32,
        rigid_crowd::gpu::Precision::F64,
    ] {
        // Each run on a device of its own, whose pipelines count its kernels alone.
        let run = |widest_tangent_block| {
            let ctx = rigid_crowd::gpu::GpuContext::new().expect("GPU tests need an adapter");
            let options = GpuOptions {
                precision,
                widest_tangent_block,
                ..GpuOptions::default()
            };
            let mut sim = Simulation::gpu_with_options(&crowd, &ctx, options).unwrap();
            sim.start_tangents(&["state", "mass"]).unwrap();
            let mut kernels = Vec::new();
            for steps in calls {
                sim.step(steps).unwrap();
                sim.finish().unwrap();
                kernels.push(ctx.pipeline_count());
            }
            let n = crowd.bodies.len() * STATE_COMPONENTS;
            let mut out = vec![0.0; n * 14];
            let (state, mass) = out.split_at_mut(n * 13);
            sim.read_tangents("state", state).unwrap();
            sim.read_tangents("mass", mass).unwrap();
            (out, kernels)
        };
        let (adaptive, kernels) = run(None);
        let (ones, ones_kernels) = run(Some(1));
        let (fours, fours_kernels) = run(Some(4));
        println!(
            "{precision:?}: kernels {kernels:?}, blocks of 1 {ones_kernels:?}, of 4 {fours_kernels:?}"
        );
        // The plain kernel and those of blocks of 1 until the run is long, then blocks of 4.
        assert_eq!(kernels[0], ones_kernels[2], "{precision:?}: {kernels:?}");
        assert!(
            kernels[1] > kernels[0],
            "{precision:?}: never widened: {kernels:?}"
        );
        assert_eq!(kernels[1], kernels[2], "{precision:?}: {kernels:?}");
        assert!(adaptive.iter().any(|x| *x != 0.0 && *x != 1.0));
        assert_eq!(
            differing(&adaptive, &fours),
            0,
            "{precision:?} against blocks of 4"
        );
        assert_eq!(
            differing(&adaptive, &ones),
            0,
            "{precision:?} against blocks of 1"
        );
    }
}

/// Bodies of every shape dropped onto a floor and a slanted wall (they bounce, rock, slide
/// and rest): through the contacts the GPU's tangents are the CPU's bit for bit, along the
/// state, the mass, the inertia and every number of both planes (the normal too).
#[test]
fn tangents_through_plane_contacts_are_the_cpu_backends_bit_for_bit() {
    let drag = ForceKind::LinearDrag {
        linear: 0.05,
        angular: 0.01,
    };
    let mut crowd = common::raining_onto_planes(40, 43, drag);
    // Start them low, so that 120 steps see bounces, contacts held and bodies at rest.
    for (i, body) in crowd.bodies.iter_mut().enumerate() {
        body.state.position.z = 0.05 + 0.05 * (i % 6) as f64;
    }
    let mut names: Vec<String> = ["state", "mass", "inertia"].map(String::from).to_vec();
    for plane in 0..crowd.planes.len() {
        for field in ["point", "normal", "restitution", "friction"] {
            names.push(format!("planes[{plane}].{field}"));
        }
    }
    let steps = 120;
    let (reference, _) = tangents_of(&crowd, Backend::Reference, 1, &names, steps);
    // Columns along the planes' numbers: they move only through the contacts.
    let plane_columns = &reference[crowd.bodies.len() * STATE_COMPONENTS * 20..];
    let moved = plane_columns.iter().filter(|t| **t != 0.0).count();
    println!(
        "{moved} of {} tangents along the planes moved",
        plane_columns.len()
    );
    assert!(moved > plane_columns.len() / 20, "{moved} moved");
    for fuse in [1, 4] {
        let (f64_gpu, _) = tangents_of(&crowd, Backend::GpuF64, fuse, &names, steps);
        assert_eq!(differing(&f64_gpu, &reference), 0, "gpu-f64, fuse {fuse}");
    }
    let (cpu, _) = tangents_of(&crowd, Backend::FastCpu, 1, &names, steps);
    let (gpu, _) = tangents_of(&crowd, Backend::Gpu, 4, &names, steps);
    assert_eq!(differing(&gpu, &cpu), 0, "gpu against cpu");
}

/// More forces on every body than the kernel calls one by one: it visits them in a loop
/// per kind, and the tangents are still the CPU's bits.
#[test]
fn forces_visited_in_a_loop_carry_the_same_tangents() {
    let mut crowd = crowd(Integrator::Rk4);
    for i in 0..17 {
        crowd = crowd.with_force(rigid_crowd::Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.01 * i as f64, -0.02, 0.005),
        }));
    }
    let last = crowd.forces.len() - 1;
    let names: Vec<String> = vec![
        "state".into(),
        "mass".into(),
        format!("forces[{last}].acceleration"),
    ];
    let (reference, _) = tangents_of(&crowd, Backend::Reference, 1, &names, 23);
    let (f64_gpu, _) = tangents_of(&crowd, Backend::GpuF64, 4, &names, 23);
    assert_eq!(differing(&f64_gpu, &reference), 0, "gpu-f64");
}

/// Forces that read no position (gravity, drag, a thrust): a step leaves the Jacobian's
/// position columns as they start, `(e_i, 0, 0, 0)`, so the GPU does not dispatch their
/// blocks, and every tangent is still the CPU's bits, under `integrator` (a test each).
fn position_free_forces_keep_the_position_columns(integrator: Integrator) {
    let bodies = rigid_crowd::CrowdSpec::new(37, 5).generate().unwrap();
    let crowd = Crowd::new(bodies, 1e-2)
        .with_integrator(integrator)
        .with_force(rigid_crowd::Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.3, 0.0, -9.81),
        }))
        .with_force(rigid_crowd::Force::on_all(ForceKind::LinearDrag {
            linear: 0.2,
            angular: 0.05,
        }))
        .with_force(rigid_crowd::Force::on_all(ForceKind::Thrust {
            force: DVec3::new(0.0, 0.5, 0.1),
            torque: DVec3::new(0.02, -0.01, 0.03),
        }));
    let names: Vec<String> = ["state", "mass", "forces[2].torque"]
        .map(String::from)
        .to_vec();
    let steps = 40;
    let (reference, _) = tangents_of(&crowd, Backend::Reference, 1, &names, steps);
    let n = STATE_COMPONENTS;
    for body in reference[..crowd.bodies.len() * n * n].chunks(n * n) {
        for r in 0..n {
            for c in 0..3 {
                let identity = if r == c { 1.0 } else { 0.0 };
                assert_eq!(
                    body[r * n + c],
                    identity,
                    "{integrator}: row {r}, column {c}"
                );
            }
        }
    }
    let moved = reference.iter().filter(|t| **t != 0.0).count();
    assert!(moved > reference.len() / 4, "{integrator}: {moved} moved");
    let (f64_gpu, _) = tangents_of(&crowd, Backend::GpuF64, 4, &names, steps);
    assert_eq!(differing(&f64_gpu, &reference), 0, "{integrator}, gpu-f64");
    let (cpu, _) = tangents_of(&crowd, Backend::FastCpu, 1, &names, steps);
    let (gpu, _) = tangents_of(&crowd, Backend::Gpu, 4, &names, steps);
    assert_eq!(differing(&gpu, &cpu), 0, "{integrator}, gpu against cpu");
}
