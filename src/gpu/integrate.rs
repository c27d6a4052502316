//! The GPU backend's simulation: uploads a crowd once, then encodes many integration
//! dispatches per submission and reads back only when asked. Twin of src/cpu/simulation.rs.

use wgpu::util::DeviceExt;

use crate::body::Body;
use crate::crowd::Crowd;
use crate::error::{Error, Result};
use crate::force_table::ForceTable;
use crate::gpu::context::{GpuContext, one_line};
use crate::gpu::layout::{BodyConstantsGpu, BodyStateGpu, ParamsGpu, forces_gpu, integrator_code};
use crate::gpu::readback::read_buffer;
use crate::gpu::shader::integrate_source;
use crate::mass::MassProperties;

/// Invocations per workgroup of the integration kernel (the WGSL `workgroup_size` override).
pub(crate) const WORKGROUP_SIZE: u32 = 64;

/// Dispatches encoded per command buffer: large enough to amortise a submit, small enough
/// that a long `step(n)` keeps at most two command buffers in flight.
const STEPS_PER_SUBMISSION: u64 = 256;

/// A crowd whose states live in a GPU storage buffer, integrated in f32.
#[derive(Debug)]
pub struct GpuSimulation {
    ctx: GpuContext,
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    states: wgpu::Buffer,
    masses: Vec<MassProperties>,
    grid: (u32, u32),
    in_flight: Option<wgpu::SubmissionIndex>,
}

impl GpuSimulation {
    /// Uploads a validated crowd to the device of `ctx`.
    pub(crate) fn new(ctx: &GpuContext, crowd: &Crowd) -> Result<Self> {
        let body_count = crowd.bodies.len();
        if body_count > ctx.max_bodies() {
            return Err(Error::CrowdTooLarge {
                bodies: body_count,
                largest: ctx.max_bodies(),
                adapter: ctx.adapter_info().name.clone(),
            });
        }
        let table = ForceTable::new(crowd);
        let grid = dispatch_grid(
            body_count as u32,
            ctx.limits().max_compute_workgroups_per_dimension,
        );
        let params = ParamsGpu {
            body_count: body_count as u32,
            global_force_count: table.global_count as u32,
            integrator: integrator_code(crowd.integrator),
            row_width: grid.0 * WORKGROUP_SIZE,
            dt: crowd.dt as f32,
            _pad: [0; 3],
        };
        let mut states: Vec<BodyStateGpu> = crowd
            .bodies
            .iter()
            .map(|b| BodyStateGpu::from(&b.state))
            .collect();
        let mut constants: Vec<BodyConstantsGpu> = crowd
            .bodies
            .iter()
            .zip(&table.ranges)
            .map(|(b, &range)| BodyConstantsGpu::new(b, range))
            .collect();
        // Bindings cannot be empty: an empty crowd keeps one unused record.
        if states.is_empty() {
            states.push(BodyStateGpu::default());
            constants.push(BodyConstantsGpu::default());
        }

        let device = &ctx.device;
        let out_of_memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let storage = |label, contents: &[u8], extra| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage: wgpu::BufferUsages::STORAGE | extra,
            })
        };
        let states_buffer = storage(
            "body states",
            bytemuck::cast_slice(&states),
            wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        );
        let constants_buffer = storage(
            "body constants",
            bytemuck::cast_slice(&constants),
            wgpu::BufferUsages::empty(),
        );
        let forces_buffer = storage(
            "forces",
            bytemuck::cast_slice(&forces_gpu(&table)),
            wgpu::BufferUsages::empty(),
        );
        let params_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("integrate params"),
            contents: bytemuck::bytes_of(&params),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("integrate.wgsl"),
            source: wgpu::ShaderSource::Wgsl(integrate_source().into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("integrate"),
            layout: None,
            module: &module,
            entry_point: Some("integrate"),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants: &[("workgroup_size", WORKGROUP_SIZE as f64)],
                zero_initialize_workgroup_memory: false,
            },
            cache: None,
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("integrate bindings"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                entry(0, &params_buffer),
                entry(1, &states_buffer),
                entry(2, &constants_buffer),
                entry(3, &forces_buffer),
            ],
        });
        check_scope(validation, "creating the integration pipeline")?;
        check_scope(out_of_memory, "allocating the crowd's buffers")?;
        ctx.take_uncaptured()?;

        Ok(Self {
            ctx: ctx.clone(),
            pipeline,
            bind_group,
            states: states_buffer,
            masses: crowd.bodies.iter().map(|b| b.mass).collect(),
            grid,
            in_flight: None,
        })
    }

    /// Advances every body by `steps` steps. Returns once the work is queued; at most two
    /// submissions are in flight at a time. Nothing is read back.
    pub fn step(&mut self, steps: u64) -> Result<()> {
        let mut remaining = steps;
        while remaining > 0 {
            let batch = remaining.min(STEPS_PER_SUBMISSION);
            let mut encoder =
                self.ctx
                    .device
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                        label: Some("integrate steps"),
                    });
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("integrate"),
                    timestamp_writes: None,
                });
                pass.set_pipeline(&self.pipeline);
                pass.set_bind_group(0, &self.bind_group, &[]);
                // Each dispatch is one step; wgpu orders consecutive dispatches on the same
                // read-write buffer, so step k+1 sees step k's states.
                for _ in 0..batch {
                    pass.dispatch_workgroups(self.grid.0, self.grid.1, 1);
                }
            }
            let submitted = self.ctx.queue.submit([encoder.finish()]);
            if let Some(previous) = self.in_flight.replace(submitted) {
                self.wait_for(Some(previous))?;
            }
            remaining -= batch;
        }
        self.ctx.take_uncaptured()
    }

    /// Blocks until every queued step has finished on the device.
    pub fn finish(&mut self) -> Result<()> {
        let last = self.in_flight.take();
        self.wait_for(last)?;
        self.ctx.take_uncaptured()
    }

    /// Reads the states back (waiting for queued steps) and pairs them with the constants.
    pub fn bodies(&self) -> Result<Vec<Body>> {
        let states: Vec<BodyStateGpu> = read_buffer(&self.ctx, &self.states, self.masses.len())?;
        Ok(self
            .masses
            .iter()
            .zip(states)
            .map(|(&mass, s)| Body {
                mass,
                state: s.to_state(),
            })
            .collect())
    }

    /// The context this simulation runs on.
    pub fn context(&self) -> &GpuContext {
        &self.ctx
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
            .map_err(|e| Error::Gpu(one_line(&format!("waiting for the device: {e}"))))
    }
}

fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}

fn check_scope(scope: wgpu::ErrorScopeGuard, doing: &str) -> Result<()> {
    match pollster::block_on(scope.pop()) {
        Some(e) => Err(Error::Gpu(one_line(&format!("{doing}: {e}")))),
        None => Ok(()),
    }
}

/// Workgroups in x and y covering `bodies` invocations with at most `max_per_dimension`
/// workgroups in x: crowds beyond 65,535 workgroups spill into a second dimension.
pub(crate) fn dispatch_grid(bodies: u32, max_per_dimension: u32) -> (u32, u32) {
    let groups = bodies.div_ceil(WORKGROUP_SIZE).max(1);
    let x = groups.min(max_per_dimension.max(1));
    (x, groups.div_ceil(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_spills_into_the_second_dimension() {
        assert_eq!(dispatch_grid(10, 65_535), (1, 1));
        assert_eq!(dispatch_grid(64 * 65_535, 65_535), (65_535, 1));
        assert_eq!(dispatch_grid(64 * 65_535 + 1, 65_535), (65_535, 2));
        let (x, y) = dispatch_grid(u32::MAX, 65_535);
        assert!(x as u64 * y as u64 * WORKGROUP_SIZE as u64 >= u32::MAX as u64);
    }
}
