//! What `run` adds around the stepping: `--record FILE --every K` and the progress bar.

use std::path::PathBuf;

use crate::record::{Recorder, TrajectoryFormat, TrajectoryWriter, frame_count};
use crate::{Error, Result, Simulation};
use clap::Args;

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
    writer: Option<(TrajectoryWriter, u64)>,
    recorder: Option<Recorder>,
    progress: Progress,
    /// Steps taken so far through [`Recording::advance`].
    done: u64,
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
                let writer = TrajectoryWriter::create(path, bodies, frame_count(steps, every))?;
                Some((writer, every))
            }
            None => None,
        };
        Ok(Self {
            writer,
            recorder: None,
            progress: Progress::new(steps, bodies, args.quiet),
            done: 0,
        })
    }

    /// No recording, only the progress bar of `steps` steps (hidden when `quiet`).
    pub fn progress_only(bodies: usize, steps: u64, quiet: bool) -> Self {
        Self {
            progress: Progress::new(steps, bodies, quiet),
            ..Self::none()
        }
    }

    /// Neither a recording nor a bar.
    pub fn none() -> Self {
        Self {
            writer: None,
            recorder: None,
            progress: Progress::new(0, 0, true),
            done: 0,
        }
    }

    /// Takes `steps` more steps, writing the frames due and moving the bar.
    pub fn advance(&mut self, sim: &mut Simulation, steps: u64) -> Result<()> {
        let (progress, base) = (&self.progress, self.done);
        match &mut self.writer {
            Some((writer, every)) => {
                let recorder = match &mut self.recorder {
                    Some(recorder) => recorder,
                    None => self.recorder.insert(Recorder::start(sim, *every)?),
                };
                recorder.advance(
                    sim,
                    steps,
                    |step, time, bodies| writer.write_frame(step, time, bodies),
                    |done| progress.set(base + done),
                )?;
            }
            None => step_with_progress(sim, steps, progress, base)?,
        }
        self.done += steps;
        Ok(())
    }

    /// Writes the last frame, renames the trajectory into place and removes the bar;
    /// returns a note for the summary line.
    pub fn commit(mut self, sim: &mut Simulation) -> Result<String> {
        self.progress.finish();
        let Some((mut writer, _)) = self.writer.take() else {
            return Ok(String::new());
        };
        if let Some(recorder) = self.recorder.take() {
            recorder.finish(sim, |step, time, bodies| {
                writer.write_frame(step, time, bodies)
            })?;
        }
        let note = format!(
            " and {} frames to {}",
            writer.frames_written(),
            writer.target().display()
        );
        writer.finish()?;
        Ok(note)
    }
}
