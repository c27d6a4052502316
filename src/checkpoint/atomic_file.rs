//! Output files that appear whole or not at all: written beside the target, synced, renamed.
//!
//! The temporary file is `.NAME.tmp-PID` (the writing process's id). A process that dies
//! mid-write (killed, out of power) cannot remove its own; the next one writing `NAME`
//! removes those whose process is gone ([`remove_stale_temporaries`]).

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::model::error::{Error, Result};

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
        remove_stale_temporaries(&target);
        let mut temp_name = temp_prefix(name);
        temp_name.push(std::process::id().to_string());
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
        if let Some(writer) = self.writer.take() {
            // Without flushing: the buffer would only go to a file that is removed (and on a
            // full disk, fail again).
            drop(writer.into_parts());
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// `.NAME.tmp-`: the start of every temporary file of `NAME`, before the process id.
fn temp_prefix(name: &std::ffi::OsStr) -> std::ffi::OsString {
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".tmp-");
    prefix
}

/// Removes the temporary files of `target` (`.NAME.tmp-PID` beside it) whose process is no
/// longer running: a process removes its own when it fails, so one left by a process that is
/// gone is the remains of a crash. Files of running processes (a concurrent writer of the
/// same name) and anything not named exactly so are left alone. Best effort: an unreadable
/// directory or a file that cannot be removed is no error.
///
/// Whether a process runs is read from `/proc`, so this works on Linux only; elsewhere the
/// hidden files stay. A directory shared with processes in another PID namespace (another
/// container) must not hold the same target name: their processes look gone from here.
pub(crate) fn remove_stale_temporaries(target: &Path) {
    #[cfg(target_os = "linux")]
    {
        let Some(name) = target.file_name() else {
            return;
        };
        // Without /proc every process would look gone.
        if !Path::new("/proc/self").exists() {
            return;
        }
        let prefix = temp_prefix(name);
        let directory = match target.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        let Ok(entries) = std::fs::read_dir(directory) else {
            return;
        };
        let own = std::process::id();
        for entry in entries.flatten() {
            let file_name = entry.file_name();
            let Some(digits) = file_name
                .as_encoded_bytes()
                .strip_prefix(prefix.as_encoded_bytes())
            else {
                continue;
            };
            let pid = std::str::from_utf8(digits)
                .ok()
                .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|d| d.parse::<u32>().ok());
            let Some(pid) = pid else {
                continue;
            };
            if pid == own || Path::new("/proc").join(pid.to_string()).exists() {
                continue;
            }
            let _ = std::fs::remove_file(entry.path());
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = target;
}

/// Makes the rename itself durable: without syncing the directory, a power cut right after
/// the rename may leave the old name in place. Best effort: not every platform or file
/// system lets a directory be opened and synced, and the data is already on disk.
pub(crate) fn sync_directory(target: &Path) {
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// A process id that runs nothing: one past the largest the kernel hands out.
    fn dead_pid() -> u32 {
        let max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
            .map(|t| t.trim().parse().unwrap())
            .unwrap_or(4_194_304);
        assert!(!Path::new("/proc").join(max.to_string()).exists());
        max
    }

    #[test]
    fn the_temporaries_of_dead_processes_are_removed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.csv");
        let dead = dir.path().join(format!(".out.csv.tmp-{}", dead_pid()));
        // PID 1 always runs: a concurrent writer's file stays.
        let live = dir.path().join(".out.csv.tmp-1");
        let keep = [
            live.clone(),
            dir.path().join(format!(".other.csv.tmp-{}", dead_pid())),
            dir.path().join(".out.csv.tmp-12ab"),
            dir.path().join(".out.csv.tmp-"),
            dir.path().join(".out.csv.tmp-+7"),
            dir.path().join("out.csv.tmp-99999999"),
        ];
        for path in keep.iter().chain([&dead]) {
            std::fs::write(path, b"").unwrap();
        }
        write_atomically(&target, |w| w.write_all(b"body\n")).unwrap();
        assert!(!dead.exists(), "the dead process's temporary is gone");
        for path in &keep {
            assert!(path.exists(), "{} was left alone", path.display());
        }
        let mut names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names.len(), keep.len() + 1, "{names:?}");
        assert_eq!(std::fs::read(&target).unwrap(), b"body\n");
    }

    #[test]
    fn a_failed_write_leaves_no_temporary_and_the_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.csv");
        std::fs::write(&target, b"old").unwrap();
        let failed = write_atomically(&target, |w| {
            w.write_all(&[7; 100_000])?;
            Err(std::io::Error::other("the disk is full"))
        });
        let message = failed.unwrap_err().to_string();
        assert!(message.contains("out.csv") && message.contains("the disk is full"));
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
