//! A game loop: physics on the GPU, states read back every frame without ever blocking it.
//!
//! Each frame queues its physics steps, then draws the newest states that have arrived:
//! the ticket asked for last frame is usually ready, and if it is not the frame draws the
//! states it already has instead of waiting. Falls back to the fast CPU path without a GPU.
//!
//! `cargo run --release --example game_loop`

use rigid_crowd::glam::DVec3;
use rigid_crowd::{Backend, Body, Crowd, CrowdSpec, Force, ForceKind, Simulation};

/// Physics steps per drawn frame: 1/60 s at dt = 1/600 s.
const STEPS_PER_FRAME: u64 = 10;

/// What the loop drew: for each frame, the step of the states it drew.
pub fn game_loop(sim: &mut Simulation, frames: usize) -> rigid_crowd::Result<Vec<u64>> {
    let mut drawn_steps = Vec::with_capacity(frames);
    let mut ticket = sim.request_states()?;
    let mut shown: (u64, Vec<Body>) = (0, sim.bodies()?);
    for _ in 0..frames {
        sim.step(STEPS_PER_FRAME)?; // queued; on the GPU this returns at once
        if let Some(bodies) = sim.try_states(&ticket)? {
            shown = (ticket.step(), bodies);
            ticket = sim.request_states()?; // the states after this frame's steps
        }
        draw(&shown.1);
        drawn_steps.push(shown.0);
    }
    Ok(drawn_steps)
}

/// Stands in for a renderer: the height of the highest body.
fn draw(bodies: &[Body]) -> f64 {
    bodies
        .iter()
        .map(|b| b.state.position.z)
        .fold(f64::MIN, f64::max)
}

/// A crowd falling under gravity, 1/600 s steps.
pub fn falling_crowd() -> rigid_crowd::Result<Crowd> {
    Ok(
        Crowd::new(CrowdSpec::new(10_000, 7).generate()?, 1.0 / 600.0).with_force(Force::on_all(
            ForceKind::Gravity {
                acceleration: DVec3::new(0.0, 0.0, -9.81),
            },
        )),
    )
}

#[allow(dead_code)] // the tests include this file and call game_loop themselves
fn main() -> rigid_crowd::Result<()> {
    let crowd = falling_crowd()?;
    let mut sim = Simulation::new(&crowd, Backend::Gpu)
        .or_else(|_| Simulation::new(&crowd, Backend::FastCpu))?;
    let drawn = game_loop(&mut sim, 120)?;
    let fresh = drawn.windows(2).filter(|pair| pair[1] != pair[0]).count();
    println!(
        "{} frames on {}: {fresh} drew new states, the last drawn was step {} of {}",
        drawn.len(),
        sim.backend().name(),
        drawn.last().copied().unwrap_or(0),
        sim.steps_taken()
    );
    Ok(())
}
