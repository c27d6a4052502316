//! The progress bar of long runs: elapsed time, ETA and live body-steps/s on stderr.
//! Shown only when stderr is a terminal and `--quiet` is not given.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use crate::{Result, Simulation};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// A bar over a run's steps, or nothing when hidden.
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar of `steps` steps of `bodies` bodies; hidden when `quiet` or when stderr is not
    /// a terminal (a log file gets no bar).
    pub fn new(steps: u64, bodies: usize, quiet: bool) -> Self {
        if quiet || !std::io::stderr().is_terminal() {
            return Self { bar: None };
        }
        let style = ProgressStyle::with_template(
            "{elapsed_precise} [{wide_bar}] {pos}/{len} steps, {body_steps}body-steps/s, ETA {eta}",
        )
        .expect("the template is valid")
        .progress_chars("=> ")
        .with_key(
            "body_steps",
            move |state: &ProgressState, out: &mut dyn std::fmt::Write| {
                let _ = write!(
                    out,
                    "{}",
                    super::text::rate(state.per_sec() * bodies as f64)
                );
            },
        );
        let bar = ProgressBar::with_draw_target(Some(steps), ProgressDrawTarget::stderr())
            .with_style(style);
        Self { bar: Some(bar) }
    }

    /// Whether the bar is drawn.
    pub fn is_shown(&self) -> bool {
        self.bar.is_some()
    }

    /// `steps` of the run are queued.
    pub fn set(&self, steps: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(steps);
        }
    }

    /// Removes the bar, so the summary line that follows stands alone.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Batches grow until one takes about this long: the bar moves a few times a second.
const BATCH_TARGET: Duration = Duration::from_millis(200);

/// Batches are multiples of this many steps: a multiple of every power-of-two fusion up to
/// 64, so the GPU runs the same dispatches as one `step(steps)` (tests/suite/progress_steps.rs
/// checks that batching changes nothing on every backend).
const BATCH_QUANTUM: u64 = 64;

/// Steps `sim` by `steps`, in batches when the bar is shown so it can move; `base` steps
/// were taken before.
pub(crate) fn step_with_progress(
    sim: &mut Simulation,
    steps: u64,
    progress: &Progress,
    base: u64,
) -> Result<()> {
    if !progress.is_shown() {
        return sim.step(steps);
    }
    let mut batch = BATCH_QUANTUM;
    let mut done = 0;
    while done < steps {
        let this = batch.min(steps - done);
        let start = Instant::now();
        sim.step(this)?;
        done += this;
        progress.set(base + done);
        if start.elapsed() < BATCH_TARGET / 2 {
            batch = (batch * 2).min(1 << 24);
        }
    }
    Ok(())
}
