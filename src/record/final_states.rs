//! The final states of `rigid-crowd run` and `resume` (`--out`), in the format of the file's
//! extension: the state CSV, or the 19 [`TRAJECTORY_COLUMNS`] of one frame as `.npy` or
//! `.npz`, in the precision the backend computes in.

use std::io::Write;

use crate::atomic_file::AtomicFile;
use crate::backend::Backend;
use crate::body::Body;
use crate::csv::{BatchEncoder, CSV_HEADER, encode_csv_rows};
use crate::error::{Error, Result};
use crate::record::columns::{TRAJECTORY_COLUMNS, state_row};
use crate::record::format::TrajectoryFormat;
use crate::record::npy::{self, Dtype};
use crate::record::npz::NpzArchive;
use crate::simulation::Simulation;

/// Writes the bodies of `sim` as they are now into `file` as `format` and commits it (renames
/// it into place). The states are streamed from the simulation a batch at a time: nothing
/// grows with the crowd but the file.
///
/// - `.csv`: [`write_states_csv`].
/// - `.npy`: one array of shape `(bodies, 19)`, the last axis the [`TRAJECTORY_COLUMNS`];
///   float32 on the f32 backends (`gpu`, `cpu`: each value is the CSV's rounded to f32),
///   float64 on `cpu-ref` and `gpu-f64` (the CSV's values exactly).
/// - `.npz`: an uncompressed archive of `states` (as `.npy`), `step` (int64 scalar, the clock
///   step of the states) and `time` (float64 scalar, the simulated time).
pub(crate) fn write_final_states(
    mut file: AtomicFile,
    format: TrajectoryFormat,
    sim: &mut Simulation,
) -> Result<()> {
    let (backend, step, time, count) = (
        sim.backend(),
        sim.clock_step(),
        sim.time(),
        sim.body_count(),
    );
    let target = file.target().to_path_buf();
    let io = |e| Error::io(&target, e);
    let single = match backend {
        Backend::FastCpu | Backend::Gpu => true,
        Backend::Reference | Backend::GpuF64 => false,
    };
    let (dtype, element_bytes) = if single {
        (Dtype::F32, 4)
    } else {
        (Dtype::F64, 8)
    };
    let header = npy::header(dtype, &[count, TRAJECTORY_COLUMNS.len()]);
    let file = match format {
        TrajectoryFormat::Csv => {
            writeln!(file, "{CSV_HEADER}").map_err(io)?;
            stream(sim, file.writer(), encode_csv_rows).map_err(|e| e.on(&target))?;
            file
        }
        TrajectoryFormat::Npy => {
            file.write_all(&header).map_err(io)?;
            stream(sim, file.writer(), rows(single)).map_err(|e| e.on(&target))?;
            file
        }
        TrajectoryFormat::Npz => {
            let bytes = header.len() + count * TRAJECTORY_COLUMNS.len() * element_bytes;
            let mut archive = NpzArchive::create(file, &target, &header, bytes as u64)?;
            stream(sim, archive.states_writer(), rows(single)).map_err(|e| e.on(&target))?;
            archive.finish_with_step_and_time(step as i64, time)?
        }
    };
    file.commit()
}

/// Why streaming the states stopped: the simulation's read or the write.
enum StreamError {
    Read(Error),
    Write(std::io::Error),
}

impl StreamError {
    /// The crate error, a write error naming `target`.
    fn on(self, target: &std::path::Path) -> Error {
        match self {
            StreamError::Read(e) => e,
            StreamError::Write(e) => Error::io(target, e),
        }
    }
}

/// Every body of `sim`, encoded batch by batch with `encode` into `out`.
fn stream<W: Write + ?Sized>(
    sim: &mut Simulation,
    out: &mut W,
    encode: impl Fn(usize, &[Body], &mut Vec<u8>) + Sync,
) -> std::result::Result<(), StreamError> {
    let mut encoder = BatchEncoder::new(out, encode);
    sim.stream_states(|_, &mass, &state| encoder.push(Body { mass, state }))
        .map_err(StreamError::Read)?;
    encoder.finish().map_err(StreamError::Write)
}

/// The rows of [`state_row`], little-endian, as float32 (`single`) or float64.
fn rows(single: bool) -> impl Fn(usize, &[Body], &mut Vec<u8>) + Sync {
    move |_, chunk, bytes| {
        if single {
            for body in chunk {
                for value in state_row(body) {
                    bytes.extend_from_slice(&(value as f32).to_le_bytes());
                }
            }
        } else {
            for body in chunk {
                for value in state_row(body) {
                    bytes.extend_from_slice(&value.to_le_bytes());
                }
            }
        }
    }
}
