//! The attractor, thrust, quadratic drag, time-varying, external and custom forces against closed-form
//! solutions and conservation laws, on every backend.

use crate::common;

use std::f64::consts::TAU;

use common::{BACKENDS, assert_close, body, gpu, run};
use rigid_crowd::glam::{DQuat, DVec3};
use rigid_crowd::{
    Backend, Body, Crowd, CustomForce, CustomForceInput, Error, ExternalLoad, Force, ForceInput,
    ForceKind, ForceLaw, Load, MassProperties, Real, Shape, Simulation, Vec3,
};

fn sphere(mass: f64) -> MassProperties {
    MassProperties::from_shape(mass, Shape::Sphere { radius: 0.2 }, "sphere").unwrap()
}

/// A brick whose body axes are its principal axes: moments 13/4, 10/4 and 5/4 (mass 3).
fn brick() -> MassProperties {
    MassProperties::from_shape(
        3.0,
        Shape::Box {
            size: DVec3::new(1.0, 2.0, 3.0),
        },
        "brick",
    )
    .unwrap()
}

fn simulation(crowd: &Crowd, backend: Backend) -> Simulation {
    match backend {
        Backend::Gpu => Simulation::gpu(crowd, gpu()),
        other => Simulation::new(crowd, other),
    }
    .expect("valid crowd")
}

/// Softened circular orbit: `v^2 / r = mu r / (r^2 + eps^2)^(3/2)`.
fn circular_speed(mu: f64, r: f64, eps: f64) -> f64 {
    mu.sqrt() * r / (r * r + eps * eps).powf(0.75)
}

fn orbit_crowd(speed_factor: f64, steps_per_orbit: u64) -> (Crowd, f64, f64) {
    let (mu, r, eps) = (2.0, 1.5, 0.3);
    let speed = circular_speed(mu, r, eps);
    let period = TAU * r / speed;
    let centre = DVec3::new(0.5, -1.0, 2.0);
    let start = body(
        sphere(3.0),
        centre + DVec3::new(r, 0.0, 0.0),
        DVec3::new(0.0, speed * speed_factor, 0.0),
        DVec3::ZERO,
    );
    let crowd = Crowd::new(vec![start], period / steps_per_orbit as f64).with_force(Force::on_all(
        ForceKind::Attractor {
            centre,
            strength: mu,
            softening: eps,
        },
    ));
    (crowd, mu, eps)
}

/// Relative error the f32 backends may accumulate over `steps` steps in a problem whose
/// error is not damped (an orbit's phase, a spinning frame): rounding of about one f32
/// epsilon per step, accumulating as a random walk (`sqrt(steps)`), times 8 for the several
/// operations a step performs on each component. The reference keeps its f64 bound.
fn grown(backend: Backend, tol: f64, steps: u64) -> f64 {
    match backend {
        Backend::Reference => tol,
        _ => tol.max(8.0 * (steps as f64).sqrt() * f32::EPSILON as f64),
    }
}

#[test]
fn a_softened_circular_orbit_closes_after_one_period() {
    let steps = 2000;
    let (crowd, _, _) = orbit_crowd(1.0, steps);
    let start = crowd.bodies[0];
    for (backend, tol) in BACKENDS {
        let mut sim = simulation(&crowd, backend);
        // RK4's phase error over one orbit of 2000 steps is about (2 pi / 2000)^4 ~ 1e-10;
        // measured 1.7e-11 (f64) and 1.0e-5 (f32, within 4e-5 = grown(2000)).
        let tol = grown(backend, tol.max(1e-9), steps);
        sim.step(steps / 2).unwrap();
        let half = sim.bodies().unwrap()[0];
        let opposite = 2.0 * attractor_centre(&crowd) - start.state.position;
        assert_close("half an orbit", half.state.position, opposite, tol);
        sim.step(steps / 2).unwrap();
        let end = sim.bodies().unwrap()[0];
        println!(
            "{backend:?}: orbit closes to {:.2e}",
            (end.state.position - start.state.position).length()
        );
        assert_close("one orbit", end.state.position, start.state.position, tol);
        assert_close("velocity", end.velocity(), start.velocity(), tol);
    }
}

fn attractor_centre(crowd: &Crowd) -> DVec3 {
    match crowd.forces[0].kind {
        ForceKind::Attractor { centre, .. } => centre,
        _ => panic!("not an attractor crowd"),
    }
}

#[test]
fn an_eccentric_softened_orbit_conserves_energy() {
    // 0.8 of the circular speed: an ellipse-like rosette through the softened core's edge.
    let steps = 3000;
    let (crowd, mu, eps) = orbit_crowd(0.8, 1000);
    let centre = attractor_centre(&crowd);
    let energy = |b: &Body| {
        let r = b.state.position - centre;
        b.kinetic_energy() - b.mass.mass() * mu / (r.length_squared() + eps * eps).sqrt()
    };
    let e0 = energy(&crowd.bodies[0]);
    for (backend, tol) in BACKENDS {
        let end = run(&crowd, steps, backend)[0];
        let drift = ((energy(&end) - e0) / e0).abs();
        println!("{backend:?}: relative energy drift {drift:.2e}");
        // RK4 with 1000 steps per orbit: energy error of order (2 pi h / T)^4 ~ 1.6e-9 per
        // orbit at most; measured 4.3e-10 (f64) after 3 orbits, 3.4e-6 (f32, < grown(3000)).
        assert!(
            drift <= grown(backend, tol.max(1e-9), steps),
            "{backend:?}: {drift:e}"
        );
        // The force is central: angular momentum about the centre is conserved exactly in
        // the flow, to the integrator's accuracy here.
        let l0 =
            (crowd.bodies[0].state.position - centre).cross(crowd.bodies[0].state.linear_momentum);
        let l1 = (end.state.position - centre).cross(end.state.linear_momentum);
        assert_close(
            "orbital angular momentum",
            l1,
            l0,
            grown(backend, tol.max(1e-9), steps),
        );
    }
}

/// Quadratic drag on a sphere: along its line of flight `M dv/dt = -c v^2`, so
/// `v(t) = v0 / (1 + c v0 t / M)` and `x(t) = (M / c) ln(1 + c v0 t / M)`; about its spin axis
/// `I dw/dt = -k w^2`, so `w(t) = w0 / (1 + k w0 t / I)`. Directions stay fixed (a sphere's
/// inertia is isotropic), so every component follows the same closed form.
#[test]
fn quadratic_drag_slows_a_sphere_on_its_closed_form() {
    let (mass, c, k) = (2.0, 0.05, 0.002);
    let inertia = 0.4 * mass * 0.2 * 0.2;
    let (v0, w0) = (DVec3::new(3.0, -4.0, 12.0), DVec3::new(1.0, 2.0, -2.0));
    let start = Body::from_kinematics(sphere(mass), DVec3::ZERO, DQuat::IDENTITY, v0, w0);
    let crowd = Crowd::new(vec![start], 1e-3).with_force(Force::on_all(ForceKind::QuadraticDrag {
        linear: c,
        angular: k,
    }));
    let t = 1.0;
    let slowing = 1.0 + c * v0.length() * t / mass;
    let spin_slowing = 1.0 + k * w0.length() * t / inertia;
    for (backend, tol) in BACKENDS {
        let end = run(&crowd, 1000, backend)[0];
        let direction = v0.normalize();
        assert_close(
            "position",
            end.state.position,
            direction * (mass / c * slowing.ln()),
            tol,
        );
        assert_close("velocity", end.velocity(), v0 / slowing, tol);
        assert_close(
            "angular velocity",
            end.angular_velocity(),
            w0 / spin_slowing,
            tol,
        );
    }
}

#[test]
fn body_frame_thrust_from_rest_moves_along_the_rotated_axis() {
    // No spin: R stays R0, so x = R0 f t^2 / 2M, a quadratic that RK4 integrates exactly.
    let q0 = DQuat::from_rotation_z(0.7) * DQuat::from_rotation_x(-0.4);
    let start = Body::from_kinematics(brick(), DVec3::ZERO, q0, DVec3::ZERO, DVec3::ZERO);
    let f_body = DVec3::new(6.0, 0.0, 0.0);
    let crowd = Crowd::new(vec![start], 1e-3).with_force(Force::on_all(ForceKind::Thrust {
        force: f_body,
        torque: DVec3::ZERO,
    }));
    for (backend, tol) in BACKENDS {
        let end = run(&crowd, 1000, backend)[0];
        let t = 1.0;
        let along = q0 * f_body / 3.0;
        assert_close("position", end.state.position, along * (0.5 * t * t), tol);
        assert_close("velocity", end.velocity(), along * t, tol);
    }
}

#[test]
fn body_frame_torque_about_a_principal_axis_spins_up_uniformly() {
    // tau_body along body z (principal, I = 5/4): omega = tau t / I, angle = tau t^2 / 2I,
    // about the world axis R0 z that stays fixed; q(t) = q0 R_z(angle).
    let q0 = DQuat::from_rotation_y(0.5);
    let inertia = brick().inertia_body().z_axis.z;
    let tau = 0.75;
    let start = Body::from_kinematics(brick(), DVec3::ZERO, q0, DVec3::ZERO, DVec3::ZERO);
    let crowd = Crowd::new(vec![start], 1e-3).with_force(Force::on_all(ForceKind::Thrust {
        force: DVec3::ZERO,
        torque: DVec3::new(0.0, 0.0, tau),
    }));
    for (backend, tol) in BACKENDS {
        let end = run(&crowd, 2000, backend)[0];
        let t = 2.0;
        let axis = q0 * DVec3::Z;
        assert_close(
            "angular velocity",
            end.angular_velocity(),
            axis * (tau * t / inertia),
            tol,
        );
        let expected = q0 * DQuat::from_rotation_z(tau * t * t / (2.0 * inertia));
        let q = end.state.orientation;
        // q and -q are the same rotation.
        let error = (q - expected).length().min((q + expected).length());
        assert!(
            error <= grown(backend, tol, 2000),
            "{backend:?}: orientation off by {error:e}"
        );
    }
}

#[test]
fn thrust_on_a_spinning_body_turns_with_it() {
    // Spin omega about world z (the brick's smallest, stable principal axis), thrust f along
    // body x: F(t) = f (cos wt, sin wt, 0), so v = f/(M w) (sin wt, 1 - cos wt, 0) and
    // x = f/(M w) ((1 - cos wt)/w, t - sin(wt)/w, 0).
    let (omega, f, mass) = (2.0, 1.5, 3.0);
    let start = body(
        brick(),
        DVec3::ZERO,
        DVec3::ZERO,
        DVec3::new(0.0, 0.0, omega),
    );
    let crowd = Crowd::new(vec![start], 1e-3).with_force(Force::on_all(ForceKind::Thrust {
        force: DVec3::new(f, 0.0, 0.0),
        torque: DVec3::ZERO,
    }));
    for (backend, tol) in BACKENDS {
        let end = run(&crowd, 2000, backend)[0];
        let t: f64 = 2.0;
        let wt = omega * t;
        let scale = f / (mass * omega);
        let v = DVec3::new(wt.sin(), 1.0 - wt.cos(), 0.0) * scale;
        let x = DVec3::new((1.0 - wt.cos()) / omega, t - wt.sin() / omega, 0.0) * scale;
        // The rotation angle in f32 carries ~1e-7 rad per step; the thrust direction with it.
        let tol = grown(backend, tol, 2000);
        assert_close("velocity", end.velocity(), v, tol);
        assert_close("position", end.state.position, x, tol);
    }
}

/// `offset t + A (cos(phase) - cos(w t + phase)) / w`: the integral of the sinusoid.
fn sinusoid_integral(offset: f64, amplitude: f64, frequency: f64, phase: f64, t: f64) -> f64 {
    let w = TAU * frequency;
    offset * t + amplitude * (phase.cos() - (w * t + phase).cos()) / w
}

/// The double integral: `offset t^2/2 + A (t cos(phase) / w - (sin(w t + phase) - sin(phase)) / w^2)`.
fn sinusoid_double_integral(
    offset: f64,
    amplitude: f64,
    frequency: f64,
    phase: f64,
    t: f64,
) -> f64 {
    let w = TAU * frequency;
    offset * t * t / 2.0
        + amplitude * (t * phase.cos() / w - ((w * t + phase).sin() - phase.sin()) / (w * w))
}

#[test]
fn a_sinusoidal_force_from_rest_follows_its_closed_form() {
    let (offset, amplitude, frequency, phase) = (0.5, 2.0, 1.5, 0.3);
    let (force, torque, mass) = (DVec3::new(3.0, -1.0, 2.0), DVec3::new(0.0, 0.4, -0.2), 2.0);
    let start = Body::at_rest(sphere(mass));
    let crowd = Crowd::new(vec![start], 1e-3).with_force(Force::on_all(ForceKind::Sinusoidal {
        force,
        torque,
        offset,
        amplitude,
        frequency,
        phase,
    }));
    for (backend, tol) in BACKENDS {
        let end = run(&crowd, 2000, backend)[0];
        let t = 2.0;
        let s1 = sinusoid_integral(offset, amplitude, frequency, phase, t);
        let s2 = sinusoid_double_integral(offset, amplitude, frequency, phase, t);
        // RK4 on a force that depends on t alone is Simpson's rule: error ~ h^4 w^5 ~ 1e-9.
        let tol = tol.max(1e-8);
        assert_close("velocity", end.velocity(), force * (s1 / mass), tol);
        assert_close("position", end.state.position, force * (s2 / mass), tol);
        assert_close(
            "angular momentum",
            end.state.angular_momentum,
            torque * s1,
            tol,
        );
    }
}

/// `int_0^T s` and `int_0^T (T - tau) s(tau) dtau` for a piecewise-linear `s` held at both
/// ends, segment by segment: on `[a, b]` with `s = c + k (tau - a)`, `L = b - a`, `D = T - a`,
/// the second is `c D L - c L^2/2 + k D L^2/2 - k L^3/3`.
fn keyframe_integrals(keys: &[[f64; 2]], end: f64) -> (f64, f64) {
    let mut knots = vec![[0.0, keys[0][1]]];
    knots.extend(keys.iter().copied().filter(|k| k[0] > 0.0 && k[0] < end));
    knots.push([end, rigid_value(keys, end)]);
    let (mut once, mut twice) = (0.0, 0.0);
    for pair in knots.windows(2) {
        let ([a, c], [b, value_b]) = (pair[0], pair[1]);
        let (l, d) = (b - a, end - a);
        let k = (value_b - c) / l;
        once += (c + value_b) / 2.0 * l;
        twice += c * d * l - c * l * l / 2.0 + k * d * l * l / 2.0 - k * l * l * l / 3.0;
    }
    (once, twice)
}

/// The profile's value, straight from its definition.
fn rigid_value(keys: &[[f64; 2]], t: f64) -> f64 {
    if t <= keys[0][0] {
        return keys[0][1];
    }
    for pair in keys.windows(2) {
        if t < pair[1][0] {
            let u = (t - pair[0][0]) / (pair[1][0] - pair[0][0]);
            return pair[0][1] + u * (pair[1][1] - pair[0][1]);
        }
    }
    keys[keys.len() - 1][1]
}

#[test]
fn a_keyframe_ramp_follows_its_piecewise_closed_form() {
    let keys = vec![[0.2, 0.0], [0.6, 1.0], [1.0, 1.0], [1.4, -0.5]];
    let (force, torque, mass) = (DVec3::new(0.0, 2.0, -1.0), DVec3::new(0.3, 0.0, 0.1), 2.0);
    let mut crowd = Crowd::new(vec![Body::at_rest(sphere(mass))], 1e-3);
    let table = crowd.add_keyframes(keys.clone());
    crowd.forces.push(Force::on_all(ForceKind::Keyframed {
        force,
        torque,
        table,
    }));
    for (backend, tol) in BACKENDS {
        let mut sim = simulation(&crowd, backend);
        // Before, inside and after the ramp: each piece is a polynomial RK4 integrates
        // exactly, with the kinks on step boundaries.
        for (steps, t) in [(100, 0.1), (300, 0.4), (800, 1.2), (800, 2.0)] {
            sim.step(steps).unwrap();
            let end = sim.bodies().unwrap()[0];
            let (once, twice) = keyframe_integrals(&keys, t);
            assert_close("velocity", end.velocity(), force * (once / mass), tol);
            assert_close("position", end.state.position, force * (twice / mass), tol);
            assert_close(
                "angular momentum",
                end.state.angular_momentum,
                torque * once,
                tol,
            );
        }
    }
}

#[test]
fn a_run_resumed_from_its_read_back_state_continues_the_clock_exactly() {
    let mut crowd = Crowd::new(vec![Body::at_rest(sphere(2.0)); 3], 1e-3).with_force(
        Force::on_all(ForceKind::Sinusoidal {
            force: DVec3::new(1.0, 2.0, 0.0),
            torque: DVec3::new(0.0, 0.0, 1.0),
            offset: 0.0,
            amplitude: 1.0,
            frequency: 3.0,
            phase: 0.0,
        }),
    );
    let table = crowd.add_keyframes(vec![[0.1, 1.0], [0.5, -1.0]]);
    crowd.forces.push(Force::on_body(
        1,
        ForceKind::Keyframed {
            force: DVec3::X,
            torque: DVec3::Y,
            table,
        },
    ));
    for (backend, _) in BACKENDS {
        // Multiples of the GPU's 8 fused steps, so both runs take the same dispatches.
        let whole = run(&crowd, 704, backend);
        let mut resumed = crowd.clone();
        resumed.bodies = run(&crowd, 304, backend);
        resumed.start_step = 304;
        let mut sim = simulation(&resumed, backend);
        assert_eq!(sim.time(), 304.0 * 1e-3);
        sim.step(400).unwrap();
        // Same operations on the same numbers: bit for bit.
        assert_eq!(sim.bodies().unwrap(), whole, "{backend:?}");
    }
}

#[test]
fn external_loads_changed_between_steps_follow_the_closed_form() {
    // Piecewise-constant loads: each body's momentum is the sum of load times duration, its
    // position the matching sum of quadratics, which RK4 integrates exactly.
    let masses = [1.0, 2.0, 0.5, 4.0, 1.5, 3.0, 2.5, 0.8, 1.2, 5.0, 0.7];
    let bodies: Vec<Body> = masses.iter().map(|&m| Body::at_rest(sphere(m))).collect();
    let n = bodies.len();
    let crowd = Crowd::new(bodies, 1e-3);
    let load = |phase: usize, i: usize| ExternalLoad {
        force: DVec3::new(i as f64 + 1.0, -(phase as f64), 0.5 * i as f64),
        torque: DVec3::new(0.1 * phase as f64, 0.0, -0.2 * i as f64),
    };
    let schedule = [(0, 300u64), (1, 200), (2, 500)];
    for (backend, tol) in BACKENDS {
        let mut sim = simulation(&crowd, backend);
        for &(phase, steps) in &schedule {
            let loads: Vec<ExternalLoad> = (0..n).map(|i| load(phase, i)).collect();
            sim.set_external_loads(&loads).unwrap();
            sim.step(steps).unwrap();
        }
        let end = sim.bodies().unwrap();
        for (i, body) in end.iter().enumerate() {
            let (mut p, mut x, mut l, mut elapsed) = (DVec3::ZERO, DVec3::ZERO, DVec3::ZERO, 0.0);
            for &(phase, steps) in &schedule {
                let (f, duration) = (load(phase, i), steps as f64 * 1e-3);
                x += p / masses[i] * duration + f.force / masses[i] * (duration * duration / 2.0);
                p += f.force * duration;
                l += f.torque * duration;
                elapsed += duration;
            }
            assert!((elapsed - 1.0_f64).abs() < 1e-12);
            let what = |q: &str| format!("{backend:?} body {i} {q}");
            assert_close(&what("momentum"), body.state.linear_momentum, p, tol);
            assert_close(&what("position"), body.state.position, x, tol);
            assert_close(
                &what("angular momentum"),
                body.state.angular_momentum,
                l,
                tol,
            );
        }
    }
}

#[test]
fn external_loads_of_the_wrong_length_or_not_finite_are_refused() {
    let crowd = Crowd::new(vec![Body::at_rest(sphere(1.0)); 3], 1e-3);
    for (backend, _) in BACKENDS {
        let mut sim = simulation(&crowd, backend);
        let e = sim
            .set_external_loads(&[ExternalLoad::default(); 2])
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "external_loads: needs one load per body: 3 bodies, got 2 loads"
        );
        let mut loads = [ExternalLoad::default(); 3];
        loads[2].torque.y = f64::NAN;
        let e = sim.set_external_loads(&loads).unwrap_err();
        assert_eq!(
            e.to_string(),
            "external_loads[2].torque[1]: must be finite (got NaN)"
        );
        loads[2].torque.y = 0.0;
        loads[1].force.x = 1e39;
        let e = sim.set_external_loads(&loads).unwrap_err().to_string();
        assert!(e.starts_with("external_loads[1].force[0]: "), "{e}");
    }
}

/// A harmonic well `F = -4 M x` (angular frequency 2) and a torque that grows with time and
/// differs per body: `tau_z = 0.1 (body + 1) t`. Written against `real`, so it runs on
/// `gpu` and `gpu-f64` alike.
const HARMONIC_WGSL: &str = "\
fn custom_force(position: vec3<real>, orientation: vec4<real>, velocity: vec3<real>,
                angular_velocity: vec3<real>, mass: real, time: real, body: u32) -> Load {
    return Load(real(-4.0) * mass * position,
                vec3<real>(real(0.0), real(0.0), real(0.1) * real(body + 1u) * time));
}
";

fn harmonic(input: &CustomForceInput) -> ExternalLoad {
    ExternalLoad {
        force: -4.0 * input.mass * input.position,
        torque: DVec3::new(0.0, 0.0, 0.1 * (input.body + 1) as f64 * input.time),
    }
}

/// The same well written once, as a law over the number type: every backend runs it, the
/// GPU kernels the WGSL traced from it.
struct HarmonicWell {
    omega_squared: f64,
    torque_rate: f64,
}

impl ForceLaw for HarmonicWell {
    fn load<R: Real>(&self, body: &ForceInput<R>) -> Load<R> {
        let zero = R::constant(0.0);
        let spin_up = R::constant(self.torque_rate) * (body.body + R::constant(1.0)) * body.time;
        Load {
            force: body.position * (-(R::constant(self.omega_squared) * body.mass)),
            torque: Vec3::new(zero, zero, spin_up),
        }
    }
}

#[test]
fn a_custom_harmonic_well_follows_its_closed_form_on_every_backend() {
    let law = || {
        CustomForce::from_law(HarmonicWell {
            omega_squared: 4.0,
            torque_rate: 0.1,
        })
    };
    for custom in [CustomForce::new(HARMONIC_WGSL, harmonic), law()] {
        harmonic_well_on_every_backend(custom);
    }
}

fn harmonic_well_on_every_backend(custom: CustomForce) {
    let x0 = [DVec3::new(1.0, 0.0, 0.5), DVec3::new(-0.3, 2.0, 0.0)];
    let v0 = [DVec3::new(0.0, 1.0, 0.0), DVec3::new(0.4, 0.0, -1.0)];
    let bodies = (0..2)
        .map(|i| body(brick(), x0[i], v0[i], DVec3::ZERO))
        .collect();
    let crowd = Crowd::new(bodies, 1e-3)
        .with_custom_force(custom)
        .with_force(Force::on_all(ForceKind::Custom));
    let t: f64 = 1.5;
    for (backend, tol) in BACKENDS {
        let end = run(&crowd, 1500, backend);
        for (i, b) in end.iter().enumerate() {
            // x = x0 cos 2t + v0/2 sin 2t; RK4's error at h w = 2e-3 is ~1e-13.
            let x = x0[i] * (2.0 * t).cos() + v0[i] * (0.5 * (2.0 * t).sin());
            let v = -x0[i] * (2.0 * (2.0 * t).sin()) + v0[i] * (2.0 * t).cos();
            assert_close(
                &format!("{backend:?} body {i} position"),
                b.state.position,
                x,
                tol,
            );
            assert_close(
                &format!("{backend:?} body {i} velocity"),
                b.velocity(),
                v,
                tol,
            );
            // L_z = 0.05 (i + 1) t^2, and the torque keeps it along z.
            let l = DVec3::new(0.0, 0.0, 0.05 * (i + 1) as f64 * t * t);
            assert_close(
                &format!("{backend:?} body {i} L"),
                b.state.angular_momentum,
                l,
                tol,
            );
        }
    }
}

#[test]
fn a_custom_force_with_a_syntax_error_reports_the_compilers_message() {
    let broken = "fn custom_force(position: vec3<f32>, orientation: vec4<f32>, velocity: vec3<f32>,
                angular_velocity: vec3<f32>, mass: f32, time: f32, body: u32) -> Load {
    return Load(vec3<f32>(0.0) vec3<f32>(0.0));
}";
    let crowd = Crowd::new(vec![Body::at_rest(sphere(1.0))], 1e-3)
        .with_custom_force(CustomForce::new(broken, harmonic))
        .with_force(Force::on_all(ForceKind::Custom));
    let e = Simulation::gpu(&crowd, gpu()).unwrap_err();
    assert!(matches!(e, Error::Invalid { .. }), "{e:?}");
    let message = e.to_string();
    println!("{message}");
    assert!(
        message.starts_with("custom_force: the custom force's WGSL does not compile: line 3,"),
        "{message}"
    );
    assert!(
        message.contains("expected"),
        "no compiler message: {message}"
    );
    assert!(!message.contains('\n'));

    // A function under another name: the kernel's call cannot find `custom_force`.
    let renamed = HARMONIC_WGSL.replace("fn custom_force", "fn my_force");
    let crowd = crowd.with_custom_force(CustomForce::new(renamed, harmonic));
    let message = Simulation::gpu(&crowd, gpu()).unwrap_err().to_string();
    println!("{message}");
    assert!(message.contains("custom_force"), "{message}");
    assert!(message.contains("kernel line"), "{message}");
}

#[test]
fn a_scene_custom_force_runs_on_the_gpu_and_is_refused_on_the_cpu_backends() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("well.wgsl"), HARMONIC_WGSL).unwrap();
    let scene = r#"{
        "dt": 0.001, "steps": 100,
        "bodies": [{"mass": 3, "shape": {"box": [1, 2, 3]}, "position": [1, 0, 0.5]}],
        "forces": [{"type": "custom", "wgsl_file": "well.wgsl"}]
    }"#;
    let path = dir.path().join("scene.json");
    std::fs::write(&path, scene).unwrap();
    let scene = rigid_crowd::Scene::load(&path).unwrap();
    for backend in [Backend::Reference, Backend::FastCpu] {
        let e = Simulation::new(&scene.crowd, backend)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "forces[0].wgsl_file: a custom force from a scene file has only its WGSL, so it runs on the gpu backend only"
        );
    }
    let mut sim = Simulation::gpu(&scene.crowd, gpu()).unwrap();
    sim.step(scene.steps).unwrap();
    let end = sim.bodies().unwrap()[0];
    let expected = DVec3::new(1.0, 0.0, 0.5) * (2.0 * 0.1_f64).cos();
    assert_close("position", end.state.position, expected, 2e-5);
}

#[test]
fn rk4_stage_times_make_a_linear_ramp_exact() {
    // F = f t (offset t, from keyframes [[0, 0], [10, 10]]): v = f t^2 / 2M, x = f t^3 / 6M.
    // Exact under RK4 only if the stages see t, t + h/2, t + h/2, t + h.
    let mut crowd = Crowd::new(vec![Body::at_rest(sphere(2.0))], 0.05);
    let table = crowd.add_keyframes(vec![[0.0, 0.0], [10.0, 10.0]]);
    let f = DVec3::new(1.0, -2.0, 0.5);
    crowd.forces.push(Force::on_all(ForceKind::Keyframed {
        force: f,
        torque: DVec3::ZERO,
        table,
    }));
    for (backend, tol) in BACKENDS {
        let end = run(&crowd, 40, backend)[0];
        let t: f64 = 2.0;
        assert_close("velocity", end.velocity(), f * (t * t / 4.0), tol);
        assert_close("position", end.state.position, f * (t * t * t / 12.0), tol);
    }
    // Euler evaluates at the step's start: v_n = h^2 f/M sum_{k<n} k = f h^2 n (n-1) / 2M.
    let euler = crowd.with_integrator(rigid_crowd::Integrator::Euler);
    for (backend, tol) in BACKENDS {
        let end = run(&euler, 40, backend)[0];
        let (h, n) = (0.05, 40.0);
        assert_close(
            "euler velocity",
            end.velocity(),
            f * (h * h * n * (n - 1.0) / 4.0),
            tol,
        );
    }
}
