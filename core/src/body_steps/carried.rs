//! The tangents a CPU simulation carries with its states: what they are taken along and
//! every body's `13 x k` block, row-major, in crowd order, in the precision `P` of the steps
//! that carry them (f64 on `cpu-ref`, f32 on `cpu`).

use rayon::prelude::*;

use crate::body_steps::derivative::Primal;
use crate::model::error::{Error, Result};
use crate::model::tangent::{STATE_COMPONENTS, TangentPlan};

/// The plan and the blocks.
#[derive(Clone, Debug)]
pub struct CarriedTangents<P> {
    pub plan: TangentPlan,
    pub columns: Vec<P>,
}

impl<P: Primal> CarriedTangents<P> {
    /// The tangents of `plan` started from the state of each of `bodies` bodies, whose
    /// orientation `orientation(i)` gives (`w, x, y, z`); an error naming `tangents` if the
    /// blocks do not fit in memory.
    pub fn start(
        plan: &TangentPlan,
        bodies: usize,
        orientation: impl Fn(usize) -> [f64; 4] + Sync,
    ) -> Result<Self> {
        let block = plan.body_len();
        let mut columns = Vec::new();
        bodies
            .checked_mul(block)
            .and_then(|len| columns.try_reserve_exact(len).ok())
            .ok_or_else(|| {
                Error::invalid(
                    "tangents",
                    format!(
                        "{bodies} bodies with {block} numbers of tangents each do not fit in this machine's memory"
                    ),
                )
            })?;
        columns.resize(bodies * block, P::default());
        let mut carried = Self {
            plan: plan.clone(),
            columns,
        };
        let plan = &carried.plan;
        carried
            .columns
            .par_chunks_mut(block)
            .enumerate()
            .for_each(|(i, out)| start_block(plan, orientation(i), out));
        Ok(carried)
    }

    /// Starts body `i`'s block again from a state of orientation `q`.
    pub(crate) fn restart_body(&mut self, i: usize, q: [f64; 4]) {
        let block = self.plan.body_len();
        start_block(&self.plan, q, &mut self.columns[i * block..][..block]);
    }

    /// Replaces every body's block with `columns` (of the plan's length), rounded to `P`.
    pub(crate) fn set(&mut self, columns: &[f64]) {
        for (to, &from) in self.columns.iter_mut().zip(columns) {
            *to = P::constant(from);
        }
    }

    /// Copies columns `columns` of every body's block into `out` (`13 x columns.len()` per
    /// body, row-major, in crowd order).
    pub fn read(&self, columns: std::ops::Range<usize>, out: &mut [f64]) {
        let k = self.plan.width();
        let width = columns.len();
        for (body, rows) in self.columns.chunks(self.plan.body_len()).enumerate() {
            for r in 0..STATE_COMPONENTS {
                let from = &rows[r * k + columns.start..r * k + columns.end];
                let to = &mut out[(body * STATE_COMPONENTS + r) * width..][..width];
                for (to, &from) in to.iter_mut().zip(from) {
                    *to = from.into();
                }
            }
        }
    }
}

/// `plan`'s block at the start, for a state of orientation `q`, rounded to `P`.
fn start_block<P: Primal>(plan: &TangentPlan, q: [f64; 4], out: &mut [P]) {
    let mut block = vec![0.0; out.len()];
    plan.initial_block(q, &mut block);
    for (to, from) in out.iter_mut().zip(block) {
        *to = P::constant(from);
    }
}
