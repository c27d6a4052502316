//! The `.npz` trajectory: an uncompressed NumPy archive of `states.npy`, streamed frame by
//! frame, then `steps.npy` and `times.npy` (for the final states of `rigid-crowd run`:
//! `step.npy` and `time.npy`). Needs the `npz` feature (the zip crate).

use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use zip::ZipWriter;
use zip::write::SimpleFileOptions;

use crate::checkpoint::atomic_file::AtomicFile;
use crate::model::error::{Error, Result};
use crate::record::frame_status::FrameStatus;
use crate::record::npy;

/// An archive being written into its temporary file, inside its `states.npy` entry until
/// [`NpzArchive::finish`]. Dropped unfinished (an error elsewhere), it writes nothing more
/// and the temporary file is removed.
pub(crate) struct NpzArchive {
    target: PathBuf,
    /// Boxed: the zip writer carries kilobytes of bookkeeping. Present until closed.
    zip: Option<Box<ZipWriter<Abandonable>>>,
    /// Set to abandon the file (shared with it: the zip writer does not hand it out).
    abandoned: Arc<AtomicBool>,
}

/// The archive's file, which can be abandoned: after the first failed write or seek (a full
/// disk) or once the archive is dropped unfinished, it takes every write and seek without
/// touching the file. The zip writer finishes the archive when it is dropped, and prints a
/// message of its own on stderr if that fails; abandoned, that cannot fail, and the file,
/// removed on drop, gets no more bytes.
struct Abandonable {
    file: AtomicFile,
    abandoned: Arc<AtomicBool>,
    /// The position and the length of what has been written, real or not.
    position: u64,
    end: u64,
}

impl Abandonable {
    fn is_abandoned(&self) -> bool {
        self.abandoned.load(Ordering::Relaxed)
    }

    /// `result`, abandoning the file if it is an error.
    fn track<T>(&mut self, result: io::Result<T>) -> io::Result<T> {
        if result.is_err() {
            self.abandoned.store(true, Ordering::Relaxed);
        }
        result
    }
}

impl Write for Abandonable {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = if self.is_abandoned() {
            buf.len()
        } else {
            let result = self.file.write(buf);
            self.track(result)?
        };
        self.position += written as u64;
        self.end = self.end.max(self.position);
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.is_abandoned() {
            return Ok(());
        }
        let result = self.file.flush();
        self.track(result)
    }
}

impl Seek for Abandonable {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.position = if self.is_abandoned() {
            match to {
                SeekFrom::Start(at) => at,
                SeekFrom::End(by) => self.end.saturating_add_signed(by),
                SeekFrom::Current(by) => self.position.saturating_add_signed(by),
            }
        } else {
            let result = self.file.seek(to);
            self.track(result)?
        };
        self.end = self.end.max(self.position);
        Ok(self.position)
    }
}

impl Drop for NpzArchive {
    fn drop(&mut self) {
        // Finished archives were taken apart in `close`; this one is abandoned.
        self.abandoned.store(true, Ordering::Relaxed);
    }
}

impl NpzArchive {
    /// Opens the `states.npy` entry, of `states_bytes` bytes in all, with `states_header`.
    pub fn create(
        file: AtomicFile,
        target: &Path,
        states_header: &[u8],
        states_bytes: u64,
    ) -> Result<Self> {
        let abandoned = Arc::new(AtomicBool::new(false));
        let file = Abandonable {
            file,
            abandoned: Arc::clone(&abandoned),
            position: 0,
            end: 0,
        };
        let mut zip = ZipWriter::new(file);
        zip.start_file("states.npy", entry_options(states_bytes))
            .map_err(|e| zip_error(target, e))?;
        zip.write_all(states_header)
            .map_err(|e| Error::io(target, e))?;
        Ok(Self {
            target: target.to_path_buf(),
            zip: Some(Box::new(zip)),
            abandoned,
        })
    }

    /// Appends bytes to the `states.npy` entry.
    pub fn write_states(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.zip().write_all(bytes)
    }

    /// The `states.npy` entry, to write its data into.
    #[cfg(feature = "cli")] // the final states
    pub fn states_writer(&mut self) -> &mut impl Write {
        self.zip()
    }

    /// Adds the `steps` and `times` entries and closes the archive, handing back the file
    /// to commit.
    pub fn finish(
        mut self,
        steps: &[i64],
        times: &[f64],
        status: Option<&FrameStatus>,
    ) -> Result<AtomicFile> {
        let bytes = 128 + 8 * steps.len() as u64;
        self.add_entry("steps.npy", bytes, |out| npy::write_i64s(out, steps))?;
        self.add_entry("times.npy", bytes, |out| npy::write_f64s(out, times))?;
        if let Some(status) = status {
            let bytes = 128 + (steps.len() * status.bodies) as u64;
            self.add_entry("status.npy", bytes, |out| status.write(out, steps))?;
        }
        self.close()
    }

    /// Adds the scalar entries `step` (int64) and `time` (float64) and closes the archive,
    /// handing back the file to commit: the final states' archive.
    #[cfg(feature = "cli")]
    pub fn finish_with_step_and_time(
        mut self,
        step: i64,
        time: f64,
        arrays: &[NamedArray],
    ) -> Result<AtomicFile> {
        self.add_entry("step.npy", 128, |out| npy::write_i64_scalar(out, step))?;
        self.add_entry("time.npy", 128, |out| npy::write_f64_scalar(out, time))?;
        for array in arrays {
            let bytes = 128 + array.values.len() as u64 * if array.single { 4 } else { 8 };
            self.add_entry(&format!("{}.npy", array.name), bytes, |out| {
                npy::write_floats(out, &array.shape, &array.values, array.single)
            })?;
        }
        self.close()
    }

    /// Adds the entry `name` of about `bytes` bytes, written by `write`.
    fn add_entry(
        &mut self,
        name: &str,
        bytes: u64,
        write: impl FnOnce(&mut ZipWriter<Abandonable>) -> io::Result<()>,
    ) -> Result<()> {
        let target = self.target.clone();
        let zip = self.zip();
        zip.start_file(name, entry_options(bytes))
            .map_err(|e| zip_error(&target, e))?;
        write(zip).map_err(|e| Error::io(&target, e))
    }

    fn close(mut self) -> Result<AtomicFile> {
        let zip = self
            .zip
            .take()
            .expect("the zip writer is present until closed");
        let file = (*zip).finish().map_err(|e| zip_error(&self.target, e))?;
        Ok(file.file)
    }

    fn zip(&mut self) -> &mut ZipWriter<Abandonable> {
        self.zip
            .as_mut()
            .expect("the zip writer is present until closed")
    }
}

/// A float array stored beside the states (a tangent of the final states).
#[cfg(feature = "cli")]
pub(crate) struct NamedArray {
    /// The entry's name without `.npy`: the key `numpy.load` gives it.
    pub name: String,
    pub shape: Vec<usize>,
    pub values: Vec<f64>,
    /// float32 (the values computed in f32) rather than float64.
    pub single: bool,
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
