//! A contiguous run of bodies whose buffers each fit one storage binding. Crowds larger than
//! one binding are split into several chunks, dispatched one after another.

use std::ops::Range;

use wgpu::util::DeviceExt;

use rayon::prelude::*;

use crate::assembly::body_masses::MassChunk;
use crate::assembly::body_source::{BodySource, SOURCE_CHUNK};
use crate::assembly::crowd::Crowd;
use crate::assembly::force_table::ForceTable;
use crate::backends::gpu::buffers::GpuChunk;
use crate::backends::gpu::device::bindings::{bind_buffers, integrate_bind_group_layout};
use crate::backends::gpu::device::context::GpuContext;
use crate::backends::gpu::kernel::layout::{DispatchParams, Encode, RecordSizes};
use crate::model::codes::Coded;
use crate::model::error::{Error, Result};
use crate::model::precision::Precision;

/// The buffers and bindings of one chunk of the crowd.
#[derive(Debug)]
pub(crate) struct BufferChunk {
    pub bodies: Range<usize>,
    pub states: wgpu::Buffer,
    /// One `ExternalLoadGpu` per body once `set_external_loads` has been called; until
    /// then a single zero record, which the kernel's length check skips, so a crowd without
    /// external loads neither stores nor reads them.
    pub loads: wgpu::Buffer,
    /// Bytes of one external load record in this chunk's precision.
    load_bytes: usize,
    /// Bindings whose params take `steps_per_dispatch` fused steps.
    pub fused: wgpu::BindGroup,
    /// Bindings whose params take one step (the remainder of a `step(n)`).
    pub single: wgpu::BindGroup,
    /// Workgroups in x and y.
    pub grid: (u32, u32),
    /// Everything else the bind groups hold, to rebuild them around a new loads buffer.
    bound: BoundBuffers,
}

/// The buffers of a chunk's bind groups besides the states and loads.
#[derive(Debug)]
struct BoundBuffers {
    layout: wgpu::BindGroupLayout,
    fused_params: wgpu::Buffer,
    single_params: wgpu::Buffer,
    constants: wgpu::Buffer,
    forces: wgpu::Buffer,
    keyframes: wgpu::Buffer,
    planes: wgpu::Buffer,
    faults: wgpu::Buffer,
}

/// Launch geometry and binding size shared by every chunk.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChunkLayout {
    pub workgroup_size: u32,
    pub max_workgroups_per_dimension: u32,
    pub steps_per_dispatch: u32,
    pub precision: Precision,
}

/// What every chunk binds alike: the crowd's keyframes, uploaded once, and the health flag.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SharedInputs<'a> {
    /// Every keyframe table, flattened (never empty).
    pub keyframes: &'a wgpu::Buffer,
    /// `(first, count)` of each keyframe table in `keyframes`.
    pub spans: &'a [(u32, u32)],
    /// The kernel's `Faults`.
    pub faults: &'a wgpu::Buffer,
    /// The crowd index of the simulation's first body: not 0 for a shard of a crowd spread
    /// over several devices (a custom force and the fault flag see crowd indices).
    pub first_body: usize,
}

impl BufferChunk {
    /// Uploads `bodies` of `source` under the settings of `crowd`, with their forces taken
    /// from `table`. Each chunk of the source is encoded in parallel straight into the
    /// buffers' mapped memory, and the source chunks that start here are checked and their
    /// mass properties returned (in order): every source chunk is returned by exactly one
    /// buffer chunk.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        crowd: &Crowd,
        source: &BodySource,
        table: &ForceTable,
        bodies: Range<usize>,
        layout: ChunkLayout,
        shared: SharedInputs,
    ) -> Result<(Self, Vec<MassChunk>)> {
        let table = table.for_bodies(bodies.clone());
        let encode = Encode(layout.precision);
        let sizes = RecordSizes::of(layout.precision);
        let forces = encode.forces(&table, shared.spans);
        let force_count = forces.len() / sizes.force;
        // The trusted kernel relies on this (see `integrate_pipeline`).
        let fits = |&(first, count): &(u32, u32)| first as usize + count as usize <= force_count;
        if !table.own_ranges().iter().all(fits) || table.global_count > force_count {
            return Err(Error::Gpu(format!(
                "force ranges of bodies {bodies:?} run past their force buffer"
            )));
        }
        let grid = dispatch_grid(
            bodies.len() as u32,
            layout.workgroup_size,
            layout.max_workgroups_per_dimension,
        );
        let params = |steps_per_dispatch| {
            encode.params(&DispatchParams {
                body_count: bodies.len() as u32,
                global_force_count: table.global_count as u32,
                integrator: crowd.integrator.code(),
                row_width: grid.0 * layout.workgroup_size,
                steps_per_dispatch,
                first_body: (shared.first_body + bodies.start) as u32,
                dt: crowd.dt,
                fault_rules: crowd.fault_rules,
                planes: &crowd.planes,
            })
        };

        let storage = |label, contents: &[u8], extra| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage: wgpu::BufferUsages::STORAGE | extra,
            })
        };
        // Callers may draw the states and constants as instance data or copy them out
        // (`GpuChunk`); only the simulation writes them.
        let readable = wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_SRC;
        let uploaded = |label, record: usize| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: (bodies.len() * record) as u64,
                usage: wgpu::BufferUsages::STORAGE | readable | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let states = uploaded("body states", sizes.state);
        let constants = uploaded("body constants", sizes.constants);
        let upload = Upload {
            device,
            queue,
            states: &states,
            constants: &constants,
        };
        let masses = upload_bodies(crowd, source, &table, bodies.clone(), encode, upload)?;
        let forces = storage("forces", &forces, wgpu::BufferUsages::empty());
        let planes = storage(
            "planes",
            &encode.planes(&crowd.planes),
            wgpu::BufferUsages::empty(),
        );
        let loads = storage(
            "no external loads",
            &encode.no_loads(),
            wgpu::BufferUsages::empty(),
        );
        let params = |steps_per_dispatch| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("integrate params"),
                contents: &params(steps_per_dispatch),
                usage: wgpu::BufferUsages::UNIFORM,
            })
        };
        let bound = BoundBuffers {
            layout: integrate_bind_group_layout(device),
            fused_params: params(layout.steps_per_dispatch),
            single_params: params(1),
            constants,
            forces,
            keyframes: shared.keyframes.clone(),
            planes,
            faults: shared.faults.clone(),
        };
        let (fused, single) = bound.bind_groups(device, &states, &loads);
        let chunk = Self {
            load_bytes: sizes.load,
            fused,
            single,
            bodies,
            states,
            loads,
            grid,
            bound,
        };
        Ok((chunk, masses))
    }

    /// The chunk's buffers as callers see them.
    pub fn public(&self) -> GpuChunk<'_> {
        GpuChunk {
            bodies: self.bodies.clone(),
            states: &self.states,
            constants: &self.bound.constants,
        }
    }

    /// Gives the chunk a loads buffer of one record per body (zeroed) the first time it is
    /// called, rebinding the kernel to it; later calls keep the buffer.
    pub fn ensure_loads_buffer(&mut self, device: &wgpu::Device) {
        // Only the real loads buffer can be written to.
        if self.loads.usage().contains(wgpu::BufferUsages::COPY_DST) {
            return;
        }
        self.loads = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("external loads"),
            size: (self.bodies.len() * self.load_bytes) as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        (self.fused, self.single) = self.bound.bind_groups(device, &self.states, &self.loads);
    }
}

/// Where [`upload_bodies`] writes: a chunk's new states and constants buffers.
struct Upload<'a> {
    device: &'a wgpu::Device,
    queue: &'a wgpu::Queue,
    states: &'a wgpu::Buffer,
    constants: &'a wgpu::Buffer,
}

/// Bytes written to the queue between waits for the device: each write is staged in memory
/// until the copy is done, so this bounds the host memory an upload adds to the crowd's.
const UPLOAD_FLUSH_BYTES: usize = 8 << 20;

/// Encodes the states and constants of `bodies` (a range of `source`) into `upload`'s
/// buffers, a batch of source chunks at a time (each chunk on its own rayon task), and
/// returns the mass properties of the source chunks that start in `bodies`, after checking
/// their bodies.
fn upload_bodies(
    crowd: &Crowd,
    source: &BodySource,
    table: &ForceTable,
    bodies: Range<usize>,
    encode: Encode,
    upload: Upload,
) -> Result<Vec<MassChunk>> {
    let sizes = RecordSizes::of(encode.0);
    let mut pieces = Vec::new();
    let mut start = bodies.start;
    while start < bodies.end {
        let chunk = start / SOURCE_CHUNK;
        let end = ((chunk + 1) * SOURCE_CHUNK).min(bodies.end);
        pieces.push((chunk, start..end));
        start = end;
    }
    let mut masses = Vec::new();
    let mut staged = 0;
    for batch in pieces.chunks(rayon::current_num_threads()) {
        let encoded: Vec<(Vec<u8>, Vec<u8>, Option<MassChunk>)> = batch
            .par_iter()
            .map(|(chunk, range)| {
                source.with_chunk(*chunk, |first, all| {
                    let starts_here = first >= bodies.start;
                    if starts_here {
                        crowd.validate_bodies(first, all)?;
                    }
                    let part = &all[range.start - first..range.end - first];
                    let mut states = vec![0; part.len() * sizes.state];
                    let step = crowd.start_step;
                    encode.states_into(part.iter().map(|b| &b.state), step, &mut states);
                    let mut constants = vec![0; part.len() * sizes.constants];
                    encode.constants_into(part, table, range.start - bodies.start, &mut constants);
                    Ok((states, constants, starts_here.then(|| MassChunk::of(all))))
                })?
            })
            .collect::<Result<_>>()?;
        for ((_, range), (states, constants, mass)) in batch.iter().zip(encoded) {
            let offset = (range.start - bodies.start) as u64;
            let queue = upload.queue;
            queue.write_buffer(upload.states, offset * sizes.state as u64, &states);
            queue.write_buffer(
                upload.constants,
                offset * sizes.constants as u64,
                &constants,
            );
            staged += states.len() + constants.len();
            masses.extend(mass);
        }
        if staged >= UPLOAD_FLUSH_BYTES {
            upload.queue.submit([]);
            // A failed wait shows as a lost device at the next check.
            let _ = upload.device.poll(wgpu::PollType::wait_indefinitely());
            staged = 0;
        }
    }
    Ok(masses)
}

impl BoundBuffers {
    /// The fused and single-step bind groups over `states` and `loads`.
    fn bind_groups(
        &self,
        device: &wgpu::Device,
        states: &wgpu::Buffer,
        loads: &wgpu::Buffer,
    ) -> (wgpu::BindGroup, wgpu::BindGroup) {
        // In the order of INTEGRATE_BINDINGS.
        let bind_group = |params| {
            let buffers = [
                params,
                states,
                &self.constants,
                &self.forces,
                &self.keyframes,
                loads,
                &self.planes,
                &self.faults,
            ];
            bind_buffers(device, "integrate bindings", &self.layout, &buffers)
        };
        (
            bind_group(&self.fused_params),
            bind_group(&self.single_params),
        )
    }
}

/// Refuses a crowd of `bodies` under the forces of `table` that needs more device memory
/// than `ctx`'s budget, before anything is allocated, naming the largest that fits: each
/// body's records in the sizes `sizes`, and with `tangents`, `(columns, bytes per body)`,
/// their bytes too.
pub(crate) fn check_fits(
    ctx: &GpuContext,
    bodies: usize,
    table: &ForceTable,
    sizes: RecordSizes,
    tangents: Option<(usize, u64)>,
) -> Result<()> {
    let Some(budget) = ctx.memory_budget() else {
        return Ok(());
    };
    // The forces are shared (globals) or few (own); count them all as fixed.
    let per_body = sizes.device_bytes_per_body() + tangents.map_or(0, |(_, bytes)| bytes);
    let fixed = (table.forces.len() * sizes.force) as u64;
    let needed = fixed + bodies as u64 * per_body;
    if needed <= budget {
        return Ok(());
    }
    let with = match tangents {
        Some((columns, _)) => format!(" with {columns} tangent columns"),
        None => String::new(),
    };
    Err(Error::CrowdTooLarge {
        bodies,
        largest: (budget.saturating_sub(fixed) / per_body) as usize,
        adapter: format!(
            "{}, {budget} bytes of device memory; it needs {needed}{with}",
            ctx.adapter_info().name
        ),
    })
}

/// Splits the bodies into runs whose state, constant and force buffers each fit
/// `max_binding_bytes`: greedy, so every chunk but the last is as large as it can be.
pub(crate) fn plan_chunks(
    table: &ForceTable,
    sizes: RecordSizes,
    max_binding_bytes: u64,
) -> Vec<Range<usize>> {
    let record = sizes.per_body_record() as u64;
    let force_record = sizes.force as u64;
    let max_bodies = (max_binding_bytes / record).clamp(1, u32::MAX as u64) as usize;
    let max_forces = (max_binding_bytes / force_record).max(1) as usize;
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut forces = table.global_count;
    for body in 0..table.body_count() {
        let (_, count) = table.range(body);
        let count = count as usize;
        let full = body - start == max_bodies || forces + count > max_forces;
        if full && body > start {
            chunks.push(start..body);
            start = body;
            forces = table.global_count;
        }
        forces += count;
    }
    if start < table.body_count() {
        chunks.push(start..table.body_count());
    }
    chunks
}

/// `indices` cut into runs of consecutive indices that one of `holders` (whose bodies
/// `bodies` gives) holds throughout, in order: each run's places in `indices` and its
/// holder, `None` for a lone index that no holder holds. One buffer write per run.
pub(crate) fn consecutive_runs<'h, H>(
    indices: &[usize],
    holders: &[&'h H],
    bodies: impl Fn(&H) -> &Range<usize>,
) -> Vec<(Range<usize>, Option<&'h H>)> {
    let mut runs = Vec::new();
    let mut k = 0;
    while k < indices.len() {
        let holder = holders.iter().find(|h| bodies(h).contains(&indices[k]));
        let mut end = k + 1;
        if let Some(h) = holder {
            while end < indices.len()
                && indices[end] == indices[end - 1] + 1
                && bodies(h).contains(&indices[end])
            {
                end += 1;
            }
        }
        runs.push((k..end, holder.copied()));
        k = end;
    }
    runs
}

/// Workgroups in x and y covering `bodies` invocations with at most `max_per_dimension`
/// workgroups in x: chunks beyond 65,535 workgroups spill into a second dimension.
pub(crate) fn dispatch_grid(
    bodies: u32,
    workgroup_size: u32,
    max_per_dimension: u32,
) -> (u32, u32) {
    let groups = bodies.div_ceil(workgroup_size).max(1);
    let x = groups.min(max_per_dimension.max(1));
    (x, groups.div_ceil(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs break where the indices stop being consecutive or leave their holder; an index
    /// no holder holds is a run of its own with none.
    #[test]
    fn consecutive_runs_stay_within_their_holder() {
        let (a, b) = (0..5, 5..9);
        let holders = [&a, &b];
        let runs = consecutive_runs(&[3, 4, 5, 6, 8, 20, 1], &holders, |r| r);
        let places: Vec<_> = runs.iter().map(|(run, _)| run.clone()).collect();
        assert_eq!(places, [0..2, 2..4, 4..5, 5..6, 6..7]);
        let held: Vec<_> = runs.iter().map(|(_, h)| h.map(|r| r.start)).collect();
        assert_eq!(held, [Some(0), Some(5), Some(5), None, Some(0)]);
    }
    use crate::assembly::generate::CrowdSpec;
    use crate::model::force::{Force, ForceKind};

    #[test]
    fn grid_spills_into_the_second_dimension() {
        assert_eq!(dispatch_grid(10, 64, 65_535), (1, 1));
        assert_eq!(dispatch_grid(64 * 65_535, 64, 65_535), (65_535, 1));
        assert_eq!(dispatch_grid(64 * 65_535 + 1, 64, 65_535), (65_535, 2));
        assert_eq!(dispatch_grid(16 * 65_536, 16, 65_535), (65_535, 2));
        let (x, y) = dispatch_grid(u32::MAX, 64, 65_535);
        assert!(x as u64 * y as u64 * 64 >= u32::MAX as u64);
    }

    #[test]
    fn chunks_cover_every_body_once_within_the_binding() {
        let mut crowd = Crowd::new(CrowdSpec::new(1000, 5).generate().unwrap(), 1e-3);
        let drag = ForceKind::LinearDrag {
            linear: 1.0,
            angular: 1.0,
        };
        for body in (0..1000).step_by(3) {
            crowd.forces.push(Force {
                kind: drag,
                body: Some(body),
            });
        }
        let table = ForceTable::new(&crowd, crowd.bodies.len());
        let f32_sizes = RecordSizes::of(Precision::F32);
        for max_binding_bytes in [64, 64 * 7, 64 * 100, 64 * 1000, 1 << 30] {
            let chunks = plan_chunks(&table, f32_sizes, max_binding_bytes);
            assert_eq!(chunks.first().unwrap().start, 0);
            assert_eq!(chunks.last().unwrap().end, 1000);
            for pair in chunks.windows(2) {
                assert_eq!(pair[0].end, pair[1].start);
            }
            for chunk in &chunks {
                let sub = table.for_bodies(chunk.clone());
                assert!(chunk.len() as u64 * 64 <= max_binding_bytes.max(64));
                assert!(
                    chunk.len() == 1 || sub.forces.len() as u64 * 64 <= max_binding_bytes,
                    "{chunk:?}"
                );
            }
        }
        assert_eq!(plan_chunks(&table, f32_sizes, 1 << 30), vec![0..1000]);
        assert!(plan_chunks(&ForceTable::default(), f32_sizes, 1 << 30).is_empty());
    }
}
