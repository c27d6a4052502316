//! Writing a trajectory frame by frame into a file that appears whole or not at all.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::checkpoint::TrajectoryProgress;
use crate::checkpoint::atomic_file::AtomicFile;
use crate::model::body::Body;
use crate::model::error::{Error, Result};
use crate::model::fault_rules::QuarantinedBody;
use crate::record::columns::{TRAJECTORY_COLUMNS, state_row};
use crate::record::format::TrajectoryFormat;
use crate::record::frame_status::FrameStatus;
use crate::record::npy::{self, Dtype};
#[cfg(feature = "npz")]
use crate::record::npz::NpzArchive;
use crate::record::partial::{Durable, PartialFile};

/// Where the frames go, by format.
enum Sink {
    Csv(AtomicFile),
    Npy(AtomicFile),
    #[cfg(feature = "npz")]
    Npz(NpzArchive),
    /// A resumable recording's file in progress: the CSV or `.npy` file as it will be, or
    /// for `.npz` the `states.npy` entry, put in the archive at the end.
    Partial(PartialFile),
}

/// A trajectory file being written: `frames` frames of `bodies` bodies each, in the format
/// of the file's extension ([`TrajectoryFormat`]).
///
/// The file is written beside its target and renamed into place by [`finish`](Self::finish)
/// once every frame is in; a writer dropped before that leaves no file behind (and an
/// existing file untouched). Frames are streamed, so a trajectory larger than memory is fine.
pub struct TrajectoryWriter {
    target: PathBuf,
    format: TrajectoryFormat,
    sink: Sink,
    bodies: usize,
    frames: usize,
    /// Frames written so far.
    written: usize,
    /// Their steps and times, for the `.npz` archive's `steps` and `times` (16 bytes a
    /// frame); the other formats keep none, so their memory stays flat however long the run.
    steps: Vec<i64>,
    times: Vec<f64>,
    /// One frame's bytes, reused.
    buffer: Vec<u8>,
    /// The frozen bodies, for the `.npz` archive's `status` entry (a `freeze` run's).
    status: Option<FrameStatus>,
}

impl std::fmt::Debug for TrajectoryWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrajectoryWriter")
            .field("target", &self.target)
            .field("bodies", &self.bodies)
            .field("frames", &self.frames)
            .field("written", &self.written)
            .finish()
    }
}

impl TrajectoryWriter {
    /// Creates the temporary file now (so an unwritable path fails before any work) and
    /// writes the header. The format comes from the extension; an unknown one is an error
    /// naming `record`.
    pub fn create(path: impl AsRef<Path>, bodies: usize, frames: usize) -> Result<Self> {
        let target = path.as_ref().to_path_buf();
        let format = format_of(&target)?;
        let mut file = AtomicFile::create(&target)?;
        let header = header(format, bodies, frames);
        let io = |e| Error::io(&target, e);
        let sink = match format {
            TrajectoryFormat::Csv => {
                file.write_all(&header).map_err(io)?;
                Sink::Csv(file)
            }
            TrajectoryFormat::Npy => {
                file.write_all(&header).map_err(io)?;
                Sink::Npy(file)
            }
            #[cfg(feature = "npz")]
            TrajectoryFormat::Npz => Sink::Npz(NpzArchive::create(
                file,
                &target,
                &header,
                states_bytes(bodies, frames),
            )?),
            #[cfg(not(feature = "npz"))]
            TrajectoryFormat::Npz => unreachable!("format_of refuses .npz without the feature"),
        };
        Ok(Self::new(target, format, sink, bodies, frames))
    }

    /// Like [`create`](Self::create), for a run that checkpoints: the file in progress,
    /// `.NAME.partial` beside the target, outlives the process. [`sync`](Self::sync) makes
    /// the frames so far durable and returns the [`TrajectoryProgress`] from which
    /// [`resume`](Self::resume), in another process, continues the file. The finished file
    /// is byte for byte the one [`create`](Self::create) writes. Dropped before it is
    /// finished, the file in progress stays if it was ever synced (a checkpoint may name it),
    /// and is removed if not.
    ///
    /// For `.npz`, the file in progress holds the `states` array; [`finish`](Self::finish)
    /// copies it into the archive.
    pub fn create_resumable(path: impl AsRef<Path>, bodies: usize, frames: usize) -> Result<Self> {
        let target = path.as_ref().to_path_buf();
        let format = format_of(&target)?;
        let mut file = PartialFile::create(&target)?;
        file.write_all(&header(format, bodies, frames))
            .map_err(|e| Error::io(&target, e))?;
        Ok(Self::new(
            target,
            format,
            Sink::Partial(file),
            bodies,
            frames,
        ))
    }

    /// Continues a trajectory of [`create_resumable`](Self::create_resumable) (same path,
    /// bodies and frames) from a [`sync`](Self::sync) that returned `progress`: checks that
    /// the file in progress is the one that was synced (its length and checksum), cuts off
    /// whatever was written after the sync and appends from there. `frames` gives the step
    /// and time of each frame already written, in order (the `.npz` archive lists them).
    /// Errors name the file in progress: missing, shorter than `progress`, or written by
    /// someone else since.
    pub fn resume(
        path: impl AsRef<Path>,
        bodies: usize,
        frames: usize,
        progress: TrajectoryProgress,
        written: impl IntoIterator<Item = (u64, f64)>,
    ) -> Result<Self> {
        let target = path.as_ref().to_path_buf();
        let format = format_of(&target)?;
        let (steps, times): (Vec<i64>, Vec<f64>) =
            written.into_iter().map(|(s, t)| (s as i64, t)).unzip();
        if steps.len() as u64 != progress.frames_written || steps.len() > frames {
            return Err(Error::invalid(
                "record",
                format!(
                    "{} frames given for a trajectory of {frames} synced after {}",
                    steps.len(),
                    progress.frames_written
                ),
            ));
        }
        let durable = Durable {
            bytes: progress.bytes,
            crc32: progress.crc32,
        };
        let file = PartialFile::reopen(&target, durable, &header(format, bodies, frames))?;
        let mut writer = Self::new(target, format, Sink::Partial(file), bodies, frames);
        writer.written = steps.len();
        if format == TrajectoryFormat::Npz {
            writer.steps = steps;
            writer.times = times;
        }
        Ok(writer)
    }

    /// Makes every frame written so far durable (flushed and synced) and returns how far
    /// that is, for a checkpoint: see [`create_resumable`](Self::create_resumable). Fails
    /// naming `record` for a writer made by [`create`](Self::create).
    pub fn sync(&mut self) -> Result<TrajectoryProgress> {
        let Sink::Partial(file) = &mut self.sink else {
            return Err(Error::invalid(
                "record",
                "only a trajectory made by `create_resumable` can be synced for a checkpoint",
            ));
        };
        let durable = file.sync()?;
        Ok(TrajectoryProgress {
            frames_written: self.written as u64,
            bytes: durable.bytes,
            crc32: durable.crc32,
        })
    }

    fn new(
        target: PathBuf,
        format: TrajectoryFormat,
        sink: Sink,
        bodies: usize,
        frames: usize,
    ) -> Self {
        Self {
            sink,
            format,
            bodies,
            frames,
            written: 0,
            steps: Vec::new(),
            times: Vec::new(),
            buffer: Vec::new(),
            status: None,
            target,
        }
    }

    /// The format of the file.
    pub fn format(&self) -> TrajectoryFormat {
        self.format
    }

    /// Where the file will appear.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Frames written so far.
    pub fn frames_written(&self) -> usize {
        self.written
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
        let mut buffer = std::mem::take(&mut self.buffer);
        buffer.clear();
        encode_frame_part(self.format, step, time, 0, bodies, &mut buffer);
        let written = self.write_encoded_frame(step, time, &buffer);
        self.buffer = buffer;
        written
    }

    /// Appends one frame already encoded by [`encode_frame_part`] (the parts of every MPI
    /// rank, in crowd order): `bytes` must hold every body of the frame.
    pub(crate) fn write_encoded_frame(&mut self, step: u64, time: f64, bytes: &[u8]) -> Result<()> {
        if self.written == self.frames {
            return Err(Error::invalid(
                "record",
                format!(
                    "more than the {} frames the trajectory was created for",
                    self.frames
                ),
            ));
        }
        let written = match &mut self.sink {
            Sink::Csv(file) | Sink::Npy(file) => file.write_all(bytes),
            #[cfg(feature = "npz")]
            Sink::Npz(archive) => archive.write_states(bytes),
            Sink::Partial(file) => file.write_all(bytes),
        };
        written.map_err(|e| Error::io(&self.target, e))?;
        self.written += 1;
        if self.format == TrajectoryFormat::Npz {
            self.steps.push(step as i64);
            self.times.push(time);
        }
        Ok(())
    }

    /// Records which bodies the run froze (under the `freeze` fault policy), each after the
    /// clock step of its last good state, `first_clock_step` being the clock step of the
    /// recording's step 0: a `.npz` trajectory then gets a `status` entry, `(frames, bodies)`
    /// uint8, 0 for a healthy body and the [`Fault`](crate::Fault)'s code from the first
    /// frame after it froze. The other formats carry no status (the run's list of frozen
    /// bodies gives it). Call before [`finish`](Self::finish).
    pub fn set_quarantined(&mut self, quarantined: &[QuarantinedBody], first_clock_step: u64) {
        self.status = Some(FrameStatus {
            bodies: self.bodies,
            first_clock_step,
            frozen: quarantined
                .iter()
                .map(|q| (q.body, q.step, q.fault.code() as u8))
                .collect(),
        });
    }

    /// Completes the file and renames it into place. Fails, leaving no file, unless every
    /// frame announced to [`create`](Self::create) was written.
    pub fn finish(self) -> Result<()> {
        if self.written != self.frames {
            return Err(Error::invalid(
                "record",
                format!("{} of {} frames written", self.written, self.frames),
            ));
        }
        let file = match self.sink {
            Sink::Csv(file) | Sink::Npy(file) => file,
            #[cfg(feature = "npz")]
            Sink::Npz(archive) => archive.finish(&self.steps, &self.times, self.status.as_ref())?,
            Sink::Partial(file) => {
                return finish_partial(
                    file,
                    self.format,
                    &self.target,
                    states_bytes(self.bodies, self.frames),
                    &self.steps,
                    &self.times,
                    self.status.as_ref(),
                );
            }
        };
        file.commit()
    }
}

/// Whether the trajectory at `path` is already finished with exactly the contents a
/// resumable writer had made durable at `progress`, every frame written: its file in
/// progress is gone (a finished trajectory takes its place) and the file there holds those
/// bytes (the CSV or `.npy` file), or an archive whose `states` entry holds them (`.npz`;
/// the zip records each entry's size and CRC-32). For a run resumed from its last
/// checkpoint after it completed, or was killed right after it completed.
#[cfg(feature = "cli")]
pub(crate) fn finished_as_synced(path: &Path, progress: TrajectoryProgress) -> bool {
    if crate::record::partial::partial_path(path).exists() {
        return false;
    }
    let Ok(format) = TrajectoryFormat::from_path(path) else {
        return false;
    };
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    match format {
        TrajectoryFormat::Csv | TrajectoryFormat::Npy => {
            if file.metadata().map(|m| m.len()).ok() != Some(progress.bytes) {
                return false;
            }
            let mut crc = crc32fast::Hasher::new();
            let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
            match std::io::copy(&mut reader, &mut HashWriter(&mut crc)) {
                Ok(n) => n == progress.bytes && crc.finalize() == progress.crc32,
                Err(_) => false,
            }
        }
        #[cfg(feature = "npz")]
        TrajectoryFormat::Npz => {
            let Ok(mut archive) = zip::ZipArchive::new(std::io::BufReader::new(file)) else {
                return false;
            };
            archive.by_name("states.npy").is_ok_and(|states| {
                states.size() == progress.bytes && states.crc32() == progress.crc32
            })
        }
        #[cfg(not(feature = "npz"))]
        TrajectoryFormat::Npz => false,
    }
}

/// Feeds what is written to a CRC-32.
#[cfg(feature = "cli")]
struct HashWriter<'a>(&'a mut crc32fast::Hasher);

#[cfg(feature = "cli")]
impl Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The format of `target` by its extension, which this build can write; errors name `record`.
fn format_of(target: &Path) -> Result<TrajectoryFormat> {
    let format = TrajectoryFormat::from_path(target).map_err(|m| Error::invalid("record", m))?;
    #[cfg(not(feature = "npz"))]
    if format == TrajectoryFormat::Npz {
        return Err(Error::invalid(
            "record",
            "`.npz` needs rigid-crowd's `npz` feature, which this build lacks \
             (`.csv` and `.npy` need nothing)",
        ));
    }
    Ok(format)
}

/// The bytes a trajectory starts with: the CSV's header line, or the `states` array's
/// `.npy` header (of the `.npy` file, or of the `.npz` archive's entry).
fn header(format: TrajectoryFormat, bodies: usize, frames: usize) -> Vec<u8> {
    match format {
        TrajectoryFormat::Csv => {
            format!("step,time,body,{}\n", TRAJECTORY_COLUMNS.join(",")).into()
        }
        TrajectoryFormat::Npy | TrajectoryFormat::Npz => {
            npy::header(Dtype::F64, &[frames, bodies, TRAJECTORY_COLUMNS.len()])
        }
    }
}

/// Bytes of the `states` array: header and data.
fn states_bytes(bodies: usize, frames: usize) -> u64 {
    header(TrajectoryFormat::Npy, bodies, frames).len() as u64
        + (frames as u64) * (bodies as u64) * (TRAJECTORY_COLUMNS.len() as u64) * 8
}

/// Puts a finished file in progress in place: renamed, or for `.npz` copied into the
/// archive as its `states` entry, then removed.
fn finish_partial(
    file: PartialFile,
    format: TrajectoryFormat,
    target: &Path,
    states_bytes: u64,
    steps: &[i64],
    times: &[f64],
    status: Option<&FrameStatus>,
) -> Result<()> {
    match format {
        TrajectoryFormat::Csv | TrajectoryFormat::Npy => file.commit(),
        #[cfg(feature = "npz")]
        TrajectoryFormat::Npz => {
            use std::io::Read;
            let mut file = file;
            let mut states = file.reader()?;
            let mut archive =
                NpzArchive::create(AtomicFile::create(target)?, target, &[], states_bytes)?;
            let mut chunk = vec![0; 1 << 20];
            loop {
                let n = states.read(&mut chunk).map_err(|e| Error::io(target, e))?;
                if n == 0 {
                    break;
                }
                archive
                    .write_states(&chunk[..n])
                    .map_err(|e| Error::io(target, e))?;
            }
            archive.finish(steps, times, status)?.commit()?;
            file.remove()
        }
        #[cfg(not(feature = "npz"))]
        TrajectoryFormat::Npz => {
            let _ = (target, states_bytes, steps, times, status);
            unreachable!("format_of refuses .npz without the feature")
        }
    }
}

/// The rows of `bodies`, the crowd's from index `first_body` on, in one frame at `step` and
/// `time` of a trajectory in `format`, appended to `out`: the whole frame when `first_body`
/// is 0 and `bodies` the crowd, or an MPI rank's part of it.
pub(crate) fn encode_frame_part(
    format: TrajectoryFormat,
    step: u64,
    time: f64,
    first_body: usize,
    bodies: &[Body],
    out: &mut Vec<u8>,
) {
    match format {
        TrajectoryFormat::Csv => push_csv_frame(out, step, time, first_body, bodies),
        TrajectoryFormat::Npy | TrajectoryFormat::Npz => {
            out.reserve(bodies.len() * TRAJECTORY_COLUMNS.len() * 8);
            for body in bodies {
                for value in state_row(body) {
                    out.extend_from_slice(&value.to_le_bytes());
                }
            }
        }
    }
}

/// One frame's CSV rows (`step,time,body,` and the [`TRAJECTORY_COLUMNS`]) appended to `out`,
/// the bodies formatted in parallel in chunks and joined in order: the text is std's `{}` of
/// every number (src/record/csv.rs), whatever the number of threads.
fn push_csv_frame(out: &mut Vec<u8>, step: u64, time: f64, first_body: usize, bodies: &[Body]) {
    use rayon::prelude::*;
    const BODIES_PER_TASK: usize = 2048;
    let mut prefix = Vec::new();
    crate::record::csv::push_usize(&mut prefix, step as usize);
    prefix.push(b',');
    crate::record::csv::push_f64(&mut prefix, time);
    prefix.push(b',');
    let chunks: Vec<Vec<u8>> = bodies
        .par_chunks(BODIES_PER_TASK)
        .enumerate()
        .map(|(c, chunk)| {
            let mut text = Vec::with_capacity(chunk.len() * 512);
            for (i, body) in (first_body + c * BODIES_PER_TASK..).zip(chunk) {
                text.extend_from_slice(&prefix);
                crate::record::csv::push_usize(&mut text, i);
                for value in state_row(body) {
                    text.push(b',');
                    crate::record::csv::push_f64(&mut text, value);
                }
                text.push(b'\n');
            }
            text
        })
        .collect();
    for chunk in chunks {
        out.extend_from_slice(&chunk);
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
