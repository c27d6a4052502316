//! The GPU backend's simulation: uploads a crowd once, then encodes many integration
//! dispatches per submission and reads back only when asked. Twin of core/src/backends/cpu_ref/simulation.rs.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::assembly::body_masses::BodyMasses;
use crate::assembly::body_source::BodySource;
use crate::assembly::crowd::Crowd;
use crate::assembly::force_table::ForceTable;
use crate::model::body::{Body, BodyState};
use crate::model::error::{Error, Result};
use wgpu::util::DeviceExt;

use crate::backends::gpu::buffers::GpuChunk;
use crate::backends::gpu::chunk::{
    BufferChunk, ChunkLayout, SharedInputs, check_fits, consecutive_runs, plan_chunks,
};
use crate::backends::gpu::device::async_readback::AsyncReadback;
use crate::backends::gpu::device::context::{GpuContext, one_line};
use crate::backends::gpu::device::pipeline::{PlainPipelines, plain_pipelines};
use crate::backends::gpu::device::readback::{read_buffer, read_buffer_at};
use crate::backends::gpu::device::timing::PassTimer;
use crate::backends::gpu::kernel::kernel_spec::KernelSpec;
use crate::backends::gpu::kernel::layout::{
    Encode, RecordSizes, decode_states, frozen_records, visit_states,
};
use crate::backends::gpu::kernel::shader::{HEALTHY, NO_FAULTS};
use crate::backends::gpu::near_list::NearList;
use crate::backends::gpu::options::GpuOptions;
use crate::backends::gpu::tangents::GpuTangents;
use crate::model::fault::Fault;
use crate::model::fault_rules::{FaultRules, QuarantinedBody};
use crate::model::mass::MassProperties;
use crate::model::tangent::TangentPlan;
use crate::physics::force_law::ExternalLoad;

/// At most this many dispatches per command buffer: enough to amortise a submit.
const MAX_DISPATCHES_PER_SUBMISSION: u64 = 256;

/// About this many body-steps per command buffer, so that a submission of a huge crowd
/// stays short (a long `step(n)` keeps at most two command buffers in flight).
const BODY_STEPS_PER_SUBMISSION: u64 = 1 << 28;

/// A crowd whose states live in GPU storage buffers, integrated in f32 or f64
/// ([`GpuOptions::precision`]).
#[derive(Debug)]
pub struct GpuSimulation {
    ctx: GpuContext,
    options: GpuOptions,
    /// The plain kernel's pipeline, built at the first step that runs it: a run that carries
    /// tangents from its start dispatches only the tangent kernels, and on lavapipe building
    /// a pipeline is a share of a run's first-step latency (`run scenes/floor.json --steps 1
    /// --jacobian`). A crowd with a custom force builds it at once, so that its WGSL's errors
    /// are the crowd's.
    pipeline: Option<PlainPipelines>,
    /// The list of bodies the plain kernel hands over near a plane, where it has contact code
    /// (bound as its group 1), and whether the crowd has planes: only then can a body come
    /// near one, and each dispatch empties the list and takes the bodies listed.
    near: Option<(NearList, bool)>,
    /// What the plain kernel was compiled for; the tangent kernel is built beside it.
    spec: KernelSpec,
    /// The tangents carried, once started.
    tangents: Option<GpuTangents>,
    /// Tangents carried in blocks of 1 until the run is long enough for wider blocks
    /// ([`GpuOptions::starts_narrow_on`]); `None` once widened, or where the width is fixed.
    narrow_tangents: Option<NarrowTangents>,
    chunks: Vec<BufferChunk>,
    masses: BodyMasses,
    in_flight: Option<InFlight>,
    /// The kernel's `Faults`: two `u32`s, `HEALTHY` until a state goes bad (under `stop`) or
    /// the kernel meets a code it does not know, the count of bodies frozen, then one
    /// `HEALTHY` until a keyframe window misses a time.
    faults: wgpu::Buffer,
    /// Where each submission copies the faults: one per submission in flight, so reading one
    /// never waits for the other.
    flag_staging: [wgpu::Buffer; 2],
    next_staging: usize,
    /// The body, step and fault that stopped the run, once one did: every later step fails
    /// with it.
    fault: Option<(usize, u64, Fault)>,
    /// Whether a completed submission had frozen a body (under `freeze`): only then is the
    /// crowd searched for them.
    any_frozen: bool,
    /// What made the kernel's results unusable, once something did.
    broken: Option<KernelBreak>,
    /// Outstanding non-blocking state requests (src/backends/gpu/device/async_readback.rs).
    pub(super) readback: AsyncReadback,
    /// The crowd index of body 0 here: not 0 for one shard of a crowd spread over several
    /// devices (src/backends/gpu/shards.rs). The kernel sees crowd indices; everything else here
    /// counts from this simulation's first body.
    first_body: usize,
}

/// Body-steps a run carries its tangents in blocks of 1 before it widens them (on a CPU
/// adapter, where no width is asked for). Wider blocks run faster and compile slower: on
/// lavapipe, the Jacobian of `bench`'s `contacts` crowd in blocks of 4 repays their extra
/// compile after about 830 k body-steps in f32 and 580 k in f64 (docs/compiler.md). Widening at this many costs
/// at most about twice the better of the two widths, and a short run (one step of a crowd
/// of thousands) never compiles the wide kernels.
pub(crate) const WIDEN_AFTER_BODY_STEPS: u64 = 1 << 19;

/// What widening narrow tangents needs: the crowd they were started for and this
/// simulation's bodies in it, and the body-steps carried so far.
#[derive(Debug)]
struct NarrowTangents {
    crowd: Crowd,
    bodies_in_crowd: Range<usize>,
    carried: u64,
}

/// A submitted command buffer and the staging buffer its copy of the flag lands in.
#[derive(Debug)]
struct InFlight {
    index: wgpu::SubmissionIndex,
    staging: usize,
    mapped: Arc<AtomicBool>,
}

/// The largest staging buffer a one-off read of the crowd ([`GpuSimulation::stream_states`],
/// the search for frozen bodies) goes through.
const STREAM_BYTES: usize = 4 << 20;

/// Bytes of the kernel's `Faults`.
const FAULTS_BYTES: u64 = size_of_val(&NO_FAULTS) as u64;

/// How long a run of steps took.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepTimes {
    /// Submit-and-wait wall clock on the host.
    pub wall: Duration,
    /// Time on the device from timestamp queries, where the adapter has them.
    pub device: Option<Duration>,
}

impl GpuSimulation {
    /// Validates `crowd` and uploads the bodies of `source` to the device of `ctx`, with
    /// the kernel built per `options`. Crowds larger than one storage binding are split into
    /// chunks of buffers. The bodies are the crowd's from index `first_body` on (0 for a
    /// whole crowd; one shard of a crowd over several devices or MPI ranks otherwise, with
    /// `crowd`'s own forces numbered from that body).
    pub(crate) fn shard(
        ctx: &GpuContext,
        crowd: &Crowd,
        source: &BodySource,
        options: GpuOptions,
        first_body: usize,
    ) -> Result<Self> {
        options.validate_for(ctx.limits(), ctx.supports_f64())?;
        let options = options.for_crowd(crowd);
        ctx.check_lost()?;
        ctx.check_precision(options.precision)?;
        let sizes = RecordSizes::of(options.precision);
        let table = ForceTable::new(crowd, source.len());
        check_fits(ctx, source.len(), &table, sizes, None)?;
        let device = &ctx.device;
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let spec = KernelSpec::for_crowd(
            crowd,
            &table,
            options.specialized,
            options.steps_per_dispatch,
        );
        let pipeline = match &crowd.custom_force {
            Some(custom) => Some(plain_pipelines(ctx, &options, &spec, Some(custom))?),
            None => None,
        };
        check_scope(validation, "creating the integration pipeline")?;
        let (keyframes, spans) = Encode(options.precision).keyframes(&crowd.keyframes);
        let keyframes = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("keyframes"),
            contents: &keyframes,
            usage: wgpu::BufferUsages::STORAGE,
        });
        let faults = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("faults"),
            contents: bytemuck::bytes_of(&NO_FAULTS),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        });
        let staging = || {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("faults, read back"),
                size: FAULTS_BYTES,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let flag_staging = [staging(), staging()];
        let shared = SharedInputs {
            keyframes: &keyframes,
            spans: &spans,
            faults: &faults,
            first_body,
        };

        let layout = ChunkLayout {
            workgroup_size: options.workgroup_size,
            max_workgroups_per_dimension: ctx.limits().max_compute_workgroups_per_dimension,
            steps_per_dispatch: options.steps_per_dispatch,
            precision: options.precision,
        };
        let (mut chunks, mut masses) = (Vec::new(), Vec::new());
        for bodies in plan_chunks(&table, sizes, ctx.max_binding_bytes()) {
            let out_of_memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
            let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
            let chunk = BufferChunk::new(
                device,
                &ctx.queue,
                crowd,
                source,
                &table,
                bodies.clone(),
                layout,
                shared,
            );
            check_scope(validation, "uploading the crowd")?;
            if let Some(e) = pollster::block_on(out_of_memory.pop()) {
                return Err(Error::CrowdTooLarge {
                    bodies: source.len(),
                    largest: bodies.start,
                    adapter: format!("{} ({})", ctx.adapter_info().name, one_line(&e.to_string())),
                });
            }
            let (chunk, chunk_masses) = chunk?;
            chunks.push(chunk);
            masses.extend(chunk_masses);
        }
        let has_planes = !crowd.planes.is_empty();
        let near = spec.hands_over_contacts(0).then(|| {
            let largest = chunks.iter().map(|c| c.bodies.len()).max().unwrap_or(0);
            let capacity = if has_planes { largest } else { 0 };
            (NearList::new(device, &ctx.queue, capacity), has_planes)
        });
        ctx.take_uncaptured()?;

        Ok(Self {
            ctx: ctx.clone(),
            options,
            pipeline,
            near,
            spec,
            tangents: None,
            narrow_tangents: None,
            chunks,
            masses: BodyMasses::from_chunks(masses),
            in_flight: None,
            readback: AsyncReadback::default(),
            faults,
            flag_staging,
            next_staging: 0,
            fault: None,
            any_frozen: false,
            broken: None,
            first_body,
        })
    }

    /// Advances every body by `steps` steps. Returns once the work is queued; at most two
    /// submissions are in flight at a time. Nothing is read back.
    pub fn step(&mut self, steps: u64) -> Result<()> {
        self.ctx.check_lost()?;
        self.check_fault()?;
        self.widen_tangents_for(steps)?;
        self.encode_steps(&self.plan(steps), None)?;
        self.ctx.take_uncaptured()
    }

    /// Runs `steps` steps and waits for them, timing the whole run on the host and, where
    /// the adapter has timestamp queries, on the device (the sum of the compute passes).
    pub fn timed_steps(&mut self, steps: u64) -> Result<StepTimes> {
        self.finish()?;
        self.widen_tangents_for(steps)?;
        let plan = self.plan(steps);
        let mut timer = PassTimer::new(&self.ctx, plan.len() as u32);
        let start = Instant::now();
        self.encode_steps(&plan, timer.as_mut())?;
        self.finish()?;
        let wall = start.elapsed();
        let device = match timer {
            Some(timer) => Some(timer.total(&self.ctx)?),
            None => None,
        };
        Ok(StepTimes { wall, device })
    }

    /// Blocks until every queued step has finished on the device.
    pub fn finish(&mut self) -> Result<()> {
        self.ctx.check_lost()?;
        self.check_fault()?;
        if let Some(last) = self.in_flight.take() {
            self.complete(last)?;
        }
        self.ctx.take_uncaptured()
    }

    /// The fault found earlier, if any.
    fn check_fault(&self) -> Result<()> {
        if let Some(broken) = self.broken {
            return Err(broken.error());
        }
        match self.fault {
            Some((body, step, fault)) => Err(FaultRules::stop_error(body, step, fault)),
            None => Ok(()),
        }
    }

    /// Waits for a submission, then reads the flag it copied out: an error naming the body
    /// and step if a state went non-finite.
    fn complete(&mut self, submission: InFlight) -> Result<()> {
        self.wait_for(Some(submission.index))?;
        let staging = &self.flag_staging[submission.staging];
        if !submission.mapped.load(Ordering::Acquire) {
            // The map callback runs in a poll; the wait above normally ran it already.
            self.ctx
                .device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| {
                    self.ctx
                        .gpu_error(one_line(&format!("waiting for the flag: {e}")))
                })?;
        }
        let [flag, unknown_code, frozen, keyframe_miss] = {
            let view = staging.slice(..).get_mapped_range().map_err(|e| {
                self.ctx
                    .gpu_error(one_line(&format!("reading the flag: {e}")))
            })?;
            bytemuck::pod_read_unaligned::<[u32; NO_FAULTS.len()]>(&view[..FAULTS_BYTES as usize])
        };
        staging.unmap();
        self.any_frozen |= frozen != 0;
        self.broken = KernelBreak::of(unknown_code, keyframe_miss);
        if self.broken.is_some() {
            return self.check_fault();
        }
        if flag == HEALTHY {
            return Ok(());
        }
        self.fault = Some(self.stopped_body(flag as usize - self.first_body)?);
        self.check_fault()
    }

    /// The step and fault of `body`, which the kernel flagged under `stop`: its record holds
    /// its last good state, clock and the fault's code.
    fn stopped_body(&self, body: usize) -> Result<(usize, u64, Fault)> {
        let flagged = || Error::Gpu(format!("the kernel flagged body {body}, past the crowd"));
        let chunk = self
            .chunks
            .iter()
            .find(|c| c.bodies.contains(&body))
            .ok_or_else(flagged)?;
        let bytes = self.sizes().state;
        let record: Vec<u8> = read_buffer_at(
            &self.ctx,
            &chunk.states,
            (body - chunk.bodies.start) * bytes,
            bytes,
        )?;
        let frozen = frozen_records(self.options.precision, &record);
        let (_, _, step, status) = frozen.first().ok_or_else(|| {
            Error::Gpu(format!(
                "the kernel flagged body {body} but left it healthy"
            ))
        })?;
        let fault = Fault::from_code(*status)
            .ok_or_else(|| Error::Gpu(format!("body {body} has the unknown status {status}")))?;
        Ok((body, *step, fault))
    }

    /// Reads the states back (waiting for queued steps) and pairs them with the constants.
    /// A non-finite state in steps not yet waited for is an error here, as `step` is on the
    /// CPU backends; once `step` or `finish` has reported it, the read returns the states,
    /// the faulty body's at its last finite one.
    pub fn bodies(&self) -> Result<Vec<Body>> {
        self.ctx.check_lost()?;
        if let Some(broken) = self.broken {
            return Err(broken.error());
        }
        let mut bodies = Vec::with_capacity(self.masses.len());
        for chunk in &self.chunks {
            let bytes: Vec<u8> =
                read_buffer(&self.ctx, &chunk.states, chunk.states.size() as usize)?;
            let states = decode_states(self.options.precision, &bytes);
            for (i, (state, _)) in chunk.bodies.clone().zip(states) {
                let mass = self.masses.get(i);
                bodies.push(Body { mass, state });
            }
        }
        if self.fault.is_some() {
            return Ok(bodies);
        }
        // Read after the states, so a fault in any step they went through shows.
        let words: Vec<u32> = read_buffer(&self.ctx, &self.faults, NO_FAULTS.len())?;
        if let Some(broken) = KernelBreak::of(words[1], words[3]) {
            return Err(broken.error());
        }
        if words[0] != HEALTHY {
            let (body, step, fault) = self.stopped_body(words[0] as usize - self.first_body)?;
            return Err(FaultRules::stop_error(body, step, fault));
        }
        Ok(bodies)
    }

    /// The record sizes of this simulation's precision.
    fn sizes(&self) -> RecordSizes {
        RecordSizes::of(self.options.precision)
    }

    /// Queues a copy of the states as the steps queued so far leave them and returns its
    /// id; integration can be queued behind it at once (see src/backends/gpu/device/async_readback.rs).
    pub(crate) fn request_states(&mut self) -> Result<u64> {
        self.ctx.check_lost()?;
        self.readback.request(&self.ctx, &self.chunks)
    }

    /// The bodies of request `id` once its copy has landed; `None` while it has not.
    pub(crate) fn try_states(&mut self, id: u64) -> Result<Option<Vec<Body>>> {
        self.ctx.check_lost()?;
        let states = self.readback.try_take(&self.ctx, id)?;
        Ok(states.map(|s| self.with_masses(s)))
    }

    /// The bodies of request `id`, waiting for its copy.
    pub(crate) fn wait_states(&mut self, id: u64) -> Result<Vec<Body>> {
        self.ctx.check_lost()?;
        let states = self.readback.wait(&self.ctx, id)?;
        Ok(self.with_masses(states))
    }

    /// Hands every body's index, mass properties and current state to `visit`, in crowd
    /// order, straight from the mapped staging memory: nothing on the host grows with the
    /// crowd. Waits for queued steps; faults are reported as by [`bodies`](Self::bodies).
    pub(crate) fn visit_states(
        &mut self,
        visit: impl FnMut(usize, &MassProperties, &BodyState),
    ) -> Result<()> {
        self.settle()?;
        let id = self.readback.request(&self.ctx, &self.chunks)?;
        self.visit_request(id, visit)
    }

    #[cfg(feature = "cli")]
    /// Hands every body's index, mass properties and current state to `visit` as
    /// [`visit_states`](Self::visit_states) does, but through a staging buffer of at most
    /// [`STREAM_BYTES`], reused piece after piece, instead of a copy of the whole crowd:
    /// for a one-off read of a crowd as large as the device holds (the final output).
    pub(crate) fn stream_states(
        &mut self,
        mut visit: impl FnMut(usize, &MassProperties, &BodyState),
    ) -> Result<()> {
        self.settle()?;
        let precision = self.options.precision;
        self.read_in_pieces(|first, bytes| {
            let mut body = first;
            visit_states(precision, bytes, |state, _| {
                visit(body, &self.masses.get(body), &state);
                body += 1;
            });
        })
    }

    /// Waits for queued steps, reporting a fault in any of them; once one was reported the
    /// states stay readable (the faulty body's at its last good state).
    fn settle(&mut self) -> Result<()> {
        if self.fault.is_some() && self.broken.is_none() {
            self.ctx.check_lost()
        } else {
            self.finish()
        }
    }

    /// Hands the state records of the whole crowd to `visit` in crowd order, in pieces of at
    /// most [`STREAM_BYTES`] through a reused staging buffer, each with the crowd index of
    /// its first body.
    fn read_in_pieces(&self, mut visit: impl FnMut(usize, &[u8])) -> Result<()> {
        let record_words = self.sizes().state / size_of::<u32>();
        let piece_bodies = (STREAM_BYTES / (record_words * size_of::<u32>())).max(1);
        for chunk in &self.chunks {
            let mut body = chunk.bodies.start;
            while body < chunk.bodies.end {
                let count = piece_bodies.min(chunk.bodies.end - body);
                let first_word = (body - chunk.bodies.start) * record_words;
                let words: Vec<u32> =
                    read_buffer_at(&self.ctx, &chunk.states, first_word, count * record_words)?;
                visit(body, bytemuck::cast_slice(&words));
                body += count;
            }
        }
        Ok(())
    }

    /// The bodies frozen under `freeze`, in crowd order, with the step and fault that froze
    /// them and their last good state. Waits for queued steps; the crowd is searched only
    /// once the kernel has counted a frozen body.
    pub(crate) fn quarantined(&mut self) -> Result<Vec<QuarantinedBody>> {
        self.settle()?;
        let mut found = Vec::new();
        if !self.any_frozen {
            return Ok(found);
        }
        let precision = self.options.precision;
        let mut unknown = None;
        self.read_in_pieces(|first, bytes| {
            for (i, state, step, status) in frozen_records(precision, bytes) {
                match Fault::from_code(status) {
                    Some(fault) => found.push(QuarantinedBody {
                        body: first + i,
                        step,
                        fault,
                        state,
                    }),
                    None => unknown = Some((first + i, status)),
                }
            }
        })?;
        match unknown {
            Some((body, status)) => Err(Error::Gpu(format!(
                "body {body} has the unknown status {status}"
            ))),
            None => Ok(found),
        }
    }

    /// Freezes each body of `bodies` at its given state, clock step and fault, as the kernel
    /// would have: for a run continued from a checkpoint. One small write per body.
    pub(crate) fn freeze(&mut self, bodies: &[QuarantinedBody]) -> Result<()> {
        self.ctx.check_lost()?;
        let record = self.sizes().state;
        for q in bodies {
            let chunk = self
                .chunks
                .iter()
                .find(|c| c.bodies.contains(&q.body))
                .ok_or_else(|| Error::Gpu(format!("body {} is in no chunk", q.body)))?;
            let bytes = Encode(self.options.precision).frozen_state(&q.state, q.step, q.fault);
            let offset = ((q.body - chunk.bodies.start) * record) as u64;
            self.ctx.queue.write_buffer(&chunk.states, offset, &bytes);
        }
        self.any_frozen |= !bodies.is_empty();
        self.ctx.take_uncaptured()
    }

    /// Hands the states of request `id` to `visit` as [`visit_states`](Self::visit_states)
    /// does, waiting for its copy.
    pub(crate) fn visit_request(
        &mut self,
        id: u64,
        mut visit: impl FnMut(usize, &MassProperties, &BodyState),
    ) -> Result<()> {
        self.ctx.check_lost()?;
        let (masses, precision) = (&self.masses, self.options.precision);
        let mut body = 0;
        self.readback.wait_with(&self.ctx, id, &mut |bytes| {
            visit_states(precision, bytes, |state, _| {
                visit(body, &masses.get(body), &state);
                body += 1;
            })
        })
    }

    fn with_masses(&self, states: Vec<u8>) -> Vec<Body> {
        decode_states(self.options.precision, &states)
            .into_iter()
            .enumerate()
            .map(|(i, (state, _))| Body {
                mass: self.masses.get(i),
                state,
            })
            .collect()
    }

    /// Writes new states for bodies `indices` (validated, one per index, crowd order not
    /// required) with their clock at `clock_step`: one buffer write per run of consecutive
    /// indices, ordered on the queue after every step already submitted.
    pub(crate) fn set_states(
        &mut self,
        indices: &[usize],
        states: &[BodyState],
        clock_step: u64,
    ) -> Result<()> {
        self.ctx.check_lost()?;
        let (encode, record) = (Encode(self.options.precision), self.sizes().state);
        let chunks: Vec<&BufferChunk> = self.chunks.iter().collect();
        for (run, chunk) in consecutive_runs(indices, &chunks, |c| &c.bodies) {
            let first = indices[run.start];
            let chunk = chunk.ok_or_else(|| Error::Gpu(format!("body {first} is in no chunk")))?;
            let bytes = encode.states(states[run].iter(), clock_step);
            let offset = ((first - chunk.bodies.start) * record) as u64;
            self.ctx.queue.write_buffer(&chunk.states, offset, &bytes);
        }
        if let Some(tangents) = &self.tangents {
            // Each block starts from the orientation the device holds.
            let round = |x: f64| match self.options.precision {
                crate::model::precision::Precision::F32 => x as f32 as f64,
                crate::model::precision::Precision::F64 => x,
            };
            let restarted: Vec<(usize, [f64; 4])> = (indices.iter().zip(states))
                .map(|(&i, s)| {
                    let q = s.orientation;
                    (i, [q.w, q.x, q.y, q.z].map(round))
                })
                .collect();
            tangents.restart(&self.ctx, &restarted);
        }
        self.ctx.take_uncaptured()
    }

    /// Starts carrying the tangents of `plan` from every body's state now; this
    /// simulation's bodies are `bodies_in_crowd` of `crowd` (one shard of it, or all).
    pub(crate) fn start_tangents(
        &mut self,
        plan: &TangentPlan,
        crowd: &Crowd,
        bodies_in_crowd: Range<usize>,
    ) -> Result<()> {
        let device_type = self.ctx.adapter_info().device_type;
        let narrow = self.options.starts_narrow_on(device_type);
        let widest = match narrow {
            true => 1,
            false => self.options.tangent_block_on(device_type),
        };
        self.narrow_tangents = None;
        self.start_tangent_blocks(plan, crowd, bodies_in_crowd.clone(), widest)?;
        self.narrow_tangents = narrow.then(|| NarrowTangents {
            crowd: crowd.clone(),
            bodies_in_crowd,
            carried: 0,
        });
        Ok(())
    }

    /// Widens tangents carried in blocks of 1 to the adapter's blocks once the run, with
    /// the `steps` about to be queued, has carried [`WIDEN_AFTER_BODY_STEPS`]: the columns
    /// as they stand go on in the wider blocks, which carry the same bits.
    fn widen_tangents_for(&mut self, steps: u64) -> Result<()> {
        let bodies = self.masses.len() as u64;
        let Some(narrow) = &mut self.narrow_tangents else {
            return Ok(());
        };
        narrow.carried = narrow.carried.saturating_add(steps.saturating_mul(bodies));
        if narrow.carried < WIDEN_AFTER_BODY_STEPS {
            return Ok(());
        }
        let narrow = self.narrow_tangents.take().expect("checked above");
        let plan = match &self.tangents {
            Some(tangents) => tangents.plan.clone(),
            None => return Ok(()),
        };
        let columns = self.tangent_columns()?;
        let widest = (self.options).tangent_block_on(self.ctx.adapter_info().device_type);
        self.start_tangent_blocks(&plan, &narrow.crowd, narrow.bodies_in_crowd, widest)?;
        self.set_tangent_columns(&columns)
    }

    /// [`Self::start_tangents`] in blocks at most `widest` wide.
    fn start_tangent_blocks(
        &mut self,
        plan: &TangentPlan,
        crowd: &Crowd,
        bodies_in_crowd: Range<usize>,
        widest: usize,
    ) -> Result<()> {
        self.finish()?;
        let bodies = self.bodies()?;
        let validation = self
            .ctx
            .device
            .push_error_scope(wgpu::ErrorFilter::Validation);
        let tangents = GpuTangents::start(
            &self.ctx,
            (
                self.options.precision,
                self.options.workgroup_size,
                (self.options).compiles_trusted(crowd.custom_force.as_ref()),
                self.options.divides_in_f64(),
                widest,
            ),
            &self.spec,
            (crowd, bodies_in_crowd),
            &self.chunks,
            (plan, &bodies),
        )?;
        check_scope(validation, "starting the tangents")?;
        self.tangents = Some(tangents);
        self.ctx.take_uncaptured()
    }

    /// The tangents carried, once started.
    pub(crate) fn tangent_plan(&self) -> Option<&TangentPlan> {
        self.tangents.as_ref().map(|t| &t.plan)
    }

    /// Every body's tangent block (`13 x k`, row-major), in order, once the queued steps
    /// are done.
    pub(crate) fn tangent_columns(&mut self) -> Result<Vec<f64>> {
        self.finish()?;
        match &self.tangents {
            Some(tangents) => tangents.columns(&self.ctx, self.masses.len()),
            None => Ok(Vec::new()),
        }
    }

    /// Replaces every body's tangent block with `columns`.
    pub(crate) fn set_tangent_columns(&mut self, columns: &[f64]) -> Result<()> {
        if let Some(tangents) = &self.tangents {
            tangents.set_columns(&self.ctx, columns);
        }
        self.ctx.take_uncaptured()
    }

    /// Writes the external loads (one per body, already validated) into each chunk's loads
    /// buffer; the next dispatch reads them. The states are not touched.
    pub(crate) fn set_external_loads(&mut self, loads: &[ExternalLoad]) -> Result<()> {
        self.ctx.check_lost()?;
        let encode = Encode(self.options.precision);
        for chunk in &mut self.chunks {
            chunk.ensure_loads_buffer(&self.ctx.device);
            let records = encode.loads(&loads[chunk.bodies.clone()]);
            self.ctx.queue.write_buffer(&chunk.loads, 0, &records);
        }
        self.ctx.take_uncaptured()
    }

    /// Body `i`'s mass properties (an index of this simulation).
    #[cfg(feature = "cli")]
    pub(crate) fn mass(&self, i: usize) -> MassProperties {
        self.masses.get(i)
    }

    /// The context this simulation runs on.
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// The kernel options in use: those asked for, except that a crowd with a custom force
    /// runs the bounds-checked kernel.
    pub fn options(&self) -> &GpuOptions {
        &self.options
    }

    /// How many chunks of buffers the crowd was split into.
    #[cfg(test)]
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Each chunk's crowd indices and buffers, in crowd order.
    pub(crate) fn chunks(&self) -> impl Iterator<Item = GpuChunk<'_>> {
        self.chunks.iter().map(|chunk| {
            let public = chunk.public();
            GpuChunk {
                bodies: public.bodies.start + self.first_body..public.bodies.end + self.first_body,
                ..public
            }
        })
    }

    /// The steps of each submission a long `step(n)` makes: a crowd spread over several
    /// devices steps each by this much in turn, so that every device stays busy.
    pub(crate) fn steps_per_submission(&self) -> u64 {
        let fuse = self.options.steps_per_dispatch as u64;
        dispatches_per_submission(fuse, self.masses.len()) * fuse
    }

    fn plan(&self, steps: u64) -> Vec<(u64, u64)> {
        submission_plan(
            steps,
            self.options.steps_per_dispatch as u64,
            self.masses.len(),
        )
    }

    /// The plain kernel's pipelines, built the first time a step runs them.
    fn plain_pipelines(&mut self) -> Result<PlainPipelines> {
        if let Some(pipelines) = &self.pipeline {
            return Ok(pipelines.clone());
        }
        // A crowd with a custom force has its pipelines from `shard`.
        let pipelines = plain_pipelines(&self.ctx, &self.options, &self.spec, None)?;
        Ok(self.pipeline.insert(pipelines).clone())
    }

    /// Encodes and submits `plan` (from [`submission_plan`]).
    fn encode_steps(
        &mut self,
        plan: &[(u64, u64)],
        mut timer: Option<&mut PassTimer>,
    ) -> Result<()> {
        // In a scope, so a validation error comes back as this call's error instead of going
        // to the device's handler, which is the caller's on a device from
        // `GpuContext::from_device`.
        let plain = match &self.tangents {
            Some(_) => None,
            None => Some(self.plain_pipelines()?),
        };
        let validation = self
            .ctx
            .device
            .push_error_scope(wgpu::ErrorFilter::Validation);
        for (index, &(fused, single)) in plan.iter().enumerate() {
            let mut encoder =
                self.ctx
                    .device
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                        label: Some("integrate steps"),
                    });
            {
                let timestamp_writes = timer.as_ref().map(|t| t.writes(index as u32));
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("integrate"),
                    timestamp_writes,
                });
                if let Some(pipelines) = &plain {
                    pass.set_pipeline(&pipelines.integrate);
                    if let Some((list, _)) = &self.near {
                        list.bind(&mut pass);
                    }
                }
                // Each dispatch is one (or K fused) steps; wgpu orders consecutive dispatches
                // on the same read-write buffer, so step k+1 sees step k's states.
                for (c, chunk) in self.chunks.iter().enumerate() {
                    for (bindings, count) in [(&chunk.fused, fused), (&chunk.single, single)] {
                        pass.set_bind_group(0, bindings, &[]);
                        for _ in 0..count {
                            let near = plain.as_ref().and_then(|p| p.near.as_ref());
                            match (&self.tangents, &plain, near, &self.near) {
                                (Some(tangents), ..) => tangents.dispatch(&mut pass, c, bindings),
                                (None, Some(p), Some(near), Some((list, true))) => {
                                    let chunk = (bindings, chunk.grid);
                                    list.dispatch(&mut pass, (&p.integrate, near), chunk)
                                }
                                _ => pass.dispatch_workgroups(chunk.grid.0, chunk.grid.1, 1),
                            }
                        }
                    }
                }
            }
            if let Some(timer) = timer.as_deref_mut() {
                timer.resolve(&mut encoder, index as u32);
            }
            // Eight bytes per submission: the faults, read when the submission is done.
            let staging = self.next_staging;
            self.next_staging = 1 - staging;
            encoder.copy_buffer_to_buffer(
                &self.faults,
                0,
                &self.flag_staging[staging],
                0,
                FAULTS_BYTES,
            );
            let submitted = self.ctx.queue.submit([encoder.finish()]);
            let mapped = Arc::new(AtomicBool::new(false));
            let on_mapped = Arc::clone(&mapped);
            self.flag_staging[staging]
                .slice(..)
                .map_async(wgpu::MapMode::Read, move |result| {
                    on_mapped.store(result.is_ok(), Ordering::Release);
                });
            let current = InFlight {
                index: submitted,
                staging,
                mapped,
            };
            if let Some(previous) = self.in_flight.replace(current) {
                self.complete(previous)?;
            }
        }
        check_scope(validation, "queueing the steps")
    }

    fn wait_for(&self, submission: Option<wgpu::SubmissionIndex>) -> Result<()> {
        let Some(index) = submission else {
            return Ok(());
        };
        self.ctx
            .device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: None,
            })
            .map(|_| ())
            .map_err(|e| {
                self.ctx
                    .gpu_error(one_line(&format!("waiting for the device: {e}")))
            })
    }
}

/// What made a kernel's results unusable: every later call fails with it.
#[derive(Clone, Copy, Debug)]
enum KernelBreak {
    /// A body met a force or integrator code the kernel has no code for.
    UnknownCode(usize),
    /// A body's keyframe window missed a time of its dispatch.
    KeyframeMiss(usize),
}

impl KernelBreak {
    /// The break the kernel's `first_unknown_code` and `first_keyframe_miss` words report.
    fn of(unknown_code: u32, keyframe_miss: u32) -> Option<Self> {
        if unknown_code != HEALTHY {
            Some(Self::UnknownCode(unknown_code as usize))
        } else if keyframe_miss != HEALTHY {
            Some(Self::KeyframeMiss(keyframe_miss as usize))
        } else {
            None
        }
    }

    fn error(self) -> Error {
        match self {
            Self::UnknownCode(body) => Error::Gpu(format!(
                "body {body}: the kernel met a force or integrator code it does not know \
                 (the GPU records and the kernel disagree: a bug in rigid-crowd)"
            )),
            Self::KeyframeMiss(body) => Error::Gpu(format!(
                "body {body}: a dispatch's times reached past its keyframe window (the step \
                 clock has grown too coarse for the keyframe table's segments; run in f64 or \
                 fuse fewer steps)"
            )),
        }
    }
}

pub(crate) fn check_scope(scope: wgpu::ErrorScopeGuard, doing: &str) -> Result<()> {
    match pollster::block_on(scope.pop()) {
        Some(e) => Err(Error::Gpu(one_line(&format!("{doing}: {e}")))),
        None => Ok(()),
    }
}

/// The dispatches of `steps` steps, grouped by submission: `(fused, single)` dispatch counts
/// per command buffer, each fused dispatch taking `steps_per_dispatch` steps.
fn submission_plan(steps: u64, steps_per_dispatch: u64, bodies: usize) -> Vec<(u64, u64)> {
    let per_submission = dispatches_per_submission(steps_per_dispatch, bodies);
    let (mut fused, mut single) = (steps / steps_per_dispatch, steps % steps_per_dispatch);
    let mut plan = Vec::new();
    while fused + single > 0 {
        let f = fused.min(per_submission);
        let s = single.min(per_submission - f);
        plan.push((f, s));
        fused -= f;
        single -= s;
    }
    plan
}

/// Dispatches per command buffer for a crowd of `bodies`: about
/// [`BODY_STEPS_PER_SUBMISSION`] body-steps, at most [`MAX_DISPATCHES_PER_SUBMISSION`].
fn dispatches_per_submission(steps_per_dispatch: u64, bodies: usize) -> u64 {
    let per_dispatch = bodies.max(1) as u64 * steps_per_dispatch;
    (BODY_STEPS_PER_SUBMISSION / per_dispatch).clamp(1, MAX_DISPATCHES_PER_SUBMISSION)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_submission_plan_covers_every_step_in_few_submissions() {
        for steps in [0, 1, 7, 8, 9, 255 * 8 + 3, 10_000] {
            for fuse in [1, 8] {
                for bodies in [0, 1000, 10_000_000] {
                    let plan = submission_plan(steps, fuse, bodies);
                    let taken: u64 = plan.iter().map(|&(f, s)| f * fuse + s).sum();
                    assert_eq!(taken, steps, "{steps} steps, fuse {fuse}, {bodies} bodies");
                    let dispatches = steps / fuse + steps % fuse;
                    let per_submission = (BODY_STEPS_PER_SUBMISSION
                        / (bodies.max(1) as u64 * fuse))
                        .clamp(1, MAX_DISPATCHES_PER_SUBMISSION);
                    assert_eq!(plan.len() as u64, dispatches.div_ceil(per_submission));
                    assert!(plan.iter().all(|&(f, s)| f + s <= per_submission));
                }
            }
        }
    }
}
