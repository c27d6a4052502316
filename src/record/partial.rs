//! A trajectory's file in progress that outlives its process, for runs that checkpoint:
//! `.NAME.partial` beside the target, appended to frame by frame, made durable at each
//! checkpoint, cut back to the checkpoint's length and continued by a resumed run, renamed
//! into place when the run completes.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::checkpoint::atomic_file::{remove_stale_temporaries, sync_directory};
use crate::model::error::{Error, Result};

/// What a checkpoint remembers of a file in progress: its length and the CRC-32 of those
/// bytes, which a resumed run checks before it appends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Durable {
    pub bytes: u64,
    pub crc32: u32,
}

pub(crate) struct PartialFile {
    target: PathBuf,
    path: PathBuf,
    writer: Option<BufWriter<File>>,
    bytes: u64,
    crc: crc32fast::Hasher,
    /// Whether a checkpoint may name this file: if not, it is removed when dropped.
    synced: bool,
}

/// `.NAME.partial` beside `target`.
pub(crate) fn partial_path(target: &Path) -> PathBuf {
    let mut name = std::ffi::OsString::from(".");
    name.push(target.file_name().unwrap_or_default());
    name.push(".partial");
    target.with_file_name(name)
}

impl PartialFile {
    /// Starts the file in progress of `target` afresh (replacing one left by an earlier run).
    pub fn create(target: &Path) -> Result<Self> {
        check_target(target)?;
        remove_stale_temporaries(target);
        let path = partial_path(target);
        let file = File::create(&path).map_err(|e| Error::io(&path, e))?;
        Ok(Self {
            target: target.to_path_buf(),
            path,
            writer: Some(BufWriter::new(file)),
            bytes: 0,
            crc: crc32fast::Hasher::new(),
            synced: false,
        })
    }

    /// Continues the file in progress of `target` from a checkpoint that found it `durable`:
    /// checks that its first `durable.bytes` bytes are the ones the checkpoint saw, cuts off
    /// what was written after the checkpoint and appends from there. Errors name the file.
    /// The file must start with `start` (its format's header) too.
    pub fn reopen(target: &Path, durable: Durable, start: &[u8]) -> Result<Self> {
        check_target(target)?;
        remove_stale_temporaries(target);
        let path = partial_path(target);
        let refuse = |message: String| Error::invalid(path.display().to_string(), message);
        let mut file = match OpenOptions::new().read(true).write(true).open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(refuse(format!(
                    "the recording in progress is missing, so the recording cannot be continued \
                     (a run that completes renames it to {})",
                    target.display()
                )));
            }
            Err(e) => return Err(Error::io(&path, e)),
        };
        let length = file.metadata().map_err(|e| Error::io(&path, e))?.len();
        if length < durable.bytes {
            return Err(refuse(format!(
                "holds {length} bytes, fewer than the {} the checkpoint saw written",
                durable.bytes
            )));
        }
        let mut crc = crc32fast::Hasher::new();
        let mut left = durable.bytes;
        let mut chunk = vec![0; 1 << 20];
        let mut first = true;
        while left > 0 {
            let n = chunk.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            file.read_exact(&mut chunk[..n])
                .map_err(|e| Error::io(&path, e))?;
            if first && !chunk[..n].starts_with(start) {
                return Err(refuse(
                    "does not start with the header of the trajectory the checkpoint continues"
                        .into(),
                ));
            }
            first = false;
            crc.update(&chunk[..n]);
            left -= n as u64;
        }
        let actual = crc.clone().finalize();
        if actual != durable.crc32 {
            return Err(refuse(format!(
                "its first {} bytes have checksum {actual:08x}, not the checkpoint's {:08x}: \
                 another run has written it since",
                durable.bytes, durable.crc32
            )));
        }
        file.set_len(durable.bytes)
            .map_err(|e| Error::io(&path, e))?;
        file.seek(SeekFrom::Start(durable.bytes))
            .map_err(|e| Error::io(&path, e))?;
        Ok(Self {
            target: target.to_path_buf(),
            path,
            writer: Some(BufWriter::new(file)),
            bytes: durable.bytes,
            crc,
            synced: true,
        })
    }

    fn writer(&mut self) -> &mut BufWriter<File> {
        self.writer
            .as_mut()
            .expect("the writer is present until the file is done")
    }

    /// Flushes and syncs what was written; returns what a checkpoint needs to continue it.
    pub fn sync(&mut self) -> Result<Durable> {
        let path = self.path.clone();
        let writer = self.writer();
        writer.flush().map_err(|e| Error::io(&path, e))?;
        writer
            .get_ref()
            .sync_data()
            .map_err(|e| Error::io(&path, e))?;
        if !self.synced {
            // The first checkpoint to name the file must find it after a power cut.
            sync_directory(&self.path);
            self.synced = true;
        }
        Ok(Durable {
            bytes: self.bytes,
            crc32: self.crc.clone().finalize(),
        })
    }

    /// Flushes, syncs and renames the file over its target.
    pub fn commit(mut self) -> Result<()> {
        let file = self.finish_writing()?;
        drop(file);
        std::fs::rename(&self.path, &self.target).map_err(|e| Error::io(&self.target, e))?;
        sync_directory(&self.target);
        Ok(())
    }

    /// The file from its start, for reading it whole into another (the `.npz` archive).
    /// [`PartialFile::remove`] removes it afterwards.
    #[cfg(feature = "npz")]
    pub fn reader(&mut self) -> Result<impl Read + use<>> {
        self.writer()
            .flush()
            .map_err(|e| Error::io(&self.path, e))?;
        let file = File::open(&self.path).map_err(|e| Error::io(&self.path, e))?;
        Ok(io::BufReader::with_capacity(1 << 20, file))
    }

    /// Removes the file: its contents are in the target now.
    #[cfg(feature = "npz")]
    pub fn remove(mut self) -> Result<()> {
        if let Some(writer) = self.writer.take() {
            drop(writer.into_parts());
        }
        std::fs::remove_file(&self.path).map_err(|e| Error::io(&self.path, e))
    }

    fn finish_writing(&mut self) -> Result<File> {
        let writer = self
            .writer
            .take()
            .expect("the writer is present until the file is done");
        let file = writer
            .into_inner()
            .map_err(|e| Error::io(&self.path, e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(&self.path, e))?;
        Ok(file)
    }
}

/// The checks [`AtomicFile`](crate::checkpoint::atomic_file::AtomicFile) makes: a file name, not a
/// directory.
fn check_target(target: &Path) -> Result<()> {
    if target.file_name().is_none() {
        return Err(Error::io(target, io::Error::other("not a file name")));
    }
    if target.is_dir() {
        return Err(Error::io(target, io::Error::other("is a directory")));
    }
    Ok(())
}

impl Write for PartialFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.writer().write(buf)?;
        self.crc.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer().flush()
    }
}

impl Drop for PartialFile {
    fn drop(&mut self) {
        if let Some(writer) = self.writer.take() {
            // Not flushed: a checkpoint names only what `sync` made durable, and a resumed
            // run cuts off anything after it.
            drop(writer.into_parts());
            if !self.synced {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
}
