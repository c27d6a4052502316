//! Bodies bouncing off static planes, against closed forms and conservation bounds, on every
//! backend.

mod common;

use common::{BACKENDS, gpu};
use rigid_crowd::glam::{DQuat, DVec3};
use rigid_crowd::{
    Backend, Body, Crowd, Force, ForceKind, MassProperties, Plane, Shape, Simulation,
};

const G: f64 = 9.81;

fn simulation(crowd: &Crowd, backend: Backend) -> Simulation {
    match backend {
        Backend::Reference => Simulation::reference(crowd),
        Backend::FastCpu => Simulation::fast_cpu(crowd),
        Backend::Gpu => Simulation::gpu(crowd, gpu()),
    }
    .expect("valid crowd")
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
