//! One API over both backends: build from a crowd, `step(n)`, read the bodies back.

use crate::assembly::body_source::BodySource;
use crate::assembly::crowd::Crowd;
use crate::assembly::crowd::check_state;
use crate::backends::cpu::CpuSimulation;
use crate::backends::cpu_ref::CpuRefSimulation;
use crate::checkpoint::Checkpoint;
use crate::model::backend::Backend;
use crate::model::body::{Body, BodyState};
use crate::model::error::{Error, Result};
use crate::model::fault::Fault;
use crate::model::fault_rules::{FaultRules, QuarantinedBody};
use crate::physics::force_law::ExternalLoad;
use crate::simulation::engine::Engine;
use crate::simulation::runs_on::RunsOn;
use std::time::Instant;

use crate::backends::gpu::{GpuChunk, GpuContext, GpuOptions, GpuShards, Precision, StepTimes};
use crate::model::mass::MassProperties;
use crate::model::validate::check_vector;

use crate::simulation::tickets::Readbacks;

/// A crowd being integrated on one backend.
#[derive(Debug)]
pub struct Simulation {
    pub(super) engine: Box<dyn Engine>,
    /// The crowd without its bodies (forces, planes, keyframes, integrator, `dt`, the clock's
    /// first step): what a checkpoint holds besides the bodies.
    pub(super) settings: Crowd,
    pub(super) body_count: usize,
    pub(super) steps_taken: u64,
    /// Outstanding [`StatesTicket`]s (src/simulation/tickets.rs).
    pub(super) readbacks: Readbacks,
    /// The loads last set, kept for checkpoints.
    pub(super) external_loads: Option<Vec<ExternalLoad>>,
    /// The adapter the GPU backend runs on (empty on the CPU).
    pub(super) adapter: String,
    /// The CPU backends' faulty body, step and fault under `stop`, once found.
    pub(super) fault: Option<(usize, u64, Fault)>,
    /// The tangents carried, once started (src/simulation/tangents.rs).
    pub(super) tangents: Option<crate::model::tangent::TangentPlan>,
}

impl Simulation {
    /// Integrates `crowd` with the f64 CPU reference.
    pub fn reference(crowd: &Crowd) -> Result<Self> {
        Self::on_cpu(crowd, Backend::Reference)
    }

    /// Integrates `crowd` with the fast f32 CPU path on the current rayon pool.
    pub fn fast_cpu(crowd: &Crowd) -> Result<Self> {
        Self::on_cpu(crowd, Backend::FastCpu)
    }

    /// Integrates the bodies of `crowd` on the CPU backend `backend`.
    fn on_cpu(crowd: &Crowd, backend: Backend) -> Result<Self> {
        Self::from_source(
            crowd,
            &BodySource::given(&crowd.bodies),
            backend.into(),
            &[],
        )
    }

    /// Integrates the bodies of `source` under the rest of `crowd` (its own `bodies` are
    /// ignored) on `backend`, on the GPUs of `devices` (split in contiguous shards over
    /// several) or, if none is given, on the best adapter's. The bodies go straight into the
    /// backend's layout, chunk by chunk: a crowd generated from a recipe is never held whole
    /// as [`Body`] values.
    pub(crate) fn from_source(
        crowd: &Crowd,
        source: &BodySource,
        on: RunsOn,
        devices: &[GpuContext],
    ) -> Result<Self> {
        Self::shard_from_source(crowd, source, on, devices, 0)
    }

    /// [`from_source`](Self::from_source) for the bodies of a larger crowd from index
    /// `first_body` on (an MPI rank's shard; `crowd` its [`Crowd::shard_settings`]): a custom
    /// force sees those crowd indices, while every index this simulation takes or hands out
    /// counts from the shard's first body.
    pub(crate) fn shard_from_source(
        crowd: &Crowd,
        source: &BodySource,
        on: RunsOn,
        devices: &[GpuContext],
        first_body: usize,
    ) -> Result<Self> {
        crowd.validate_settings(source.len())?;
        let backend = on.backend;
        refuse_collisions(crowd, backend)?;
        let engine = match backend {
            Backend::Reference => {
                Box::new(CpuRefSimulation::new(crowd, source, first_body)?) as Box<dyn Engine>
            }
            Backend::FastCpu => Box::new(CpuSimulation::new(crowd, source, first_body)?),
            Backend::Gpu | Backend::GpuF64 => {
                let options = on.gpu_options();
                let opened;
                let devices = match devices {
                    [] => {
                        opened = [GpuContext::new()?];
                        &opened[..]
                    }
                    given => given,
                };
                return Self::gpu_shard(crowd, source, devices, options, first_body);
            }
        };
        Ok(Self::with_engine(engine, crowd, source.len()))
    }

    fn with_engine(engine: Box<dyn Engine>, crowd: &Crowd, body_count: usize) -> Self {
        let adapter = engine
            .gpu()
            .map_or_else(String::new, |g| g.context().describe());
        Self {
            engine,
            settings: Crowd {
                bodies: Vec::new(),
                forces: crowd.forces.clone(),
                integrator: crowd.integrator,
                dt: crowd.dt,
                planes: crowd.planes.clone(),
                collisions: crowd.collisions,
                keyframes: crowd.keyframes.clone(),
                custom_force: crowd.custom_force.clone(),
                start_step: crowd.start_step,
                fault_rules: crowd.fault_rules,
            },
            body_count,
            steps_taken: 0,
            readbacks: Readbacks::new(),
            external_loads: None,
            adapter,
            fault: None,
            tangents: None,
        }
    }

    /// Continues the run `checkpoint` captured, on `backend` (opening the best GPU adapter
    /// if needed), with its external loads and frozen bodies. On the backend and adapter
    /// that wrote it, the run continues bit for bit as if never interrupted.
    /// On `gpu` the kernel takes its f32 divisions in f64 if the checkpoint's did.
    pub fn resume(checkpoint: &Checkpoint, backend: Backend) -> Result<Self> {
        let on = RunsOn::resuming(checkpoint, backend);
        let mut sim = Self::from_source(
            &checkpoint.crowd,
            &BodySource::given(&checkpoint.crowd.bodies),
            on,
            &[],
        )?;
        sim.restore(checkpoint)?;
        Ok(sim)
    }

    /// Continues the run `checkpoint` captured on the GPU of `ctx`, in the precision of the
    /// checkpoint's backend (f32 unless it came from `gpu-f64`), its f32 divisions in f64 if
    /// the checkpoint's were.
    pub fn resume_on_gpu(checkpoint: &Checkpoint, ctx: &GpuContext) -> Result<Self> {
        let backend = match checkpoint.backend {
            Backend::GpuF64 => Backend::GpuF64,
            _ => Backend::Gpu,
        };
        let options = RunsOn::resuming(checkpoint, backend).gpu_options();
        let mut sim = Self::gpu_with_options(&checkpoint.crowd, ctx, options)?;
        sim.restore(checkpoint)?;
        Ok(sim)
    }

    /// What a checkpoint holds besides the crowd: the external loads, the frozen bodies and
    /// the tangents.
    pub(crate) fn restore(&mut self, checkpoint: &Checkpoint) -> Result<()> {
        if let Some(loads) = &checkpoint.external_loads {
            self.set_external_loads(loads)?;
        }
        self.freeze(&checkpoint.quarantined)?;
        match &checkpoint.tangents {
            Some(tangents) => self.restore_tangents(tangents),
            None => Ok(()),
        }
    }

    /// Freezes each body of `bodies` at its state, with the step and fault that froze it, as
    /// if the run had frozen it: for a run continued from a checkpoint. Errors name the
    /// offending entry: an index past the crowd, or a state that is not finite.
    pub(crate) fn freeze(&mut self, bodies: &[QuarantinedBody]) -> Result<()> {
        for (k, q) in bodies.iter().enumerate() {
            if q.body >= self.body_count {
                return Err(Error::invalid(
                    format!("quarantined[{k}].body"),
                    format!(
                        "body {} is past the crowd of {} bodies",
                        q.body, self.body_count
                    ),
                ));
            }
            check_state(&q.state, &format!("quarantined[{k}].state"))?;
        }
        self.engine.freeze(bodies)
    }

    /// The bodies frozen so far under [`OnFault::Freeze`](crate::OnFault::Freeze), in crowd
    /// order: each with the clock step of its last good state, the rule its next state broke,
    /// and that last good state, which it keeps until [`set_states`](Self::set_states) gives
    /// it a new one. Waits for queued GPU steps; on the GPU the crowd is read (in pieces)
    /// only once the kernel has counted a frozen body. Empty under `stop`, whose fault is an
    /// error instead.
    pub fn quarantined(&mut self) -> Result<Vec<QuarantinedBody>> {
        self.engine.quarantined()
    }

    /// Body `body`'s mass properties (an index below the body count).
    #[cfg(feature = "cli")]
    pub(crate) fn mass(&self, body: usize) -> MassProperties {
        self.engine.mass(body)
    }

    /// How this run treats bodies that go wrong (the crowd's [`Crowd::fault_rules`]).
    pub fn fault_rules(&self) -> FaultRules {
        self.settings.fault_rules
    }

    /// Everything needed to continue this run (waits for queued GPU steps and reads the
    /// states back); write it with [`Checkpoint::write`]. Fails, writing nothing, once a
    /// body has stopped the run: a checkpoint only ever holds a healthy crowd and the bodies
    /// frozen under `freeze`.
    pub fn checkpoint(&mut self) -> Result<Checkpoint> {
        self.finish()?;
        let tangents = self.tangent_columns()?;
        let bodies = self.bodies()?;
        let quarantined = self.quarantined()?;
        Ok(Checkpoint {
            force_laws: (self.settings.force_law_names().into_iter())
                .map(str::to_string)
                .collect(),
            crowd: Crowd {
                bodies,
                start_step: self.clock_step(),
                ..self.settings.clone()
            },
            backend: self.backend(),
            adapter: self.adapter.clone(),
            f32_divisions_in_f64: self.gpu_options().is_some_and(GpuOptions::divides_in_f64),
            run: None,
            external_loads: self.external_loads.clone(),
            quarantined,
            tangents,
        })
    }

    /// The time step (s).
    pub fn dt(&self) -> f64 {
        self.settings.dt
    }

    /// The integrator.
    pub fn integrator(&self) -> crate::Integrator {
        self.settings.integrator
    }

    /// The clock's step: the crowd's `start_step` plus the steps taken.
    pub fn clock_step(&self) -> u64 {
        self.settings.start_step + self.steps_taken
    }

    /// Integrates `crowd` on the GPU of `ctx` in f32 with the default kernel options; fails
    /// if it does not fit the adapter's memory.
    pub fn gpu(crowd: &Crowd, ctx: &GpuContext) -> Result<Self> {
        Self::gpu_with_options(crowd, ctx, GpuOptions::default())
    }

    /// Integrates `crowd` on the GPU of `ctx` in f64 (`gpu-f64`); fails with an error naming
    /// the adapter if it lacks `SHADER_F64`.
    pub fn gpu_f64(crowd: &Crowd, ctx: &GpuContext) -> Result<Self> {
        let options = GpuOptions {
            precision: Precision::F64,
            ..GpuOptions::default()
        };
        Self::gpu_with_options(crowd, ctx, options)
    }

    /// Integrates `crowd` on the GPU backend `backend` (`gpu` or `gpu-f64`) of `ctx`; a CPU
    /// backend ignores `ctx`.
    pub fn on_backend(crowd: &Crowd, backend: Backend, ctx: &GpuContext) -> Result<Self> {
        match backend {
            Backend::Reference => Self::reference(crowd),
            Backend::FastCpu => Self::fast_cpu(crowd),
            Backend::Gpu => Self::gpu(crowd, ctx),
            Backend::GpuF64 => Self::gpu_f64(crowd, ctx),
        }
    }

    /// Integrates `crowd` on the GPU of `ctx` with the kernel built per `options`.
    pub fn gpu_with_options(crowd: &Crowd, ctx: &GpuContext, options: GpuOptions) -> Result<Self> {
        Self::gpu_on_devices(crowd, std::slice::from_ref(ctx), options)
    }

    /// Integrates `crowd` on the GPU backend `backend` (`gpu` or `gpu-f64`) spread over the
    /// devices of `devices` (see [`GpuContext::open_devices`]): contiguous shards of bodies,
    /// sized by each device's memory, the first bodies on the first device. Every index the
    /// simulation hands out or takes is a crowd index, and the results are bit for bit those
    /// of one device. A CPU backend ignores `devices`.
    pub fn on_devices(crowd: &Crowd, backend: Backend, devices: &[GpuContext]) -> Result<Self> {
        Self::from_source(
            crowd,
            &BodySource::given(&crowd.bodies),
            backend.into(),
            devices,
        )
    }

    /// [`on_devices`](Self::on_devices) with the kernel built per `options` (whose precision
    /// picks `gpu` or `gpu-f64`).
    pub fn gpu_on_devices(
        crowd: &Crowd,
        devices: &[GpuContext],
        options: GpuOptions,
    ) -> Result<Self> {
        Self::gpu_shard(
            crowd,
            &BodySource::given(&crowd.bodies),
            devices,
            options,
            0,
        )
    }

    /// [`gpu_on_devices`](Self::gpu_on_devices) for the bodies of `source`, the crowd's from
    /// index `first_body` on (see [`shard_from_source`](Self::shard_from_source)).
    pub(crate) fn gpu_shard(
        crowd: &Crowd,
        source: &BodySource,
        devices: &[GpuContext],
        options: GpuOptions,
        first_body: usize,
    ) -> Result<Self> {
        crowd.validate_settings(source.len())?;
        refuse_collisions(crowd, Backend::gpu(options.precision))?;
        let engine = Box::new(GpuShards::new(devices, crowd, source, options, first_body)?);
        Ok(Self::with_engine(engine, crowd, source.len()))
    }

    /// How many GPU devices the crowd is spread over (0 on the CPU backends).
    pub fn device_count(&self) -> usize {
        self.engine.gpu().map_or(0, GpuShards::device_count)
    }

    /// Integrates `crowd` on `backend`, opening the best GPU adapter if needed.
    pub fn new(crowd: &Crowd, backend: Backend) -> Result<Self> {
        match backend {
            Backend::Reference => Self::reference(crowd),
            Backend::FastCpu => Self::fast_cpu(crowd),
            Backend::Gpu | Backend::GpuF64 => Self::on_backend(crowd, backend, &GpuContext::new()?),
        }
    }

    /// The backend in use.
    pub fn backend(&self) -> Backend {
        self.engine.backend()
    }

    /// Advances every body by `steps` steps. On the GPU this only queues the work.
    ///
    /// Under the default fault rules, a body whose state turns NaN or infinite fails the run
    /// with [`Error::NonFinite`] naming it and the clock step of its last finite state, which
    /// it keeps for inspection (through [`Simulation::bodies`]); one that leaves the
    /// envelope fails it with [`Error::OutsideEnvelope`]; every later step fails the same
    /// way. On the GPU the fault surfaces when its submission completes: at a later `step`,
    /// or at [`Simulation::finish`]. Under [`OnFault::Freeze`](crate::OnFault::Freeze) such a
    /// body is frozen instead (see [`quarantined`](Self::quarantined)) and the rest go on.
    pub fn step(&mut self, steps: u64) -> Result<()> {
        self.check_stopped()?;
        let fault = self.engine.step(steps)?;
        self.steps_taken += steps;
        self.fault = fault;
        self.check_stopped()
    }

    /// The error of the body that stopped the run, if one did.
    fn check_stopped(&self) -> Result<()> {
        match self.fault {
            Some((body, step, fault)) => Err(FaultRules::stop_error(body, step, fault)),
            None => Ok(()),
        }
    }

    /// Waits until all queued steps are done (a no-op on the CPU backends); use before timing.
    /// Fails as [`step`](Self::step) does once a body has stopped the run.
    pub fn finish(&mut self) -> Result<()> {
        self.check_stopped()?;
        self.engine.finish()
    }

    /// The bodies in their current state (a GPU readback on the GPU backend).
    pub fn bodies(&self) -> Result<Vec<Body>> {
        self.engine.bodies()
    }

    #[cfg(feature = "cli")]
    /// [`visit_states`](Self::visit_states) for a one-off read of the whole crowd: on the
    /// GPU the states cross in pieces through a small staging buffer rather than through a
    /// copy of the crowd kept for later reads.
    pub(crate) fn stream_states(
        &mut self,
        mut visit: impl FnMut(usize, &MassProperties, &BodyState),
    ) -> Result<()> {
        self.engine.stream_states(&mut visit)
    }

    /// Hands every body's index, mass properties and current state to `visit`, in crowd
    /// order (waiting for queued GPU steps, whose states are read back through the recycled
    /// staging buffers): what the lean reads and the streamed outputs are made of. Faults
    /// are reported as by [`bodies`](Self::bodies).
    pub(crate) fn visit_states(
        &mut self,
        mut visit: impl FnMut(usize, &MassProperties, &BodyState),
    ) -> Result<()> {
        self.engine.visit_states(&mut visit)
    }

    /// Runs `steps` steps and waits for them, timing the run on the host and, on a GPU
    /// whose adapter has timestamp queries, on the device (the sum of the compute passes).
    /// Faults are reported as by [`step`](Self::step) and [`finish`](Self::finish).
    pub fn timed_steps(&mut self, steps: u64) -> Result<StepTimes> {
        let Some(sim) = self.engine.gpu_mut() else {
            let start = Instant::now();
            self.step(steps)?;
            return Ok(StepTimes {
                wall: start.elapsed(),
                device: None,
            });
        };
        let times = sim.timed_steps(steps)?;
        self.steps_taken += steps;
        Ok(times)
    }

    /// The crowd's GPU storage, chunk by chunk in crowd order, for passes of the caller's
    /// own (drawing, analysis kernels) that read the states where the kernel leaves them;
    /// [`layout_wgsl`](crate::backends::gpu::layout_wgsl) declares its records. Empty on the CPU
    /// backends.
    pub fn gpu_chunks(&self) -> Vec<GpuChunk<'_>> {
        self.engine.gpu().map_or_else(Vec::new, GpuShards::chunks)
    }

    /// The kernel options in use on the GPU (those asked for, except that a crowd with a
    /// custom force runs the bounds-checked kernel); `None` on the CPU backends.
    pub fn gpu_options(&self) -> Option<&GpuOptions> {
        self.engine.gpu().map(GpuShards::options)
    }

    /// The GPU context the simulation runs on (`None` on the CPU backends).
    pub fn gpu_context(&self) -> Option<&GpuContext> {
        self.engine.gpu().map(GpuShards::context)
    }

    /// The `index`-th device of a crowd spread over several (test builds: the device a
    /// fault is injected into).
    #[cfg(all(feature = "fault-injection", feature = "cli"))]
    pub(crate) fn gpu_device(&self, index: usize) -> Option<&GpuContext> {
        self.engine.gpu().and_then(|g| g.device(index))
    }

    /// How many bodies the simulation integrates.
    pub fn body_count(&self) -> usize {
        self.body_count
    }

    /// Steps taken so far.
    pub fn steps_taken(&self) -> u64 {
        self.steps_taken
    }

    /// Simulated time: `(start_step + steps_taken) * dt`, where `start_step` is the crowd's.
    pub fn time(&self) -> f64 {
        self.clock_step() as f64 * self.settings.dt
    }

    /// Gives body `indices[k]` the state `states[k]` from the next step on, leaving every
    /// other body as it is and re-uploading nothing else (on the GPU: one small buffer write
    /// per run of consecutive indices, after the steps already queued). A later entry for the
    /// same body wins. Errors name the offending entry, and nothing is changed: an index past
    /// the crowd, a length mismatch, or a state that is not finite or out of range. The
    /// orientation is normalized, as for any input. A body frozen under `freeze` rejoins the
    /// integration with its new state, its clock at the crowd's. Under `stop`, a body already
    /// reported stays reported: this does not clear the run's fault.
    pub fn set_states(&mut self, indices: &[usize], states: &[BodyState]) -> Result<()> {
        if indices.len() != states.len() {
            return Err(Error::invalid(
                "states",
                format!(
                    "needs one state per index: {} indices, got {} states",
                    indices.len(),
                    states.len()
                ),
            ));
        }
        let mut checked = Vec::with_capacity(states.len());
        for (k, (&body, state)) in indices.iter().zip(states).enumerate() {
            if body >= self.body_count {
                return Err(Error::invalid(
                    format!("indices[{k}]"),
                    format!(
                        "body {body} is past the crowd of {} bodies",
                        self.body_count
                    ),
                ));
            }
            checked.push(checked_state(state, &format!("states[{k}]"))?);
        }
        let clock_step = self.clock_step();
        self.engine.set_states(indices, &checked, clock_step)
    }

    /// Sets the world-frame force and torque (about the centre of mass) held on each body
    /// from the next step on, until replaced; `loads[i]` acts on body `i`. Only the loads are
    /// uploaded (on the GPU: one buffer write per chunk), never the states. Errors name the
    /// offending entry: the length must equal the body count and every value be finite.
    pub fn set_external_loads(&mut self, loads: &[ExternalLoad]) -> Result<()> {
        if loads.len() != self.body_count {
            return Err(Error::invalid(
                "external_loads",
                format!(
                    "needs one load per body: {} bodies, got {} loads",
                    self.body_count,
                    loads.len()
                ),
            ));
        }
        for (i, load) in loads.iter().enumerate() {
            check_vector(&format!("external_loads[{i}].force"), load.force.to_array())?;
            check_vector(
                &format!("external_loads[{i}].torque"),
                load.torque.to_array(),
            )?;
        }
        self.engine.set_external_loads(loads)?;
        self.external_loads = Some(loads.to_vec());
        Ok(())
    }
}

/// `state` with its orientation normalized, if every number is finite and in range and the
/// orientation is not zero; `field` names it in the error.
fn checked_state(state: &BodyState, field: &str) -> Result<BodyState> {
    check_state(state, field)?;
    let q = state.orientation;
    if q.length_squared() == 0.0 {
        return Err(Error::invalid(
            format!("{field}.orientation"),
            "must not be the zero quaternion",
        ));
    }
    Ok(BodyState {
        orientation: q.normalize(),
        ..*state
    })
}

/// Refuses a colliding crowd on a backend that does not resolve collisions between bodies
/// yet.
fn refuse_collisions(crowd: &Crowd, backend: Backend) -> Result<()> {
    if crowd.collisions.is_some() && backend != Backend::Reference {
        return Err(Error::invalid(
            "collisions",
            format!("bodies collide on `cpu-ref` so far, not on `{backend}`"),
        ));
    }
    Ok(())
}
