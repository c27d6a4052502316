//! The integration pipeline: the WGSL module for a kernel spec, compiled checked or trusted,
//! with the workgroup size as an override constant, and shared through the device's cache.

use crate::backends::gpu::device::bindings::{integrate_bind_group_layout, near_bind_group_layout};
use crate::backends::gpu::device::context::{GpuContext, one_line};
use crate::backends::gpu::device::exact_spirv::{self, Checks};
use crate::backends::gpu::device::pipeline_cache::{KernelEntry, PipelineKey};
use crate::backends::gpu::kernel::builtins::f32_only_builtins_on_f64;
use crate::backends::gpu::kernel::kernel_spec::KernelSpec;
use crate::backends::gpu::kernel::shader::kernel_source;
use crate::backends::gpu::options::GpuOptions;
use crate::model::error::{Error, Result};
use crate::model::precision::Precision;
use crate::physics::custom_force::CustomForce;

/// The plain kernel's pipelines: `integrate`, and where the kernel hands the bodies near a
/// plane over ([`KernelSpec::hands_over_contacts`]), those that take them.
#[derive(Clone, Debug)]
pub(crate) struct PlainPipelines {
    pub integrate: wgpu::ComputePipeline,
    pub near: Option<NearPipelines>,
}

/// The pipeline that takes the steps of the bodies handed over.
#[derive(Clone, Debug)]
pub(crate) struct NearPipelines {
    pub integrate_near: wgpu::ComputePipeline,
}

/// The plain kernel's pipelines for `options` and `spec` on `ctx`'s device.
pub(crate) fn plain_pipelines(
    ctx: &GpuContext,
    options: &GpuOptions,
    spec: &KernelSpec,
    custom_force: Option<&CustomForce>,
) -> Result<PlainPipelines> {
    let entry = |entry| integrate_pipeline(ctx, options, spec, custom_force, entry);
    let near = match spec.hands_over_contacts(0) {
        true => Some(NearPipelines {
            integrate_near: entry(KernelEntry::IntegrateNear)?,
        }),
        false => None,
    };
    Ok(PlainPipelines {
        integrate: entry(KernelEntry::Integrate)?,
        near,
    })
}

/// The compute pipeline of `entry` for `options` and `spec` on `ctx`'s device: from its
/// cache, or built (see [`build_integrate_pipeline`]) and kept there.
fn integrate_pipeline(
    ctx: &GpuContext,
    options: &GpuOptions,
    spec: &KernelSpec,
    custom_force: Option<&CustomForce>,
    entry: KernelEntry,
) -> Result<wgpu::ComputePipeline> {
    let trusted = options.compiles_trusted(custom_force);
    let divisions_in_f64 = options.divides_in_f64();
    let key = PipelineKey {
        spec: spec.clone(),
        precision: options.precision,
        workgroup_size: options.workgroup_size,
        trusted,
        custom_force: custom_force.map(|custom| {
            custom
                .wgsl_for(options.precision, divisions_in_f64)
                .to_string()
        }),
        tangent_block: None,
        divisions_in_f64,
        entry,
    };
    ctx.pipelines().get_or_build(key, || {
        build_integrate_pipeline(&ctx.device, options, spec, custom_force, (trusted, entry))
    })
}

/// Builds the compute pipeline of `entry` for `options` and `spec`.
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
/// - `loads[index]`: read only when `index < arrayLength(&loads)`;
/// - `keyframes[i]`: `first <= i < first + count` for a keyframed force's `(first, count)`,
///   which `flatten_keyframes` takes from the buffer it builds (and `count >= 1`, checked by
///   `Crowd::validate`);
/// - a dual structure's numbers (`s[4u * DUAL_STRIDE]`, the traced physics' `s[7]`): constant
///   indices below the array's length, which naga checks when it lowers them;
/// - every loop is bounded by those counts, by `steps_per_dispatch`, or by a constant (the
///   contact sweeps the physics' `repeat` prints);
/// - `near.bodies[i]`, `taken.bodies[i]`: `i` below its header's count, and a body is
///   handed over at most once a dispatch, after the `integrate` before emptied the header,
///   so the count stays within the chunk's bodies, which the list holds (`NearList::new`);
///   `near.headers[h]`, `taken.headers[h]`: `h` is the parity, 0 or 1 (`NearList::new`).
///
/// A custom force of the user's WGSL is code about which none of this can be proven: with one,
/// the kernel is always compiled with the bounds checks. A [`ForceLaw`](crate::ForceLaw)'s
/// traced WGSL indexes nothing and loops a constant number of times.
fn build_integrate_pipeline(
    device: &wgpu::Device,
    options: &GpuOptions,
    spec: &KernelSpec,
    custom_force: Option<&CustomForce>,
    (trusted, entry): (bool, KernelEntry),
) -> Result<wgpu::ComputePipeline> {
    let (source, first_custom_line) = kernel_source(options, spec, custom_force);
    let layout = integrate_layout(device, spec.hands_over_contacts(0), entry);
    if let (Some(custom), Precision::F64) = (custom_force, options.precision) {
        check_custom_force_in_f64(custom, &source)?;
    }
    let constants = [("workgroup_size", options.workgroup_size as f64)];
    // Without a custom force of the user's WGSL (whose errors wgpu reports line by line), the
    // kernel goes to a Vulkan driver as SPIR-V with exact float arithmetic.
    if custom_force.is_none_or(CustomForce::is_law)
        && device
            .features()
            .contains(wgpu::Features::PASSTHROUGH_SHADERS)
    {
        let checks = if trusted {
            Checks::Trusted
        } else {
            Checks::Bounded
        };
        let kernel = (source.as_str(), entry.name(), &constants[..], checks);
        // SAFETY: its indices and loops are bounded as above when trusted.
        return unsafe { exact_spirv::pipeline(device, kernel, &layout, "the kernel") };
    }
    let descriptor = wgpu::ShaderModuleDescriptor {
        label: Some("integrate.wgsl"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    };
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = if trusted {
        // SAFETY: the indices are proven in range above; the loops are bounded.
        unsafe {
            device.create_shader_module_trusted(descriptor, wgpu::ShaderRuntimeChecks::unchecked())
        }
    } else {
        device.create_shader_module(descriptor)
    };
    let info = pollster::block_on(module.get_compilation_info());
    let scoped = pollster::block_on(scope.pop());
    if let Some(custom) = custom_force {
        let errors: Vec<String> = info
            .messages
            .iter()
            .filter(|m| m.message_type == wgpu::CompilationMessageType::Error)
            .map(|m| describe_message(m, first_custom_line))
            .collect();
        let detail = match scoped {
            _ if !errors.is_empty() => Some(errors.join("; ")),
            Some(e) => Some(one_line(&e.to_string())),
            None => None,
        };
        if let Some(detail) = detail {
            let hint = match options.precision {
                Precision::F64 if custom.wgsl().contains("f32") => {
                    " (it is written for f32: write it against `real` to run on gpu-f64)"
                }
                _ => "",
            };
            return Err(Error::invalid(
                custom.origin(),
                format!("the custom force's WGSL does not compile{hint}: {detail}"),
            ));
        }
    } else if let Some(e) = scoped {
        return Err(Error::Gpu(one_line(&format!("compiling the kernel: {e}"))));
    }
    Ok(
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry.name()),
            layout: Some(&layout),
            module: &module,
            entry_point: Some(entry.name()),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants: &constants,
                zero_initialize_workgroup_memory: false,
            },
            cache: None,
        }),
    )
}

/// The kernel's bindings (integrate.wgsl), stated rather than derived from the module: a
/// kernel specialized to a crowd without keyframed forces, say, never reads `keyframes`,
/// and a derived layout would drop it while every chunk binds all eight. A kernel that
/// `hands_over` contacts binds its list of bodies handed over as group 1, as `entry` uses it.
fn integrate_layout(
    device: &wgpu::Device,
    hands_over: bool,
    entry: KernelEntry,
) -> wgpu::PipelineLayout {
    let bindings = integrate_bind_group_layout(device);
    let near = near_bind_group_layout(device, entry == KernelEntry::IntegrateNear);
    let groups = [Some(&bindings), Some(&near)];
    device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("integrate"),
        bind_group_layouts: &groups[..1 + hands_over as usize],
        immediate_size: 0,
    })
}

/// Refuses a custom force that the f64 kernel would compile into garbage: one calling a
/// built-in that GLSL.std.450 defines for 32-bit floats only.
fn check_custom_force_in_f64(custom: &CustomForce, source: &str) -> Result<()> {
    // A source that does not parse is left to the compiler, whose message says where.
    let Ok(calls) = f32_only_builtins_on_f64(source) else {
        return Ok(());
    };
    if calls.is_empty() {
        return Ok(());
    }
    Err(Error::invalid(
        custom.origin(),
        format!(
            "calls {} on f64, which GPUs define for 32-bit floats only: use the kernel's \
             sin_real and cos_real, or run it on gpu (f32)",
            calls.join(", ")
        ),
    ))
}

/// One compiler message, its line counted from the custom force's first line where it
/// points into the custom force.
fn describe_message(message: &wgpu::CompilationMessage, first_custom_line: u32) -> String {
    // The first line says what is wrong; the rest draws the kernel's source around it, with
    // the kernel's line numbers, which would only confuse.
    let first = message
        .message
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or_default();
    let text = match first.strip_prefix("Shader '") {
        Some(rest) => rest.split_once("' ").map_or(first, |(_, what)| what),
        None => first,
    };
    match message.location {
        Some(at) if at.line_number >= first_custom_line => format!(
            "line {}, column {}: {text}",
            at.line_number - first_custom_line + 1,
            at.line_position
        ),
        Some(at) => format!(
            "kernel line {} (check custom_force's name and signature, and that no name clashes with the kernel's): {text}",
            at.line_number
        ),
        None => text.to_string(),
    }
}
