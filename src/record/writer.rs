//! Writing a trajectory frame by frame into a file that appears whole or not at all.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::atomic_file::AtomicFile;
use crate::body::Body;
use crate::error::{Error, Result};
use crate::record::columns::{TRAJECTORY_COLUMNS, state_row};
use crate::record::format::TrajectoryFormat;
use crate::record::npy::{self, Dtype};
#[cfg(feature = "npz")]
use crate::record::npz::NpzArchive;

/// Where the frames go, by format.
enum Sink {
    Csv(AtomicFile),
    Npy(AtomicFile),
    #[cfg(feature = "npz")]
    Npz(NpzArchive),
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
            #[cfg(feature = "npz")]
            TrajectoryFormat::Npz => {
                let states_bytes = states_header.len() as u64
                    + (frames * bodies * TRAJECTORY_COLUMNS.len() * 8) as u64;
                Sink::Npz(NpzArchive::create(
                    file,
                    &target,
                    &states_header,
                    states_bytes,
                )?)
            }
            #[cfg(not(feature = "npz"))]
            TrajectoryFormat::Npz => {
                return Err(Error::invalid(
                    "record",
                    "`.npz` needs rigid-crowd's `npz` feature, which this build lacks \
                     (`.csv` and `.npy` need nothing)",
                ));
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
            #[cfg(feature = "npz")]
            Sink::Npz(_) => self.push_binary(bodies),
            Sink::Npy(_) => self.push_binary(bodies),
        }
        let written = match &mut self.sink {
            Sink::Csv(file) | Sink::Npy(file) => file.write_all(&self.buffer),
            #[cfg(feature = "npz")]
            Sink::Npz(archive) => archive.write_states(&self.buffer),
        };
        written.map_err(|e| Error::io(&self.target, e))?;
        self.steps.push(step as i64);
        self.times.push(time);
        Ok(())
    }

    /// One frame as little-endian float64s, into the buffer.
    fn push_binary(&mut self, bodies: &[Body]) {
        self.buffer
            .reserve(bodies.len() * TRAJECTORY_COLUMNS.len() * 8);
        for body in bodies {
            for value in state_row(body) {
                self.buffer.extend_from_slice(&value.to_le_bytes());
            }
        }
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
            #[cfg(feature = "npz")]
            Sink::Npz(archive) => archive.finish(&self.steps, &self.times)?,
        };
        file.commit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(not(feature = "npz"))]
    #[test]
    fn an_npz_without_the_feature_is_refused_naming_record_and_leaves_no_file() {
        let dir = std::env::temp_dir().join(format!("rigid-crowd-npz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.npz");
        let message = TrajectoryWriter::create(&path, 3, 2)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("record") && message.contains("npz"),
            "{message}"
        );
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "no file, no temporary"
        );
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn npy_needs_no_feature() {
        let dir = std::env::temp_dir().join(format!("rigid-crowd-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.npy");
        let writer = TrajectoryWriter::create(&path, 0, 0).unwrap();
        writer.finish().unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() >= 64);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
