//! Writing a trajectory frame by frame into a file that appears whole or not at all.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use zip::ZipWriter;
use zip::write::SimpleFileOptions;

use crate::atomic_file::AtomicFile;
use crate::body::Body;
use crate::error::{Error, Result};
use crate::record::columns::{TRAJECTORY_COLUMNS, state_row};
use crate::record::format::TrajectoryFormat;
use crate::record::npy::{self, Dtype};

/// Where the frames go, by format.
enum Sink {
    Csv(AtomicFile),
    Npy(AtomicFile),
    /// Inside the archive's `states.npy` entry until [`TrajectoryWriter::finish`]
    /// (boxed: the zip writer carries kilobytes of bookkeeping).
    Npz(Box<ZipWriter<AtomicFile>>),
}

/// A trajectory file being written: `frames` frames of `bodies` bodies each, in the format
/// of the file's extension ([`TrajectoryFormat`]).
///
/// The file is written beside its target and renamed into place by [`finish`](Self::finish)
/// once every frame is in; a writer dropped before that leaves no file behind (and an
/// existing file untouched). Frames are streamed, so a trajectory larger than memory is fine.
pub struct TrajectoryWriter {
    target: PathBuf,
    sink: Sink,
    bodies: usize,
    frames: usize,
    steps: Vec<i64>,
    times: Vec<f64>,
    /// One frame's bytes, reused.
    buffer: Vec<u8>,
}

impl std::fmt::Debug for TrajectoryWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrajectoryWriter")
            .field("target", &self.target)
            .field("bodies", &self.bodies)
            .field("frames", &self.frames)
            .field("written", &self.steps.len())
            .finish()
    }
}

impl TrajectoryWriter {
    /// Creates the temporary file now (so an unwritable path fails before any work) and
    /// writes the header. The format comes from the extension; an unknown one is an error
    /// naming `record`.
    pub fn create(path: impl AsRef<Path>, bodies: usize, frames: usize) -> Result<Self> {
        let target = path.as_ref().to_path_buf();
        let format =
            TrajectoryFormat::from_path(&target).map_err(|m| Error::invalid("record", m))?;
        let mut file = AtomicFile::create(&target)?;
        let states_header = npy::header(Dtype::F64, &[frames, bodies, TRAJECTORY_COLUMNS.len()]);
        let io = |e| Error::io(&target, e);
        let sink = match format {
            TrajectoryFormat::Csv => {
                writeln!(file, "step,time,body,{}", TRAJECTORY_COLUMNS.join(",")).map_err(io)?;
                Sink::Csv(file)
            }
            TrajectoryFormat::Npy => {
                file.write_all(&states_header).map_err(io)?;
                Sink::Npy(file)
            }
            TrajectoryFormat::Npz => {
                let mut zip = ZipWriter::new(file);
                let states_bytes = states_header.len() as u64
                    + (frames * bodies * TRAJECTORY_COLUMNS.len() * 8) as u64;
                zip.start_file("states.npy", entry_options(states_bytes))
                    .map_err(|e| zip_error(&target, e))?;
                zip.write_all(&states_header).map_err(io)?;
                Sink::Npz(Box::new(zip))
            }
        };
        Ok(Self {
            sink,
            bodies,
            frames,
            steps: Vec::with_capacity(frames),
            times: Vec::with_capacity(frames),
            buffer: Vec::new(),
            target,
        })
    }

    /// Where the file will appear.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Frames written so far.
    pub fn frames_written(&self) -> usize {
        self.steps.len()
    }

    /// Appends the states of `bodies` at `step` and simulated `time`. Fails if the frame has
    /// the wrong number of bodies or all frames were already written.
    pub fn write_frame(&mut self, step: u64, time: f64, bodies: &[Body]) -> Result<()> {
        if bodies.len() != self.bodies {
            return Err(Error::invalid(
                "record",
                format!(
                    "a frame of {} bodies in a trajectory of {}",
                    bodies.len(),
                    self.bodies
                ),
            ));
        }
        if self.steps.len() == self.frames {
            return Err(Error::invalid(
                "record",
                format!(
                    "more than the {} frames the trajectory was created for",
                    self.frames
                ),
            ));
        }
        self.buffer.clear();
        match self.sink {
            Sink::Csv(_) => {
                for (i, body) in bodies.iter().enumerate() {
                    write!(self.buffer, "{step},{time},{i}").expect("writing to memory");
                    for value in state_row(body) {
                        write!(self.buffer, ",{value}").expect("writing to memory");
                    }
                    self.buffer.push(b'\n');
                }
            }
            Sink::Npy(_) | Sink::Npz(_) => {
                self.buffer
                    .reserve(bodies.len() * TRAJECTORY_COLUMNS.len() * 8);
                for body in bodies {
                    for value in state_row(body) {
                        self.buffer.extend_from_slice(&value.to_le_bytes());
                    }
                }
            }
        }
        let written = match &mut self.sink {
            Sink::Csv(file) | Sink::Npy(file) => file.write_all(&self.buffer),
            Sink::Npz(zip) => zip.write_all(&self.buffer),
        };
        written.map_err(|e| Error::io(&self.target, e))?;
        self.steps.push(step as i64);
        self.times.push(time);
        Ok(())
    }

    /// Completes the file and renames it into place. Fails, leaving no file, unless every
    /// frame announced to [`create`](Self::create) was written.
    pub fn finish(self) -> Result<()> {
        if self.steps.len() != self.frames {
            return Err(Error::invalid(
                "record",
                format!("{} of {} frames written", self.steps.len(), self.frames),
            ));
        }
        let file = match self.sink {
            Sink::Csv(file) | Sink::Npy(file) => file,
            Sink::Npz(mut zip) => {
                let io = |e| Error::io(&self.target, e);
                let bytes = 128 + 8 * self.frames as u64;
                zip.start_file("steps.npy", entry_options(bytes))
                    .map_err(|e| zip_error(&self.target, e))?;
                npy::write_i64s(&mut zip, &self.steps).map_err(io)?;
                zip.start_file("times.npy", entry_options(bytes))
                    .map_err(|e| zip_error(&self.target, e))?;
                npy::write_f64s(&mut zip, &self.times).map_err(io)?;
                (*zip).finish().map_err(|e| zip_error(&self.target, e))?
            }
        };
        file.commit()
    }
}

/// A stored (uncompressed) entry; ZIP64 where the entry reaches 4 GiB.
fn entry_options(bytes: u64) -> SimpleFileOptions {
    SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(bytes >= u32::MAX as u64)
}

fn zip_error(target: &Path, e: zip::result::ZipError) -> Error {
    Error::io(target, io::Error::other(e))
}
