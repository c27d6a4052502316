//! The integration pipeline: the WGSL module, compiled checked or trusted, with the
//! workgroup size as an override constant.

use crate::gpu::options::GpuOptions;
use crate::gpu::shader::integrate_source;

/// Builds the `integrate` compute pipeline for `options`.
///
/// Trusted compilation drops wgpu's injected bounds checks. It is sound for this kernel
/// because every index it forms is in range by construction on the host:
/// - `states[index]`, `constants[index]`: the kernel returns early unless
///   `index < params.body_count`, and both buffers hold exactly `body_count` records
///   (`BufferChunk::new`);
/// - `forces[i]`: `i < global_force_count` or `i < force_first + force_count`, and
///   `BufferChunk::new` refuses a chunk whose force ranges end past its force buffer;
/// - `planes[i]`: `i < plane_count`, the length of the crowd's plane list, which the plane
///   buffer holds (plus one unused record when the list is empty);
/// - the contact arrays of eight: `contact_candidates` fills at most eight points and the
///   contacts are a subset of them;
/// - every loop is bounded by those counts or by `steps_per_dispatch`.
pub(crate) fn integrate_pipeline(
    device: &wgpu::Device,
    options: &GpuOptions,
) -> wgpu::ComputePipeline {
    let descriptor = wgpu::ShaderModuleDescriptor {
        label: Some("integrate.wgsl"),
        source: wgpu::ShaderSource::Wgsl(integrate_source().into()),
    };
    let module = if options.trusted_shader {
        // SAFETY: the indices are proven in range above; the loops are bounded.
        unsafe {
            device.create_shader_module_trusted(descriptor, wgpu::ShaderRuntimeChecks::unchecked())
        }
    } else {
        device.create_shader_module(descriptor)
    };
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("integrate"),
        layout: None,
        module: &module,
        entry_point: Some("integrate"),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants: &[("workgroup_size", options.workgroup_size as f64)],
            zero_initialize_workgroup_memory: false,
        },
        cache: None,
    })
}
