//! One crowd over the ranks of an MPI communicator: each rank integrates a contiguous shard
//! on its own backend, and every crowd-wide answer (faults, states, totals) is agreed or
//! gathered over the ranks.

use std::ops::Range;

use ::mpi::collective::SystemOperation;
use ::mpi::traits::*;
use glam::{DQuat, DVec3};

use super::agree::agree;
use super::gather::bytes_to_root;
use super::tangent_names::RankTangents;
use crate::assembly::body_source::{BodySource, plan_shards};
use crate::assembly::crowd::Crowd;
use crate::backends::gpu::{GpuContext, GpuOptions};
use crate::model::backend::Backend;
use crate::model::body::{Body, BodyState};
use crate::model::error::{Error, Result};
use crate::model::fault::Fault;
use crate::model::fault_rules::QuarantinedBody;
use crate::simulation::RunsOn;
use crate::simulation::facade::Simulation;

/// A crowd integrated by the ranks of an MPI communicator, one contiguous shard each.
///
/// Every rank builds it from the same crowd and calls the same methods in the same order
/// (each is collective). Bodies are independent, so the states are bit for bit those of one
/// process on the same backend, whatever the rank count; results that depend on the whole
/// crowd ([`step`](Self::step)'s faults, [`states_on_root`](Self::states_on_root),
/// [`quarantined`](Self::quarantined), [`totals`](Self::totals)) are the same on every rank
/// and use crowd indices.
pub struct MpiSimulation<C: Communicator> {
    comm: C,
    local: Simulation,
    /// Every rank's bodies, by crowd index.
    shards: Vec<Range<usize>>,
    rank: usize,
    /// Which of the two sets of shard files the next checkpoint writes (src/mpi/checkpoint.rs).
    pub(super) next_slot: Option<u8>,
    /// The tangents carried, if any (src/mpi/tangents.rs).
    pub(super) tangents: Option<RankTangents>,
}

impl<C: Communicator> std::fmt::Debug for MpiSimulation<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MpiSimulation")
            .field("rank", &self.rank)
            .field("shards", &self.shards)
            .field("local", &self.local)
            .finish()
    }
}

/// Crowd-wide sums over every body, reduced over the ranks: what a run watches for drift.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CrowdTotals {
    /// Kinetic energy `sum 1/2 M |v|^2 + 1/2 omega . L`.
    pub kinetic_energy: f64,
    /// Linear momentum `sum P`.
    pub linear_momentum: DVec3,
    /// Angular momentum about the origin, `sum (L + x × P)`.
    pub angular_momentum: DVec3,
}

/// The shards of a crowd of `count` bodies over `ranks` ranks: equal, contiguous, cut on
/// the generator's chunk boundaries (16,384 bodies) where a rank holds at least eight
/// chunks, so that no rank holds more than a sixteenth above its share. Fails, naming the
/// counts, when there are fewer bodies than ranks.
pub fn rank_shards(count: usize, ranks: usize) -> Result<Vec<Range<usize>>> {
    if count < ranks || ranks == 0 {
        return Err(Error::Mpi(format!(
            "a crowd of {count} bodies cannot be split over {ranks} MPI ranks: run with at most {count} ranks"
        )));
    }
    Ok(plan_shards(count, &vec![1.0; ranks], 8))
}

/// This rank's index among the ranks on its node (`MPI_Comm_split_type` shared): which GPU
/// of the node it takes.
pub fn node_rank<C: Communicator>(comm: &C) -> usize {
    comm.split_shared(comm.rank()).rank() as usize
}

impl<C: Communicator> MpiSimulation<C> {
    /// Integrates this rank's shard of `crowd` (the same crowd on every rank) on `backend`;
    /// a GPU backend opens the adapter of the rank's index on its node (see
    /// [`GpuContext::open_adapter`]), so one rank per GPU takes every GPU of a node.
    pub fn new(comm: C, crowd: &Crowd, backend: Backend) -> Result<Self> {
        let gpu = backend
            .gpu_precision()
            .map(|_| GpuContext::open_adapter(node_rank(&comm)));
        let gpu = agree(&comm, 0, gpu.transpose())?;
        Self::with_gpu(comm, crowd, backend, gpu.as_ref())
    }

    /// [`new`](Self::new) on a GPU device the caller opened (ignored on the CPU backends).
    pub fn with_gpu(
        comm: C,
        crowd: &Crowd,
        backend: Backend,
        gpu: Option<&GpuContext>,
    ) -> Result<Self> {
        let on = backend.into();
        Self::from_source(comm, crowd, &BodySource::given(&crowd.bodies), on, gpu)
    }

    /// This rank's shard of `crowd` on the GPU of `ctx`, with the kernel built per
    /// `options` (whose precision picks `gpu` or `gpu-f64`).
    pub fn gpu_with_options(
        comm: C,
        crowd: &Crowd,
        ctx: &GpuContext,
        options: GpuOptions,
    ) -> Result<Self> {
        let devices = std::slice::from_ref(ctx);
        Self::open_shard(
            comm,
            crowd,
            &BodySource::given(&crowd.bodies),
            |settings, part, first| Simulation::gpu_shard(settings, part, devices, options, first),
        )
    }

    /// The bodies of `source` under the rest of `crowd`: this rank builds only its shard (a
    /// generated crowd is generated only there).
    pub(crate) fn from_source(
        comm: C,
        crowd: &Crowd,
        source: &BodySource,
        on: RunsOn,
        gpu: Option<&GpuContext>,
    ) -> Result<Self> {
        let devices: Vec<GpuContext> = gpu.into_iter().cloned().collect();
        Self::open_shard(comm, crowd, source, |settings, part, first| {
            Simulation::shard_from_source(settings, part, on, &devices, first)
        })
    }

    /// This rank's shard of `source`, opened by `open(its settings, its bodies, the crowd
    /// index of its first body)`.
    fn open_shard(
        comm: C,
        crowd: &Crowd,
        source: &BodySource,
        open: impl Fn(&Crowd, &BodySource, usize) -> Result<Simulation>,
    ) -> Result<Self> {
        let ranks = comm.size() as usize;
        let rank = comm.rank() as usize;
        if crowd.collisions.is_some() && ranks > 1 {
            return Err(Error::invalid(
                "collisions",
                format!(
                    "bodies that collide run in one process so far, not over {ranks} MPI ranks"
                ),
            ));
        }
        let shards = rank_shards(source.len(), ranks)?;
        let bodies = shards[rank].clone();
        let local = (|| {
            let settings = crowd.shard_settings(bodies.clone());
            match source.shard(bodies.clone()) {
                Some(part) => open(&settings, &part, bodies.start),
                None => {
                    let given = source.collect_range(bodies.clone())?;
                    open(&settings, &BodySource::given(&given), bodies.start)
                }
            }
        })();
        let local = agree(&comm, bodies.start, local)?;
        Ok(Self {
            comm,
            local,
            shards,
            rank,
            next_slot: None,
            tangents: None,
        })
    }

    /// A simulation whose shard `local` was made by the caller (a resumed checkpoint's),
    /// carrying `tangents`.
    pub(super) fn of(
        comm: C,
        local: Simulation,
        shards: Vec<Range<usize>>,
        tangents: Option<RankTangents>,
    ) -> Self {
        let rank = comm.rank() as usize;
        Self {
            comm,
            local,
            shards,
            rank,
            next_slot: None,
            tangents,
        }
    }

    /// Runs `steps` steps on every rank and waits for them. Every rank returns the same
    /// result: the first fault over the crowd (its crowd index, and the rank in
    /// [`Error::OnRank`]) stops them all together.
    pub fn step(&mut self, steps: u64) -> Result<()> {
        let local = self.local.step(steps).and_then(|()| self.local.finish());
        self.agree(local)
    }

    /// Waits for the steps queued on every rank; faults as for [`step`](Self::step).
    pub fn finish(&mut self) -> Result<()> {
        let local = self.local.finish();
        self.agree(local)
    }

    /// Every rank's `local` outcome made one (see [`Error::OnRank`]).
    pub fn agree<T>(&self, local: Result<T>) -> Result<T> {
        agree(&self.comm, self.shard().start, local)
    }

    /// The communicator.
    pub fn comm(&self) -> &C {
        &self.comm
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Ranks in the communicator.
    pub fn ranks(&self) -> usize {
        self.shards.len()
    }

    /// Whether this is rank 0, which writes the crowd's files.
    pub fn is_root(&self) -> bool {
        self.rank == 0
    }

    /// The crowd indices of this rank's bodies.
    pub fn shard(&self) -> Range<usize> {
        self.shards[self.rank].clone()
    }

    /// Every rank's bodies, in rank order.
    pub fn shards(&self) -> &[Range<usize>] {
        &self.shards
    }

    /// Bodies in the whole crowd.
    pub fn body_count(&self) -> usize {
        self.shards.last().map_or(0, |s| s.end)
    }

    /// This rank's shard as a [`Simulation`] of its own (its indices count from the shard's
    /// first body; a custom force still sees crowd indices).
    pub fn local(&self) -> &Simulation {
        &self.local
    }

    /// [`local`](Self::local), mutable. Stepping it alone desynchronizes the ranks: step
    /// through [`step`](Self::step).
    pub fn local_mut(&mut self) -> &mut Simulation {
        &mut self.local
    }

    /// The communicator and the local shard at once, for work that streams the one through
    /// the other.
    #[cfg(feature = "cli")]
    pub(crate) fn parts_mut(&mut self) -> (&C, &mut Simulation) {
        (&self.comm, &mut self.local)
    }

    /// The clock's step (the same on every rank).
    pub fn clock_step(&self) -> u64 {
        self.local.clock_step()
    }

    /// Every body's state, in crowd order, on rank 0 (`None` on the others): the ranks'
    /// shards streamed to rank 0 as 13 little-endian f64 a body.
    pub fn states_on_root(&mut self) -> Result<Option<Vec<BodyState>>> {
        let mut bytes = Vec::new();
        let mut read = Ok(());
        let sent = bytes_to_root(&self.comm, &mut bytes, |out| {
            read = self.local.visit_states(|_, _, state| {
                let _ = out.write_all(&state_bytes(state));
            });
            Ok(())
        });
        let local = read.and(sent.map_err(|e| Error::Mpi(format!("gathering states: {e}"))));
        self.agree(local)?;
        Ok(self
            .is_root()
            .then(|| bytes.chunks_exact(STATE_BYTES).map(state_from).collect()))
    }

    /// The bodies frozen under the `freeze` policy over the whole crowd, by crowd index, on
    /// every rank.
    pub fn quarantined(&mut self) -> Result<Vec<QuarantinedBody>> {
        let first = self.shard().start;
        let local = self.local.quarantined();
        let local = self.agree(local)?;
        let mut mine = Vec::with_capacity(local.len() * QUARANTINED_BYTES);
        for q in &local {
            mine.extend_from_slice(&((first + q.body) as u64).to_le_bytes());
            mine.extend_from_slice(&q.step.to_le_bytes());
            mine.extend_from_slice(&u64::from(q.fault.code()).to_le_bytes());
            mine.extend_from_slice(&state_bytes(&q.state));
        }
        let all = self.all_bytes(&mine)?;
        all.chunks_exact(QUARANTINED_BYTES)
            .map(|record| {
                let word =
                    |i: usize| u64::from_le_bytes(record[i * 8..i * 8 + 8].try_into().unwrap());
                let fault = Fault::from_code(word(2) as u32)
                    .ok_or_else(|| Error::Mpi(format!("a rank sent fault code {}", word(2))))?;
                Ok(QuarantinedBody {
                    body: word(0) as usize,
                    step: word(1),
                    fault,
                    state: state_from(&record[24..]),
                })
            })
            .collect()
    }

    /// The crowd's kinetic energy and momenta, summed on each rank and then over the ranks
    /// (one all-reduce of 7 f64): the same on every rank.
    pub fn totals(&mut self) -> Result<CrowdTotals> {
        let mut sums = [0.0f64; 7];
        let read = self.local.visit_states(|_, &mass, &state| {
            let body = Body { mass, state };
            let l = state.angular_momentum + state.position.cross(state.linear_momentum);
            sums[0] += body.kinetic_energy();
            for (k, v) in [state.linear_momentum, l].iter().enumerate() {
                sums[1 + 3 * k..4 + 3 * k]
                    .iter_mut()
                    .zip(v.to_array())
                    .for_each(|(s, x)| *s += x);
            }
        });
        self.agree(read)?;
        let mut total = [0.0f64; 7];
        self.comm
            .all_reduce_into(&sums[..], &mut total[..], SystemOperation::sum());
        Ok(CrowdTotals {
            kinetic_energy: total[0],
            linear_momentum: DVec3::new(total[1], total[2], total[3]),
            angular_momentum: DVec3::new(total[4], total[5], total[6]),
        })
    }

    /// Every rank's `mine`, in rank order, on every rank.
    fn all_bytes(&self, mine: &[u8]) -> Result<Vec<u8>> {
        let mut all = Vec::new();
        let sent = bytes_to_root(&self.comm, &mut all, |out| out.write_all(mine));
        self.agree(sent.map_err(|e| Error::Mpi(format!("gathering: {e}"))))?;
        super::gather::broadcast_bytes(&self.comm, 0, &mut all);
        Ok(all)
    }
}

/// A state's 13 numbers: position, orientation `w, x, y, z`, both momenta.
const STATE_BYTES: usize = 13 * 8;
/// A frozen body: index, step, fault code, state.
const QUARANTINED_BYTES: usize = 3 * 8 + STATE_BYTES;

fn state_bytes(state: &BodyState) -> [u8; STATE_BYTES] {
    let q = state.orientation;
    let values = [
        state.position.to_array(),
        [q.w, q.x, q.y],
        [q.z, state.linear_momentum.x, state.linear_momentum.y],
        [
            state.linear_momentum.z,
            state.angular_momentum.x,
            state.angular_momentum.y,
        ],
    ];
    let mut bytes = [0u8; STATE_BYTES];
    let numbers = values.iter().flatten().chain([&state.angular_momentum.z]);
    for (slot, value) in bytes.chunks_exact_mut(8).zip(numbers) {
        slot.copy_from_slice(&value.to_le_bytes());
    }
    bytes
}

fn state_from(bytes: &[u8]) -> BodyState {
    let v = |i: usize| f64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().unwrap());
    BodyState {
        position: DVec3::new(v(0), v(1), v(2)),
        orientation: DQuat::from_xyzw(v(4), v(5), v(6), v(3)),
        linear_momentum: DVec3::new(v(7), v(8), v(9)),
        angular_momentum: DVec3::new(v(10), v(11), v(12)),
    }
}
