//! What `run` adds around the stepping: `--record FILE --every K` and the progress bar.

use std::path::PathBuf;

use clap::Args;
use rigid_crowd::record::{TrajectoryFormat, TrajectoryWriter, frame_count, record_run};
use rigid_crowd::{Error, Result, Simulation};

use super::progress::{Progress, step_with_progress};

#[derive(Args, Debug)]
pub struct RecordArgs {
    /// Also write the states every `--every` steps (and at the start) to this file: `.csv`,
    /// `.npy` (float64, shape (frames, bodies, 19)) or `.npz` (`states`, `steps`, `times`);
    /// see docs/recording.md. Replaced only when the run succeeds.
    #[arg(long)]
    record: Option<PathBuf>,
    /// Steps between recorded frames (with `--record`; default 1).
    #[arg(long)]
    every: Option<u64>,
    /// No progress bar (it is also off when stderr is not a terminal).
    #[arg(long)]
    quiet: bool,
}

/// The run's recording, if any, and its progress bar.
pub struct Recording {
    writer: Option<TrajectoryWriter>,
    every: u64,
    progress: Progress,
}

impl Recording {
    /// Checks the flags and claims the trajectory file before any work is done.
    pub fn prepare(args: &RecordArgs, bodies: usize, steps: u64) -> Result<Self> {
        let every = args.every.unwrap_or(1);
        if every == 0 {
            return Err(Error::invalid("--every", "must be at least 1 (got 0)"));
        }
        if args.record.is_none() && args.every.is_some() {
            return Err(Error::invalid("--every", "needs --record FILE"));
        }
        let writer = match &args.record {
            Some(path) => {
                TrajectoryFormat::from_path(path).map_err(|m| Error::invalid("--record", m))?;
                Some(TrajectoryWriter::create(
                    path,
                    bodies,
                    frame_count(steps, every),
                )?)
            }
            None => None,
        };
        Ok(Self {
            writer,
            every,
            progress: Progress::new(steps, bodies, args.quiet),
        })
    }

    /// Takes `steps` steps, writing the frames and moving the bar as it goes.
    pub fn advance(&mut self, sim: &mut Simulation, steps: u64) -> Result<()> {
        let progress = &self.progress;
        let result = match &mut self.writer {
            Some(writer) => record_run(
                sim,
                steps,
                self.every,
                |step, time, bodies| writer.write_frame(step, time, bodies),
                |done| progress.set(done),
            ),
            None => step_with_progress(sim, steps, progress),
        };
        progress.finish();
        result
    }

    /// Renames the trajectory into place; returns a note for the summary line.
    pub fn commit(self) -> Result<String> {
        match self.writer {
            Some(writer) => {
                let note = format!(
                    " and {} frames to {}",
                    writer.frames_written(),
                    writer.target().display()
                );
                writer.finish()?;
                Ok(note)
            }
            None => Ok(String::new()),
        }
    }
}
