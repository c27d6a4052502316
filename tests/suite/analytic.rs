//! Integrations checked against closed-form solutions and conservation laws, on both backends.

use crate::common;

use common::{BACKENDS, as_stored, assert_close, baraff_block, body, run};
use rigid_crowd::glam::{DQuat, DVec3};
use rigid_crowd::{Backend, Body, Crowd, Force, ForceKind, Integrator, MassProperties, Shape};

fn sphere(mass: f64, radius: f64) -> MassProperties {
    MassProperties::from_shape(mass, Shape::Sphere { radius }, "sphere").unwrap()
}

fn tumbling_brick() -> Body {
    let mass = MassProperties::from_shape(
        3.0,
        Shape::Box {
            size: DVec3::new(1.0, 2.0, 3.0),
        },
        "brick",
    )
    .unwrap();
    Body::from_kinematics(
        mass,
        DVec3::new(1.0, -2.0, 0.5),
        DQuat::from_rotation_x(0.4) * DQuat::from_rotation_z(-1.0),
        DVec3::new(0.3, 0.1, -0.2),
        DVec3::new(1.0, 2.0, 3.0),
    )
}

#[test]
fn uniform_gravity_is_integrated_exactly_by_rk4() {
    // x(t) = x0 + v0 t + g t^2 / 2 is a quadratic: RK4 reproduces it to round-off.
    let (x0, v0, g) = (
        DVec3::new(0.5, -1.0, 2.0),
        DVec3::new(1.0, 2.0, 3.0),
        DVec3::new(0.0, 0.0, -9.81),
    );
    let spin = DVec3::new(0.0, 0.0, 3.0);
    let start = body(sphere(2.0, 0.3), x0, v0, spin);
    let crowd = Crowd::new(vec![start], 0.01)
        .with_force(Force::on_all(ForceKind::Gravity { acceleration: g }));
    for (backend, tol) in BACKENDS {
        let end = run(&crowd, 100, backend)[0];
        let t = 1.0;
        assert_close(
            "position",
            end.state.position,
            x0 + v0 * t + g * (0.5 * t * t),
            tol,
        );
        assert_close("velocity", end.velocity(), v0 + g * t, tol);
        // Gravity exerts no torque (Baraff 5.2): L does not change at all.
        assert_eq!(
            end.state.angular_momentum,
            as_stored(backend, start.state.angular_momentum),
            "{backend:?}"
        );
    }
}

#[test]
fn baraff_5_3_equal_forces_below_the_block_cause_no_spin() {
    let f = 1.5;
    let block = Body::at_rest(baraff_block());
    let push = |point| {
        Force::on_all(ForceKind::PointForce {
            force: DVec3::new(0.0, 0.0, f),
            point,
        })
    };
    let crowd = Crowd::new(vec![block], 1e-3)
        .with_force(push(DVec3::new(-3.0, 0.0, -2.0)))
        .with_force(push(DVec3::new(3.0, 0.0, -2.0)));
    for (backend, tol) in BACKENDS {
        let end = run(&crowd, 2000, backend)[0];
        let t = 2.0;
        // The torques cancel exactly, so L stays zero and q the identity.
        assert_eq!(end.state.angular_momentum, DVec3::ZERO, "{backend:?}");
        assert_eq!(end.state.orientation, DQuat::IDENTITY, "{backend:?}");
        let acceleration = DVec3::new(0.0, 0.0, 2.0 * f / 24.0);
        assert_close(
            "position",
            end.state.position,
            acceleration * (0.5 * t * t),
            tol,
        );
    }
}

#[test]
fn baraff_5_4_opposite_forces_give_torque_0_6f_0_and_no_drift() {
    let f = 2.0;
    let mass = baraff_block();
    let forces = [
        ForceKind::PointForce {
            force: DVec3::new(0.0, 0.0, f),
            point: DVec3::new(-3.0, 0.0, -2.0),
        },
        ForceKind::PointForce {
            force: DVec3::new(0.0, 0.0, -f),
            point: DVec3::new(3.0, 0.0, 2.0),
        },
    ];
    // At rest in the identity orientation the net force is zero and the net torque (0, 6f, 0)
    // (Baraff 5-6; checked on the reference's derivative in core/src/body_steps/derivative.rs).
    // The points turn with the block, so it swings about y like a pendulum whose energy
    // integral is 1/2 Iyy w^2 = 2f (3 sin(theta) - 2 cos(theta) + 2).
    let mut crowd = Crowd::new(vec![Body::at_rest(mass)], 1e-3);
    crowd.forces = forces.iter().map(|&kind| Force::on_all(kind)).collect();
    for (backend, tol) in BACKENDS {
        let end = run(&crowd, 3000, backend)[0];
        assert_eq!(
            end.state.linear_momentum,
            DVec3::ZERO,
            "{backend:?}: no net force"
        );
        assert_eq!(
            end.state.position,
            DVec3::ZERO,
            "{backend:?}: centre of mass stays put"
        );
        let q = end.state.orientation;
        assert!(
            q.x.abs() < tol && q.z.abs() < tol,
            "{backend:?}: rotation stays about y: {q:?}"
        );
        let l = end.state.angular_momentum;
        assert!(
            l.x.abs() < tol && l.z.abs() < tol,
            "{backend:?}: L stays along y: {l:?}"
        );
        let theta = 2.0 * q.y.atan2(q.w);
        assert!(theta > 0.1, "{backend:?}: the block turned ({theta})");
        let iyy = mass.inertia_body().y_axis.y;
        let kinetic = 0.5 * l.y * l.y / iyy;
        let work = 2.0 * f * (3.0 * theta.sin() - 2.0 * theta.cos() + 2.0);
        assert!(
            (kinetic - work).abs() <= 10.0 * tol * work,
            "{backend:?}: kinetic {kinetic} vs work {work}"
        );
    }
}

#[test]
fn linear_drag_decays_exponentially() {
    let (mass, radius) = (2.0, 0.5);
    let (b, c) = (0.6, 0.1);
    let (x0, v0, w0) = (
        DVec3::new(1.0, 2.0, 3.0),
        DVec3::new(3.0, -1.0, 2.0),
        DVec3::new(0.0, 1.0, 5.0),
    );
    let props = sphere(mass, radius);
    let inertia = 0.4 * mass * radius * radius;
    let crowd = Crowd::new(vec![body(props, x0, v0, w0)], 1e-3).with_force(Force::on_all(
        ForceKind::LinearDrag {
            linear: b,
            angular: c,
        },
    ));
    for (backend, tol) in BACKENDS {
        let end = run(&crowd, 2000, backend)[0];
        let t = 2.0;
        let decay = (-b / mass * t).exp();
        assert_close("velocity", end.velocity(), v0 * decay, tol);
        assert_close(
            "position",
            end.state.position,
            x0 + v0 * (mass / b) * (1.0 - decay),
            tol,
        );
        assert_close(
            "angular velocity",
            end.angular_velocity(),
            w0 * (-c / inertia * t).exp(),
            tol,
        );
    }
}

/// The splittings kick a velocity-dependent force explicitly at each end of the step, which
/// is first order in that dependence (docs/integrators.md, "Forces"): under linear drag
/// alone they converge at order 1 against the exponential decay, where `rk4` and `lie_rk4`
/// keep order 4. Measured on the reference, whose integrator every backend shares.
#[test]
fn under_drag_the_splittings_are_first_order_and_rk4_fourth() {
    let (mass, radius, b, c, t): (f64, f64, f64, f64, f64) = (2.0, 0.5, 0.6, 0.1, 2.0);
    let (x0, v0, w0) = (
        DVec3::new(1.0, 2.0, 3.0),
        DVec3::new(3.0, -1.0, 2.0),
        DVec3::new(0.0, 1.0, 5.0),
    );
    let inertia = 0.4 * mass * radius * radius;
    let decay = (-b / mass * t).exp();
    let exact = [
        v0 * decay,
        x0 + v0 * (mass / b) * (1.0 - decay),
        w0 * (-c / inertia * t).exp(),
    ];
    let error = |integrator: Integrator, steps: u64| {
        let start = body(sphere(mass, radius), x0, v0, w0);
        let drag = ForceKind::LinearDrag {
            linear: b,
            angular: c,
        };
        let crowd = Crowd::new(vec![start], t / steps as f64)
            .with_integrator(integrator)
            .with_force(Force::on_all(drag));
        let end = run(&crowd, steps, Backend::Reference)[0];
        let got = [end.velocity(), end.state.position, end.angular_velocity()];
        got.iter()
            .zip(&exact)
            .map(|(got, exact)| (*got - *exact).length() / exact.length())
            .fold(0.0, common::largest)
    };
    for (integrator, order) in [
        (Integrator::LiePoisson, 1.0),
        (Integrator::LiePoisson4, 1.0),
        (Integrator::Rk4, 4.0),
        (Integrator::LieRk4, 4.0),
    ] {
        // dt = 0.04, 0.02, 0.01: h times the decay rates (0.3 and 0.5 per s) is at most 0.02.
        let e = [50, 100, 200].map(|steps| error(integrator, steps));
        let orders = [(e[0] / e[1]).log2(), (e[1] / e[2]).log2()];
        println!("{integrator}: errors {e:?}, orders {orders:?}");
        for measured in orders {
            assert!(
                (measured - order).abs() < 0.1 * order,
                "{integrator}: orders {orders:?}, expected {order}"
            );
        }
    }
}

#[test]
fn a_spring_at_the_centre_is_a_damped_harmonic_oscillator() {
    let (mass, k) = (2.0, 8.0);
    let (x0, v0) = (DVec3::new(1.0, 0.0, -0.5), DVec3::new(0.0, 0.5, 0.0));
    for damping in [0.0, 0.4] {
        let spring = ForceKind::Spring {
            anchor: DVec3::ZERO,
            attach: DVec3::ZERO,
            stiffness: k,
            damping,
        };
        let crowd = Crowd::new(vec![body(sphere(mass, 0.2), x0, v0, DVec3::ZERO)], 1e-3)
            .with_force(Force::on_body(0, spring));
        let gamma = damping / (2.0 * mass);
        let wd = (k / mass - gamma * gamma).sqrt();
        for (backend, tol) in BACKENDS {
            let end = run(&crowd, 5000, backend)[0];
            let t = 5.0;
            let envelope = (-gamma * t).exp();
            let expected =
                (x0 * (wd * t).cos() + (v0 + x0 * gamma) * ((wd * t).sin() / wd)) * envelope;
            assert_close(
                &format!("position (damping {damping})"),
                end.state.position,
                expected,
                tol,
            );
        }
    }
}

#[test]
fn torque_free_motion_keeps_l_exactly_and_energy_within_bound() {
    let start = tumbling_brick();
    let crowd = Crowd::new(vec![start], 1e-3);
    // Stated bounds on the relative energy drift over 10 s (10,000 RK4 steps).
    for (backend, energy_bound) in [
        (Backend::Reference, 1e-11),
        (Backend::FastCpu, 1e-5),
        (Backend::Gpu, 1e-5),
    ] {
        let end = run(&crowd, 10_000, backend)[0];
        let l0 = as_stored(backend, start.state.angular_momentum);
        assert_eq!(
            end.state.angular_momentum, l0,
            "{backend:?}: dL/dt = 0 exactly, so L never moves"
        );
        let drift = (end.kinetic_energy() - start.kinetic_energy()).abs() / start.kinetic_energy();
        println!("{backend:?}: relative energy drift over 10 s: {drift:.3e}");
        assert!(
            drift < energy_bound,
            "{backend:?}: energy drift {drift:.3e} >= {energy_bound:.0e}"
        );
        assert!(
            (end.state.orientation.length() - 1.0).abs() < 1e-6,
            "{backend:?}: q stays unit"
        );
    }
}

/// Orientation error after 2 s of torque-free tumbling with step `h`, against a run with a
/// step 16 times smaller (whose own error is negligible at these orders).
fn orientation_errors(integrator: Integrator, steps: &[u64]) -> Vec<f64> {
    let start = tumbling_brick();
    let t = 2.0;
    let finest = *steps.last().unwrap() * 16;
    let reference = run(
        &Crowd::new(vec![start], t / finest as f64).with_integrator(integrator),
        finest,
        Backend::Reference,
    )[0];
    steps
        .iter()
        .map(|&n| {
            let crowd = Crowd::new(vec![start], t / n as f64).with_integrator(integrator);
            let end = run(&crowd, n, Backend::Reference)[0];
            (end.state.orientation - reference.state.orientation).length()
        })
        .collect()
}

/// Each halving of `dt` must divide the error by a factor within `expected`.
fn assert_error_ratios(scheme: &str, errors: &[f64], expected: std::ops::Range<f64>) {
    for pair in errors.windows(2) {
        let ratio = pair[0] / pair[1];
        assert!(
            expected.contains(&ratio),
            "{scheme} error ratio {ratio:.2} (errors {errors:?})"
        );
    }
}

#[test]
fn rk4_error_shrinks_about_16x_when_dt_halves() {
    let e = orientation_errors(Integrator::Rk4, &[50, 100, 200]);
    println!("RK4 orientation errors for dt = 0.04, 0.02, 0.01: {e:?}");
    assert_error_ratios("RK4", &e, 14.0..18.5);
}

#[test]
fn euler_error_shrinks_about_2x_when_dt_halves() {
    let e = orientation_errors(Integrator::Euler, &[2000, 4000, 8000]);
    println!("Euler orientation errors for dt = 1e-3, 5e-4, 2.5e-4: {e:?}");
    assert_error_ratios("Euler", &e, 1.8..2.2);
}
