//! The CPU reference backend: integrates every body in f64, bodies in parallel.

use rayon::prelude::*;

use crate::assembly::body_masses::BodyMasses;
use crate::assembly::body_source::{BodySource, SOURCE_CHUNK};
use crate::assembly::crowd::Crowd;
use crate::assembly::force_table::ForceTable;
use crate::backends::cpu_ref::derivative::{ForceEnv, auxiliaries};
use crate::backends::cpu_ref::faults::state_fault;
use crate::backends::cpu_ref::integrate::BodyStepper;
use crate::model::body::BodyState;
use crate::model::error::{Error, Result};
use crate::model::fault::Fault;
use crate::model::fault_rules::QuarantinedBody;
use crate::model::force::ForceKind;
use crate::model::integrator::Integrator;
use crate::model::mass::MassProperties;
use crate::model::quarantine::Quarantine;
use crate::physics::contact::{PlaneConstants, ShapeConstants};
use crate::physics::custom_force::CustomForce;
use crate::physics::force_law::ExternalLoad;

/// A crowd integrated by the f64 CPU reference.
#[derive(Clone, Debug)]
pub struct CpuRefSimulation {
    states: Vec<BodyState>,
    masses: BodyMasses,
    table: ForceTable,
    integrator: Integrator,
    dt: f64,
    planes: Vec<PlaneConstants<f64>>,
    keyframes: Vec<Vec<[f64; 2]>>,
    custom_force: Option<CustomForce>,
    /// One per body once set; empty (every load zero) until then.
    loads: Vec<ExternalLoad>,
    /// `start_step` plus the steps taken: the clock reads `step * dt`.
    step: u64,
    /// The squared speed, angular speed and distance limits (infinite where unset).
    envelope_squared: [f64; 3],
    /// The policy and the frozen bodies, whose last good states `states` keeps.
    quarantine: Quarantine,
    /// The crowd index of body 0 here (a custom force sees crowd indices).
    first_body: usize,
}

impl CpuRefSimulation {
    /// Takes the bodies of `source` and the rest of `crowd` (whose settings are validated;
    /// each body is checked here); fails on a custom force without a Rust twin. `source`
    /// starts at crowd index `first_body` (not 0 for an MPI rank's shard): the index a
    /// custom force sees.
    pub(crate) fn new(crowd: &Crowd, source: &BodySource, first_body: usize) -> Result<Self> {
        if let Some(custom) = &crowd.custom_force {
            custom.closure()?;
        }
        let mut states = Vec::new();
        states
            .try_reserve_exact(source.len())
            .map_err(|_| Error::too_many_bodies(source.len()))?;
        states.resize(source.len(), BodyState::default());
        let masses = states
            .par_chunks_mut(SOURCE_CHUNK)
            .enumerate()
            .map(|(chunk, states)| {
                source.with_chunk(chunk, |first, bodies| {
                    crowd.validate_bodies(first, bodies)?;
                    for (state, body) in states.iter_mut().zip(bodies) {
                        *state = body.state;
                    }
                    Ok(crate::assembly::body_masses::MassChunk::of(bodies))
                })?
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            states,
            masses: BodyMasses::from_chunks(masses),
            table: ForceTable::new(crowd, source.len()),
            integrator: crowd.integrator,
            dt: crowd.dt,
            planes: crowd.planes.iter().map(PlaneConstants::of).collect(),
            keyframes: crowd.keyframes.clone(),
            custom_force: crowd.custom_force.clone(),
            loads: Vec::new(),
            step: crowd.start_step,
            quarantine: Quarantine::new(crowd.fault_rules.on_fault),
            envelope_squared: crowd.fault_rules.envelope.squared_limits(|v| v),
            first_body,
        })
    }

    /// Advances every body by `steps` steps. Bodies are independent, so each runs all its
    /// steps before the next body starts (one body's state stays in cache).
    ///
    /// A body whose new state would break a fault rule (turn NaN or infinite, or leave the
    /// envelope) stops at its last good state. Under `stop` the lowest such body, the clock
    /// step of its last good state and the fault are returned; under `freeze` the bodies
    /// are frozen there and left out of later steps.
    pub fn step(&mut self, steps: u64) -> Option<(usize, u64, Fault)> {
        let table = &self.table;
        let (integrator, dt, first_step) = (self.integrator, self.dt, self.step);
        let (keyframes, custom_force) = (&self.keyframes[..], self.custom_force.as_ref());
        let planes = &self.planes[..];
        let (masses, loads) = (&self.masses, &self.loads[..]);
        let (quarantine, envelope_squared) = (&self.quarantine, &self.envelope_squared);
        let first_body = self.first_body;
        let faults: Vec<(usize, u64, Fault)> = self
            .states
            .par_iter_mut()
            .enumerate()
            .filter_map(|(i, body_state)| {
                if quarantine.is_frozen(i) {
                    return None;
                }
                let mass = masses.get(i);
                let load = loads.get(i).copied().unwrap_or_default();
                let forces: Vec<&ForceKind> = table.acting_on(i).collect();
                let env = ForceEnv {
                    body: first_body + i,
                    load,
                    keyframes,
                    custom_force,
                };
                let stepper = BodyStepper::new(integrator, &mass, &forces, env);
                let stepper = match mass.shape() {
                    Some(shape) => stepper.meeting(ShapeConstants::of(&shape), planes),
                    None => stepper,
                };
                let mut state = *body_state;
                for step in first_step..first_step + steps {
                    // A product, not a running sum: the clock does not drift over long runs.
                    let t = step as f64 * dt;
                    let start = state;
                    let next = stepper.step(&start, t, dt);
                    let motion = || {
                        let aux = auxiliaries(&next, &mass);
                        (aux.velocity, aux.angular_velocity)
                    };
                    if let Some(fault) = state_fault(envelope_squared, &next, motion) {
                        *body_state = start;
                        return Some((i, step, fault));
                    }
                    state = next;
                }
                *body_state = state;
                None
            })
            .collect();
        self.step += steps;
        self.quarantine.settle(faults)
    }

    /// Body `i`'s mass properties.
    #[cfg(feature = "cli")]
    pub(crate) fn mass(&self, i: usize) -> MassProperties {
        self.masses.get(i)
    }

    /// The frozen bodies, in crowd order.
    pub(crate) fn quarantined(&self) -> Vec<QuarantinedBody> {
        self.quarantine.records(|body| self.states[body])
    }

    /// Freezes each body of `bodies` at its given state, step and fault (validated).
    pub(crate) fn freeze(&mut self, bodies: &[QuarantinedBody]) {
        for q in bodies {
            self.states[q.body] = q.state;
            self.quarantine.freeze(q);
        }
    }

    /// Replaces the external loads (one per body, already validated).
    pub(crate) fn set_external_loads(&mut self, loads: &[ExternalLoad]) {
        self.loads.clear();
        self.loads.extend_from_slice(loads);
    }

    /// Replaces body `i`'s state (validated by the caller); a frozen body rejoins the
    /// integration.
    pub fn set_state(&mut self, i: usize, state: &BodyState) {
        self.states[i] = *state;
        self.quarantine.release(i);
    }

    /// Hands every body's index, mass properties and state to `visit`, in crowd order.
    pub fn visit_states(&self, mut visit: impl FnMut(usize, &MassProperties, &BodyState)) {
        self.masses
            .for_each(|i, mass| visit(i, mass, &self.states[i]));
    }
}
