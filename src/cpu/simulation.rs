//! The CPU reference backend: integrates every body in f64, bodies in parallel.

use rayon::prelude::*;

use crate::body::Body;
use crate::cpu::contact::resolve_contacts;
use crate::cpu::integrate::integrate;
use crate::crowd::Crowd;
use crate::force::ForceKind;
use crate::force_table::ForceTable;
use crate::integrator::Integrator;
use crate::plane::Plane;

/// A crowd integrated by the f64 CPU reference.
#[derive(Clone, Debug)]
pub struct CpuSimulation {
    bodies: Vec<Body>,
    table: ForceTable,
    integrator: Integrator,
    dt: f64,
    planes: Vec<Plane>,
}

impl CpuSimulation {
    /// Takes a validated crowd.
    pub(crate) fn new(crowd: &Crowd) -> Self {
        Self {
            bodies: crowd.bodies.clone(),
            table: ForceTable::new(crowd),
            integrator: crowd.integrator,
            dt: crowd.dt,
            planes: crowd.planes.clone(),
        }
    }

    /// Advances every body by `steps` steps. Bodies are independent, so each runs all its
    /// steps before the next body starts (one body's state stays in cache).
    pub fn step(&mut self, steps: u64) {
        let table = &self.table;
        let (integrator, dt, planes) = (self.integrator, self.dt, &self.planes[..]);
        self.bodies
            .par_iter_mut()
            .enumerate()
            .for_each(|(i, body)| {
                let forces: Vec<&ForceKind> = table.acting_on(i).collect();
                let mut state = body.state;
                let shape = body.mass.shape().filter(|_| !planes.is_empty());
                for _ in 0..steps {
                    let start = state;
                    state = integrate(integrator, &start, &body.mass, &forces, dt);
                    if let Some(shape) = &shape {
                        resolve_contacts(&start, &mut state, &body.mass, shape, planes, dt);
                    }
                }
                body.state = state;
            });
    }

    /// The bodies in their current state.
    pub fn bodies(&self) -> &[Body] {
        &self.bodies
    }
}
