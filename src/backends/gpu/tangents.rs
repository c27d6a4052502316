//! The tangents of the GPU backends: each body's `13 x k` derivatives in a storage buffer
//! beside its state, carried by the kernel traced over dual numbers
//! (`kernel/tangent_kernel.rs`) in blocks of the widths `body_steps::tangents::block_widths`
//! picks, as the CPU backends carry them. The values the dual kernel computes are the plain
//! kernel's; its derivatives are the CPU's `Dual` steps' on IEEE-honest drivers, bit for
//! bit (`tests/suite/gpu_tangents.rs`). The device holds a piece's tangents number-major
//! across its bodies (each number of every body, then the next number), so that the
//! invocations of neighbouring bodies read neighbouring words and a block reads only its
//! own columns' words; the host, the CPU backends and checkpoints hold them body-major
//! (each body's `13 x k`, row-major), and this file converts between the two.

use std::ops::Range;

use bytemuck::Pod;
use wgpu::util::DeviceExt;

use crate::assembly::crowd::Crowd;
use crate::assembly::force_table::ForceTable;
use crate::backends::gpu::chunk::{BufferChunk, check_fits, consecutive_runs, dispatch_grid};
use crate::backends::gpu::device::bindings::{
    INTEGRATE_STORAGE_BUFFERS, TANGENT_BINDINGS, TANGENT_STORAGE_BUFFERS, bind_buffers,
    bind_group_layout, integrate_bind_group_layout,
};
use crate::backends::gpu::device::context::GpuContext;
use crate::backends::gpu::device::exact_spirv::{self, Checks};
use crate::backends::gpu::device::pipeline_cache::{KernelEntry, PipelineKey};
use crate::backends::gpu::device::readback::read_buffer;
use crate::backends::gpu::kernel::kernel_spec::KernelSpec;
use crate::backends::gpu::kernel::layout::RecordSizes;
use crate::backends::gpu::kernel::tangent_kernel::{ENTRY_POINT, crowd_blocks, tangent_source};
use crate::body_steps::carried::CarriedTangents;
use crate::body_steps::derivative::Primal;
use crate::body_steps::tangent_blocks::crowd_directions;
use crate::body_steps::tangents::{constant_seeds, directions_of};
use crate::model::body::Body;
use crate::model::error::{Error, Result};
use crate::model::force::ForceKind;
use crate::model::precision::Precision;
use crate::model::tangent::{Direction, PLANE_NUMBERS, TangentPlan};
use crate::physics::custom_force::CustomForce;
use crate::physics::dual_wgsl::PARAMETER_NUMBERS;
use crate::physics::dual_wgsl::{CONSTANT_NUMBERS, MOTION_NUMBERS, MovingNumbers};

/// The tangent buffers of a piece of a chunk (as many of its bodies as one storage binding
/// holds the columns of) and the bindings of each block.
#[derive(Debug)]
struct PieceTangents {
    /// The piece's bodies, this simulation's indices.
    bodies: Range<usize>,
    /// `13 x k` per body, number-major across the piece's bodies.
    tangents: wgpu::Buffer,
    /// One bind group (group 1) per block.
    groups: Vec<wgpu::BindGroup>,
    /// Workgroups dispatched over the piece's bodies.
    grid: (u32, u32),
}

/// The tangents a GPU simulation carries.
#[derive(Debug)]
pub(crate) struct GpuTangents {
    pub plan: TangentPlan,
    precision: Precision,
    /// The pipeline of each block of a body's columns, in column order.
    blocks: Vec<wgpu::ComputePipeline>,
    /// Each chunk's pieces, in body order.
    chunks: Vec<Vec<PieceTangents>>,
}

impl GpuTangents {
    /// The tangents of `plan` started from `bodies` (this simulation's, in order), which are
    /// the bodies `range` of `crowd`, on the chunks `chunks` of a simulation whose plain
    /// kernel is `spec`. The columns along a force's numbers find its records by the
    /// force's index in `crowd`, however a shard renumbers them.
    pub(crate) fn start(
        ctx: &GpuContext,
        (precision, workgroup_size, trusted, divisions_in_f64, widest_block): (
            Precision,
            u32,
            bool,
            bool,
            usize,
        ),
        spec: &KernelSpec,
        (crowd, range): (&Crowd, Range<usize>),
        chunks: &[BufferChunk],
        (plan, bodies): (&TangentPlan, &[Body]),
    ) -> Result<Self> {
        let storage = INTEGRATE_STORAGE_BUFFERS + TANGENT_STORAGE_BUFFERS;
        if ctx.limits().max_storage_buffers_per_shader_stage < storage {
            return Err(Error::invalid(
                "tangents",
                format!(
                    "the device allows {} storage buffers per shader stage; tangents need {storage}",
                    ctx.limits().max_storage_buffers_per_shader_stage
                ),
            ));
        }
        let k = plan.width();
        let numbers = crowd.shard_force_numbers(range.clone());
        let table = ForceTable::new(&crowd.shard_settings(range), bodies.len());
        let bytes = tangent_bytes_per_body(k, precision);
        let sizes = RecordSizes::of(precision);
        check_fits(ctx, bodies.len(), &table, sizes, Some((k, bytes)))?;
        // A piece's columns (13 x k a body, more than its 8 x k constant seeds) in one
        // binding: a crowd carrying tangents is bounded by memory, not by one binding.
        let column_bytes = (MOTION_NUMBERS * k * precision.scalar_bytes()) as u64;
        let piece_len = (ctx.max_binding_bytes() / column_bytes).max(1) as usize;
        let device = &ctx.device;
        let custom_force = crowd.custom_force.as_ref();
        let spec = &spec.for_shapes_of(bodies);
        let layout = tangent_layout(device);
        let mut blocks = Vec::new();
        let mut spans = Vec::new();
        let gpu_blocks = crowd_blocks(plan, crowd, widest_block, (precision, spec, custom_force));
        for (b, block) in gpu_blocks.iter().enumerate() {
            spans.push(TangentBlock {
                first_column: block.columns.start as u32,
                columns: k as u32,
                width: block.columns.len() as u32,
                writes_state: (b + 1 == gpu_blocks.len()) as u32,
                first_body: 0,
                body_count: 0,
                row_width: 0,
                pad: 0,
            });
            let key = PipelineKey {
                spec: spec.clone(),
                precision,
                workgroup_size,
                trusted,
                custom_force: custom_force
                    .map(|custom| custom.wgsl_for(precision, divisions_in_f64).to_string()),
                tangent_block: Some((block.width, block.moving)),
                divisions_in_f64,
                entry: KernelEntry::Integrate,
            };
            let pipeline = ctx.pipelines().get_or_build(key, || {
                build_pipeline(
                    ctx,
                    &layout.pipeline,
                    (precision, workgroup_size, trusted, divisions_in_f64),
                    (spec, custom_force),
                    (block.width, block.moving),
                )
            })?;
            blocks.push(pipeline);
        }
        let number_seeds = number_seeds(plan, crowd);
        let number_seeds = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("number seeds"),
            contents: bytemuck::cast_slice(&number_seeds),
            usage: wgpu::BufferUsages::STORAGE,
        });
        let (columns, seeds) = match precision {
            Precision::F32 => start_columns::<f32>(plan, bodies)?,
            Precision::F64 => start_columns::<f64>(plan, bodies)?,
        };
        let (per_body, seeds_per_body) = (plan.body_len(), CONSTANT_NUMBERS * k);
        let plane_seeds = match precision {
            Precision::F32 => plane_seeds::<f32>(plan, crowd),
            Precision::F64 => plane_seeds::<f64>(plan, crowd),
        };
        let plane_seeds = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("plane seeds"),
            contents: &plane_seeds,
            usage: wgpu::BufferUsages::STORAGE,
        });
        let storage = |label, contents: &[u8], extra| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage: wgpu::BufferUsages::STORAGE | extra,
            })
        };
        let mut out = Vec::new();
        for chunk in chunks {
            let origins: Vec<u32> = (table.for_bodies(chunk.bodies.clone()).origins().iter())
                .map(|&origin| numbers[origin as usize] as u32)
                .collect();
            let origins = if origins.is_empty() { vec![0] } else { origins };
            let origins = storage(
                "force origins",
                bytemuck::cast_slice(&origins),
                wgpu::BufferUsages::empty(),
            );
            let mut pieces = Vec::new();
            for first in chunk.bodies.clone().step_by(piece_len) {
                let r = first..(first + piece_len).min(chunk.bodies.end);
                // The piece's bodies' `per_body` numbers each of `values`, number-major.
                let piece = |label, values: &[f64], per_body, extra| {
                    let values = &values[r.start * per_body..r.end * per_body];
                    storage(label, &device_bytes(values, per_body, precision), extra)
                };
                let tangents = piece(
                    "tangents",
                    &columns,
                    per_body,
                    wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                );
                let seeds = piece(
                    "constant seeds",
                    &seeds,
                    seeds_per_body,
                    wgpu::BufferUsages::empty(),
                );
                let grid = dispatch_grid(
                    r.len() as u32,
                    workgroup_size,
                    ctx.limits().max_compute_workgroups_per_dimension,
                );
                let groups = spans
                    .iter()
                    .map(|span| {
                        let span = TangentBlock {
                            first_body: (r.start - chunk.bodies.start) as u32,
                            body_count: r.len() as u32,
                            row_width: grid.0 * workgroup_size,
                            ..*span
                        };
                        let uniform = block_uniform(device, &span);
                        let buffers = [
                            &uniform,
                            &tangents,
                            &seeds,
                            &origins,
                            &number_seeds,
                            &plane_seeds,
                        ];
                        bind_buffers(device, "tangent block", &layout.tangents, &buffers)
                    })
                    .collect();
                pieces.push(PieceTangents {
                    bodies: r,
                    tangents,
                    groups,
                    grid,
                });
            }
            out.push(pieces);
        }
        Ok(Self {
            plan: plan.clone(),
            precision,
            blocks,
            chunks: out,
        })
    }

    /// Records one dispatch of every block over each piece of chunk `chunk`, whose plain
    /// bindings are `bindings`: a piece's blocks in order (the last writes the states).
    pub(crate) fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        chunk: usize,
        bindings: &wgpu::BindGroup,
    ) {
        for piece in &self.chunks[chunk] {
            for (block, group) in self.blocks.iter().zip(&piece.groups) {
                pass.set_pipeline(block);
                pass.set_bind_group(0, bindings, &[]);
                pass.set_bind_group(1, group, &[]);
                pass.dispatch_workgroups(piece.grid.0, piece.grid.1, 1);
            }
        }
    }

    /// Every body's block, as the device holds them, in the simulation's body order.
    pub(crate) fn columns(&self, ctx: &GpuContext, bodies: usize) -> Result<Vec<f64>> {
        let per_body = self.plan.body_len();
        let mut out = Vec::with_capacity(bodies * per_body);
        for piece in self.chunks.iter().flatten() {
            let count = piece.tangents.size() as usize / self.precision.scalar_bytes();
            let held: Vec<f64> = match self.precision {
                Precision::F32 => read_buffer::<f32>(ctx, &piece.tangents, count)?
                    .into_iter()
                    .map(f64::from)
                    .collect(),
                Precision::F64 => read_buffer::<f64>(ctx, &piece.tangents, count)?,
            };
            out.extend(transpose(&held, per_body));
        }
        Ok(out)
    }

    /// Replaces every body's block with `columns` (the simulation's bodies in order), rounded
    /// to the precision, each piece's bodies in its buffer.
    pub(crate) fn set_columns(&self, ctx: &GpuContext, columns: &[f64]) {
        let per_body = self.plan.body_len();
        for piece in self.chunks.iter().flatten() {
            let part = &columns[piece.bodies.start * per_body..piece.bodies.end * per_body];
            let bytes = device_bytes(part, per_body, self.precision);
            ctx.queue.write_buffer(&piece.tangents, 0, &bytes);
        }
    }

    /// Starts the blocks of `bodies` (this simulation's indices, each with its new state's
    /// orientation `w, x, y, z`) again: each run of consecutive bodies within a piece is one
    /// write a number.
    pub(crate) fn restart(&self, ctx: &GpuContext, bodies: &[(usize, [f64; 4])]) {
        let per_body = self.plan.body_len();
        let scalar = self.precision.scalar_bytes();
        let indices: Vec<usize> = bodies.iter().map(|&(i, _)| i).collect();
        let pieces: Vec<&PieceTangents> = self.chunks.iter().flatten().collect();
        for (run, piece) in consecutive_runs(&indices, &pieces, |p| &p.bodies) {
            let Some(piece) = piece else { continue };
            let mut blocks = vec![0.0; run.len() * per_body];
            for (&(_, q), block) in bodies[run.clone()].iter().zip(blocks.chunks_mut(per_body)) {
                self.plan.initial_block(q, block);
            }
            let numbers = transpose(&blocks, run.len());
            let (first, held) = (indices[run.start], piece.bodies.len());
            for (number, values) in numbers.chunks(run.len()).enumerate() {
                let offset = ((number * held + first - piece.bodies.start) * scalar) as u64;
                ctx.queue
                    .write_buffer(&piece.tangents, offset, &encode(values, self.precision));
            }
        }
    }
}

/// `values`, `rows x (len / rows)` row-major, transposed: body-major (each body's `numbers`,
/// in turn) to number-major (each number of every body, in turn) with `rows` the bodies,
/// and back with `rows` the numbers.
fn transpose(values: &[f64], rows: usize) -> Vec<f64> {
    let columns = values.len() / rows.max(1);
    let mut out = vec![0.0; values.len()];
    for (r, row) in values.chunks_exact(columns.max(1)).enumerate() {
        for (c, &value) in row.iter().enumerate() {
            out[c * rows + r] = value;
        }
    }
    out
}

/// A piece's `values` (its bodies' `numbers` each, body-major) as the device holds them:
/// number-major, in `precision`.
fn device_bytes(values: &[f64], numbers: usize, precision: Precision) -> Vec<u8> {
    encode(&transpose(values, values.len() / numbers.max(1)), precision)
}

/// `values` rounded to `precision`, as bytes.
fn encode(values: &[f64], precision: Precision) -> Vec<u8> {
    match precision {
        Precision::F32 => {
            let rounded: Vec<f32> = values.iter().map(|&x| x as f32).collect();
            bytemuck::cast_slice(&rounded).to_vec()
        }
        Precision::F64 => bytemuck::cast_slice(values).to_vec(),
    }
}

/// Device bytes per body of `columns` tangent columns in `precision`: the `13 x k`
/// derivatives of its state and the `8 x k` of its mass constants.
pub(crate) fn tangent_bytes_per_body(columns: usize, precision: Precision) -> u64 {
    ((MOTION_NUMBERS + CONSTANT_NUMBERS) * columns * precision.scalar_bytes()) as u64
}

/// The tangent kernel for blocks of `width` directions beside the plain kernel of `spec`,
/// with the crowd's custom force.
fn build_pipeline(
    ctx: &GpuContext,
    layout: &wgpu::PipelineLayout,
    (precision, workgroup_size, trusted, divisions_in_f64): (Precision, u32, bool, bool),
    (spec, custom_force): (&KernelSpec, Option<&CustomForce>),
    block: (usize, MovingNumbers),
) -> Result<wgpu::ComputePipeline> {
    let source = tangent_source((precision, divisions_in_f64), spec, block, custom_force);
    let constants = [("workgroup_size", workgroup_size as f64)];
    let checks = match trusted {
        true => Checks::Trusted,
        false => Checks::Bounded,
    };
    let kernel = (source.as_str(), ENTRY_POINT, &constants[..], checks);
    // SAFETY: trusted, its indices are in bounds by construction: a body's rows and seeds
    // lie within its piece's buffers (sized its bodies x 13 x k and 8 x k; the piece's bodies
    // within its chunk's), a column within the block's width (the seeds padded by the widest
    // block), a record within the force table, and every dual index below its array's
    // numbers times DUAL_STRIDE; else wgpu's bounds checks stay.
    unsafe { exact_spirv::pipeline(&ctx.device, kernel, layout, "the tangent kernel") }
}

/// The uniform buffer holding `block`.
fn block_uniform(device: &wgpu::Device, block: &TangentBlock) -> wgpu::Buffer {
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("tangent block"),
        contents: bytemuck::bytes_of(block),
        usage: wgpu::BufferUsages::UNIFORM,
    })
}

/// A block's place among a body's columns; twin of `TangentBlock` in
/// shaders/tangent_block.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct TangentBlock {
    first_column: u32,
    columns: u32,
    width: u32,
    writes_state: u32,
    first_body: u32,
    body_count: u32,
    row_width: u32,
    pad: u32,
}

/// Per column (padded by the widest block), as `number_seeds` in
/// shaders/tangent_block.wgsl and the kernel's `dual_keyframe` read them: the crowd
/// force whose number it is taken along, plus one, and the number's place among a record's
/// parameters (past them for a number of its keyframe table); the plane whose number it is,
/// plus one; the number of the force's keyframe table, plus one; zeros for the others.
fn number_seeds(plan: &TangentPlan, crowd: &Crowd) -> Vec<[u32; 4]> {
    let mut seeds: Vec<[u32; 4]> = crowd_directions(plan, crowd)
        .into_iter()
        .map(|direction| match direction {
            Some(Direction::Force { force, slot }) => [force as u32 + 1, slot.place() as u32, 0, 0],
            Some(Direction::Keyframe { force, number }) => {
                let past_the_parameters = PARAMETER_NUMBERS as u32;
                [force as u32 + 1, past_the_parameters, 0, number as u32 + 1]
            }
            Some(Direction::Plane { plane, .. }) => [0, 0, plane as u32 + 1, 0],
            _ => [0; 4],
        })
        .collect();
    seeds.resize(seeds.len() + widest_block(), [0; 4]);
    seeds
}

/// Per column (padded by the widest block), as `plane_seeds` in
/// shaders/tangent_block.wgsl reads them: the derivatives of the numbers the steps
/// hold of the plane whose number the column is taken along (`PlaneNumber::seeds`), in
/// precision `P`; zeros for the other columns.
fn plane_seeds<P: Primal + Pod>(plan: &TangentPlan, crowd: &Crowd) -> Vec<u8> {
    let columns = crowd_directions(plan, crowd);
    let mut seeds = vec![P::default(); (columns.len() + widest_block()) * PLANE_NUMBERS];
    for (direction, out) in columns.iter().zip(seeds.chunks_mut(PLANE_NUMBERS)) {
        if let Some(Direction::Plane { plane, number }) = *direction {
            let numbers = number.seeds(&crowd.planes[plane]).map(P::constant);
            out.copy_from_slice(&numbers);
        }
    }
    bytemuck::cast_slice(&seeds).to_vec()
}

/// Columns of the widest block the kernels are traced in, by which the seeds are padded.
fn widest_block() -> usize {
    crate::physics::dual_wgsl::TRACED_WIDTHS
        .into_iter()
        .max()
        .unwrap_or(1)
}

/// Every body's starting block and the derivatives of its mass constants along each
/// column (`8 x k`, row-major), body-major, computed in precision `P` on the host by the
/// code the CPU backends seed with (and widened exactly to f64).
fn start_columns<P: Primal + Pod>(
    plan: &TangentPlan,
    bodies: &[Body],
) -> Result<(Vec<f64>, Vec<f64>)> {
    let carried = CarriedTangents::<P>::start(plan, bodies.len(), |i| {
        let q = bodies[i].state.orientation;
        [q.w, q.x, q.y, q.z]
    })?;
    let k = plan.width();
    let no_forces: [&ForceKind; 0] = [];
    let directions = directions_of(plan, &no_forces, &[]);
    let mut seeds = vec![P::default(); bodies.len() * CONSTANT_NUMBERS * k];
    for (body, out) in bodies.iter().zip(seeds.chunks_mut(CONSTANT_NUMBERS * k)) {
        let m = P::constant(body.mass.mass());
        for (column, direction) in directions.iter().enumerate() {
            let Some(direction) = *direction else {
                continue;
            };
            for (row, seed) in constant_seeds(|| body.mass.inv_inertia_body(), m, direction)
                .into_iter()
                .enumerate()
            {
                out[row * k + column] = seed;
            }
        }
    }
    let widened = |values: Vec<P>| values.into_iter().map(Into::into).collect();
    Ok((widened(carried.columns), widened(seeds)))
}

/// The tangent kernel's layouts: the plain kernel's bindings (group 0) and the tangents'.
struct TangentLayout {
    tangents: wgpu::BindGroupLayout,
    pipeline: wgpu::PipelineLayout,
}

fn tangent_layout(device: &wgpu::Device) -> TangentLayout {
    let plain = integrate_bind_group_layout(device);
    let tangents = bind_group_layout(device, "tangent bindings", &TANGENT_BINDINGS);
    let pipeline = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("integrate tangents"),
        bind_group_layouts: &[Some(&plain), Some(&tangents)],
        immediate_size: 0,
    });
    TangentLayout { tangents, pipeline }
}
