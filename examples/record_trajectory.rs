//! Records a trajectory every 10 steps into a NumPy archive, then prints how to load it.
//!
//! `cargo run --release --example record_trajectory [-- trajectory.npz]`
//!
//! ```python
//! import numpy as np
//! t = np.load("trajectory.npz")
//! print(t["states"].shape, t["steps"], t["times"])  # (frames, bodies, 19)
//! ```

use std::path::Path;

use rigid_crowd::glam::DVec3;
use rigid_crowd::record::{TrajectoryWriter, frame_count, record_run};
use rigid_crowd::{Backend, Crowd, CrowdSpec, Force, ForceKind, Simulation};

/// Runs 500 bodies for `steps` steps on `backend`, recording every `every` steps into
/// `path` (`.npz`, `.npy` or `.csv`); returns the frames written.
pub fn record(path: &Path, backend: Backend, steps: u64, every: u64) -> rigid_crowd::Result<usize> {
    let crowd = Crowd::new(CrowdSpec::new(500, 1).generate()?, 1e-3).with_force(Force::on_all(
        ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        },
    ));
    let mut sim = Simulation::new(&crowd, backend)?;
    let frames = frame_count(steps, every);
    let mut writer = TrajectoryWriter::create(path, crowd.bodies.len(), frames)?;
    record_run(
        &mut sim,
        steps,
        every,
        |step, time, bodies| writer.write_frame(step, time, bodies),
        |_| {},
    )?;
    writer.finish()?; // the file appears only now, whole
    Ok(frames)
}

#[allow(dead_code)] // the tests include this file and call record themselves
fn main() -> rigid_crowd::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or("trajectory.npz".to_string());
    let frames = record(Path::new(&path), Backend::FastCpu, 1_000, 10)?;
    println!("wrote {frames} frames to {path}; in Python:");
    println!("  import numpy as np");
    println!("  t = np.load({path:?})");
    println!("  print(t[\"states\"].shape, t[\"steps\"], t[\"times\"])  # (frames, bodies, 19)");
    Ok(())
}
