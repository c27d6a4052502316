//! Many machines over MPI (feature `mpi`): one crowd split over the ranks of a communicator,
//! one contiguous shard per rank, on the engine HPC sites already run rather than a protocol
//! of our own.
//!
//! ```no_run
//! use rigid_crowd::mpi::{MpiSimulation, mpi};
//! use rigid_crowd::{Backend, CrowdSpec, Crowd};
//!
//! let universe = mpi::initialize().expect("MPI initializes once");
//! let crowd = Crowd::new(CrowdSpec::new(1_000_000, 42).generate()?, 1e-3);
//! // Every rank passes the same crowd and integrates its shard of it.
//! let mut sim = MpiSimulation::new(universe.world(), &crowd, Backend::FastCpu)?;
//! sim.step(100)?; // every rank returns the same result
//! let totals = sim.totals()?; // reduced over the ranks
//! if let Some(states) = sim.states_on_root()? {
//!     println!("{} bodies, kinetic energy {}", states.len(), totals.kinetic_energy);
//! }
//! # Ok::<(), rigid_crowd::Error>(())
//! ```
//!
//! Bodies are independent, so the states are bit for bit those of one process whatever the
//! rank count; only the sums of [`MpiSimulation::totals`] are added in another order. Per
//! step the ranks exchange nothing; each collective call costs one all-gather of 32 bytes a
//! rank to agree on its outcome (see docs/mpi.md).

mod agree;
mod checkpoint;
mod gather;
mod simulation;
mod tangent_names;
mod tangents;

pub use crate::checkpoint::{MANIFEST_KEY, is_manifest};
/// The rsmpi crate this build uses, so a caller's communicator is of the same version.
pub use ::mpi;
#[cfg(feature = "cli")]
pub(crate) use gather::{broadcast_bytes, bytes_to_root};
pub use simulation::{CrowdTotals, MpiSimulation, node_rank, rank_shards};

/// Every rank's `local` outcome made one, for steps before a simulation exists (see
/// [`MpiSimulation::agree`]).
#[cfg(feature = "cli")]
pub(crate) fn agree_on<C: ::mpi::traits::Communicator, T>(
    comm: &C,
    local: crate::Result<T>,
) -> crate::Result<T> {
    agree::agree(comm, 0, local)
}
