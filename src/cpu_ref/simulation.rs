//! The CPU reference backend: integrates every body in f64, bodies in parallel.

use rayon::prelude::*;

use crate::body::BodyState;
use crate::body_masses::BodyMasses;
use crate::body_source::{BodySource, SOURCE_CHUNK};
use crate::cpu_ref::contact::resolve_contacts;
use crate::cpu_ref::derivative::ForceEnv;
use crate::cpu_ref::integrate::integrate;
use crate::crowd::Crowd;
use crate::custom_force::{CustomForce, ExternalLoad};
use crate::error::{Error, Result};
use crate::force::ForceKind;
use crate::force_table::ForceTable;
use crate::integrator::Integrator;
use crate::mass::MassProperties;
use crate::plane::Plane;

/// A crowd integrated by the f64 CPU reference.
#[derive(Clone, Debug)]
pub struct CpuRefSimulation {
    states: Vec<BodyState>,
    masses: BodyMasses,
    table: ForceTable,
    integrator: Integrator,
    dt: f64,
    planes: Vec<Plane>,
    keyframes: Vec<Vec<[f64; 2]>>,
    custom_force: Option<CustomForce>,
    /// One per body once set; empty (every load zero) until then.
    loads: Vec<ExternalLoad>,
    /// `start_step` plus the steps taken: the clock reads `step * dt`.
    step: u64,
}

impl CpuRefSimulation {
    /// Takes the bodies of `source` and the rest of `crowd` (whose settings are validated;
    /// each body is checked here); fails on a custom force without a Rust twin.
    pub(crate) fn new(crowd: &Crowd, source: &BodySource) -> Result<Self> {
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
                    Ok(crate::body_masses::MassChunk::of(bodies))
                })?
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            states,
            masses: BodyMasses::from_chunks(masses),
            table: ForceTable::new(crowd, source.len()),
            integrator: crowd.integrator,
            dt: crowd.dt,
            planes: crowd.planes.clone(),
            keyframes: crowd.keyframes.clone(),
            custom_force: crowd.custom_force.clone(),
            loads: Vec::new(),
            step: crowd.start_step,
        })
    }

    /// Advances every body by `steps` steps. Bodies are independent, so each runs all its
    /// steps before the next body starts (one body's state stays in cache).
    ///
    /// A body whose state would turn NaN or infinite stops at its last finite state; the
    /// lowest such body and the clock step of its last finite state are returned.
    pub fn step(&mut self, steps: u64) -> Option<(usize, u64)> {
        let table = &self.table;
        let (integrator, dt, first_step) = (self.integrator, self.dt, self.step);
        let (keyframes, custom_force) = (&self.keyframes[..], self.custom_force.as_ref());
        let planes = &self.planes[..];
        let (masses, loads) = (&self.masses, &self.loads[..]);
        let fault = self
            .states
            .par_iter_mut()
            .enumerate()
            .filter_map(|(i, body_state)| {
                let mass = masses.get(i);
                let load = loads.get(i).copied().unwrap_or_default();
                let forces: Vec<&ForceKind> = table.acting_on(i).collect();
                let env = ForceEnv {
                    body: i,
                    load,
                    keyframes,
                    custom_force,
                };
                let mut state = *body_state;
                let shape = mass.shape().filter(|_| !planes.is_empty());
                for step in first_step..first_step + steps {
                    // A product, not a running sum: the clock does not drift over long runs.
                    let t = step as f64 * dt;
                    let start = state;
                    let mut next = integrate(integrator, &start, &mass, &forces, &env, t, dt);
                    if let Some(shape) = &shape {
                        resolve_contacts(&start, &mut next, &mass, shape, planes, dt);
                    }
                    if !next.is_finite() {
                        *body_state = start;
                        return Some((i, step));
                    }
                    state = next;
                }
                *body_state = state;
                None
            })
            .min();
        self.step += steps;
        fault
    }

    /// Replaces the external loads (one per body, already validated).
    pub(crate) fn set_external_loads(&mut self, loads: &[ExternalLoad]) {
        self.loads.clear();
        self.loads.extend_from_slice(loads);
    }

    /// Replaces body `i`'s state (validated by the caller).
    pub fn set_state(&mut self, i: usize, state: &BodyState) {
        self.states[i] = *state;
    }

    /// Hands every body's index, mass properties and state to `visit`, in crowd order.
    pub fn visit_states(&self, mut visit: impl FnMut(usize, &MassProperties, &BodyState)) {
        self.masses
            .for_each(|i, mass| visit(i, mass, &self.states[i]));
    }
}
