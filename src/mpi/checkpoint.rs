//! Checkpoints of a run over MPI ranks: one ordinary checkpoint file per rank (its shard, in
//! the format and codec of a single process's) and a small manifest that names them.
//!
//! The shard files alternate between two sets (`NAME.a.rankR` and `NAME.b.rankR` beside
//! the manifest `NAME`): every rank writes the set the manifest does not name, all ranks
//! agree that every file is whole, and only then rank 0 replaces the manifest (atomically,
//! as every file of this tool). A run killed at any moment leaves a manifest naming one
//! complete set of the same step.

use std::path::{Path, PathBuf};

use ::mpi::traits::*;
use serde::{Deserialize, Serialize};

use super::simulation::{MpiSimulation, rank_shards};
use super::tangent_names::RankTangents;
use crate::ForceLaws;
use crate::assembly::body_source::BodySource;
use crate::backends::gpu::GpuContext;
use crate::checkpoint::atomic_file::write_atomically;
use crate::checkpoint::{Checkpoint, RunPlan};
use crate::model::backend::Backend;
use crate::model::error::{Error, Result};
use crate::simulation::RunsOn;
use crate::simulation::facade::Simulation;

use crate::checkpoint::MANIFEST_KEY;

const MANIFEST_VERSION: u32 = 1;

/// What the manifest holds.
#[derive(Serialize, Deserialize, Debug)]
struct Manifest {
    rigid_crowd_mpi_checkpoint: u32,
    ranks: usize,
    bodies: usize,
    step: u64,
    backend: String,
    /// `a` or `b`: the set of shard files.
    slot: String,
    shards: Vec<ShardFile>,
    /// The tangents carried, in the crowd's numbering and every shard's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tangents: Option<RankTangents>,
}

#[derive(Serialize, Deserialize, Debug)]
struct ShardFile {
    /// Beside the manifest.
    file: String,
    first_body: usize,
    bodies: usize,
    bytes: u64,
    crc32: u32,
}

/// The shard file of `rank` in set `slot` beside `manifest`.
fn shard_path(manifest: &Path, slot: u8, rank: usize) -> PathBuf {
    let mut name = manifest.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.rank{rank}", slot as char));
    manifest.with_file_name(name)
}

impl<C: Communicator> MpiSimulation<C> {
    /// Writes a checkpoint of the whole crowd: this rank's shard beside `path` and, on rank
    /// 0, the manifest at `path` with `run` (what `rigid-crowd resume` needs to finish a
    /// command-line run). Collective; the previous checkpoint stays whole until this one is.
    pub fn checkpoint(&mut self, path: &Path, run: Option<RunPlan>) -> Result<()> {
        let slot = self.slot_to_write(path)?;
        let mine = shard_path(path, slot, self.rank());
        let written = (|| {
            let mut checkpoint = self.local_mut().checkpoint()?;
            checkpoint.run = run;
            let bytes = checkpoint.to_bytes();
            write_atomically(&mine, |w| std::io::Write::write_all(w, &bytes))?;
            Ok([bytes.len() as u64, u64::from(crc32fast::hash(&bytes))])
        })();
        let sums = self.agree(written)?;
        let mut all = vec![0u64; 2 * self.ranks()];
        self.comm().all_gather_into(&sums[..], &mut all[..]);
        let manifest = self.is_root().then(|| Manifest {
            rigid_crowd_mpi_checkpoint: MANIFEST_VERSION,
            ranks: self.ranks(),
            bodies: self.body_count(),
            step: self.clock_step(),
            backend: self.local().backend().to_string(),
            slot: (slot as char).to_string(),
            shards: self
                .shards()
                .iter()
                .enumerate()
                .map(|(rank, bodies)| ShardFile {
                    file: file_name(&shard_path(path, slot, rank)),
                    first_body: bodies.start,
                    bodies: bodies.len(),
                    bytes: all[2 * rank],
                    crc32: all[2 * rank + 1] as u32,
                })
                .collect(),
            tangents: self.tangents.clone(),
        });
        let published = match manifest {
            Some(manifest) => {
                let text = serde_json::to_vec_pretty(&manifest).expect("a manifest serializes");
                write_atomically(path, |w| std::io::Write::write_all(w, &text))
            }
            None => Ok(()),
        };
        self.agree(published)?;
        self.next_slot = Some(other(slot));
        Ok(())
    }

    /// The set of shard files the next checkpoint writes: the one the manifest at `path`
    /// does not name (rank 0 reads it the first time and tells the others).
    fn slot_to_write(&mut self, path: &Path) -> Result<u8> {
        if let Some(slot) = self.next_slot {
            return Ok(slot);
        }
        let mut slot = match self.is_root() {
            true => match std::fs::read(path)
                .ok()
                .and_then(|b| read_manifest(&b).ok())
            {
                Some(manifest) if manifest.slot == "a" => b'b',
                _ => b'a',
            },
            false => 0,
        };
        self.comm().process_at_rank(0).broadcast_into(&mut slot);
        Ok(slot)
    }

    /// Continues the run whose checkpoint manifest is `path`, on `backend` (default: the one
    /// that wrote it), each rank from its own shard file; a GPU backend opens the adapter of
    /// the rank's index on its node. Needs as many ranks as wrote it; returns the run plan
    /// the checkpoint kept (rank 0's) on rank 0.
    pub fn resume(
        comm: C,
        path: &Path,
        backend: Option<Backend>,
    ) -> Result<(Self, Option<RunPlan>)> {
        Self::resume_with_laws(comm, path, backend, &ForceLaws::new())
    }

    /// [`MpiSimulation::resume`] of a crowd whose forces name registered laws: each rank
    /// attaches them again from `laws` by the names its shard file holds
    /// (`Checkpoint::with_laws`).
    pub fn resume_with_laws(
        comm: C,
        path: &Path,
        backend: Option<Backend>,
        laws: &ForceLaws,
    ) -> Result<(Self, Option<RunPlan>)> {
        let ranks = comm.size() as usize;
        let rank = comm.rank() as usize;
        // Rank 0 reads the manifest and hands it out: only the shard files need to be where
        // each rank can read them.
        let mut text = match rank {
            0 => std::fs::read(path).map_err(|e| Error::io(path, e)),
            _ => Ok(Vec::new()),
        };
        let read = super::agree::agree(&comm, 0, text.as_ref().map(|_| ()).map_err(clone_io));
        read?;
        let text = text.as_mut().expect("agreed");
        super::gather::broadcast_bytes(&comm, 0, text);
        let manifest =
            read_manifest(text).map_err(|e| e.within(format_args!("{}: ", path.display())))?;
        if manifest.ranks != ranks {
            return Err(Error::Mpi(format!(
                "{} was written by {} MPI ranks; resume it under `mpirun -np {}` (this run has {ranks})",
                path.display(),
                manifest.ranks,
                manifest.ranks
            )));
        }
        let shards = rank_shards(manifest.bodies, ranks)?;
        let backend = match backend {
            Some(backend) => backend,
            None => manifest
                .backend
                .parse()
                .map_err(|m| Error::invalid(format!("{}: backend", path.display()), m))?,
        };
        let mine = &manifest.shards[rank];
        let first_body = shards[rank].start;
        let local = (|| {
            if mine.first_body != first_body || mine.bodies != shards[rank].len() {
                return Err(Error::invalid(
                    format!("{}: shards[{rank}]", path.display()),
                    format!(
                        "bodies {}..{} where this build cuts {}..{}",
                        mine.first_body,
                        mine.first_body + mine.bodies,
                        shards[rank].start,
                        shards[rank].end
                    ),
                ));
            }
            let file = path.with_file_name(&mine.file);
            let bytes = std::fs::read(&file).map_err(|e| Error::io(&file, e))?;
            if bytes.len() as u64 != mine.bytes || crc32fast::hash(&bytes) != mine.crc32 {
                return Err(Error::invalid(
                    file.display().to_string(),
                    format!(
                        "is not the file the manifest {} names ({} bytes with CRC-32 {:08x} expected)",
                        path.display(),
                        mine.bytes,
                        mine.crc32
                    ),
                ));
            }
            let checkpoint = Checkpoint::from_bytes(&bytes)
                .and_then(|checkpoint| checkpoint.with_laws(laws))
                .map_err(|e| e.within(format_args!("{}: ", file.display())))?;
            let gpu = match backend.gpu_precision() {
                Some(_) => vec![GpuContext::open_adapter(super::node_rank(&comm))?],
                None => Vec::new(),
            };
            let crowd = &checkpoint.crowd;
            let source = BodySource::given(&crowd.bodies);
            let on = RunsOn::resuming(&checkpoint, backend);
            let mut sim = Simulation::shard_from_source(crowd, &source, on, &gpu, first_body)?;
            sim.restore(&checkpoint)?;
            let carried = sim
                .tangent_plan()
                .map(|p| p.tangents().iter().map(|t| t.name()));
            let carried: Vec<String> = carried.into_iter().flatten().collect();
            let named = manifest.tangents.as_ref().map(|t| t.shard_names(rank));
            if carried != named.unwrap_or_default() {
                return Err(Error::invalid(
                    file.display().to_string(),
                    format!(
                        "carries tangents the manifest {} does not name",
                        path.display()
                    ),
                ));
            }
            Ok((sim, checkpoint.run))
        })();
        let (local, run) = super::agree::agree(&comm, first_body, local)?;
        let tangents = manifest.tangents;
        Ok((Self::of(comm, local, shards, tangents), run))
    }
}

fn read_manifest(bytes: &[u8]) -> Result<Manifest> {
    let manifest: Manifest =
        serde_json::from_slice(bytes).map_err(|e| Error::invalid("manifest", e.to_string()))?;
    if manifest.rigid_crowd_mpi_checkpoint != MANIFEST_VERSION {
        return Err(Error::invalid(
            MANIFEST_KEY,
            format!(
                "version {}; this build reads version {MANIFEST_VERSION}",
                manifest.rigid_crowd_mpi_checkpoint
            ),
        ));
    }
    if manifest.shards.len() != manifest.ranks {
        return Err(Error::invalid(
            "shards",
            format!(
                "{} files for {} ranks",
                manifest.shards.len(),
                manifest.ranks
            ),
        ));
    }
    if let Some(tangents) = &manifest.tangents {
        if !tangents.fits(manifest.ranks) {
            return Err(Error::invalid(
                "tangents",
                format!("do not name one list per rank for {} ranks", manifest.ranks),
            ));
        }
    }
    Ok(manifest)
}

fn other(slot: u8) -> u8 {
    if slot == b'a' { b'b' } else { b'a' }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The error of reading the manifest, for the agreement (which keeps the original on rank 0).
fn clone_io(e: &Error) -> Error {
    Error::Mpi(e.to_string())
}
