//! The smallest library call: a seeded crowd, a hundred steps, the states read back.
//!
//! `cargo run --release --example smallest`

use rigid_crowd::{Backend, Crowd, CrowdSpec, Simulation};

pub fn main() -> rigid_crowd::Result<()> {
    let crowd = Crowd::new(CrowdSpec::new(1_000, 42).generate()?, 1e-3);
    let mut sim = Simulation::new(&crowd, Backend::FastCpu)?; // or Backend::Gpu
    sim.step(100)?;
    let bodies = sim.bodies()?;
    println!(
        "body 0 is at {} after {} s",
        bodies[0].state.position,
        sim.time()
    );
    Ok(())
}
