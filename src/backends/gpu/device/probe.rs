//! The tests' probe kernels: a WGSL source compiled and dispatched once over the buffers a
//! test binds, the outputs read back with `read_buffer`.

use crate::backends::gpu::device::context::GpuContext;

/// Dispatches `grid` workgroups of `entry` in `source`, with `bindings` (binding number,
/// buffer) at group 0 and the pipeline-overridable `constants`; panics naming `label` if the
/// kernel does not validate. The work is submitted, not waited for.
pub(crate) fn dispatch(
    ctx: &GpuContext,
    label: &str,
    source: &str,
    entry: &str,
    constants: &[(&str, f64)],
    bindings: &[(u32, &wgpu::Buffer)],
    grid: (u32, u32),
) {
    let device = &ctx.device;
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: None,
        module: &module,
        entry_point: Some(entry),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants,
            zero_initialize_workgroup_memory: false,
        },
        cache: None,
    });
    let entries: Vec<_> = bindings
        .iter()
        .map(|&(binding, buffer)| wgpu::BindGroupEntry {
            binding,
            resource: buffer.as_entire_binding(),
        })
        .collect();
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    });
    if let Some(e) = pollster::block_on(validation.pop()) {
        panic!("{label}: building the probe failed: {e}");
    }
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(grid.0, grid.1, 1);
    }
    ctx.queue.submit([encoder.finish()]);
}
