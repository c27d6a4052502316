//! The rest of a run a checkpoint carries, so that `rigid-crowd resume` (or a library caller)
//! can finish it: where it ends, where it writes, and the recording in progress. A library
//! concept, not the command line's: any front end that checkpoints a run fills it in.

use std::path::PathBuf;

/// The rest of a command-line run: where it stops and where it writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunPlan {
    /// The clock step at which the run ends.
    pub end_step: u64,
    /// Where the final states go (CSV).
    pub out: PathBuf,
    /// Steps between checkpoints (0: none).
    pub checkpoint_every: u64,
    /// The trajectory being recorded (`--record`), if any.
    pub recording: Option<RecordingPlan>,
}

/// A trajectory recorded by a command-line run (`--record FILE --every K`), as far as it was
/// at the checkpoint: `rigid-crowd resume` continues the file so that it ends byte for byte
/// as an uninterrupted run's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordingPlan {
    /// Where the trajectory goes; its file in progress is `.NAME.partial` beside it.
    pub path: PathBuf,
    /// Steps between frames.
    pub every: u64,
    /// Frames the finished trajectory holds.
    pub frames: u64,
    /// The clock step of the first frame.
    pub first_step: u64,
    /// What the file in progress held at the checkpoint: every frame up to the checkpoint.
    pub progress: TrajectoryProgress,
}

/// How far a resumable trajectory was made durable ([`TrajectoryWriter::sync`](crate::record::TrajectoryWriter::sync)): what a
/// checkpoint keeps so that [`TrajectoryWriter::resume`](crate::record::TrajectoryWriter::resume) continues the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrajectoryProgress {
    /// Frames written.
    pub frames_written: u64,
    /// Bytes of the file in progress.
    pub bytes: u64,
    /// CRC-32 of those bytes, checked before a resumed run appends.
    pub crc32: u32,
}
