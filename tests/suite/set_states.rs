//! `Simulation::set_states` resets a subset of bodies in place: the run goes on exactly as a
//! fresh run of the crowd with those states would, on every backend, the other bodies
//! untouched; bad entries are refused by name and change nothing.

use crate::common;

use common::{BACKENDS, gpu};
use rigid_crowd::glam::{DQuat, DVec3};
use rigid_crowd::{BodyState, Crowd, CrowdSpec, Error, Force, ForceKind, Simulation};

fn crowd() -> Crowd {
    Crowd::new(CrowdSpec::new(301, 21).generate().unwrap(), 1e-3)
        .with_force(Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        }))
        .with_force(Force::on_all(ForceKind::LinearDrag {
            linear: 0.2,
            angular: 0.1,
        }))
        // Time-dependent, so a reset body must keep the crowd's clock.
        .with_force(Force::on_all(ForceKind::Sinusoidal {
            force: DVec3::new(3.0, 0.0, 0.0),
            torque: DVec3::new(0.0, 0.5, 0.0),
            offset: 0.0,
            amplitude: 1.0,
            frequency: 7.0,
            phase: 0.0,
        }))
}

/// A state unlike any the crowd had: thrown up and spinning.
fn thrown(k: usize) -> BodyState {
    BodyState {
        position: DVec3::new(k as f64, -2.0, 5.0),
        // Not normalized: set_states normalizes it, as any input.
        orientation: DQuat::from_xyzw(0.1, 0.2 * k as f64, 0.3, 2.0),
        linear_momentum: DVec3::new(0.5, 0.0, 4.0 + k as f64),
        angular_momentum: DVec3::new(0.0, 1.5, -0.7 * k as f64),
    }
}

#[test]
fn reset_bodies_go_on_as_a_fresh_run_from_their_new_states_would() {
    // 301 bodies: the fast CPU path's last block holds one body and seven padding lanes.
    let indices = [5, 6, 7, 300, 100, 6];
    let crowd = crowd();
    for (backend, _) in BACKENDS {
        let mut sim = Simulation::on_backend(&crowd, backend, gpu()).unwrap();
        sim.step(20).unwrap();
        let states: Vec<BodyState> = (0..indices.len()).map(thrown).collect();
        let mut expected = crowd.clone();
        for (body, now) in expected.bodies.iter_mut().zip(sim.bodies().unwrap()) {
            body.state = now.state;
        }
        for (&i, s) in indices.iter().zip(&states) {
            // Later entries win (body 6 is set twice).
            expected.bodies[i].state = BodyState {
                orientation: s.orientation.normalize(),
                ..*s
            };
        }
        expected.start_step = 20;
        sim.set_states(&indices, &states).unwrap();
        sim.step(30).unwrap();
        let mut fresh = Simulation::on_backend(&expected, backend, gpu()).unwrap();
        fresh.step(30).unwrap();
        let (got, want) = (sim.bodies().unwrap(), fresh.bodies().unwrap());
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g.state, w.state, "{backend:?} body {i}");
        }
        assert!(
            got[300].state.position.z > 5.0,
            "{backend:?}: body 300 was thrown up"
        );
        assert_eq!(sim.clock_step(), 50);
    }
}

#[test]
fn bad_entries_are_refused_by_name_and_change_nothing() {
    let crowd = crowd();
    for (backend, _) in BACKENDS {
        let mut sim = Simulation::on_backend(&crowd, backend, gpu()).unwrap();
        sim.step(3).unwrap();
        let before = sim.bodies().unwrap();
        let mut nan = thrown(1);
        nan.linear_momentum.y = f64::NAN;
        let zero = BodyState {
            orientation: DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0),
            ..thrown(2)
        };
        let cases: [(&[usize], Vec<BodyState>, &str); 4] = [
            (&[4, 301], vec![thrown(0), thrown(1)], "indices[1]"),
            (
                &[4, 5],
                vec![thrown(0), nan],
                "states[1].linear_momentum[1]",
            ),
            (&[4], vec![zero], "states[0].orientation"),
            (&[4, 5], vec![thrown(0)], "states"),
        ];
        for (indices, states, field) in cases {
            match sim.set_states(indices, &states) {
                Err(Error::Invalid { field: got, .. }) => assert_eq!(got, field, "{backend:?}"),
                other => panic!("{backend:?} {field}: expected a refusal, got {other:?}"),
            }
        }
        assert_eq!(
            sim.bodies().unwrap(),
            before,
            "{backend:?}: nothing changed"
        );
    }
}
