//! What the facade asks of a backend: one interface, implemented here by each backend's
//! simulation, so that [`Simulation`](crate::Simulation) holds one `Box<dyn Engine>` instead
//! of matching on the backend for every call.

use crate::assembly::crowd::Crowd;
use crate::backends::cpu::CpuSimulation;
use crate::backends::cpu_ref::CpuRefSimulation;
use crate::backends::gpu::GpuShards;
use crate::model::backend::Backend;
use crate::model::body::{Body, BodyState};
use crate::model::error::Result;
use crate::model::fault::Fault;
use crate::model::fault_rules::QuarantinedBody;
use crate::model::mass::MassProperties;
use crate::model::tangent::TangentPlan;
use crate::physics::force_law::ExternalLoad;
use std::ops::Range;

/// Every body's index, mass properties and state, in crowd order.
pub(crate) type Visit<'a> = &'a mut dyn FnMut(usize, &MassProperties, &BodyState);

/// A backend's simulation as the facade drives it. Indices are the simulation's (validated
/// by the facade); states are checked and normalized before they get here.
pub(crate) trait Engine: std::fmt::Debug + Send + Sync {
    /// The backend it is.
    fn backend(&self) -> Backend;
    /// Advances every body by `steps` steps (on the GPU, queues them). Under `stop`, the body,
    /// the step of its last good state and the fault of the body that stopped the run, when
    /// the backend knows it at once (the GPU reports its faults as errors, later).
    fn step(&mut self, steps: u64) -> Result<Option<(usize, u64, Fault)>>;
    /// Waits until the queued steps are done.
    fn finish(&mut self) -> Result<()>;
    /// Freezes each body of `bodies` at its state, step and fault.
    fn freeze(&mut self, bodies: &[QuarantinedBody]) -> Result<()>;
    /// The frozen bodies in crowd order.
    fn quarantined(&mut self) -> Result<Vec<QuarantinedBody>>;
    /// Body `body`'s mass properties.
    #[cfg(feature = "cli")]
    fn mass(&self, body: usize) -> MassProperties;
    /// Gives body `indices[k]` the state `states[k]` from the next step on.
    fn set_states(
        &mut self,
        indices: &[usize],
        states: &[BodyState],
        clock_step: u64,
    ) -> Result<()>;
    /// Replaces the external loads (one per body).
    fn set_external_loads(&mut self, loads: &[ExternalLoad]) -> Result<()>;
    /// The bodies in their current state.
    fn bodies(&self) -> Result<Vec<Body>>;
    /// Hands every body to `visit` (waiting for queued steps).
    fn visit_states(&mut self, visit: Visit<'_>) -> Result<()>;
    /// [`visit_states`](Self::visit_states) for a one-off read of the whole crowd.
    #[cfg(feature = "cli")]
    fn stream_states(&mut self, visit: Visit<'_>) -> Result<()> {
        self.visit_states(visit)
    }
    /// Starts carrying the tangents of `plan` (validated against the crowd) from every
    /// body's state now.
    fn start_tangents(&mut self, plan: &TangentPlan, crowd: &Crowd) -> Result<()>;
    /// Copies the tangent columns `columns` of every body into `out` (`13 x columns.len()`
    /// per body, row-major, in crowd order), waiting for queued steps.
    fn read_tangents(&mut self, columns: Range<usize>, out: &mut [f64]) -> Result<()>;
    /// Replaces every carried column (`13 x k` per body, as `read_tangents` of them all
    /// gives them).
    fn set_tangents(&mut self, columns: &[f64]) -> Result<()>;
    /// The GPU simulation, for what only the GPU has (its buffers, devices, timings and
    /// asynchronous reads); `None` on the CPU backends.
    fn gpu(&self) -> Option<&GpuShards> {
        None
    }
    /// [`gpu`](Self::gpu), mutably.
    fn gpu_mut(&mut self) -> Option<&mut GpuShards> {
        None
    }
}

/// The two CPU backends answer alike: they know a fault at once, hold every state in host
/// memory and set states one body at a time.
macro_rules! cpu_engine {
    ($simulation:ty, $backend:expr) => {
        impl Engine for $simulation {
            fn backend(&self) -> Backend {
                $backend
            }
            fn step(&mut self, steps: u64) -> Result<Option<(usize, u64, Fault)>> {
                Ok(<$simulation>::step(self, steps))
            }
            fn finish(&mut self) -> Result<()> {
                Ok(())
            }
            fn freeze(&mut self, bodies: &[QuarantinedBody]) -> Result<()> {
                <$simulation>::freeze(self, bodies);
                Ok(())
            }
            fn quarantined(&mut self) -> Result<Vec<QuarantinedBody>> {
                Ok(<$simulation>::quarantined(self))
            }
            #[cfg(feature = "cli")]
            fn mass(&self, body: usize) -> MassProperties {
                <$simulation>::mass(self, body)
            }
            fn set_states(
                &mut self,
                indices: &[usize],
                states: &[BodyState],
                _clock_step: u64,
            ) -> Result<()> {
                for (&i, state) in indices.iter().zip(states) {
                    self.set_state(i, state);
                }
                Ok(())
            }
            fn set_external_loads(&mut self, loads: &[ExternalLoad]) -> Result<()> {
                <$simulation>::set_external_loads(self, loads);
                Ok(())
            }
            fn bodies(&self) -> Result<Vec<Body>> {
                let mut bodies = Vec::new();
                <$simulation>::visit_states(self, |_, &mass, &state| {
                    bodies.push(Body { mass, state })
                });
                Ok(bodies)
            }
            fn visit_states(&mut self, visit: Visit<'_>) -> Result<()> {
                <$simulation>::visit_states(self, visit);
                Ok(())
            }
            fn start_tangents(&mut self, plan: &TangentPlan, crowd: &Crowd) -> Result<()> {
                <$simulation>::start_tangents(self, plan, crowd)
            }
            fn read_tangents(&mut self, columns: Range<usize>, out: &mut [f64]) -> Result<()> {
                <$simulation>::read_tangents(self, columns, out);
                Ok(())
            }
            fn set_tangents(&mut self, columns: &[f64]) -> Result<()> {
                <$simulation>::set_tangents(self, columns);
                Ok(())
            }
        }
    };
}

cpu_engine!(CpuRefSimulation, Backend::Reference);
cpu_engine!(CpuSimulation, Backend::FastCpu);

impl Engine for GpuShards {
    fn backend(&self) -> Backend {
        Backend::gpu(self.options().precision)
    }
    fn step(&mut self, steps: u64) -> Result<Option<(usize, u64, Fault)>> {
        GpuShards::step(self, steps).map(|()| None)
    }
    fn finish(&mut self) -> Result<()> {
        GpuShards::finish(self)
    }
    fn freeze(&mut self, bodies: &[QuarantinedBody]) -> Result<()> {
        GpuShards::freeze(self, bodies)
    }
    fn quarantined(&mut self) -> Result<Vec<QuarantinedBody>> {
        GpuShards::quarantined(self)
    }
    #[cfg(feature = "cli")]
    fn mass(&self, body: usize) -> MassProperties {
        GpuShards::mass(self, body)
    }
    fn set_states(
        &mut self,
        indices: &[usize],
        states: &[BodyState],
        clock_step: u64,
    ) -> Result<()> {
        GpuShards::set_states(self, indices, states, clock_step)
    }
    fn set_external_loads(&mut self, loads: &[ExternalLoad]) -> Result<()> {
        GpuShards::set_external_loads(self, loads)
    }
    fn bodies(&self) -> Result<Vec<Body>> {
        GpuShards::bodies(self)
    }
    fn visit_states(&mut self, visit: Visit<'_>) -> Result<()> {
        GpuShards::visit_states(self, visit)
    }
    #[cfg(feature = "cli")]
    fn stream_states(&mut self, visit: Visit<'_>) -> Result<()> {
        GpuShards::stream_states(self, visit)
    }
    fn start_tangents(&mut self, plan: &TangentPlan, crowd: &Crowd) -> Result<()> {
        GpuShards::start_tangents(self, plan, crowd)
    }
    fn read_tangents(&mut self, columns: Range<usize>, out: &mut [f64]) -> Result<()> {
        GpuShards::read_tangents(self, columns, out)
    }
    fn set_tangents(&mut self, columns: &[f64]) -> Result<()> {
        GpuShards::set_tangents(self, columns)
    }
    fn gpu(&self) -> Option<&GpuShards> {
        Some(self)
    }
    fn gpu_mut(&mut self) -> Option<&mut GpuShards> {
        Some(self)
    }
}
