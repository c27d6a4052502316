//! Lean reads (`Simulation::read_states`, `read_poses`, `wait_states_into`) hand back exactly
//! the states `bodies()` returns, as arrays, on every backend; a wrong length is refused by
//! name. Their allocation bound is tested in tests/read_allocations.rs, a crowd split into
//! chunks in src/simulation/lean_reads.rs.

mod common;

use common::{BACKENDS, gpu};
use rigid_crowd::glam::DVec3;
use rigid_crowd::{
    Backend, Body, Crowd, CrowdSpec, Error, Force, ForceKind, Simulation, StateArrays, StatesMut,
};

/// A tumbling crowd under gravity and drag, large enough for two GPU chunks when the
/// binding is small.
fn crowd() -> Crowd {
    Crowd::new(CrowdSpec::new(300, 8).generate().unwrap(), 1e-3)
        .with_force(Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, -9.81, 0.0),
        }))
        .with_force(Force::on_all(ForceKind::LinearDrag {
            linear: 0.3,
            angular: 0.2,
        }))
}

/// `arrays` holds `bodies`' state, velocities included, exactly (after `T`'s rounding).
fn assert_holds(what: &str, arrays: &StateArrays<f64>, bodies: &[Body]) {
    assert_eq!(arrays.position.len(), bodies.len(), "{what}");
    for (i, body) in bodies.iter().enumerate() {
        let s = &body.state;
        let q = s.orientation;
        assert_eq!(
            arrays.position[i],
            s.position.to_array(),
            "{what}: position {i}"
        );
        assert_eq!(
            arrays.orientation[i],
            [q.w, q.x, q.y, q.z],
            "{what}: orientation {i}"
        );
        assert_eq!(
            arrays.linear_momentum[i],
            s.linear_momentum.to_array(),
            "{what}: P {i}"
        );
        assert_eq!(
            arrays.angular_momentum[i],
            s.angular_momentum.to_array(),
            "{what}: L {i}"
        );
        assert_eq!(
            arrays.velocity[i],
            body.velocity().to_array(),
            "{what}: v {i}"
        );
        let omega = body.angular_velocity().to_array();
        assert_eq!(arrays.angular_velocity[i], omega, "{what}: omega {i}");
    }
}

#[test]
fn every_backend_reads_the_states_bodies_returns_as_arrays() {
    let crowd = crowd();
    for (backend, _) in BACKENDS {
        let mut sim = Simulation::on_backend(&crowd, backend, gpu()).unwrap();
        sim.step(25).unwrap();
        let mut arrays = StateArrays::<f64>::state(sim.body_count()).with_velocities();
        sim.read_states(arrays.as_mut()).unwrap();
        let bodies = sim.bodies().unwrap();
        assert_holds(backend.name(), &arrays, &bodies);
        // The bodies moved: a read of the initial states would fail the comparison.
        assert_ne!(bodies[0].state, crowd.bodies[0].state, "{}", backend.name());
    }
}

#[test]
fn f32_backends_read_into_f32_arrays_without_rounding() {
    let crowd = crowd();
    for backend in [Backend::FastCpu, Backend::Gpu] {
        let mut sim = Simulation::on_backend(&crowd, backend, gpu()).unwrap();
        sim.step(7).unwrap();
        let n = sim.body_count();
        let (mut position, mut orientation) = (vec![[0f32; 3]; n], vec![[0f32; 4]; n]);
        sim.read_poses(&mut position, &mut orientation).unwrap();
        let bodies = sim.bodies().unwrap();
        for (i, body) in bodies.iter().enumerate() {
            let q = body.state.orientation;
            let widened = position[i].map(f64::from);
            assert_eq!(widened, body.state.position.to_array(), "{backend:?} {i}");
            let widened = orientation[i].map(f64::from);
            assert_eq!(widened, [q.w, q.x, q.y, q.z], "{backend:?} {i}");
        }
    }
}

#[test]
fn a_ticket_redeemed_into_arrays_holds_the_states_of_its_step() {
    let crowd = crowd();
    for (backend, _) in BACKENDS {
        let mut sim = Simulation::on_backend(&crowd, backend, gpu()).unwrap();
        sim.step(5).unwrap();
        let then = sim.bodies().unwrap();
        let ticket = sim.request_states().unwrap();
        sim.step(5).unwrap();
        let mut arrays = StateArrays::<f64>::state(sim.body_count()).with_velocities();
        sim.wait_states_into(ticket, arrays.as_mut()).unwrap();
        assert_holds(backend.name(), &arrays, &then);
    }
}

#[test]
fn an_array_of_the_wrong_length_is_refused_by_name_and_the_run_goes_on() {
    for (backend, _) in BACKENDS {
        let mut sim = Simulation::on_backend(&crowd(), backend, gpu()).unwrap();
        let mut position = vec![[0f32; 3]; 300];
        let mut velocity = vec![[0f32; 3]; 299];
        let out = StatesMut {
            position: Some(&mut position),
            velocity: Some(&mut velocity),
            ..StatesMut::default()
        };
        let error = sim.read_states(out).unwrap_err();
        assert!(
            matches!(&error, Error::Invalid { field, .. } if field == "velocity"),
            "{backend:?}: {error}"
        );
        assert_eq!(
            error.to_string(),
            "velocity: needs one entry per body: 300 bodies, got 299"
        );
        assert_eq!(position[0], [0.0; 3], "nothing is written before the check");
        sim.step(1).unwrap();
        sim.read_states(StatesMut {
            position: Some(&mut position),
            ..StatesMut::default()
        })
        .unwrap();
        assert_ne!(position[0], [0.0; 3]);
    }
}
