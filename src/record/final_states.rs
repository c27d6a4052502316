//! The final states of `rigid-crowd run` and `resume` (`--out`), in the format of the file's
//! extension: the state CSV, or the 19 [`TRAJECTORY_COLUMNS`] of one frame as `.npy` or
//! `.npz`, in the precision the backend computes in; under MPI, rank 0 writes the header
//! and every rank's rows in crowd order (src/cli/ranks.rs).

use std::io::Write;

use crate::checkpoint::atomic_file::AtomicFile;
use crate::model::backend::Backend;
use crate::model::body::Body;
use crate::model::error::{Error, Result};
use crate::model::precision::Precision;
use crate::model::tangent::{STATE_COMPONENTS, Tangent};
use crate::record::columns::{TRAJECTORY_COLUMNS, state_row};
use crate::record::csv::{BatchEncoder, CSV_HEADER, encode_csv_rows};
use crate::record::format::TrajectoryFormat;
use crate::record::npy::{self, Dtype};
use crate::record::npz::{NamedArray, NpzArchive};
use crate::simulation::facade::Simulation;

/// Writes the bodies of `sim` as they are now into `file` as `format` and commits it (renames
/// it into place). The states are streamed from the simulation a batch at a time: nothing
/// grows with the crowd but the file.
///
/// - `.csv`: [`write_states_csv`](crate::write_states_csv).
/// - `.npy`: one array of shape `(bodies, 19)`, the last axis the [`TRAJECTORY_COLUMNS`];
///   float32 on the f32 backends (`gpu`, `cpu`: each value is the CSV's rounded to f32),
///   float64 on `cpu-ref` and `gpu-f64` (the CSV's values exactly).
/// - `.npz`: an uncompressed archive of `states` (as `.npy`), `step` (int64 scalar, the clock
///   step of the states) and `time` (float64 scalar, the simulated time); then, if the
///   simulation carries tangents, `jacobian` (`(bodies, 13, 13)`) and one array per other
///   tangent under its name (`(bodies, 13, k)`), in the states' precision.
pub(crate) fn write_final_states(
    file: AtomicFile,
    format: TrajectoryFormat,
    sim: &mut Simulation,
) -> Result<()> {
    let header = FinalStates::of(sim, sim.body_count());
    let tangents = tangent_arrays(sim)?;
    let file = header.write(file, format, &tangents, |out| {
        stream_final_rows(sim, format, 0, out)
    })?;
    file.commit()
}

/// The tangents `sim` carries, one array each of shape `(bodies, 13, k)`, in the backend's
/// precision: the state's as `jacobian`, the others under their names.
fn tangent_arrays(sim: &mut Simulation) -> Result<Vec<NamedArray>> {
    let Some(plan) = sim.tangent_plan().cloned() else {
        return Ok(Vec::new());
    };
    let (count, backend) = (sim.body_count(), sim.backend());
    plan.tangents()
        .iter()
        .map(|tangent| {
            let (name, width) = (tangent.name(), tangent.width());
            let mut values = vec![0.0; count * STATE_COMPONENTS * width];
            sim.read_tangents(&name, &mut values)?;
            Ok(tangent_array(&name, width, values, backend))
        })
        .collect()
}

/// The array of the final states' archive that holds the tangents `name` names (`width`
/// columns of every body, `values`), from a run on `backend`: the state's as `jacobian`,
/// the others under their names, shape `(bodies, 13, width)` in the states' precision.
pub(crate) fn tangent_array(
    name: &str,
    width: usize,
    values: Vec<f64>,
    backend: Backend,
) -> NamedArray {
    let bodies = values.len() / (STATE_COMPONENTS * width);
    let name = match name == Tangent::State.name() {
        true => "jacobian".to_string(),
        false => name.to_string(),
    };
    NamedArray {
        name,
        shape: vec![bodies, STATE_COMPONENTS, width],
        values,
        single: is_single(backend),
    }
}

/// What the final states' file says besides the rows: how many, in what precision, when.
pub(crate) struct FinalStates {
    backend: Backend,
    step: u64,
    time: f64,
    count: usize,
}

impl FinalStates {
    /// The file of a crowd of `count` bodies (all of `sim`'s, or all over the MPI ranks of
    /// which `sim` is one shard) as `sim` is now.
    pub(crate) fn of(sim: &Simulation, count: usize) -> Self {
        Self {
            backend: sim.backend(),
            step: sim.clock_step(),
            time: sim.time(),
            count,
        }
    }

    /// Writes the header into `file`, then the rows `rows` writes (every body's, in crowd
    /// order), then what follows them; returns the file to commit.
    pub(crate) fn write(
        &self,
        mut file: AtomicFile,
        format: TrajectoryFormat,
        tangents: &[NamedArray],
        rows: impl FnOnce(&mut dyn Write) -> std::result::Result<(), StreamError>,
    ) -> Result<AtomicFile> {
        let target = file.target().to_path_buf();
        let io = |e| Error::io(&target, e);
        let single = is_single(self.backend);
        let element_bytes = if single { 4 } else { 8 };
        let header = npy::header(dtype(single), &[self.count, TRAJECTORY_COLUMNS.len()]);
        Ok(match format {
            TrajectoryFormat::Csv => {
                writeln!(file, "{CSV_HEADER}").map_err(io)?;
                rows(file.writer()).map_err(|e| e.on(&target))?;
                file
            }
            TrajectoryFormat::Npy => {
                file.write_all(&header).map_err(io)?;
                rows(file.writer()).map_err(|e| e.on(&target))?;
                file
            }
            TrajectoryFormat::Npz => {
                let bytes = header.len() + self.count * TRAJECTORY_COLUMNS.len() * element_bytes;
                let mut archive = NpzArchive::create(file, &target, &header, bytes as u64)?;
                rows(archive.states_writer()).map_err(|e| e.on(&target))?;
                archive.finish_with_step_and_time(self.step as i64, self.time, tangents)?
            }
        })
    }
}

/// Whether `backend` computes in f32 (its `.npy` rows are float32).
fn is_single(backend: Backend) -> bool {
    backend.precision() == Precision::F32
}

fn dtype(single: bool) -> Dtype {
    if single { Dtype::F32 } else { Dtype::F64 }
}

/// The rows of `format` for every body of `sim`, whose first is the crowd's body
/// `first_body` (not 0 for an MPI rank's shard), streamed into `out`.
pub(crate) fn stream_final_rows(
    sim: &mut Simulation,
    format: TrajectoryFormat,
    first_body: usize,
    out: &mut dyn Write,
) -> std::result::Result<(), StreamError> {
    match format {
        TrajectoryFormat::Csv => stream(sim, out, first_body, encode_csv_rows),
        TrajectoryFormat::Npy | TrajectoryFormat::Npz => {
            stream(sim, out, first_body, rows(is_single(sim.backend())))
        }
    }
}

/// Why streaming the states stopped: the simulation's read or the write.
pub(crate) enum StreamError {
    Read(Error),
    Write(std::io::Error),
}

impl StreamError {
    /// The crate error, a write error naming `target`.
    pub(crate) fn on(self, target: &std::path::Path) -> Error {
        match self {
            StreamError::Read(e) => e,
            StreamError::Write(e) => Error::io(target, e),
        }
    }
}

/// Every body of `sim`, encoded batch by batch with `encode` into `out`, numbered from
/// `first_body`.
fn stream(
    sim: &mut Simulation,
    out: &mut dyn Write,
    first_body: usize,
    encode: impl Fn(usize, &[Body], &mut Vec<u8>) + Sync,
) -> std::result::Result<(), StreamError> {
    let mut encoder = BatchEncoder::new(out, encode).starting_at(first_body);
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
