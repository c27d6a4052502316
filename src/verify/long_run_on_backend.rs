//! The long torque-free run as a simulation on a backend computes it, read every few steps:
//! for crowds and runs too long for the reference stepper's scan of every step. `gpu-f64`
//! gives the reference's bits (tests/suite/gpu_f64.rs) several times faster on lavapipe, so
//! a run of 1e10 body-steps per integrator fits in minutes instead of hours.

use crate::assembly::crowd::Crowd;
use crate::backends::gpu::{GpuContext, GpuOptions};
use crate::model::backend::Backend;
use crate::model::body::Body;
use crate::model::error::{Error, Result};
use crate::model::integrator::Integrator;
use crate::model::precision::Precision;
use crate::simulation::facade::Simulation;
use crate::verify::integrator_accuracy::{LongRun, StartInvariants, sample_steps};

/// GPU steps fused per dispatch: the most throughput on lavapipe for a thousand bodies
/// (`rigid-crowd bench --bodies 1000 --fuse 8,64`: 53 against 87 M body-steps/s).
const STEPS_PER_DISPATCH: u32 = 64;

/// The steps `1..=steps` at which the run is read: every `every`-th and the history's samples.
fn read_steps(steps: u64, every: u64) -> Vec<u64> {
    let mut reads: Vec<u64> = (every..=steps).step_by(every.max(1) as usize).collect();
    reads.extend(sample_steps(steps));
    reads.sort_unstable();
    reads.dedup();
    reads
}

/// The long run of `bodies` under `integrator` (`steps` torque-free steps of `h`) on
/// `backend`, whose crowd is read every `every` steps and at the energy history's sample
/// steps: the largest drift up to a time is the largest of those reads. `|q|` before the
/// renormalization is not seen from outside a step, so `unit_norm` is NaN. A GPU backend runs
/// on `gpu`, which it then needs.
pub fn long_run_on(
    backend: Backend,
    gpu: Option<&GpuContext>,
    integrator: Integrator,
    bodies: &[Body],
    steps: u64,
    h: f64,
    every: u64,
) -> Result<LongRun> {
    let crowd = Crowd::new(bodies.to_vec(), h).with_integrator(integrator);
    let mut sim = match backend {
        Backend::Reference | Backend::FastCpu => Simulation::new(&crowd, backend)?,
        Backend::Gpu | Backend::GpuF64 => {
            let ctx = gpu.ok_or_else(|| {
                Error::invalid("--long-backend", "a GPU backend needs a GPU adapter")
            })?;
            let precision = match backend {
                Backend::GpuF64 => Precision::F64,
                _ => Precision::F32,
            };
            let options = GpuOptions {
                precision,
                steps_per_dispatch: STEPS_PER_DISPATCH,
                ..GpuOptions::default()
            };
            Simulation::gpu_with_options(&crowd, ctx, options)?
        }
    };
    let starts: Vec<StartInvariants> = bodies.iter().map(StartInvariants::of).collect();
    let samples = sample_steps(steps);
    let mut run = LongRun::default();
    run.drifts.unit_norm = f64::NAN;
    let mut taken = 0;
    for read in read_steps(steps, every) {
        sim.step(read - taken)?;
        taken = read;
        for (now, start) in sim.bodies()?.iter().zip(&starts) {
            start.record(now, &mut run.drifts);
        }
        if samples.binary_search(&read).is_ok() {
            run.energy_history
                .push((read as f64 * h, run.drifts.energy));
        }
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::integrator_accuracy::{long_run, long_run_bodies};

    #[test]
    fn the_reads_are_every_kth_step_and_the_samples() {
        assert_eq!(
            read_steps(30, 10),
            vec![1, 2, 3, 4, 5, 6, 8, 10, 13, 16, 20, 25, 30]
        );
        assert_eq!(read_steps(7, 100), sample_steps(7));
    }

    /// Read every step, the reference simulation measures what the reference stepper's scan
    /// does: the same energy history and momentum drifts, bit for bit, for every integrator.
    #[test]
    fn read_every_step_the_reference_simulation_gives_the_scans_history() {
        let bodies = long_run_bodies(4);
        for integrator in Integrator::ALL {
            let scan = long_run(integrator, &bodies, 200, 0.05);
            let read =
                long_run_on(Backend::Reference, None, integrator, &bodies, 200, 0.05, 1).unwrap();
            assert_eq!(read.energy_history, scan.energy_history, "{integrator:?}");
            assert_eq!(read.drifts.energy, scan.drifts.energy);
            assert_eq!(read.drifts.angular_momentum, scan.drifts.angular_momentum);
            assert_eq!(read.drifts.linear_momentum, scan.drifts.linear_momentum);
            assert!(read.drifts.unit_norm.is_nan());
        }
    }

    /// On lavapipe `gpu-f64` computes the reference's long run bit for bit, with gaps between
    /// the reads long enough for whole fused dispatches.
    #[test]
    fn on_gpu_f64_the_long_run_is_the_references() {
        let ctx = GpuContext::new().expect("the long-run test needs a GPU adapter (see README)");
        let bodies = long_run_bodies(5);
        for integrator in Integrator::ALL {
            let on = |backend, gpu| {
                long_run_on(backend, gpu, integrator, &bodies, 1000, 0.02, 500).unwrap()
            };
            let (reference, gpu) = (
                on(Backend::Reference, None),
                on(Backend::GpuF64, Some(&ctx)),
            );
            assert_eq!(
                gpu.energy_history, reference.energy_history,
                "{integrator:?}"
            );
            assert_eq!(gpu.drifts.energy, reference.drifts.energy);
            assert_eq!(
                gpu.drifts.angular_momentum,
                reference.drifts.angular_momentum
            );
            assert_eq!(gpu.drifts.linear_momentum, reference.drifts.linear_momentum);
        }
    }
}
