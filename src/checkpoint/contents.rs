//! What a checkpoint holds: the crowd mid-run and what the run needs to continue.

use crate::assembly::crowd::Crowd;
use crate::assembly::force_laws::ForceLaws;
use crate::checkpoint::run_plan::RunPlan;
use crate::model::backend::Backend;
use crate::model::error::{Error, Result};
use crate::model::fault_rules::QuarantinedBody;
use crate::model::force::ForceKind;
use crate::physics::custom_force::CustomForce;
use crate::physics::force_law::ExternalLoad;

/// A crowd captured mid-run, with what the run needs to continue.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    /// The bodies in their state at the checkpoint, the forces, planes, keyframes, integrator
    /// and `dt`; `start_step` is the clock's step at the checkpoint, so the time-varying
    /// forces continue where they were. A custom force comes back with its WGSL only: attach
    /// the Rust twin again (`crowd.custom_force = Some(CustomForce::new(...))`) to resume on
    /// a CPU backend.
    pub crowd: Crowd,
    /// The backend that wrote it: resuming on the same backend (and, for the GPU, the same
    /// adapter) continues bit for bit.
    pub backend: Backend,
    /// The adapter that wrote it, as `GpuContext::describe` names it (empty on the CPU).
    pub adapter: String,
    /// Whether the `gpu` kernel that wrote it took its f32 divisions and square roots in f64
    /// (`GpuOptions::f32_divisions_in_f64`): resuming on `gpu` does the same, so the run
    /// continues with the same arithmetic. False from every other backend.
    pub f32_divisions_in_f64: bool,
    /// What the command-line run was asked to do, so `rigid-crowd resume` can finish it.
    pub run: Option<RunPlan>,
    /// The external loads in force at the checkpoint, if any were set.
    pub external_loads: Option<Vec<ExternalLoad>>,
    /// The bodies frozen under the `freeze` policy, in crowd order: a resumed run keeps them
    /// frozen at their last good state, with the step and fault that froze them.
    pub quarantined: Vec<QuarantinedBody>,
    /// The tangents the run carried, if any: a resumed run carries them on.
    pub tangents: Option<TangentColumns>,
    /// The names of the registered force laws the crowd runs, in the order it numbers them
    /// (`CustomForce::laws`), where its forces name one: a file holds their forces' numbers
    /// and their names but not their code, which [`Checkpoint::with_laws`] attaches again.
    pub force_laws: Vec<String>,
}

/// Tangents as a checkpoint holds them: their names (as `Simulation::start_tangents` takes
/// them) and every body's `13 x k` block, row-major, in crowd order.
#[derive(Clone, Debug, PartialEq)]
pub struct TangentColumns {
    /// The names, in column order.
    pub names: Vec<String>,
    /// `bodies x 13 x k` numbers.
    pub columns: Vec<f64>,
}

impl Checkpoint {
    /// The clock step the checkpoint was taken at.
    pub fn step(&self) -> u64 {
        self.crowd.start_step
    }

    /// The crowd with `custom` attached as its custom force: for resuming a crowd whose
    /// custom force had a Rust twin, which a file cannot hold. Registered laws
    /// ([`CustomForce::from_named_law`], [`ForceLaws`](crate::ForceLaws), several joined by
    /// [`CustomForce::with_law`] in the order of [`Checkpoint::force_laws`]) give their
    /// forces, read back with their numbers alone, their names and declarations again.
    pub fn with_custom_force(mut self, custom: CustomForce) -> Self {
        let laws: Vec<_> = (custom.laws())
            .filter_map(|law| law.law_declaration())
            .collect();
        for force in &mut self.crowd.forces {
            if let ForceKind::Law { law, .. } = &mut force.kind {
                if let Some(&declaration) = (law.unattached_number()).and_then(|n| laws.get(n)) {
                    *law = declaration;
                }
            }
        }
        self.crowd.custom_force = Some(custom);
        self
    }

    /// The crowd with its force laws attached again from `laws`, by the names the checkpoint
    /// holds ([`Checkpoint::force_laws`]); as it is where its forces name no law. An error
    /// (one line) where `laws` has no law of one of those names.
    pub fn with_laws(self, laws: &ForceLaws) -> Result<Self> {
        let mut joined: Option<CustomForce> = None;
        for (i, name) in self.force_laws.iter().enumerate() {
            let law = laws.get(name).cloned().ok_or_else(|| {
                Error::invalid(
                    format!("force_laws[{i}]"),
                    format!("the crowd's forces name the force law {name:?}, which this program has not registered (ForceLaws::with)"),
                )
            })?;
            joined = Some(match joined {
                Some(joined) => joined.with_law(law)?,
                None => law,
            });
        }
        Ok(match joined {
            Some(custom) => self.with_custom_force(custom),
            None => self,
        })
    }
}
