//! Lean reads (`Simulation::read_states`, `read_poses`, `wait_states_into`) hand back exactly
//! the states `bodies()` returns, as arrays, on every backend; a wrong length is refused by
//! name. Their allocation bound is tested in tests/read_allocations.rs, a crowd split into
//! chunks in src/simulation/lean_reads.rs.

use crate::common;

use common::{BACKENDS, gpu};
use rigid_crowd::glam::{DQuat, DVec3};
use rigid_crowd::{
    Backend, Body, Crowd, CrowdSpec, Error, Force, ForceKind, MassProperties, Simulation,
    StateArrays, StatesMut, TriangleMesh,
};

/// A tumbling crowd under gravity and drag. Body 0 is a skewed tetrahedron mesh, whose model
/// frame (what reads report) is neither at its centre of mass nor along its principal axes.
fn crowd() -> Crowd {
    let mut bodies = CrowdSpec::new(300, 8).generate().unwrap();
    let corners = [
        [0.0, 0.0, 0.0],
        [2.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 0.5],
    ];
    let tetrahedron = TriangleMesh::new(
        "tetrahedron",
        corners.iter().map(|&c| DVec3::from(c)).collect(),
        vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]],
    );
    let mass = MassProperties::from_mesh(1.5, &tetrahedron, "tetrahedron").unwrap();
    bodies[0] = Body::from_model_kinematics(
        mass,
        DVec3::new(1.0, 2.0, 3.0),
        DQuat::from_rotation_z(0.7),
        DVec3::new(0.0, 1.0, 0.0),
        DVec3::new(2.0, -1.0, 3.0),
    );
    Crowd::new(bodies, 1e-3)
        .with_force(Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, -9.81, 0.0),
        }))
        .with_force(Force::on_all(ForceKind::LinearDrag {
            linear: 0.3,
            angular: 0.2,
        }))
}

/// `arrays` holds `bodies`' state, velocities included, exactly: the model frame's pose and
/// the momenta, as the files the crate writes have them.
fn assert_holds(what: &str, arrays: &StateArrays<f64>, bodies: &[Body]) {
    assert_eq!(arrays.position.len(), bodies.len(), "{what}");
    for (i, body) in bodies.iter().enumerate() {
        let s = &body.state;
        let pose = body.model_pose();
        let q = pose.orientation;
        assert_eq!(
            arrays.position[i],
            pose.position.to_array(),
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
        // Body 0's model frame is not its principal frame: a read of the raw state would fail.
        let centre = bodies[0].state.position.to_array();
        assert!(
            arrays.position[0]
                .iter()
                .zip(centre)
                .any(|(a, b)| (a - b).abs() > 0.1)
        );
    }
}

#[test]
fn f32_backends_read_poses_into_f32_arrays() {
    let crowd = crowd();
    for backend in [Backend::FastCpu, Backend::Gpu] {
        let mut sim = Simulation::on_backend(&crowd, backend, gpu()).unwrap();
        sim.step(7).unwrap();
        let n = sim.body_count();
        let (mut position, mut orientation) = (vec![[0f32; 3]; n], vec![[0f32; 4]; n]);
        sim.read_poses(&mut position, &mut orientation).unwrap();
        let bodies = sim.bodies().unwrap();
        for (i, body) in bodies.iter().enumerate() {
            let pose = body.model_pose();
            let q = pose.orientation;
            let rounded = pose.position.to_array().map(|x| x as f32);
            assert_eq!(position[i], rounded, "{backend:?} {i}");
            let rounded = [q.w, q.x, q.y, q.z].map(|x| x as f32);
            assert_eq!(orientation[i], rounded, "{backend:?} {i}");
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
