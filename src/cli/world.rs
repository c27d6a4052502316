//! MPI as the command line meets it: initialized when a launcher started this process, and
//! the agreed end of a command over the ranks.

use std::process::ExitCode;

use ::mpi::environment::Universe;
use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::*;

use crate::Result;

/// The variables MPI launchers set in the processes they start (Open MPI's `mpirun`, MPICH's
/// Hydra, PMIx launchers such as Slurm's `srun`).
pub(crate) const LAUNCHER_VARIABLES: [&str; 3] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"];

/// MPI, initialized because a launcher started this process.
pub(crate) struct World {
    comm: SimpleCommunicator,
    // Finalizes MPI when dropped, after the communicator.
    _universe: Universe,
}

impl World {
    /// MPI initialized and its world communicator, when an MPI launcher started this
    /// process; `None` when it was started alone (it then runs as a single process).
    pub(crate) fn launched() -> Option<Self> {
        if !LAUNCHER_VARIABLES
            .iter()
            .any(|v| std::env::var_os(v).is_some())
        {
            return None;
        }
        let universe = ::mpi::initialize()?;
        // A rank that panics must not wait in MPI_Finalize for ranks that wait for it: it
        // ends at once, and the launcher ends the others.
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            report(info);
            std::process::abort();
        }));
        Some(Self {
            comm: universe.world(),
            _universe: universe,
        })
    }

    /// The world's communicator.
    pub(crate) fn comm(&self) -> &SimpleCommunicator {
        &self.comm
    }

    /// Whether this is rank 0, which prints and writes the crowd's files.
    pub(crate) fn is_root(&self) -> bool {
        self.comm.rank() == 0
    }
}

/// Ends a command over the ranks: rank 0 says the (agreed) error, then every rank waits for
/// the others, so that no rank's failing exit makes the launcher end rank 0 before it said
/// it.
pub(crate) fn conclude(world: &World, outcome: Result<ExitCode>) -> ExitCode {
    let code = match outcome {
        Ok(code) => code,
        Err(e) => {
            if world.is_root() {
                super::text::say(&format!("error: {e}"));
            }
            ExitCode::FAILURE
        }
    };
    world.comm.barrier();
    code
}
