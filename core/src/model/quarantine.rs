//! The `stop`/`freeze` policy as the CPU backends apply it after each run of steps: which
//! body stops the run, or which bodies are frozen, with the step of their last good state.

use std::collections::BTreeMap;

use crate::model::body::BodyState;
use crate::model::fault::Fault;
use crate::model::fault_rules::{OnFault, QuarantinedBody};

/// A backend's frozen bodies under its policy.
#[derive(Clone, Debug)]
pub(crate) struct Quarantine {
    on_fault: OnFault,
    /// Each frozen body: the clock step of its last good state (which the backend keeps)
    /// and the fault that froze it.
    frozen: BTreeMap<usize, (u64, Fault)>,
}

impl Quarantine {
    /// No body frozen yet, under `on_fault`.
    pub(crate) fn new(on_fault: OnFault) -> Self {
        Self {
            on_fault,
            frozen: BTreeMap::new(),
        }
    }

    /// Whether a body that breaks a rule is frozen (rather than stopping the run).
    pub(crate) fn freezes(&self) -> bool {
        self.on_fault == OnFault::Freeze
    }

    /// Whether body `body` is frozen.
    pub(crate) fn is_frozen(&self, body: usize) -> bool {
        !self.frozen.is_empty() && self.frozen.contains_key(&body)
    }

    /// Applies the policy to the faults of one run of steps (body, step of its last good
    /// state, fault): under `stop` the lowest body's, which stops the run; under `freeze`
    /// none, every faulty body frozen.
    pub(crate) fn settle(
        &mut self,
        faults: impl IntoIterator<Item = (usize, u64, Fault)>,
    ) -> Option<(usize, u64, Fault)> {
        match self.on_fault {
            OnFault::Stop => faults.into_iter().min_by_key(|&(body, ..)| body),
            OnFault::Freeze => {
                let found = faults
                    .into_iter()
                    .map(|(body, step, fault)| (body, (step, fault)));
                self.frozen.extend(found);
                None
            }
        }
    }

    /// Freezes `q.body` with its step and fault (its state is the backend's to keep).
    pub(crate) fn freeze(&mut self, q: &QuarantinedBody) {
        self.frozen.insert(q.body, (q.step, q.fault));
    }

    /// Lets `body` rejoin the integration (it was given a new state).
    pub(crate) fn release(&mut self, body: usize) {
        self.frozen.remove(&body);
    }

    /// The frozen bodies in crowd order, each with its last good state from `state_of`.
    pub(crate) fn records(&self, state_of: impl Fn(usize) -> BodyState) -> Vec<QuarantinedBody> {
        self.frozen
            .iter()
            .map(|(&body, &(step, fault))| QuarantinedBody {
                body,
                step,
                fault,
                state: state_of(body),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_names_the_lowest_body_and_freeze_keeps_every_one() {
        let faults = [
            (7, 3, Fault::Speed),
            (2, 5, Fault::Distance),
            (9, 1, Fault::Speed),
        ];
        let mut stop = Quarantine::new(OnFault::Stop);
        assert_eq!(stop.settle(faults), Some((2, 5, Fault::Distance)));
        assert!(!stop.is_frozen(2) && !stop.freezes());

        let mut freeze = Quarantine::new(OnFault::Freeze);
        assert_eq!(freeze.settle(faults), None);
        let frozen = freeze.records(|_| BodyState::default());
        let bodies: Vec<(usize, u64)> = frozen.iter().map(|q| (q.body, q.step)).collect();
        assert_eq!(bodies, [(2, 5), (7, 3), (9, 1)]);
        freeze.release(7);
        assert!(!freeze.is_frozen(7) && freeze.is_frozen(9));
    }
}
