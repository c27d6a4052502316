//! Recording a trajectory: the states every K steps as CSV, `.npy` or `.npz`.
//!
//! [`record_run`] steps a [`Simulation`](crate::Simulation) and hands every K-th frame to a
//! [`TrajectoryWriter`], reading each frame back with the non-blocking
//! [`request_states`](crate::Simulation::request_states) so the GPU integrates the next K
//! steps while the host writes the previous frame. See docs/recording.md.

mod columns;
pub(crate) mod csv;
#[cfg(feature = "cli")]
mod final_states;
mod format;
mod frame_status;
mod npy;
#[cfg(feature = "npz")]
mod npz;
mod partial;
mod recorder;
mod writer;

pub use crate::checkpoint::TrajectoryProgress;
pub use columns::TRAJECTORY_COLUMNS;
pub(crate) use columns::state_row;
#[cfg(feature = "cli")]
pub(crate) use final_states::write_final_states;
#[cfg(all(feature = "cli", feature = "mpi"))]
pub(crate) use final_states::{FinalStates, StreamError, stream_final_rows, tangent_array};
pub use format::TrajectoryFormat;
#[cfg(all(feature = "cli", feature = "mpi"))]
pub(crate) use npz::NamedArray;
pub use recorder::{Recorder, frame_count, record_run};
pub use writer::TrajectoryWriter;
#[cfg(all(feature = "cli", feature = "mpi"))]
pub(crate) use writer::encode_frame_part;
#[cfg(feature = "cli")]
pub(crate) use writer::finished_as_synced;
