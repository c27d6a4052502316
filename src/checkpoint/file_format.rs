//! The checkpoint file: header, checksum and payload, written atomically.

use std::io::Write;
use std::path::Path;

use crate::checkpoint::atomic_file::write_atomically;
use crate::checkpoint::codec;
use crate::checkpoint::contents::Checkpoint;
use crate::model::error::{Error, Result};

/// The first bytes of every checkpoint file.
pub const CHECKPOINT_MAGIC: [u8; 8] = *b"RGDCRWD\n";
/// The newest checkpoint format this build writes; it reads this one and every earlier one.
/// Version 2 added the recording in progress to the run plan ([`RunPlan::recording`](crate::RunPlan::recording));
/// version 3 the fault rules and the frozen bodies ([`Checkpoint::quarantined`]); version 4
/// the tangents ([`Checkpoint::tangents`]); version 5 each plane's point
/// ([`Plane::point`](crate::Plane::point)); version 6 whether the `gpu` kernel took its f32
/// divisions in f64 ([`Checkpoint::f32_divisions_in_f64`]); version 7 the names of the
/// registered force laws the crowd's forces name ([`Checkpoint::force_laws`]); version 8 each
/// law force's law, by number, for a crowd running several; version 9 the collisions of a
/// colliding crowd ([`Crowd::collisions`](crate::Crowd::collisions)). A checkpoint is written in the
/// oldest version that holds it: one without such forces in version 6.
pub const CHECKPOINT_VERSION: u32 = 9;
/// The key that marks the manifest of a checkpoint written by MPI ranks (feature `mpi`):
/// a JSON file naming one checkpoint file per rank.
#[cfg(any(feature = "cli", feature = "mpi"))]
pub const MANIFEST_KEY: &str = "rigid_crowd_mpi_checkpoint";

/// Whether `bytes`, a file's contents, are the manifest of a checkpoint written by MPI
/// ranks rather than a checkpoint.
#[cfg(any(feature = "cli", feature = "mpi"))]
pub fn is_manifest(bytes: &[u8]) -> bool {
    bytes.first() == Some(&b'{')
        && bytes
            .windows(MANIFEST_KEY.len())
            .any(|w| w == MANIFEST_KEY.as_bytes())
}

/// Magic, version, payload length and checksum.
const HEADER_BYTES: usize = 8 + 4 + 8 + 4;

impl Checkpoint {
    /// The file's bytes: header, then payload.
    pub fn to_bytes(&self) -> Vec<u8> {
        let payload = codec::encode(self);
        let mut bytes = Vec::with_capacity(HEADER_BYTES + payload.len());
        bytes.extend_from_slice(&CHECKPOINT_MAGIC);
        bytes.extend_from_slice(&codec::version_of(self).to_le_bytes());
        bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        bytes.extend_from_slice(&payload);
        bytes
    }

    /// Parses and validates a checkpoint. A truncated, corrupted or foreign file, or one of
    /// another format version, is an error naming what is wrong; nothing here panics.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let header = |message: String| Error::invalid("checkpoint header", message);
        if bytes.len() < 8 || bytes[..8] != CHECKPOINT_MAGIC {
            return Err(header(
                "not a rigid-crowd checkpoint (the file does not start with RGDCRWD)".into(),
            ));
        }
        if bytes.len() < HEADER_BYTES {
            return Err(header(format!(
                "truncated: {} bytes, shorter than the {HEADER_BYTES}-byte header",
                bytes.len()
            )));
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
        if !(1..=CHECKPOINT_VERSION).contains(&version) {
            return Err(header(format!(
                "format version {version}; this build reads versions 1 to {CHECKPOINT_VERSION}"
            )));
        }
        let length = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
        let checksum = u32::from_le_bytes(bytes[20..24].try_into().expect("4 bytes"));
        let payload = &bytes[HEADER_BYTES..];
        if payload.len() as u64 != length {
            return Err(header(format!(
                "truncated or padded: the header promises {length} payload bytes, the file has {}",
                payload.len()
            )));
        }
        let actual = crc32fast::hash(payload);
        if actual != checksum {
            return Err(header(format!(
                "corrupted: payload checksum {actual:08x} does not match the recorded {checksum:08x}"
            )));
        }
        codec::decode(payload, version).map_err(|e| e.within("checkpoint "))
    }

    /// Writes the checkpoint to `path` atomically: to a temporary file beside it, synced,
    /// then renamed over it, so a crash mid-write leaves the previous checkpoint intact.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<()> {
        let bytes = self.to_bytes();
        write_atomically(path, |w| w.write_all(&bytes))
    }

    /// Reads a checkpoint file; errors are prefixed with the path.
    pub fn read(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::from_bytes(&bytes).map_err(|e| e.within(format_args!("{}: ", path.display())))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::checkpoint::atomic_file::AtomicFile;

    #[test]
    fn a_crash_mid_write_leaves_the_previous_checkpoint_intact() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.ckpt");
        let crowd =
            crate::verify::check_crowd::cross_check_crowd(20, 2, crate::Integrator::Rk4, 1e-3)
                .unwrap();
        let mut sim = crate::Simulation::reference(&crowd).unwrap();
        sim.step(2).unwrap();
        let saved = sim.checkpoint().unwrap();
        saved.write(&path).unwrap();
        // The next write dies halfway: the process is gone before the rename.
        let mut half = AtomicFile::create(&path).unwrap();
        half.write_all(&saved.to_bytes()[..100]).unwrap();
        std::mem::forget(half);
        let read = Checkpoint::read(&path)
            .unwrap()
            .with_custom_force(crowd.custom_force.clone().unwrap());
        assert_eq!(read, saved);
    }
}
