//! The examples run and do what they say: each example file is compiled into this test
//! and its functions are called (faster than `cargo run --example`).

mod common;

#[path = "../examples/smallest.rs"]
mod smallest;

#[path = "../examples/game_loop.rs"]
mod game_loop;

#[path = "../examples/record_trajectory.rs"]
mod record_trajectory;

use common::gpu;
use rigid_crowd::{Backend, Simulation};

#[test]
fn the_smallest_example_runs() {
    smallest::main().unwrap();
}

#[test]
fn the_game_loop_draws_states_that_are_never_ahead_and_keep_arriving() {
    let crowd = game_loop::falling_crowd().unwrap();
    for backend in [Backend::FastCpu, Backend::Gpu] {
        let mut sim = match backend {
            Backend::Gpu => Simulation::gpu(&crowd, gpu()).unwrap(),
            other => Simulation::new(&crowd, other).unwrap(),
        };
        let drawn = game_loop::game_loop(&mut sim, 30).unwrap();
        assert_eq!(drawn.len(), 30);
        assert_eq!(sim.steps_taken(), 300);
        for (frame, &step) in drawn.iter().enumerate() {
            // Frame f has queued 10 (f + 1) steps; what it draws is at most one frame old
            // on the CPU (ready at once) and never ahead of the physics.
            assert!(
                step <= 10 * frame as u64,
                "{backend:?} frame {frame}: step {step}"
            );
            assert_eq!(step % 10, 0);
            if backend == Backend::FastCpu {
                assert_eq!(step, 10 * frame as u64);
            }
        }
        assert!(drawn.windows(2).all(|p| p[0] <= p[1]));
        assert!(
            *drawn.last().unwrap() > 0,
            "{backend:?}: new states arrived"
        );
    }
}

#[test]
fn the_record_example_writes_the_frames_it_reports() {
    let dir = tempfile::tempdir().unwrap();
    for (backend, name) in [(Backend::FastCpu, "t.npz"), (Backend::Gpu, "t.npy")] {
        let path = dir.path().join(name);
        let frames = record_trajectory::record(&path, backend, 100, 10).unwrap();
        assert_eq!(frames, 11);
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size > (11 * 500 * 19 * 8) as u64, "{name}: {size} bytes");
    }
}
