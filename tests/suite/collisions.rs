//! Bodies that collide with each other (`collisions`), against closed forms (Hecker's
//! impulse, Coulomb's friction), conservation laws, and a resting pile.

use rigid_crowd::glam::{DQuat, DVec3};
use rigid_crowd::{
    Backend, Body, Checkpoint, Collisions, Crowd, Force, ForceKind, MassProperties, Plane, Scene,
    Shape, Simulation,
};

const G: f64 = 9.81;

fn sphere(mass: f64, radius: f64, position: DVec3, velocity: DVec3) -> Body {
    let shape = Shape::Sphere { radius };
    let mass = MassProperties::from_shape(mass, shape, "sphere").unwrap();
    Body::from_kinematics(mass, position, DQuat::IDENTITY, velocity, DVec3::ZERO)
}

fn capsule(mass: f64, radius: f64, length: f64, position: DVec3, orientation: DQuat) -> Body {
    let shape = Shape::Capsule { radius, length };
    let mass = MassProperties::from_shape(mass, shape, "capsule").unwrap();
    Body::from_kinematics(mass, position, orientation, DVec3::ZERO, DVec3::ZERO)
}

fn run(crowd: &Crowd, steps: u64) -> Vec<Body> {
    let mut sim = Simulation::reference(crowd).expect("a valid colliding crowd");
    sim.step(steps).unwrap();
    sim.bodies().unwrap()
}

fn momentum(bodies: &[Body]) -> DVec3 {
    bodies.iter().map(|b| b.state.linear_momentum).sum()
}

/// Angular momentum about the origin: orbital plus spin.
fn angular_momentum(bodies: &[Body]) -> DVec3 {
    (bodies.iter())
        .map(|b| b.state.position.cross(b.state.linear_momentum) + b.state.angular_momentum)
        .sum()
}

fn kinetic_energy(bodies: &[Body]) -> f64 {
    bodies.iter().map(Body::kinetic_energy).sum()
}

fn close(found: DVec3, expected: DVec3, tolerance: f64, what: &str) {
    assert!(
        (found - expected).abs().max_element() <= tolerance,
        "{what}: {found} against {expected} (off by {:e})",
        (found - expected).abs().max_element()
    );
}

#[test]
fn two_spheres_head_on_leave_with_the_impulse_formulas_velocities() {
    for mass_b in [1.0, 3.0] {
        for e in [0.0, 0.5, 1.0] {
            let (va, vb) = (DVec3::new(2.0, 0.0, 0.0), DVec3::new(-1.0, 0.0, 0.0));
            let a = sphere(1.0, 0.1, DVec3::new(-0.5, 0.0, 0.0), va);
            let b = sphere(mass_b, 0.2, DVec3::new(0.5, 0.0, 0.0), vb);
            let crowd = Crowd::new(vec![a, b], 1e-3).with_collisions(Collisions::new(e, 0.3));
            let before = crowd.bodies.clone();
            // They close 0.7 m at 3 m/s: the impact is in step 234.
            let after = run(&crowd, 400);
            let (ma, mb) = (1.0, mass_b);
            let j = (1.0 + e) * ma * mb / (ma + mb) * (va - vb).x;
            let what = format!("m_b = {mass_b}, e = {e}");
            close(after[0].velocity(), va - DVec3::X * (j / ma), 1e-12, &what);
            close(after[1].velocity(), vb + DVec3::X * (j / mb), 1e-12, &what);
            close(momentum(&after), momentum(&before), 1e-14, &what);
            close(
                angular_momentum(&after),
                angular_momentum(&before),
                1e-14,
                &what,
            );
            let (k0, k1) = (kinetic_energy(&before), kinetic_energy(&after));
            let lost = k0 * (1.0 - e * e) * ma * mb / (ma + mb) * 9.0 / (2.0 * k0);
            assert!(
                (k0 - k1 - lost).abs() < 1e-12,
                "{what}: kinetic energy {k0} -> {k1}, the formula loses {lost}"
            );
            assert!(after[1].state.position.x - after[0].state.position.x >= 0.3 - 1e-12);
        }
    }
}

/// The velocities and spins after an oblique impact of two spheres, from the closed form:
/// `n` and the arms from the contact's geometry, the normal impulse
/// `-(1 + e) u.n / (1/M_a + 1/M_b)`, and friction that stops the slip if `mu` times the
/// normal impulse allows, else slides at that bound.
fn oblique_closed_form(
    bodies: &[Body],
    touching: (DVec3, DVec3),
    e: f64,
    mu: f64,
) -> ([DVec3; 4], (DVec3, DVec3)) {
    let (a, b) = (&bodies[0], &bodies[1]);
    let (xa, xb) = touching;
    let radius = |body: &Body| match body.mass.shape() {
        Some(Shape::Sphere { radius }) => radius,
        _ => unreachable!(),
    };
    let (ra, rb) = (radius(a), radius(b));
    let n = (xa - xb).normalize();
    let depth = ra + rb - (xa - xb).length();
    let point = xa - n * (ra - depth / 2.0);
    let (arm_a, arm_b) = (point - xa, point - xb);
    let (ma, mb) = (a.mass.mass(), b.mass.mass());
    let (ia, ib) = (a.mass.inv_inertia_body(), b.mass.inv_inertia_body());
    let u = a.velocity() - b.velocity();
    let normal = -(1.0 + e) * u.dot(n) / (1.0 / ma + 1.0 / mb);
    let slip = u - n * u.dot(n);
    let tangent_mass = 1.0 / ma
        + 1.0 / mb
        + (ia * arm_a.cross(slip.normalize()))
            .cross(arm_a)
            .dot(slip.normalize())
        + (ib * arm_b.cross(slip.normalize()))
            .cross(arm_b)
            .dot(slip.normalize());
    let sticking = -slip / tangent_mass;
    let friction = if sticking.length() <= mu * normal {
        sticking
    } else {
        -slip.normalize() * (mu * normal)
    };
    let j = n * normal + friction;
    let after = [
        a.velocity() + j / ma,
        b.velocity() - j / mb,
        ia * arm_a.cross(j),
        ib * arm_b.cross(-j),
    ];
    (after, (arm_a, arm_b))
}

#[test]
fn an_oblique_impact_with_friction_sticks_or_slides_as_coulomb_says() {
    for (mu, sticks) in [(1.0, true), (0.02, false)] {
        for e in [0.0, 0.5] {
            let a = sphere(1.0, 0.1, DVec3::ZERO, DVec3::new(2.0, 0.3, -0.2));
            let b = sphere(
                2.5,
                0.15,
                DVec3::new(0.25 + 1e-9, 0.0, 0.0),
                DVec3::new(-1.0, 0.0, 0.0),
            );
            let crowd = Crowd::new(vec![a, b], 1e-3).with_collisions(Collisions::new(e, mu));
            let before = crowd.bodies.clone();
            // One step: they meet and the impulse is applied. Moving the pair apart along
            // `n` (e = 0) keeps the line of centres, so the geometry is read after it.
            let after = run(&crowd, 1);
            let drift = |body: &Body, moved: &Body| {
                body.state.position + body.velocity() * crowd.dt - moved.state.position
            };
            let touching = if e > 0.0 {
                (after[0].state.position, after[1].state.position)
            } else {
                // Undo the move: both bodies drifted freely, then parted along n.
                let pushed = (drift(&before[0], &after[0]), drift(&before[1], &after[1]));
                (
                    after[0].state.position + pushed.0,
                    after[1].state.position + pushed.1,
                )
            };
            let ([va, vb, wa, wb], (arm_a, arm_b)) = oblique_closed_form(&before, touching, e, mu);
            let what = format!("mu = {mu}, e = {e}");
            close(after[0].velocity(), va, 1e-12, &what);
            close(after[1].velocity(), vb, 1e-12, &what);
            close(after[0].angular_velocity(), wa, 1e-11, &what);
            close(after[1].angular_velocity(), wb, 1e-11, &what);
            // Sticking leaves the contact without slip; sliding does not.
            let n = (touching.0 - touching.1).normalize();
            let point_a = after[0].velocity() + after[0].angular_velocity().cross(arm_a);
            let point_b = after[1].velocity() + after[1].angular_velocity().cross(arm_b);
            let slip = (point_a - point_b) - n * (point_a - point_b).dot(n);
            assert_eq!(slip.length() < 1e-6, sticks, "{what}: slip {slip}");
            close(momentum(&after), momentum(&before), 1e-14, &what);
            assert!(kinetic_energy(&after) <= kinetic_energy(&before), "{what}");
            if e > 0.0 {
                let (l0, l1) = (angular_momentum(&before), angular_momentum(&after));
                close(l1, l0, 1e-14, &what);
            }
        }
    }
}

#[test]
fn a_sphere_striking_a_capsules_side_turns_it_as_hecker_says() {
    // A capsule along x; a sphere coming down onto it 0.2 m from its centre.
    let along_x = DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2);
    let c = capsule(2.0, 0.1, 0.8, DVec3::ZERO, along_x);
    let v = DVec3::new(0.0, 0.0, -3.0);
    let s = sphere(0.5, 0.1, DVec3::new(0.2, 0.0, 0.2 + 1e-9), v);
    for e in [0.0, 0.5, 1.0] {
        let crowd = Crowd::new(vec![c, s], 1e-3).with_collisions(Collisions::new(e, 0.0));
        let before = crowd.bodies.clone();
        let after = run(&crowd, 1);
        // Hecker's Figure 4 with the capsule at rest: n = +z from the capsule to the sphere.
        let n = DVec3::Z;
        let (mc, ms) = (c.mass.mass(), s.mass.mass());
        let depth = 0.2 + 1e-9 - 3.0 * crowd.dt;
        let arm_c = DVec3::new(0.2, 0.0, 0.1 - (0.2 - depth) / 2.0);
        let rotation = rigid_crowd::glam::DMat3::from_quat(along_x);
        let ic = rotation * c.mass.inv_inertia_body() * rotation.transpose();
        let u_n = -v.dot(n); // the capsule's point against the sphere's, along n
        let j =
            -(1.0 + e) * u_n / (1.0 / mc + 1.0 / ms + (ic * arm_c.cross(n)).cross(arm_c).dot(n));
        let what = format!("e = {e}");
        close(after[0].velocity(), n * (j / mc), 1e-12, &what);
        close(after[1].velocity(), v - n * (j / ms), 1e-12, &what);
        close(
            after[0].angular_velocity(),
            ic * arm_c.cross(n * j),
            1e-11,
            &what,
        );
        close(momentum(&after), momentum(&before), 1e-14, &what);
        if e == 1.0 {
            let (k0, k1) = (kinetic_energy(&before), kinetic_energy(&after));
            assert!((k1 - k0).abs() < 1e-12 * k0, "e = 1: {k0} -> {k1}");
        }
    }
}

#[test]
fn crossed_capsules_meet_at_their_closest_points() {
    // Two capsules crossed at right angles, one above the other, the upper falling onto the
    // lower's middle: they touch between their axes' closest points, on the line of their
    // centres, so the impulse is central (no spin) and with e = 1 they trade velocities.
    let upper_axis = DQuat::from_rotation_x(std::f64::consts::FRAC_PI_2);
    let lower_axis = DQuat::from_rotation_y(std::f64::consts::FRAC_PI_2);
    let mut upper = capsule(1.0, 0.1, 1.0, DVec3::new(0.0, 0.0, 0.2 + 1e-9), upper_axis);
    let lower = capsule(1.0, 0.1, 1.0, DVec3::ZERO, lower_axis);
    upper.state.linear_momentum = DVec3::new(0.0, 0.0, -2.0);
    let crowd = Crowd::new(vec![upper, lower], 1e-3).with_collisions(Collisions::new(1.0, 0.0));
    let after = run(&crowd, 1);
    close(after[0].velocity(), DVec3::ZERO, 1e-12, "upper");
    close(
        after[1].velocity(),
        DVec3::new(0.0, 0.0, -2.0),
        1e-12,
        "lower",
    );
    close(
        after[0].angular_velocity(),
        DVec3::ZERO,
        1e-12,
        "upper spin",
    );
    close(
        after[1].angular_velocity(),
        DVec3::ZERO,
        1e-12,
        "lower spin",
    );
}

/// Spheres and capsules in a box of four walls over a floor, dropped in a loose lattice.
fn loose_pile(layers: usize, restitution: f64, friction: f64) -> Crowd {
    let mut bodies = Vec::new();
    for layer in 0..layers {
        for row in 0..3 {
            for column in 0..3 {
                let position = DVec3::new(
                    column as f64 * 0.25 + 0.01 * layer as f64,
                    row as f64 * 0.25,
                    0.15 + 0.3 * layer as f64,
                );
                let body = if (row + column + layer) % 3 == 0 {
                    capsule(1.0, 0.08, 0.1, position, DQuat::from_rotation_x(0.3))
                } else {
                    sphere(1.0, 0.1, position, DVec3::ZERO)
                };
                bodies.push(body);
            }
        }
    }
    let wall = |point: DVec3, normal: DVec3| Plane::through(point, normal, 0.2, 0.4);
    Crowd::new(bodies, 1e-3)
        .with_force(Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -G),
        }))
        .with_plane(Plane::ground(0.2, 0.4))
        .with_plane(wall(DVec3::new(-0.13, 0.0, 0.0), DVec3::X))
        .with_plane(wall(DVec3::new(0.65, 0.0, 0.0), DVec3::NEG_X))
        .with_plane(wall(DVec3::new(0.0, -0.13, 0.0), DVec3::Y))
        .with_plane(wall(DVec3::new(0.0, 0.63, 0.0), DVec3::NEG_Y))
        .with_collisions(Collisions::new(restitution, friction))
}

/// The deepest overlap of any two bodies of `bodies`, as a fraction of the smaller radius
/// (spheres and capsules: the swept spheres' closest points, tested pair by pair).
fn deepest_overlap(bodies: &[Body]) -> f64 {
    let segment = |b: &Body| match b.mass.shape() {
        Some(Shape::Sphere { radius }) => (b.state.position, b.state.position, radius),
        Some(Shape::Capsule { radius, length }) => {
            let axis = b.state.orientation * DVec3::Z * (length / 2.0);
            (b.state.position + axis, b.state.position - axis, radius)
        }
        _ => unreachable!(),
    };
    let mut deepest: f64 = 0.0;
    for i in 0..bodies.len() {
        for k in i + 1..bodies.len() {
            let (a0, a1, ra) = segment(&bodies[i]);
            let (b0, b1, rb) = segment(&bodies[k]);
            // The closest points by sampling both segments finely: independent of the
            // library's closed-form closest points.
            let mut nearest = f64::INFINITY;
            for s in 0..=64 {
                for t in 0..=64 {
                    let p = a0.lerp(a1, s as f64 / 64.0);
                    let q = b0.lerp(b1, t as f64 / 64.0);
                    nearest = nearest.min((p - q).length());
                }
            }
            deepest = deepest.max((ra + rb - nearest) / ra.min(rb));
        }
    }
    deepest
}

/// A pyramid of spheres (3 x 3, 2 x 2, 1) packed in a box of four walls over a floor, each
/// sphere of a layer in a pocket of the layer below, dropped from 1 mm.
fn packed_pyramid(restitution: f64) -> Crowd {
    let mut bodies = Vec::new();
    for layer in 0..3 {
        let side = 3 - layer;
        let offset = 0.1 * layer as f64;
        let height = 0.1 + 0.2 / 2.0_f64.sqrt() * layer as f64 + 1e-3;
        for row in 0..side {
            for column in 0..side {
                let x = column as f64 * 0.2 + offset;
                let y = row as f64 * 0.2 + offset;
                bodies.push(sphere(1.0, 0.1, DVec3::new(x, y, height), DVec3::ZERO));
            }
        }
    }
    let wall = |point: DVec3, normal: DVec3| Plane::through(point, normal, 0.2, 0.4);
    Crowd::new(bodies, 1e-3)
        .with_force(Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -G),
        }))
        .with_plane(Plane::ground(0.2, 0.4))
        .with_plane(wall(DVec3::new(-0.1, 0.0, 0.0), DVec3::X))
        .with_plane(wall(DVec3::new(0.5, 0.0, 0.0), DVec3::NEG_X))
        .with_plane(wall(DVec3::new(0.0, -0.1, 0.0), DVec3::Y))
        .with_plane(wall(DVec3::new(0.0, 0.5, 0.0), DVec3::NEG_Y))
        .with_collisions(Collisions::new(restitution, 0.6))
}

#[test]
fn a_packed_pyramid_rests_without_sinking_or_drifting() {
    for restitution in [0.0, 0.3, 1.0] {
        let crowd = packed_pyramid(restitution);
        let mut sim = Simulation::reference(&crowd).unwrap();
        sim.step(3000).unwrap();
        let settled = sim.bodies().unwrap();
        sim.step(10_000).unwrap();
        let later = sim.bodies().unwrap();
        for (i, (a, b)) in settled.iter().zip(&later).enumerate() {
            let moved = b.state.position - a.state.position;
            let sideways = DVec3::new(moved.x, moved.y, 0.0).length();
            let what = format!("e = {restitution}, body {i}");
            assert!(
                sideways < 1e-3,
                "{what} drifted {sideways} m sideways in 10 s"
            );
            assert!(
                moved.z.abs() < 1e-3,
                "{what} sank or rose {} m in 10 s",
                moved.z
            );
            assert!(
                b.state.position.z >= 0.1 - 1e-3,
                "{what} sank into the floor"
            );
            // 16 Jacobi iterations leave some of a step's gravity in the velocities (their
            // positions stay put): at most one step's worth, g h.
            let speed = b.velocity().length();
            assert!(speed < G * crowd.dt, "{what} still moves at {speed}");
        }
        let overlap = deepest_overlap(&later);
        assert!(
            overlap < 0.02,
            "bodies overlap by {overlap} of the smaller radius"
        );
    }
}

#[test]
fn a_colliding_run_repeats_to_the_bit_in_any_split_of_its_steps() {
    let crowd = loose_pile(3, 0.5, 0.3);
    let whole = run(&crowd, 600);
    let mut sim = Simulation::reference(&crowd).unwrap();
    for _ in 0..6 {
        sim.step(100).unwrap();
    }
    assert_eq!(sim.bodies().unwrap(), whole);
    assert_eq!(run(&crowd, 600), whole);
    // The bodies did meet: without collisions the run ends elsewhere.
    let mut independent = crowd.clone();
    independent.collisions = None;
    assert_ne!(run(&independent, 600), whole);
}

#[test]
fn a_checkpoint_of_a_colliding_run_resumes_to_its_bits() {
    let crowd = loose_pile(3, 0.5, 0.3);
    let whole = run(&crowd, 500);
    let mut sim = Simulation::reference(&crowd).unwrap();
    sim.step(200).unwrap();
    let checkpoint = sim.checkpoint().unwrap();
    let bytes = checkpoint.to_bytes();
    let read = Checkpoint::from_bytes(&bytes).unwrap();
    assert_eq!(read.crowd.collisions, crowd.collisions);
    let mut resumed = Simulation::resume(&read, Backend::Reference).unwrap();
    resumed.step(300).unwrap();
    assert_eq!(resumed.bodies().unwrap(), whole);
}

#[test]
fn overlapping_bodies_are_parted_at_the_start_without_energy() {
    let a = sphere(1.0, 0.1, DVec3::ZERO, DVec3::new(0.0, 0.5, 0.0));
    let b = sphere(3.0, 0.1, DVec3::new(0.15, 0.0, 0.0), DVec3::ZERO);
    let crowd = Crowd::new(vec![a, b], 1e-3).with_collisions(Collisions::new(0.5, 0.0));
    let sim = Simulation::reference(&crowd).unwrap();
    let parted = sim.bodies().unwrap();
    let gap = (parted[1].state.position - parted[0].state.position).length();
    assert!((gap - 0.2).abs() < 1e-12, "parted to {gap}");
    assert_eq!(kinetic_energy(&parted), kinetic_energy(&crowd.bodies));
    // Moved in inverse proportion to their masses: the centre of mass stays.
    let centre = |bodies: &[Body]| {
        (bodies.iter())
            .map(|b| b.state.position * b.mass.mass())
            .sum::<DVec3>()
            / 4.0
    };
    close(
        centre(&parted),
        centre(&crowd.bodies),
        1e-15,
        "centre of mass",
    );
}

fn error_of(crowd: &Crowd, backend: Backend) -> String {
    match Simulation::new(crowd, backend) {
        Ok(_) => panic!("{backend:?} accepted {crowd:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn what_collisions_do_not_take_is_refused_in_one_line() {
    let pair = || {
        let a = sphere(1.0, 0.1, DVec3::ZERO, DVec3::ZERO);
        let b = sphere(1.0, 0.1, DVec3::new(1.0, 0.0, 0.0), DVec3::ZERO);
        Crowd::new(vec![a, b], 1e-3).with_collisions(Collisions::new(0.5, 0.2))
    };
    // Not yet on the fast paths.
    for backend in [Backend::FastCpu, Backend::Gpu, Backend::GpuF64] {
        let message = error_of(&pair(), backend);
        assert!(
            message.starts_with("collisions: bodies collide on `cpu-ref` so far"),
            "{message}"
        );
    }
    // A shape that does not collide yet.
    let mut boxed = pair();
    let shape = Shape::Box {
        size: DVec3::splat(0.2),
    };
    boxed.bodies[1].mass = MassProperties::from_shape(1.0, shape, "box").unwrap();
    let message = error_of(&boxed, Backend::Reference);
    assert!(
        message.starts_with("bodies[1].shape: box does not collide"),
        "{message}"
    );
    // Bad coefficients.
    let mut bouncy = pair();
    bouncy.collisions = Some(Collisions::new(1.5, 0.2));
    let message = error_of(&bouncy, Backend::Reference);
    assert!(
        message.starts_with("collisions.restitution: must be in [0, 1]"),
        "{message}"
    );
    // Derivatives through collisions.
    let mut sim = Simulation::reference(&pair()).unwrap();
    let message = sim.start_tangents(&["state"]).unwrap_err().to_string();
    assert!(
        message.contains("derivatives through collisions"),
        "{message}"
    );
    // A crowd piled on one spot.
    let heap: Vec<Body> = (0..100)
        .map(|_| sphere(1.0, 0.1, DVec3::ZERO, DVec3::ZERO))
        .collect();
    let crowd = Crowd::new(heap, 1e-3).with_collisions(Collisions::new(0.0, 0.0));
    let message = error_of(&crowd, Backend::Reference);
    assert!(
        message.starts_with("bodies[0].position: overlaps 99 other bodies"),
        "{message}"
    );
    assert!(!message.contains('\n'));
}

#[test]
fn a_scene_turns_collisions_on_and_names_a_bad_coefficient() {
    let scene = |collisions: &str| {
        format!(
            r#"{{"dt": 0.001, "steps": 10, "collisions": {collisions},
                "bodies": [{{"mass": 1, "shape": {{"sphere": 0.1}}}}]}}"#
        )
    };
    let read = Scene::from_json(&scene(r#"{"restitution": 0.4, "friction": 0.7}"#)).unwrap();
    assert_eq!(read.crowd.collisions, Some(Collisions::new(0.4, 0.7)));
    let message = Scene::from_json(&scene(r#"{"friction": -1}"#))
        .unwrap_err()
        .to_string();
    assert!(
        message.starts_with("collisions.friction: must be >= 0"),
        "{message}"
    );
    let message = Scene::from_json(&scene(r#"{"bounce": 1}"#))
        .unwrap_err()
        .to_string();
    assert!(message.contains("bounce"), "{message}");
}
