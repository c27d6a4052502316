//! Output files that appear whole or not at all: written beside the target, synced, renamed.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// A file being written to a temporary name in the target's directory. [`AtomicFile::commit`]
/// renames it over the target; dropping it uncommitted removes it and leaves the target as it was.
#[derive(Debug)]
pub struct AtomicFile {
    target: PathBuf,
    temp: PathBuf,
    writer: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Creates the temporary file now, so an unwritable destination fails before any work.
    pub fn create(target: impl AsRef<Path>) -> Result<Self> {
        let target = target.as_ref().to_path_buf();
        let name = target
            .file_name()
            .ok_or_else(|| Error::io(&target, std::io::Error::other("not a file name")))?;
        if target.is_dir() {
            return Err(Error::io(&target, std::io::Error::other("is a directory")));
        }
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".tmp-{}", std::process::id()));
        let temp = target.with_file_name(temp_name);
        let file = File::create(&temp).map_err(|e| Error::io(&target, e))?;
        Ok(Self {
            target,
            temp,
            writer: Some(BufWriter::new(file)),
        })
    }

    /// Where the file will appear.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The writer for the contents.
    pub fn writer(&mut self) -> &mut BufWriter<File> {
        self.writer
            .as_mut()
            .expect("writer is present until commit")
    }

    /// Flushes, syncs and renames the file into place.
    pub fn commit(mut self) -> Result<()> {
        let writer = self.writer.take().expect("writer is present until commit");
        let file = writer
            .into_inner()
            .map_err(|e| Error::io(&self.target, e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(&self.target, e))?;
        drop(file);
        std::fs::rename(&self.temp, &self.target).map_err(|e| Error::io(&self.target, e))?;
        sync_directory(&self.target);
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.writer.is_some() {
            self.writer = None;
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Makes the rename itself durable: without syncing the directory, a power cut right after
/// the rename may leave the old name in place. Best effort: not every platform or file
/// system lets a directory be opened and synced, and the data is already on disk.
fn sync_directory(target: &Path) {
    #[cfg(unix)]
    if let Some(dir) = target.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(handle) = File::open(dir) {
            let _ = handle.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = target;
}

/// Writes `contents` with `write` to `target` atomically.
pub fn write_atomically(
    target: impl AsRef<Path>,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<()> {
    let mut file = AtomicFile::create(target)?;
    let target = file.target().to_path_buf();
    write(file.writer()).map_err(|e| Error::io(target, e))?;
    file.commit()
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.writer().write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.writer().flush()
    }
}

/// Seeking flushes the buffer first; formats that patch a header after the data (ZIP) need it.
impl Seek for AtomicFile {
    fn seek(&mut self, position: SeekFrom) -> std::io::Result<u64> {
        self.writer().seek(position)
    }
}
