//! Stepping in batches (as `run` does to move its progress bar, and recording does every K
//! steps) gives bit-for-bit the same states as one call, on every backend, including
//! batches that split the GPU's fused dispatches.

use crate::common;

use common::gpu;
use rigid_crowd::glam::DVec3;
use rigid_crowd::{Backend, Crowd, CrowdSpec, Force, ForceKind, Plane, Simulation};

#[test]
fn split_steps_equal_one_call_bit_for_bit_on_every_backend() {
    let crowd = Crowd::new(CrowdSpec::new(500, 3).generate().unwrap(), 1e-3)
        .with_force(Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        }))
        .with_force(Force::on_all(ForceKind::Sinusoidal {
            force: DVec3::new(2.0, 0.0, 1.0),
            torque: DVec3::new(0.0, 0.3, 0.0),
            offset: 0.5,
            amplitude: 1.0,
            frequency: 5.0,
            phase: 0.0,
        }));
    let mut floored = crowd.clone();
    floored.planes.push(Plane::through(
        DVec3::new(0.0, 0.0, -0.5),
        DVec3::Z,
        0.5,
        0.3,
    ));
    for crowd in [crowd, floored] {
        for backend in Backend::ALL {
            let new = || match backend {
                Backend::Gpu => Simulation::gpu(&crowd, gpu()),
                other => Simulation::new(&crowd, other),
            };
            let mut whole = new().unwrap();
            whole.step(200).unwrap();
            let whole = whole.bodies().unwrap();
            // 64 + 128 (multiples of the fusion, as the progress bar batches) and a tail;
            // then batches of 10 and odd sizes that cut fused dispatches in two.
            for batches in [&[64, 128, 8][..], &[10; 20], &[3, 5, 7, 11, 13, 161]] {
                let mut split = new().unwrap();
                for &n in batches {
                    split.step(n).unwrap();
                }
                assert_eq!(split.steps_taken(), 200);
                assert_eq!(split.bodies().unwrap(), whole, "{backend:?}, {batches:?}");
            }
        }
    }
}
