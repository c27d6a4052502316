//! The CPU reference backend: integrates every body in f64, bodies in parallel.

use rayon::prelude::*;

use crate::body::Body;
use crate::cpu::integrate::integrate;
use crate::crowd::Crowd;
use crate::force::ForceKind;
use crate::force_table::ForceTable;
use crate::integrator::Integrator;

/// A crowd integrated by the f64 CPU reference.
#[derive(Clone, Debug)]
pub struct CpuSimulation {
    bodies: Vec<Body>,
    table: ForceTable,
    integrator: Integrator,
    dt: f64,
}

impl CpuSimulation {
    /// Takes a validated crowd.
    pub(crate) fn new(crowd: &Crowd) -> Self {
        Self {
            bodies: crowd.bodies.clone(),
            table: ForceTable::new(crowd),
            integrator: crowd.integrator,
            dt: crowd.dt,
        }
    }

    /// Advances every body by `steps` steps. Bodies are independent, so each runs all its
    /// steps before the next body starts (one body's state stays in cache).
    pub fn step(&mut self, steps: u64) {
        let table = &self.table;
        let (integrator, dt) = (self.integrator, self.dt);
        self.bodies
            .par_iter_mut()
            .enumerate()
            .for_each(|(i, body)| {
                let forces: Vec<&ForceKind> = table.acting_on(i).collect();
                let mut state = body.state;
                for _ in 0..steps {
                    state = integrate(integrator, &state, &body.mass, &forces, dt);
                }
                body.state = state;
            });
    }

    /// The bodies in their current state.
    pub fn bodies(&self) -> &[Body] {
        &self.bodies
    }
}
