//! The examples run and do what they say: each example file is compiled into this test
//! and its functions are called (faster than `cargo run --example`).

use crate::common;

#[path = "../../examples/smallest.rs"]
mod smallest;

#[path = "../../examples/game_loop.rs"]
mod game_loop;

#[path = "../../examples/record_trajectory.rs"]
mod record_trajectory;

#[path = "../../examples/own_device.rs"]
mod own_device;

#[path = "../../examples/fit_inertia.rs"]
mod fit_inertia;

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

#[test]
fn the_own_device_example_draws_every_body_where_its_state_is_with_its_orientation() {
    let (view, frames) = own_device::falling_crowd_frames(300, 3, 150).unwrap();
    let size = own_device::SIZE as i64;
    let reach = own_device::HALF_SQUARE as i64 + 1;
    let mut checked = 0;
    for (f, frame) in frames.iter().enumerate() {
        let pixels: Vec<(i64, i64)> = frame
            .positions
            .iter()
            .map(|&p| view.pixel(p.into()))
            .collect();
        for (i, &(column, row)) in pixels.iter().enumerate() {
            if !(0..size).contains(&column) || !(0..size).contains(&row) {
                continue;
            }
            // A body drawn later whose square reaches this pixel paints over it.
            let hidden = pixels[i + 1..]
                .iter()
                .any(|&(c, r)| (c - column).abs() <= reach && (r - row).abs() <= reach);
            let drawn = frame.pixels[(row * size + column) as usize];
            let expected = own_device::colour(frame.orientations[i]);
            if hidden {
                continue;
            }
            for k in 0..3 {
                assert!(
                    (drawn[k] as f32 - expected[k]).abs() <= 2.0,
                    "frame {f} body {i} at pixel ({column}, {row}): drew {drawn:?}, expected {expected:?}"
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 300, "most bodies are checked ({checked})");
    assert!(own_device::run(None).unwrap() > 0);
    // The crowd fell between the first and the last frame: the picture moved with the states.
    let height = |frame: &own_device::Frame| {
        frame.positions.iter().map(|p| p[2]).sum::<f32>() / frame.positions.len() as f32
    };
    assert!(height(&frames[2]) < height(&frames[0]) - 0.4);
    assert_ne!(frames[0].pixels, frames[2].pixels);
}

/// Gauss–Newton on the inertia sensitivities converges quadratically to the inertia the
/// observations came from: derivatives off by even a little would make it linear.
#[test]
fn the_inertia_fit_finds_the_true_inertia_quadratically() {
    fit_inertia::main().unwrap();
    let steps = 200;
    let (observed, _) = fit_inertia::predict(fit_inertia::TRUTH, steps).unwrap();
    let history = fit_inertia::fit(&observed, fit_inertia::GUESS, steps, 6).unwrap();
    let residuals: Vec<f64> = history.iter().map(|(_, r)| *r).collect();
    println!("residuals {residuals:?}");
    // Each step squares the error once it is small: 1.2e-4 gives 5e-9, which gives round-off.
    for k in 2..4 {
        assert!(
            residuals[k + 1] <= 2.0 * residuals[k] * residuals[k],
            "step {k}: {residuals:?}"
        );
    }
    let (entries, residual) = history[5];
    assert!(residual < 1e-12, "{residuals:?}");
    for (fitted, truth) in entries.iter().zip(fit_inertia::TRUTH) {
        assert!((fitted - truth).abs() < 1e-10, "{entries:?}");
    }
}
