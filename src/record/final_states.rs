//! The final states of `rigid-crowd run` and `resume` (`--out`), in the format of the file's
//! extension: the state CSV, or the 19 [`TRAJECTORY_COLUMNS`] of one frame as `.npy` or
//! `.npz`, in the precision the backend computes in.

use std::io::Write;

use crate::atomic_file::AtomicFile;
use crate::backend::Backend;
use crate::body::Body;
use crate::csv::{write_body_chunks, write_states_csv};
use crate::error::{Error, Result};
use crate::record::columns::{TRAJECTORY_COLUMNS, state_row};
use crate::record::format::TrajectoryFormat;
use crate::record::npy::{self, Dtype};
use crate::record::npz::NpzArchive;

/// Writes `bodies` into `file` as `format` and commits it (renames it into place).
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
    bodies: &[Body],
    backend: Backend,
    step: u64,
    time: f64,
) -> Result<()> {
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
    let header = npy::header(dtype, &[bodies.len(), TRAJECTORY_COLUMNS.len()]);
    let file = match format {
        TrajectoryFormat::Csv => {
            write_states_csv(file.writer(), bodies).map_err(io)?;
            file
        }
        TrajectoryFormat::Npy => {
            file.write_all(&header).map_err(io)?;
            write_rows(file.writer(), bodies, single).map_err(io)?;
            file
        }
        TrajectoryFormat::Npz => {
            let bytes = header.len() + bodies.len() * TRAJECTORY_COLUMNS.len() * element_bytes;
            let mut archive = NpzArchive::create(file, &target, &header, bytes as u64)?;
            write_rows(archive.states_writer(), bodies, single).map_err(io)?;
            archive.finish_with_step_and_time(step as i64, time)?
        }
    };
    file.commit()
}

/// The rows of [`state_row`], little-endian, as float32 (`single`) or float64.
fn write_rows(out: &mut impl Write, bodies: &[Body], single: bool) -> std::io::Result<()> {
    write_body_chunks(out, bodies, |_, chunk, bytes| {
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
    })
}
