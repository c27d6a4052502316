//! The `.npz` trajectory: an uncompressed NumPy archive of `states.npy`, streamed frame by
//! frame, then `steps.npy` and `times.npy`. Needs the `npz` feature (the zip crate).

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

    /// Adds the `steps` and `times` entries and closes the archive, handing back the file
    /// to commit.
    pub fn finish(mut self, steps: &[i64], times: &[f64]) -> Result<AtomicFile> {
        let target = &self.target;
        let io = |e| Error::io(target, e);
        let bytes = 128 + 8 * steps.len() as u64;
        self.zip
            .start_file("steps.npy", entry_options(bytes))
            .map_err(|e| zip_error(target, e))?;
        npy::write_i64s(&mut self.zip, steps).map_err(io)?;
        self.zip
            .start_file("times.npy", entry_options(bytes))
            .map_err(|e| zip_error(target, e))?;
        npy::write_f64s(&mut self.zip, times).map_err(io)?;
        (*self.zip).finish().map_err(|e| zip_error(target, e))
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
