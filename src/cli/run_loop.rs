//! The one loop of `run` and `resume`: steps to the plan's end in chunks between checkpoints,
//! writes each checkpoint, and on failure says in one line where the work is. A run in one
//! process (fresh or resumed) and every MPI rank drive it, each through [`Stepping`].

use std::path::Path;
use std::time::Instant;

use crate::{Error, Result, RunPlan};

/// What the loop drives: a simulation with its recording, in one process or as one rank.
pub(crate) trait Stepping {
    /// The clock step the simulation is at.
    fn clock_step(&self) -> u64;
    /// Integrates `steps` steps, writing the recording's frames that fall due on the way and
    /// at the last of them.
    fn advance(&mut self, steps: u64) -> Result<()>;
    /// Writes a checkpoint to `path` at the current step; it carries `plan` with the
    /// recording made durable up to now.
    fn checkpoint(&mut self, path: &Path, plan: &RunPlan) -> Result<()>;
    /// Ends the integration: the work queued is done and its faults reported.
    fn finish(&mut self) -> Result<()>;
}

/// A run that stopped before its end: why, and the step of the last checkpoint it wrote.
pub(crate) struct Interrupted {
    pub error: Error,
    pub last_checkpoint: Option<u64>,
}

impl Interrupted {
    /// The line that says what failed and where the work is; `resume` is the command that
    /// continues from a checkpoint (`rigid-crowd resume`, or its `mpirun` form).
    pub(crate) fn line(&self, checkpoint: Option<&Path>, resume: &str) -> String {
        let e = &self.error;
        match (checkpoint, self.last_checkpoint) {
            (Some(path), Some(step)) => format!(
                "error: {e}; the last checkpoint is {} (step {step}): continue with `{resume} {}`",
                path.display(),
                path.display()
            ),
            (Some(path), None) => format!(
                "error: {e}; no checkpoint was written yet ({} is unchanged)",
                path.display()
            ),
            (None, _) => format!("error: {e}"),
        }
    }
}

/// When the steps of a run began and ended (the summary's set-up, integration and output
/// times).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Integration {
    pub began: Instant,
    pub ended: Instant,
}

impl Integration {
    /// Seconds from the first step to the end of the last.
    pub(crate) fn seconds(&self) -> f64 {
        (self.ended - self.began).as_secs_f64()
    }
}

/// Steps `run` to `plan.end_step`. With a `checkpoint` path, writes a checkpoint every
/// `plan.checkpoint_every` steps from where it starts and one at the end.
pub(crate) fn run_to_end(
    run: &mut impl Stepping,
    plan: &RunPlan,
    checkpoint: Option<&Path>,
) -> std::result::Result<Integration, Interrupted> {
    let began = Instant::now();
    let mut last_checkpoint = None;
    let mut steps = || -> Result<()> {
        let every = plan.checkpoint_every;
        let mut next_checkpoint = match (checkpoint, every) {
            (Some(_), every) if every > 0 => run.clock_step() + every,
            _ => u64::MAX,
        };
        while run.clock_step() < plan.end_step {
            let clock = run.clock_step();
            run.advance(plan.end_step.min(next_checkpoint) - clock)?;
            let clock = run.clock_step();
            if let Some(path) = checkpoint {
                if clock == next_checkpoint || clock == plan.end_step {
                    run.checkpoint(path, plan)?;
                    last_checkpoint = Some(clock);
                    next_checkpoint = clock + every;
                }
            }
        }
        run.finish()
    };
    match steps() {
        Ok(()) => Ok(Integration {
            began,
            ended: Instant::now(),
        }),
        Err(error) => Err(Interrupted {
            error,
            last_checkpoint,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Steps and checkpoints as they happen, failing at `fail_at`.
    struct Trace {
        clock: u64,
        fail_at: Option<u64>,
        events: Vec<String>,
    }

    impl Stepping for Trace {
        fn clock_step(&self) -> u64 {
            self.clock
        }
        fn advance(&mut self, steps: u64) -> Result<()> {
            if self.fail_at.is_some_and(|at| at < self.clock + steps) {
                return Err(Error::invalid("step", "failed"));
            }
            self.clock += steps;
            self.events.push(format!("to {}", self.clock));
            Ok(())
        }
        fn checkpoint(&mut self, _: &Path, _: &RunPlan) -> Result<()> {
            self.events.push(format!("checkpoint {}", self.clock));
            Ok(())
        }
        fn finish(&mut self) -> Result<()> {
            self.events.push("finish".into());
            Ok(())
        }
    }

    fn plan(end_step: u64, checkpoint_every: u64) -> RunPlan {
        RunPlan {
            end_step,
            out: PathBuf::from("out.csv"),
            checkpoint_every,
            recording: None,
        }
    }

    fn trace(start: u64, end: u64, every: u64, path: bool) -> (Vec<String>, Option<u64>) {
        let mut run = Trace {
            clock: start,
            fail_at: None,
            events: Vec::new(),
        };
        let path = path.then(|| PathBuf::from("run.ckpt"));
        let result = run_to_end(&mut run, &plan(end, every), path.as_deref());
        (run.events, result.err().and_then(|i| i.last_checkpoint))
    }

    #[test]
    fn checkpoints_fall_every_k_steps_from_the_start_and_at_the_end() {
        let (events, _) = trace(3, 10, 3, true);
        let want = [
            "to 6",
            "checkpoint 6",
            "to 9",
            "checkpoint 9",
            "to 10",
            "checkpoint 10",
        ];
        assert_eq!(events[..6], want);
        assert_eq!(events[6], "finish");
        // Every 0: one at the end only. No path: one chunk, no checkpoint.
        assert_eq!(trace(0, 5, 0, true).0, ["to 5", "checkpoint 5", "finish"]);
        assert_eq!(trace(0, 5, 0, false).0, ["to 5", "finish"]);
        // Nothing left to run: no step, no checkpoint.
        assert_eq!(trace(7, 7, 2, true).0, ["finish"]);
    }

    #[test]
    fn a_failure_names_the_last_checkpoint() {
        let mut run = Trace {
            clock: 0,
            fail_at: Some(7),
            events: Vec::new(),
        };
        let path = PathBuf::from("run.ckpt");
        let stopped = run_to_end(&mut run, &plan(20, 3), Some(&path))
            .err()
            .unwrap();
        assert_eq!(stopped.last_checkpoint, Some(6));
        let line = stopped.line(Some(&path), "rigid-crowd resume");
        assert!(
            line.ends_with("(step 6): continue with `rigid-crowd resume run.ckpt`"),
            "{line}"
        );
        let none = Interrupted {
            error: Error::invalid("step", "failed"),
            last_checkpoint: None,
        };
        assert!(
            none.line(Some(&path), "x")
                .contains("no checkpoint was written yet")
        );
        assert!(!none.line(None, "x").contains("checkpoint"));
    }
}
