//! The CPU reference backend: integrates every body in f64, bodies in parallel.

use rayon::prelude::*;

use crate::body::{Body, BodyState};
use crate::cpu_ref::contact::resolve_contacts;
use crate::cpu_ref::derivative::ForceEnv;
use crate::cpu_ref::integrate::integrate;
use crate::crowd::Crowd;
use crate::custom_force::{CustomForce, ExternalLoad};
use crate::error::Result;
use crate::force::ForceKind;
use crate::force_table::ForceTable;
use crate::integrator::Integrator;
use crate::plane::Plane;

/// A crowd integrated by the f64 CPU reference.
#[derive(Clone, Debug)]
pub struct CpuRefSimulation {
    bodies: Vec<Body>,
    table: ForceTable,
    integrator: Integrator,
    dt: f64,
    planes: Vec<Plane>,
    keyframes: Vec<Vec<[f64; 2]>>,
    custom_force: Option<CustomForce>,
    /// One per body; all zero until set.
    loads: Vec<ExternalLoad>,
    /// `start_step` plus the steps taken: the clock reads `step * dt`.
    step: u64,
}

impl CpuRefSimulation {
    /// Takes a validated crowd; fails on a custom force without a Rust twin.
    pub(crate) fn new(crowd: &Crowd) -> Result<Self> {
        if let Some(custom) = &crowd.custom_force {
            custom.closure()?;
        }
        Ok(Self {
            bodies: crowd.bodies.clone(),
            table: ForceTable::new(crowd),
            integrator: crowd.integrator,
            dt: crowd.dt,
            planes: crowd.planes.clone(),
            keyframes: crowd.keyframes.clone(),
            custom_force: crowd.custom_force.clone(),
            loads: vec![ExternalLoad::default(); crowd.bodies.len()],
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
        let fault = self
            .bodies
            .par_iter_mut()
            .zip(&self.loads)
            .enumerate()
            .filter_map(|(i, (body, &load))| {
                let forces: Vec<&ForceKind> = table.acting_on(i).collect();
                let env = ForceEnv {
                    body: i,
                    load,
                    keyframes,
                    custom_force,
                };
                let mut state = body.state;
                let shape = body.mass.shape().filter(|_| !planes.is_empty());
                for step in first_step..first_step + steps {
                    // A product, not a running sum: the clock does not drift over long runs.
                    let t = step as f64 * dt;
                    let start = state;
                    let mut next = integrate(integrator, &start, &body.mass, &forces, &env, t, dt);
                    if let Some(shape) = &shape {
                        resolve_contacts(&start, &mut next, &body.mass, shape, planes, dt);
                    }
                    if !next.is_finite() {
                        body.state = start;
                        return Some((i, step));
                    }
                    state = next;
                }
                body.state = state;
                None
            })
            .min();
        self.step += steps;
        fault
    }

    /// Replaces the external loads (one per body, already validated).
    pub(crate) fn set_external_loads(&mut self, loads: &[ExternalLoad]) {
        self.loads.copy_from_slice(loads);
    }

    /// Replaces body `i`'s state (validated by the caller).
    pub fn set_state(&mut self, i: usize, state: &BodyState) {
        self.bodies[i].state = *state;
    }

    /// The bodies in their current state.
    pub fn bodies(&self) -> &[Body] {
        &self.bodies
    }
}
