//! `rigid-crowd bench` under an MPI launcher (feature `mpi`): each row timed on rank 0
//! alone, then on every rank at once, in the same run, with the parallel efficiency of both
//! ways of scaling (the same crowd over the ranks; a crowd as many times larger).
//!
//! A run over the ranks is timed from a barrier to the slowest rank's end (the all-reduce of
//! the longest time), its agreement on the outcome included: what a real run pays.

use std::process::ExitCode;
use std::time::Instant;

use ::mpi::collective::SystemOperation;
use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::*;
use serde::Serialize;

use super::world::World;
use crate::assembly::crowd::Crowd;
use crate::backends::gpu::{GpuContext, GpuOptions};
use crate::bench::{BenchPlan, describe_options};
use crate::checkpoint::atomic_file::AtomicFile;
use crate::mpi::{MpiSimulation, agree_on, node_rank};
use crate::{Backend, Result, Simulation};

/// One row: a backend and variant at one crowd size, on one rank and on every rank.
#[derive(Serialize, Debug)]
struct RankRow {
    backend: String,
    variant: String,
    /// Bodies of the one-rank run and of the strong-scaling run.
    bodies: usize,
    ranks: usize,
    steps: u64,
    /// Body-steps per second: rank 0 alone with `bodies`.
    one_rank: f64,
    /// Every rank, `bodies` split over them (strong scaling).
    strong: f64,
    /// `strong / (ranks * one_rank)`.
    strong_efficiency: f64,
    /// Every rank, `ranks * bodies` split over them (weak scaling: `bodies` a rank).
    weak: f64,
    /// `weak / (ranks * one_rank)`.
    weak_efficiency: f64,
}

/// Measures `plan` on one rank and on all of `world`'s; rank 0 prints the table (and the
/// JSON to `json`).
pub(crate) fn bench(
    plan: &BenchPlan,
    world: &World,
    json: Option<&std::path::Path>,
) -> Result<ExitCode> {
    let comm = world.comm();
    let ranks = comm.size() as usize;
    let root = comm.rank() == 0;
    let json_out = match (root, json) {
        (true, Some(path)) => agree_on(comm, AtomicFile::create(path).map(Some))?,
        _ => agree_on(comm, Ok(None))?,
    };
    let gpu = match plan.backends.iter().any(|b| b.gpu_precision().is_some()) {
        true => agree_on(comm, GpuContext::open_adapter(node_rank(comm)).map(Some))?,
        false => None,
    };
    if root {
        println!(
            "rigid-crowd bench over {ranks} MPI ranks: {} steps per run, median of {} runs after one warm-up; workload {}: {}",
            plan.steps,
            plan.repeats,
            plan.workload.name(),
            plan.workload.describe()
        );
        println!(
            "each row: rank 0 alone, then every rank at once (barrier to the slowest rank's end)"
        );
        println!(
            "{:<8} {:<26} {:>10} {:>14} {:>14} {:>8} {:>14} {:>8}",
            "backend",
            "variant",
            "bodies",
            "1 rank",
            format!("{ranks} ranks"),
            "eff",
            format!("{ranks}x bodies"),
            "eff"
        );
    }
    let mut rows = Vec::new();
    for &bodies in &plan.bodies {
        for &backend in &plan.backends {
            let variants: Vec<Variant> = match backend.gpu_precision() {
                None => plan
                    .cpu_threads
                    .iter()
                    .map(|&t| Variant::Threads(t))
                    .collect(),
                Some(precision) => plan
                    .gpu_variants
                    .iter()
                    .map(|o| Variant::Gpu(GpuOptions { precision, ..*o }))
                    .collect(),
            };
            for (variant, tangents) in variants
                .into_iter()
                .flat_map(|v| plan.tangents.iter().map(move |t| (v, t.as_deref())))
            {
                let one = Run {
                    backend,
                    variant,
                    gpu: gpu.as_ref(),
                    plan,
                    tangents,
                };
                let one_crowd = agree_on(comm, plan.workload.crowd(bodies, 1))?;
                let one_rank = one.alone(comm, &one_crowd)?;
                let strong = one.spread(comm, &one_crowd)?;
                drop(one_crowd);
                let weak_crowd = agree_on(comm, plan.workload.crowd(bodies * ranks, 1))?;
                let weak = one.spread(comm, &weak_crowd)?;
                let label = match tangents {
                    Some(name) => format!("{}, {name}", variant.describe()),
                    None => variant.describe(),
                };
                let row = RankRow {
                    backend: backend.name().to_string(),
                    variant: label,
                    bodies,
                    ranks,
                    steps: plan.steps,
                    one_rank,
                    strong,
                    strong_efficiency: strong / (ranks as f64 * one_rank),
                    weak,
                    weak_efficiency: weak / (ranks as f64 * one_rank),
                };
                if root {
                    println!(
                        "{:<8} {:<26} {:>10} {:>14} {:>14} {:>8.2} {:>14} {:>8.2}",
                        row.backend,
                        row.variant,
                        row.bodies,
                        super::text::rate(row.one_rank),
                        super::text::rate(row.strong),
                        row.strong_efficiency,
                        super::text::rate(row.weak),
                        row.weak_efficiency
                    );
                }
                rows.push(row);
            }
        }
    }
    if let Some(mut file) = json_out {
        let text = serde_json::to_vec_pretty(&rows).expect("rows serialize");
        std::io::Write::write_all(&mut file, &text)
            .map_err(|e| crate::Error::io(file.target(), e))?;
        file.commit()?;
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Clone, Copy)]
enum Variant {
    Threads(usize),
    Gpu(GpuOptions),
}

impl Variant {
    fn describe(&self) -> String {
        match self {
            Variant::Threads(n) => format!("{n} threads a rank"),
            Variant::Gpu(options) => describe_options(options),
        }
    }
}

/// One backend and variant, timed.
struct Run<'a> {
    backend: Backend,
    variant: Variant,
    gpu: Option<&'a GpuContext>,
    plan: &'a BenchPlan,
    /// The tangents carried (`--tangents`), if any.
    tangents: Option<&'a str>,
}

impl Run<'_> {
    /// Body-steps per second of `crowd` on rank 0 alone (the others wait), on every rank.
    fn alone(&self, comm: &SimpleCommunicator, crowd: &Crowd) -> Result<f64> {
        let seconds = match comm.rank() {
            0 => (|| {
                let pool = self.pool()?;
                let mut sim = match (self.variant, self.gpu) {
                    (Variant::Gpu(options), Some(ctx)) => {
                        Simulation::gpu_with_options(crowd, ctx, options)
                    }
                    _ => Simulation::new(crowd, self.backend),
                }?;
                if let Some(name) = self.tangents {
                    sim.start_tangents(&[name])?;
                }
                self.median(|steps| {
                    let start = Instant::now();
                    pool.install(|| sim.step(steps).and_then(|()| sim.finish()))?;
                    Ok(start.elapsed().as_secs_f64())
                })
            })(),
            _ => Ok(0.0),
        };
        wait_quietly(comm);
        let mut seconds = agree_on(comm, seconds)?;
        comm.process_at_rank(0).broadcast_into(&mut seconds);
        Ok(crowd.bodies.len() as f64 * self.plan.steps as f64 / seconds)
    }

    /// Body-steps per second of `crowd` split over every rank. Each rank steps its shard on
    /// its pool; MPI is called from this thread alone.
    fn spread(&self, comm: &SimpleCommunicator, crowd: &Crowd) -> Result<f64> {
        let pool = agree_on(comm, self.pool())?;
        let mut sim = match (self.variant, self.gpu) {
            (Variant::Gpu(options), Some(ctx)) => {
                MpiSimulation::gpu_with_options(comm.duplicate(), crowd, ctx, options)
            }
            _ => MpiSimulation::with_gpu(comm.duplicate(), crowd, self.backend, None),
        }?;
        if let Some(name) = self.tangents {
            sim.start_tangents(crowd, &[name])?;
        }
        let seconds = self.median(|steps| {
            sim.comm().barrier();
            let start = Instant::now();
            let local = sim.local_mut();
            let stepped = pool.install(|| local.step(steps).and_then(|()| local.finish()));
            sim.agree(stepped)?;
            let mine = start.elapsed().as_secs_f64();
            let mut slowest = 0.0;
            sim.comm()
                .all_reduce_into(&mine, &mut slowest, SystemOperation::max());
            Ok(slowest)
        })?;
        Ok(crowd.bodies.len() as f64 * self.plan.steps as f64 / seconds)
    }

    /// The median of the times `run(steps)` returns, after one warm-up run.
    fn median(&self, mut run: impl FnMut(u64) -> Result<f64>) -> Result<f64> {
        run(self.plan.steps)?;
        let mut times = Vec::with_capacity(self.plan.repeats);
        for _ in 0..self.plan.repeats {
            times.push(run(self.plan.steps)?);
        }
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2].max(1e-12))
    }

    /// A pool of the variant's threads (the CPU backends; one thread drives a GPU).
    fn pool(&self) -> Result<rayon::ThreadPool> {
        let threads = match self.variant {
            Variant::Threads(n) => n,
            Variant::Gpu(_) => 1,
        };
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| crate::Error::invalid("--threads", e.to_string()))
    }
}

/// A barrier the waiting ranks sleep through: MPI's blocking calls poll a core at full
/// speed, which would take a core from rank 0 while it runs alone.
fn wait_quietly(comm: &SimpleCommunicator) {
    let mut request = comm.immediate_barrier();
    loop {
        match request.test() {
            Ok(_) => return,
            Err(pending) => {
                request = pending;
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
    }
}
