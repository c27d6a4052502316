//! Checkpoints: everything a run needs to continue, in one file that is either whole or
//! absent.
//!
//! Layout (little-endian): the 8-byte magic `RGDCRWD\n`, the format version (`u32`), the
//! payload length (`u64`) and the payload's CRC-32 (`u32`), then the payload: the scene
//! version, the backend and adapter that wrote it, the integrator, `dt`, the clock's step,
//! the run plan, keyframes, planes, the custom force's WGSL, forces, every body (mass,
//! inertia, shape, model frame, state), the external loads, the fault rules and the frozen
//! bodies (index, step, fault, last good state), and the tangents carried (their names and
//! every body's columns). Floating-point values are stored as their exact bits, so a run resumed from a checkpoint continues bit for bit.

pub(crate) mod atomic_file;
mod bytes;
mod codec;
mod contents;
mod file_format;
mod run_plan;

pub use contents::{Checkpoint, TangentColumns};
pub use file_format::CHECKPOINT_VERSION;
#[cfg(feature = "mpi")]
pub use file_format::MANIFEST_KEY;
#[cfg(any(feature = "cli", feature = "mpi"))]
pub use file_format::is_manifest;
pub use run_plan::{RecordingPlan, RunPlan, TrajectoryProgress};
