//! The `.npz` trajectory: an uncompressed NumPy archive of `states.npy`, streamed frame by
//! frame, then `steps.npy` and `times.npy` (for the final states of `rigid-crowd run`:
//! `step.npy` and `time.npy`). Needs the `npz` feature (the zip crate).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use zip::ZipWriter;
use zip::write::SimpleFileOptions;

use crate::atomic_file::AtomicFile;
use crate::error::{Error, Result};
use crate::record::npy;

/// An archive being written into its temporary file, inside its `states.npy` entry until
/// [`NpzArchive::finish`].
pub(crate) struct NpzArchive {
    target: PathBuf,
    /// Boxed: the zip writer carries kilobytes of bookkeeping.
    zip: Box<ZipWriter<AtomicFile>>,
}

impl NpzArchive {
    /// Opens the `states.npy` entry, of `states_bytes` bytes in all, with `states_header`.
    pub fn create(
        file: AtomicFile,
        target: &Path,
        states_header: &[u8],
        states_bytes: u64,
    ) -> Result<Self> {
        let mut zip = ZipWriter::new(file);
        zip.start_file("states.npy", entry_options(states_bytes))
            .map_err(|e| zip_error(target, e))?;
        zip.write_all(states_header)
            .map_err(|e| Error::io(target, e))?;
        Ok(Self {
            target: target.to_path_buf(),
            zip: Box::new(zip),
        })
    }

    /// Appends bytes to the `states.npy` entry.
    pub fn write_states(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.zip.write_all(bytes)
    }

    /// The `states.npy` entry, to write its data into.
    #[cfg(feature = "cli")] // the final states
    pub fn states_writer(&mut self) -> &mut impl Write {
        &mut *self.zip
    }

    /// Adds the `steps` and `times` entries and closes the archive, handing back the file
    /// to commit.
    pub fn finish(mut self, steps: &[i64], times: &[f64]) -> Result<AtomicFile> {
        let bytes = 128 + 8 * steps.len() as u64;
        self.add_entry("steps.npy", bytes, |out| npy::write_i64s(out, steps))?;
        self.add_entry("times.npy", bytes, |out| npy::write_f64s(out, times))?;
        self.close()
    }

    /// Adds the scalar entries `step` (int64) and `time` (float64) and closes the archive,
    /// handing back the file to commit: the final states' archive.
    #[cfg(feature = "cli")]
    pub fn finish_with_step_and_time(mut self, step: i64, time: f64) -> Result<AtomicFile> {
        self.add_entry("step.npy", 128, |out| npy::write_i64_scalar(out, step))?;
        self.add_entry("time.npy", 128, |out| npy::write_f64_scalar(out, time))?;
        self.close()
    }

    /// Adds the entry `name` of about `bytes` bytes, written by `write`.
    fn add_entry(
        &mut self,
        name: &str,
        bytes: u64,
        write: impl FnOnce(&mut ZipWriter<AtomicFile>) -> io::Result<()>,
    ) -> Result<()> {
        let target = &self.target;
        self.zip
            .start_file(name, entry_options(bytes))
            .map_err(|e| zip_error(target, e))?;
        write(&mut self.zip).map_err(|e| Error::io(target, e))
    }

    fn close(self) -> Result<AtomicFile> {
        (*self.zip).finish().map_err(|e| zip_error(&self.target, e))
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
