//! Bodies bouncing off static planes, against closed forms and conservation bounds, on every
//! backend.

use crate::common;

use common::{BACKENDS, gpu};
use rigid_crowd::glam::{DQuat, DVec3};
use rigid_crowd::{
    Backend, Body, Crowd, Force, ForceKind, MassProperties, Plane, Shape, Simulation,
};

const G: f64 = 9.81;

fn simulation(crowd: &Crowd, backend: Backend) -> Simulation {
    Simulation::on_backend(crowd, backend, gpu()).expect("valid crowd")
}

fn gravity() -> Force {
    Force::on_all(ForceKind::Gravity {
        acceleration: DVec3::new(0.0, 0.0, -G),
    })
}

/// Kinetic plus potential energy in uniform gravity `-G z`.
fn energy(body: &Body) -> f64 {
    body.kinetic_energy() + body.mass.mass() * G * body.state.position.z
}

fn ball(radius: f64, height: f64) -> Body {
    let mass = MassProperties::from_shape(1.5, Shape::Sphere { radius }, "ball").unwrap();
    Body::from_kinematics(
        mass,
        DVec3::new(0.0, 0.0, radius + height),
        DQuat::IDENTITY,
        DVec3::ZERO,
        DVec3::ZERO,
    )
}

#[test]
fn a_dropped_ball_rebounds_to_e_squared_of_its_height() {
    let (radius, height, e) = (0.1, 1.0, 0.6);
    let crowd = Crowd::new(vec![ball(radius, height)], 1e-3)
        .with_force(gravity())
        .with_plane(Plane::ground(e, 0.3));
    // Impact at t_c = sqrt(2H/g) with speed v_c = g t_c; the apex comes e v_c / g later.
    let impact = (2.0 * height / G).sqrt();
    let apex = impact * (1.0 + e);
    let steps = (apex / crowd.dt).round() as u64;
    for (backend, _) in BACKENDS {
        let mut sim = simulation(&crowd, backend);
        sim.step(steps).unwrap();
        let top = sim.bodies().unwrap()[0].state.position.z - radius;
        // The bounce is detected up to one step late, but the speed at the surface is
        // recovered exactly (RK4 is exact in uniform gravity), so the only error is sampling
        // up to one step off the apex: g h^2 / 2 = 5e-6 m, plus f32 round-off on the fast paths.
        let expected = e * e * height;
        assert!(
            (top - expected).abs() < 1e-5,
            "{backend:?}: rebound to {top}, expected e^2 H = {expected}"
        );
    }
}

/// Energies sampled every `every` steps of `crowd` on `backend` for `steps` steps.
fn energies(crowd: &Crowd, backend: Backend, steps: u64, every: u64) -> Vec<f64> {
    let mut sim = simulation(crowd, backend);
    let mut out = vec![energy(&sim.bodies().unwrap()[0])];
    for _ in 0..steps / every {
        sim.step(every).unwrap();
        out.push(energy(&sim.bodies().unwrap()[0]));
    }
    out
}

fn spinning_box(size: DVec3) -> Body {
    let mass = MassProperties::from_shape(2.0, Shape::Box { size }, "box").unwrap();
    Body::from_kinematics(
        mass,
        DVec3::new(0.0, 0.0, 1.0),
        DQuat::from_rotation_x(0.7) * DQuat::from_rotation_y(-0.4),
        DVec3::new(1.5, -0.5, 0.0),
        DVec3::new(4.0, -6.0, 9.0),
    )
}

#[test]
fn energy_never_rises_through_bounces() {
    let cases = [
        ("ball", ball(0.1, 1.0), Plane::ground(0.8, 0.3)),
        (
            "box",
            spinning_box(DVec3::new(0.4, 0.3, 0.2)),
            Plane::ground(0.5, 0.6),
        ),
    ];
    for (name, body, plane) in cases {
        let crowd = Crowd::new(vec![body], 1e-3)
            .with_force(gravity())
            .with_plane(plane);
        for (backend, tol) in BACKENDS {
            let e = energies(&crowd, backend, 2000, 5);
            // Energy may only fall; f32 backends round the state, so they may wobble by their
            // round-off times the energy scale (a 1 m drop of 1.5-2 kg: about 20 J).
            let slack = tol * e[0].abs();
            let mut highest = e[0];
            for (i, &now) in e.iter().enumerate() {
                assert!(
                    now <= highest + slack,
                    "{name} on {backend:?}: energy rose to {now} at sample {i} (earlier high {highest})"
                );
                highest = highest.max(now);
            }
            assert!(
                *e.last().unwrap() < 0.9 * e[0],
                "{name} on {backend:?}: the bounces should have lost energy"
            );
        }
    }
}

#[test]
fn a_spinning_box_thrown_on_the_floor_comes_to_rest_flat() {
    let size = DVec3::new(0.4, 0.3, 0.2);
    let crowd = Crowd::new(vec![spinning_box(size)], 1e-3)
        .with_force(gravity())
        .with_plane(Plane::ground(0.3, 0.6));
    for (backend, _) in BACKENDS {
        let mut sim = simulation(&crowd, backend);
        sim.step(4000).unwrap();
        let settled = sim.bodies().unwrap()[0];
        sim.step(1000).unwrap();
        let end = sim.bodies().unwrap()[0];
        // Flat: one body axis along the normal, and the centre half that edge above the floor.
        let up = end.rotation().transpose() * DVec3::Z;
        let axis = up.abs().max_position();
        let tilt = (1.0 - up.abs()[axis]).max(0.0).sqrt() * std::f64::consts::SQRT_2;
        assert!(tilt < 1e-3, "{backend:?}: tilted by {tilt} rad ({up:?})");
        let height = end.state.position.z;
        assert!(
            (height - 0.5 * size[axis]).abs() < 1e-4,
            "{backend:?}: centre at {height}, expected {}",
            0.5 * size[axis]
        );
        assert!(end.velocity().length() < 1e-3, "{backend:?}: still sliding");
        assert!(
            end.angular_velocity().length() < 1e-2,
            "{backend:?}: still spinning"
        );
        // Resting contact: the last second neither sinks nor jitters.
        let drift = (end.state.position - settled.state.position).length();
        assert!(drift < 1e-4, "{backend:?}: moved {drift} m while resting");
    }
}

/// A body of `shape` at rest in the given pose, dropped onto the floor from `lift` above its
/// resting height `rest`.
fn dropped(shape: Shape, orientation: DQuat, rest: f64, lift: f64, velocity: DVec3) -> Body {
    let mass = MassProperties::from_shape(1.0, shape, "dropped").unwrap();
    Body::from_kinematics(
        mass,
        DVec3::new(0.0, 0.0, rest + lift),
        orientation,
        velocity,
        DVec3::ZERO,
    )
}

/// Every shape with a contact geometry, in a pose it can rest in, its resting height, and
/// whether it can slide to a stop in that pose (round shapes would roll on forever).
fn resting_poses() -> Vec<(&'static str, Shape, DQuat, f64, bool)> {
    let lying = DQuat::from_rotation_x(std::f64::consts::FRAC_PI_2);
    vec![
        (
            "sphere",
            Shape::Sphere { radius: 0.2 },
            DQuat::IDENTITY,
            0.2,
            false,
        ),
        (
            "box",
            Shape::Box {
                size: DVec3::new(0.5, 0.3, 0.2),
            },
            DQuat::from_rotation_z(0.3),
            0.1,
            true,
        ),
        (
            "capsule lying",
            Shape::Capsule {
                radius: 0.1,
                length: 0.4,
            },
            lying,
            0.1,
            false,
        ),
        (
            "cylinder upright",
            Shape::Cylinder {
                radius: 0.15,
                height: 0.5,
            },
            DQuat::IDENTITY,
            0.25,
            true,
        ),
        (
            "cylinder lying",
            Shape::Cylinder {
                radius: 0.15,
                height: 0.5,
            },
            lying,
            0.15,
            false,
        ),
        (
            "ellipsoid",
            Shape::Ellipsoid {
                semi_axes: DVec3::new(0.3, 0.2, 0.1),
            },
            DQuat::IDENTITY,
            0.1,
            false,
        ),
    ]
}

#[test]
fn every_shape_comes_to_rest_on_its_support_without_sinking() {
    let bodies: Vec<Body> = resting_poses()
        .iter()
        .map(|&(_, shape, orientation, rest, slides)| {
            let sideways = if slides {
                DVec3::new(0.5, 0.2, 0.0)
            } else {
                DVec3::ZERO
            };
            dropped(shape, orientation, rest, 0.3, sideways)
        })
        .collect();
    let crowd = Crowd::new(bodies, 1e-3)
        .with_force(gravity())
        .with_plane(Plane::ground(0.4, 0.5));
    for (backend, _) in BACKENDS {
        let mut sim = simulation(&crowd, backend);
        sim.step(3000).unwrap();
        let settled = sim.bodies().unwrap();
        sim.step(500).unwrap();
        let end = sim.bodies().unwrap();
        for (i, (name, _, _, rest, _)) in resting_poses().into_iter().enumerate() {
            let body = &end[i];
            let height = body.state.position.z;
            // Resting contact holds each body a fraction of a step's fall (g h^2 = 1e-5 m)
            // from its exact height; rolling shapes stop through friction.
            assert!(
                (height - rest).abs() < 1e-4,
                "{name} on {backend:?}: resting at {height}, expected {rest}"
            );
            let drift = (body.state.position - settled[i].state.position).length();
            assert!(
                drift < 1e-4,
                "{name} on {backend:?}: moved {drift} m at rest"
            );
            assert!(
                body.velocity().length() < 1e-3,
                "{name} on {backend:?}: still moving"
            );
        }
    }
}

#[test]
fn a_body_on_a_ramp_slides_with_coulomb_friction() {
    // A box on a 30 degree ramp with mu = 0.2 < tan 30: it slides with acceleration
    // g (sin a - mu cos a) along the slope.
    let (angle, mu) = (30f64.to_radians(), 0.2);
    let normal = DVec3::new(-angle.sin(), 0.0, angle.cos());
    let ramp = Plane::through(DVec3::ZERO, normal, 0.0, mu);
    let size = DVec3::new(0.4, 0.4, 0.2);
    let tilt = DQuat::from_rotation_y(-angle);
    let start = normal * 0.1;
    let mass = MassProperties::from_shape(1.0, Shape::Box { size }, "box").unwrap();
    let body = Body::from_kinematics(mass, start, tilt, DVec3::ZERO, DVec3::ZERO);
    let crowd = Crowd::new(vec![body], 1e-3)
        .with_force(gravity())
        .with_plane(ramp);
    let t = 1.0;
    let down_slope = DVec3::new(-angle.cos(), 0.0, -angle.sin());
    let expected = 0.5 * G * (angle.sin() - mu * angle.cos()) * t * t;
    for (backend, _) in BACKENDS {
        let end = common::run(&crowd, 1000, backend)[0];
        let travelled = (end.state.position - start).dot(down_slope);
        // Each step starts with a fall into the ramp that contact then resolves, so the
        // friction impulse acts a step late: the distance is right to O(h) relative.
        assert!(
            (travelled - expected).abs() < 5e-3 * expected,
            "{backend:?}: slid {travelled} m, expected {expected}"
        );
        let off = (end.state.position - start).dot(normal);
        assert!(off.abs() < 1e-4, "{backend:?}: left the ramp by {off}");
    }
}

#[test]
fn a_sliding_ball_ends_up_rolling_at_five_sevenths_of_its_speed() {
    // Friction at the contact point turns sliding into rolling; linear momentum lost to
    // friction becomes spin, and rolling without slipping (v = omega r) is reached at
    // v = 5/7 v0 for a solid ball, whatever mu is.
    let (radius, v0) = (0.2, 2.0);
    let mass = MassProperties::from_shape(1.0, Shape::Sphere { radius }, "ball").unwrap();
    let ball = Body::from_kinematics(
        mass,
        DVec3::new(0.0, 0.0, radius),
        DQuat::IDENTITY,
        DVec3::new(v0, 0.0, 0.0),
        DVec3::ZERO,
    );
    let crowd = Crowd::new(vec![ball], 1e-3)
        .with_force(gravity())
        .with_plane(Plane::ground(0.0, 0.3));
    for (backend, _) in BACKENDS {
        let end = common::run(&crowd, 1500, backend)[0];
        let v = end.velocity();
        let spin = end.angular_velocity();
        assert!(
            (v.x - 5.0 / 7.0 * v0).abs() < 1e-3 * v0,
            "{backend:?}: rolls at {}, expected {}",
            v.x,
            5.0 / 7.0 * v0
        );
        assert!(
            (spin.y * radius - v.x).abs() < 1e-3 * v0,
            "{backend:?}: slips (omega r = {}, v = {})",
            spin.y * radius,
            v.x
        );
    }
}

#[test]
fn gpu_and_fast_cpu_agree_with_the_reference_through_a_bounce() {
    // A grid of every shape, tumbling, dropped from staggered heights with sideways speed onto
    // a floor and against a wall, run through its first impact. Each impact starts on one
    // point of a generic pose, which is well conditioned; the f32 paths must track the
    // reference within the cross-check tolerance. (Later, bodies settling on several points
    // at once break ties by round-off, and the paths part by one step of gravity, g h, at a
    // time: that is what the resting tests above check instead.)
    let poses = resting_poses();
    let mut bodies = Vec::new();
    for i in 0..600 {
        let (_, shape, _, rest, _) = poses[i % poses.len()];
        let mass = MassProperties::from_shape(0.5 + (i % 7) as f64 * 0.3, shape, "b").unwrap();
        let spot = DVec3::new((i % 30) as f64 * 1.5, (i / 30) as f64 * 1.5, 0.0);
        let lift = 0.3 + 0.0137 * (i % 41) as f64;
        let k = i as f64;
        let orientation = DQuat::from_rotation_z(0.7 * k) * DQuat::from_rotation_x(0.3 + 0.11 * k);
        bodies.push(Body::from_kinematics(
            mass,
            spot + DVec3::new(0.0, 0.0, 2.0 * rest + lift),
            orientation,
            DVec3::new(-1.0 + 0.1 * (i % 13) as f64, 0.3, 0.0),
            DVec3::new(1.0, -2.0, 0.5 + 0.1 * (i % 5) as f64),
        ));
    }
    let wall = Plane::through(DVec3::new(-0.5, 0.0, 0.0), DVec3::X, 0.5, 0.2);
    let crowd = Crowd::new(bodies, 1e-3)
        .with_force(gravity())
        .with_plane(Plane::ground(0.4, 0.5))
        .with_plane(wall);
    let steps = 450;
    let reference = common::run(&crowd, steps, Backend::Reference);
    let h = crowd.dt;
    // Largest speed and spin anywhere in the run: the drop speed plus the launch speeds.
    let top_speed = (2.0 * G * 1.5).sqrt() + 1.5;
    let top_spin = 60.0;
    for backend in [Backend::FastCpu, Backend::Gpu] {
        let tested = common::run(&crowd, steps, backend);
        let mut outside_tolerance = 0;
        for (i, (t, r)) in tested.iter().zip(&reference).enumerate() {
            let dx = (t.state.position - r.state.position).length();
            let dv = (t.velocity() - r.velocity()).length();
            let dq = {
                let (a, b) = (t.state.orientation, r.state.orientation);
                (a - b).length().min((a + b).length())
            };
            let tol = rigid_crowd::GPU_TOLERANCE;
            if dx > tol * r.state.position.length() || dv > tol * top_speed || dq > tol {
                outside_tolerance += 1;
            }
            // One step apart: where f32 round-off moves a contact across a step boundary,
            // the paths differ by what one step does: position v h, velocity (1 + e) g h plus
            // the impulse's friction share, orientation omega h.
            assert!(
                dx <= 2.0 * top_speed * h && dv <= 4.0 * G * h && dq <= 2.0 * top_spin * h,
                "{backend:?}, body {i}: off by {dx:.2e} m, {dv:.2e} m/s, {dq:.2e} in q"
            );
        }
        println!("contacts, {backend:?}: {outside_tolerance} of 600 bodies outside the tolerance");
        assert!(
            outside_tolerance <= 6,
            "{backend:?}: {outside_tolerance} bodies parted from the reference"
        );
    }
}

#[test]
fn bad_planes_and_shapeless_bodies_are_named() {
    let scene = |planes: &str, body: &str| {
        format!(r#"{{"dt": 0.001, "steps": 1, "planes": [{planes}], "bodies": [{body}]}}"#)
    };
    let sphere = r#"{"mass": 1, "shape": {"sphere": 0.5}}"#;
    let cases = [
        (
            scene(r#"{"normal": [0, 0, 0]}"#, sphere),
            "planes[0].normal: must be a non-zero vector",
        ),
        (
            scene(r#"{"normal": [0, 0, 1], "restitution": 1.5}"#, sphere),
            "planes[0].restitution: must be in [0, 1] (got 1.5)",
        ),
        (
            scene(r#"{"normal": [0, 0, 1], "friction": -1}"#, sphere),
            "planes[0].friction: must be >= 0 (got -1)",
        ),
        (
            scene(r#"{"normal": [0, 0, 1], "point": [0, 0, 1e39]}"#, sphere),
            "planes[0].point[2]: 1000000000000000000000000000000000000000 is out of range",
        ),
        (
            scene(r#"{"normal": [0, 0, 1], "colour": 3}"#, sphere),
            "planes[0].colour: unknown field `colour`",
        ),
        (
            scene(
                r#"{"normal": [0, 0, 1]}"#,
                r#"{"mass": 1, "inertia": [1, 1, 1]}"#,
            ),
            "bodies[0].shape: has no contact geometry",
        ),
    ];
    for (text, expected) in cases {
        let error = rigid_crowd::Scene::from_json(&text)
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with(expected),
            "expected `{expected}...`, got `{error}`"
        );
        assert!(!error.contains('\n'), "{error}");
    }
}

#[test]
fn the_crowd_scene_keeps_every_body_inside_its_pit() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/floor.json");
    let mut scene = rigid_crowd::Scene::load(path).unwrap();
    // A slice of the crowd for a second of rain, so the test stays short on the software driver.
    scene.crowd.bodies.truncate(500);
    let planes = scene.crowd.planes.clone();
    for (backend, _) in BACKENDS {
        let end = common::run(&scene.crowd, 1000, backend);
        for (i, body) in end.iter().enumerate() {
            let shape = body.mass.shape().unwrap();
            for plane in &planes {
                let clearance = -plane.depth(body.state.position);
                assert!(
                    clearance > 0.0,
                    "{backend:?}: body {i} ({shape:?}) went through a plane ({clearance})"
                );
            }
        }
    }
}
