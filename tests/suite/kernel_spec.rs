//! The kernel compiled for a crowd (its integrator, its force kinds, contacts only with
//! planes) against the general kernel that holds every case: the specialization only drops
//! code the crowd never runs, so the two must agree bit for bit, in both precisions, for
//! every integrator and every force kind.

use crate::common;

use rigid_crowd::glam::DVec3;
use rigid_crowd::gpu::{GpuOptions, Precision};
use rigid_crowd::{Body, Crowd, CrowdSpec, Force, ForceKind, Integrator, Plane, Simulation};

/// The crowd's bodies after `steps` steps on the GPU, specialized or general.
fn run(crowd: &Crowd, steps: u64, precision: Precision, specialized: bool) -> Vec<Body> {
    let options = GpuOptions {
        precision,
        specialized,
        ..GpuOptions::default()
    };
    let mut sim = Simulation::gpu_with_options(crowd, common::gpu(), options).unwrap();
    sim.step(steps).unwrap();
    sim.bodies().unwrap()
}

/// Asserts the specialized and general kernels leave `crowd` in identical states.
fn assert_identical(crowd: &Crowd, steps: u64, precision: Precision, what: &str) {
    let specialized = run(crowd, steps, precision, true);
    let general = run(crowd, steps, precision, false);
    let (a, b) = (
        common::state_bits(&specialized),
        common::state_bits(&general),
    );
    let differing = a.iter().zip(&b).filter(|(x, y)| x != y).count();
    assert_eq!(
        differing,
        0,
        "{what} ({precision:?}): {differing} of {} components differ",
        a.len()
    );
    // The states moved: a kernel that did nothing would agree with itself too.
    let start = common::state_bits(&crowd.bodies);
    assert_ne!(a, start, "{what}: nothing moved");
}

#[test]
fn specialized_and_general_kernels_agree_bit_for_bit_on_every_force_kind_and_integrator() {
    let ctx = common::gpu();
    for precision in [Precision::F32, Precision::F64] {
        assert!(
            precision == Precision::F32 || ctx.supports_f64(),
            "the f64 kernel needs SHADER_F64, which lavapipe has"
        );
        for integrator in Integrator::ALL {
            // Every force kind together (with the custom force and keyframes).
            let crowd = rigid_crowd::cross_check_crowd(64, 5, integrator, 1e-3).unwrap();
            assert_identical(&crowd, 20, precision, &format!("{integrator}, every kind"));
        }
        // Each kind alone, so each kernel holds one force case.
        let crowd = rigid_crowd::cross_check_crowd(64, 6, Integrator::Rk4, 1e-3).unwrap();
        let mut kinds: Vec<&str> = crowd.forces.iter().map(|f| f.type_name()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        assert!(kinds.len() >= 9, "cross_check_crowd has every force kind");
        for kind in kinds {
            let mut alone = crowd.clone();
            alone.forces.retain(|f| f.type_name() == kind);
            assert_identical(&alone, 20, precision, &format!("rk4, {kind} alone"));
        }
    }
}

#[test]
fn specialized_and_general_kernels_agree_bit_for_bit_through_contacts() {
    let spec = CrowdSpec {
        region: [[-1.0, -1.0, 0.3], [1.0, 1.0, 1.0]],
        size: [0.1, 0.3],
        ..CrowdSpec::new(64, 7)
    };
    let crowd = Crowd::new(spec.generate().unwrap(), 2e-3)
        .with_force(Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        }))
        .with_plane(Plane::ground(0.5, 0.4));
    for precision in [Precision::F32, Precision::F64] {
        assert_identical(&crowd, 400, precision, "bodies bouncing on a floor");
    }
}

/// The specialized kernel calls a short list of forces on every body one by one but loops
/// over a long one, and visits a kind of a body's own forces once or in a loop, depending on
/// whether some body has several of it: every variant must sum the same records in the same
/// order as the general kernel.
#[test]
fn specialized_and_general_kernels_agree_on_repeated_and_many_forces() {
    let gravity = |z: f64| ForceKind::Gravity {
        acceleration: DVec3::new(0.1, 0.0, z),
    };
    let drag = |linear: f64| ForceKind::LinearDrag {
        linear,
        angular: 0.5 * linear,
    };
    let bodies = CrowdSpec::new(48, 11).generate().unwrap();
    for globals in [3, 40] {
        let mut crowd = Crowd::new(bodies.clone(), 1e-3);
        // Kinds interleaved in scene order: the table orders them by kind.
        for g in 0..globals {
            let kind = if g % 2 == 0 {
                gravity(-9.81 / globals as f64 * (1.0 + g as f64))
            } else {
                drag(0.01 * g as f64)
            };
            crowd.forces.push(Force::on_all(kind));
        }
        for (i, body) in bodies.iter().enumerate() {
            let mass = body.mass.mass();
            // Up to three springs on a body (a loop), a thrust on every other (one call).
            for s in 0..i % 4 {
                crowd.forces.push(Force::on_body(
                    i,
                    ForceKind::Spring {
                        anchor: body.state.position + DVec3::new(s as f64, 1.0, 0.5),
                        attach: DVec3::new(0.01, 0.0, 0.02 * s as f64),
                        stiffness: 3.0 * mass,
                        damping: 0.2 * mass,
                    },
                ));
            }
            if i % 2 == 1 {
                crowd.forces.push(Force::on_body(
                    i,
                    ForceKind::Thrust {
                        force: DVec3::new(0.0, mass, 0.0),
                        torque: DVec3::new(0.0, 0.0, 0.01 * mass),
                    },
                ));
            }
        }
        for precision in [Precision::F32, Precision::F64] {
            let what = format!("{globals} forces on every body, repeated springs");
            assert_identical(&crowd, 30, precision, &what);
        }
    }
}

/// Crowds of one kind share one pipeline: the second simulation of a kind compiles nothing,
/// and a crowd of another kind gets its own kernel; none is built before a step runs it.
#[test]
fn simulations_of_one_kind_share_a_pipeline() {
    let ctx = rigid_crowd::gpu::GpuContext::new().unwrap();
    let bodies = CrowdSpec::new(8, 9).generate().unwrap();
    let falling = Crowd::new(bodies.clone(), 1e-3).with_force(Force::on_all(ForceKind::Gravity {
        acceleration: DVec3::NEG_Z,
    }));
    // The plain kernel is built at the first step that runs it.
    let stepped = |crowd: &Crowd| Simulation::gpu(crowd, &ctx).unwrap().step(1).unwrap();
    Simulation::gpu(&falling, &ctx).unwrap();
    assert_eq!(ctx.pipeline_count(), 0, "built at the first step");
    stepped(&falling);
    assert_eq!(ctx.pipeline_count(), 1);
    stepped(&falling);
    assert_eq!(ctx.pipeline_count(), 1, "the same kind is built once");
    let dragged = Crowd::new(bodies, 1e-3).with_force(Force::on_all(ForceKind::LinearDrag {
        linear: 0.1,
        angular: 0.1,
    }));
    stepped(&dragged);
    assert_eq!(ctx.pipeline_count(), 2, "another kind gets its own kernel");
}

/// Keyframed forces whose tables the fused dispatches cross: the specialized kernel searches
/// each table once per dispatch for a window of three keyframes and interpolates in it at
/// every stage, the general one searches at every stage. Holding before the first keyframe
/// and after the last, a one-keyframe table, a segment crossed inside a dispatch and
/// keyframes between stage times must all give the general kernel's values bit for bit.
#[test]
fn keyframe_windows_agree_bit_for_bit_with_the_search_at_every_stage() {
    let bodies = CrowdSpec::new(40, 13).generate().unwrap();
    for integrator in [Integrator::Rk4, Integrator::Euler] {
        let mut crowd = Crowd::new(bodies.clone(), 1e-3).with_integrator(integrator);
        // Segments of 19 to 30 steps: longer than two dispatches of 8 (plus one step).
        let tables = [
            crowd.add_keyframes(vec![[0.02, 1.0], [0.05, -2.0], [0.0713, 0.5], [0.1, 3.0]]),
            crowd.add_keyframes(vec![[0.04, 2.0]]),
            crowd.add_keyframes(vec![[-1.0, 0.0], [0.0335, -0.0], [0.06, 1.0]]),
            crowd.add_keyframes(vec![
                [0.0, 0.5],
                [0.0195, -1.5],
                [0.0425, 2.0],
                [0.062, 0.0],
            ]),
        ];
        crowd.forces.push(Force::on_all(ForceKind::Keyframed {
            force: DVec3::new(0.0, 0.0, -3.0),
            torque: DVec3::new(0.01, 0.0, 0.0),
            table: tables[3],
        }));
        for (i, body) in bodies.iter().enumerate() {
            let mass = body.mass.mass();
            crowd.forces.push(Force::on_body(
                i,
                ForceKind::Keyframed {
                    force: DVec3::new(mass, -0.5 * mass, 0.2 * mass),
                    torque: DVec3::new(0.0, 0.02 * mass, 0.01 * mass),
                    table: tables[i % 3],
                },
            ));
        }
        // 130 steps: sixteen fused dispatches and two single ones, past every keyframe.
        for precision in [Precision::F32, Precision::F64] {
            let what = format!("{integrator}, keyframes crossed inside dispatches");
            assert_identical(&crowd, 130, precision, &what);
        }
    }
}

/// Windows where the step clock's low count wraps inside a dispatch (2^24 steps in, with
/// 100 steps fused so that the tables still allow windows there): the dispatch's earliest
/// and latest times are taken on both sides of the wrap.
#[test]
fn keyframe_windows_agree_bit_for_bit_across_the_step_clocks_wrap() {
    let bodies = CrowdSpec::new(16, 17).generate().unwrap();
    let mut crowd = Crowd::new(bodies.clone(), 1e-3);
    crowd.start_step = (1 << 24) - 150;
    let table = crowd.add_keyframes(vec![[16777.1, 1.0], [16777.32, -1.0], [16777.55, 2.0]]);
    for i in 0..bodies.len() {
        crowd.forces.push(Force::on_body(
            i,
            ForceKind::Keyframed {
                force: DVec3::new(0.0, 1.0, 0.0),
                torque: DVec3::ZERO,
                table,
            },
        ));
    }
    for precision in [Precision::F32, Precision::F64] {
        let run = |specialized| {
            let options = GpuOptions {
                precision,
                specialized,
                steps_per_dispatch: 100,
                ..GpuOptions::default()
            };
            let mut sim = Simulation::gpu_with_options(&crowd, common::gpu(), options).unwrap();
            sim.step(300).unwrap();
            common::state_bits(&sim.bodies().unwrap())
        };
        let (windowed, searched) = (run(true), run(false));
        assert_eq!(windowed, searched, "{precision:?}");
        assert_ne!(windowed, common::state_bits(&crowd.bodies), "nothing moved");
    }
}
