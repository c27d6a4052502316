//! Which bodies a recording under the `freeze` policy had frozen in each frame.

use std::io::Write;

use crate::record::npy;

/// The `status` entry of a trajectory recorded under the `freeze` fault policy: per frame and
/// body, 0 while the body is healthy and its [`Fault`](crate::Fault)'s code once it is frozen.
/// A body frozen after clock step `s` (its last good state) is frozen in every frame after
/// `s`; the recording's bodies are never reset, so the final list of frozen bodies gives
/// every frame's status.
pub(crate) struct FrameStatus {
    pub bodies: usize,
    /// The clock step of the recording's step 0.
    pub first_clock_step: u64,
    /// Each frozen body: its index, the clock step of its last good state, its fault code.
    pub frozen: Vec<(usize, u64, u8)>,
}

impl FrameStatus {
    /// The `(frames, bodies)` uint8 array, one frame's row at a time.
    #[cfg_attr(not(feature = "npz"), allow(dead_code))]
    pub(crate) fn write(&self, out: &mut impl Write, steps: &[i64]) -> std::io::Result<()> {
        out.write_all(&npy::header(npy::Dtype::U8, &[steps.len(), self.bodies]))?;
        let mut row = vec![0u8; self.bodies];
        for &step in steps {
            let clock = self.first_clock_step + step as u64;
            row.fill(0);
            for &(body, last_good, code) in &self.frozen {
                if clock > last_good {
                    row[body] = code;
                }
            }
            out.write_all(&row)?;
        }
        Ok(())
    }
}
