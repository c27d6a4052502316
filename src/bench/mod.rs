//! Throughput measurement shared by `rigid-crowd bench`, `rigid-crowd demo` and the
//! criterion benches: the workload, the timing of each backend, the report and its plot.

mod measure;
pub mod plot;
mod recording;

pub use measure::{
    BYTES_PER_BODY_STEP, BenchPlan, BenchReport, CopyBandwidth, FLOP_PER_BODY_STEP, Measurement,
    cpu_description, describe_options,
};
pub use recording::{RecordingCost, measure_recording};

use glam::DVec3;

use crate::crowd::Crowd;
use crate::error::Result;
use crate::force::{Force, ForceKind};
use crate::generate::CrowdSpec;

/// The benchmark crowd: seeded boxes and spheres under gravity and linear drag, RK4,
/// `dt = 1e-3` — the forces every body of a particle-like crowd feels.
pub fn workload(bodies: usize, seed: u64) -> Result<Crowd> {
    Ok(Crowd::new(CrowdSpec::new(bodies, seed).generate()?, 1e-3)
        .with_force(Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        }))
        .with_force(Force::on_all(ForceKind::LinearDrag {
            linear: 0.3,
            angular: 0.05,
        })))
}
