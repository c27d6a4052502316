//! What `run` adds around the stepping: `--record FILE --every K` and the progress bar.

use std::path::PathBuf;

use crate::record::{
    Recorder, TrajectoryFormat, TrajectoryWriter, finished_as_synced, frame_count,
};
use crate::{Error, OnFault, QuarantinedBody, RecordingPlan, Result, Simulation};
use clap::Args;

use super::progress::{Progress, step_with_progress};

#[derive(Args, Debug)]
pub struct RecordArgs {
    /// Also write the states every `--every` steps (and at the start) to this file: `.csv`,
    /// `.npy` (float64, shape (frames, bodies, 19)) or `.npz` (`states`, `steps`, `times`);
    /// see docs/recording.md. Replaced only when the run succeeds; with `--checkpoint`, the
    /// file in progress (`.NAME.partial` beside it) outlives an interruption and `resume`
    /// continues it.
    #[arg(long)]
    pub(crate) record: Option<PathBuf>,
    /// Steps between recorded frames (with `--record`; default 1).
    #[arg(long)]
    every: Option<u64>,
    /// No progress bar (it is also off when stderr is not a terminal).
    #[arg(long)]
    quiet: bool,
}

/// The run's recording, if any, and its progress bar.
///
/// In a run that checkpoints, the trajectory is written resumably: at each checkpoint
/// [`Recording::sync`] hands out the frame due at that step and makes the file in progress
/// durable, and the checkpoint keeps how far it is ([`RecordingPlan`]); `resume` continues
/// the file from there ([`Recording::resume`]), so the finished trajectory is byte for byte
/// the uninterrupted run's however often the run was interrupted.
pub struct Recording {
    writer: Option<(TrajectoryWriter, u64)>,
    recorder: Option<Recorder>,
    progress: Progress,
    /// Steps taken so far through [`Recording::advance`].
    done: u64,
    /// Frames the trajectory holds when finished.
    frames: u64,
    /// The clock step of the first frame, once known.
    first_step: Option<u64>,
    /// For a resumed recording: the steps recorded before this process.
    resumed_after: Option<u64>,
    /// A resumed recording that had been finished already: its file.
    finished: Option<PathBuf>,
}

impl Recording {
    /// Checks the flags and claims the trajectory file before any work is done; `resumable`
    /// (a run that checkpoints) writes it so that `resume` can continue it.
    pub fn prepare(args: &RecordArgs, bodies: usize, steps: u64, resumable: bool) -> Result<Self> {
        let every = args.every.unwrap_or(1);
        if every == 0 {
            return Err(Error::invalid("--every", "must be at least 1 (got 0)"));
        }
        if args.record.is_none() && args.every.is_some() {
            return Err(Error::invalid("--every", "needs --record FILE"));
        }
        let frames = frame_count(steps, every);
        let writer = match &args.record {
            Some(path) => {
                TrajectoryFormat::from_path(path).map_err(|m| Error::invalid("--record", m))?;
                let writer = if resumable {
                    TrajectoryWriter::create_resumable(path, bodies, frames)?
                } else {
                    TrajectoryWriter::create(path, bodies, frames)?
                };
                Some((writer, every))
            }
            None => None,
        };
        Ok(Self {
            writer,
            progress: Progress::new(steps, bodies, args.quiet),
            frames: frames as u64,
            ..Self::none()
        })
    }

    /// Continues the recording `plan` of a run resumed from a checkpoint at clock step
    /// `step`, with time step `dt`, and a progress bar of `steps` steps (hidden when
    /// `quiet`). Fails before any work if the file in progress is not the one the checkpoint
    /// saw (see [`TrajectoryWriter::resume`]).
    pub fn resume(
        plan: &RecordingPlan,
        bodies: usize,
        step: u64,
        dt: f64,
        steps: u64,
        quiet: bool,
    ) -> Result<Self> {
        let field = |name: &str| format!("checkpoint run.recording.{name}");
        let recorded = step.checked_sub(plan.first_step).ok_or_else(|| {
            Error::invalid(
                field("first_step"),
                format!("{} is after the checkpoint's step {step}", plan.first_step),
            )
        })?;
        let written = plan.progress.frames_written;
        if written != frame_count(recorded, plan.every) as u64 {
            return Err(Error::invalid(
                field("frames_written"),
                format!(
                    "{written} frames, but {recorded} steps recorded every {} make {}",
                    plan.every,
                    frame_count(recorded, plan.every)
                ),
            ));
        }
        let frames = usize::try_from(plan.frames)
            .map_err(|_| Error::invalid(field("frames"), "too many"))?;
        if written == plan.frames && finished_as_synced(&plan.path, plan.progress) {
            // The run had completed (or was stopped right after it did): the trajectory is
            // in place, every frame the checkpoint saw in it.
            return Ok(Self {
                finished: Some(plan.path.clone()),
                ..Self::progress_only(bodies, steps, quiet)
            });
        }
        let (first, every) = (plan.first_step, plan.every);
        let steps_and_times = (0..written).map(|i| (i * every, (first + i * every) as f64 * dt));
        let writer =
            TrajectoryWriter::resume(&plan.path, bodies, frames, plan.progress, steps_and_times)?;
        Ok(Self {
            writer: Some((writer, every)),
            progress: Progress::new(steps, bodies, quiet),
            frames: plan.frames,
            first_step: Some(first),
            resumed_after: Some(recorded),
            ..Self::none()
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
            frames: 0,
            first_step: None,
            resumed_after: None,
            finished: None,
        }
    }

    /// Takes `steps` more steps, writing the frames due and moving the bar.
    pub fn advance(&mut self, sim: &mut Simulation, steps: u64) -> Result<()> {
        let (progress, base) = (&self.progress, self.done);
        match &mut self.writer {
            Some((writer, every)) => {
                let recorder = match &mut self.recorder {
                    Some(recorder) => recorder,
                    None => {
                        let recorder = match self.resumed_after {
                            Some(recorded) => Recorder::resume(sim, *every, recorded)?,
                            None => {
                                self.first_step = Some(sim.clock_step());
                                Recorder::start(sim, *every)?
                            }
                        };
                        self.recorder.insert(recorder)
                    }
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

    /// Before a checkpoint at the simulation's current step: hands out the frame due at that
    /// step and makes every frame so far durable; returns what the checkpoint keeps to
    /// continue the recording (`None` without one). Needs a recording prepared `resumable`.
    pub fn sync(&mut self, sim: &mut Simulation) -> Result<Option<RecordingPlan>> {
        let Some((writer, every)) = &mut self.writer else {
            return Ok(None);
        };
        if let Some(recorder) = &mut self.recorder {
            recorder.flush(sim, |step, time, bodies| {
                writer.write_frame(step, time, bodies)
            })?;
        }
        let (Some(first_step), progress) = (self.first_step, writer.sync()?) else {
            // Nothing recorded yet (no step taken): nothing to continue.
            return Ok(None);
        };
        Ok(Some(RecordingPlan {
            path: writer.target().to_path_buf(),
            every: *every,
            frames: self.frames,
            first_step,
            progress,
        }))
    }

    /// For a run over MPI ranks, which gathers each frame itself (src/cli/ranks.rs): the
    /// trajectory's writer (rank 0's), the steps between frames and the clock step of the
    /// first frame (`clock_step`, the run's step now, if no frame was written yet).
    #[cfg(feature = "mpi")]
    pub(crate) fn gathered(
        &mut self,
        clock_step: u64,
    ) -> Option<(&mut TrajectoryWriter, u64, u64)> {
        let (writer, every) = self.writer.as_mut()?;
        let first = *self.first_step.get_or_insert(clock_step);
        Some((writer, *every, first))
    }

    /// Writes the last frame, renames the trajectory into place and removes the bar;
    /// returns a note for the summary line.
    pub fn commit(self, sim: &mut Simulation) -> Result<String> {
        self.commit_with(sim, |sim| sim.quarantined())
    }

    /// [`commit`](Self::commit), with the bodies a `freeze` run froze given by `frozen`
    /// (over every MPI rank, crowd indices, for a run over ranks).
    pub fn commit_with(
        mut self,
        sim: &mut Simulation,
        frozen: impl FnOnce(&mut Simulation) -> Result<Vec<QuarantinedBody>>,
    ) -> Result<String> {
        self.progress.finish();
        let Some((mut writer, _)) = self.writer.take() else {
            return Ok(match &self.finished {
                Some(path) => format!(" ({} was complete already)", path.display()),
                None => String::new(),
            });
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
        if sim.fault_rules().on_fault == OnFault::Freeze {
            let first_step = self.first_step.unwrap_or_else(|| sim.clock_step());
            writer.set_quarantined(&frozen(sim)?, first_step);
        }
        writer.finish()?;
        Ok(note)
    }
}
