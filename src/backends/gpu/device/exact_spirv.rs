//! The kernel as SPIR-V whose floating-point arithmetic the driver must evaluate as written.
//!
//! WGSL cannot say "exact", so naga's SPIR-V leaves every `+ - * /` free for the driver's
//! algebraic optimizer: Mesa, for one, rewrites `a*b + a*c` into `a*(b + c)`, `a/sqrt(b)`
//! into `a*rsqrt(b)` and `1 - (1 - z)` into `z`, each of which rounds differently from the
//! definition the CPU runs. SPIR-V's `NoContraction` decoration forbids exactly that (it is
//! GLSL's `precise`): an operation so marked is neither fused, reassociated nor folded. So
//! the kernel is compiled here with naga, as wgpu would, every floating-point arithmetic
//! result is marked `NoContraction`, and the module goes to the driver as it is
//! (`create_shader_module_passthrough`). On a driver that rounds `+ - * / sqrt` correctly
//! the GPU then computes the very bits of the CPU's definition.

use std::borrow::Cow;

use crate::backends::gpu::device::context::one_line;
use crate::model::error::{Error, Result};

/// SPIR-V opcodes of floating-point arithmetic whose result the decoration covers.
const FLOAT_ARITHMETIC: [u32; 12] = [
    127, // OpFNegate
    129, // OpFAdd
    131, // OpFSub
    133, // OpFMul
    136, // OpFDiv
    140, // OpFRem
    141, // OpFMod
    142, // OpVectorTimesScalar
    143, // OpMatrixTimesScalar
    144, // OpVectorTimesMatrix
    145, // OpMatrixTimesVector
    148, // OpDot
];
/// Annotation opcodes (SPIR-V's logical layout section 9): OpDecorate, OpMemberDecorate,
/// OpDecorationGroup, OpGroupDecorate, OpGroupMemberDecorate, OpDecorateId,
/// OpDecorateString, OpMemberDecorateString.
const ANNOTATIONS: [u32; 8] = [71, 72, 73, 74, 75, 332, 5632, 5633];
const OP_DECORATE: u32 = 71;
const OP_FUNCTION: u32 = 54;
const NO_CONTRACTION: u32 = 42;
const HEADER_WORDS: usize = 5;

/// How the kernel's checks are compiled: as `create_shader_module` would, or, for a kernel
/// whose indices and loops are proven bounded, as `create_shader_module_trusted` with
/// `ShaderRuntimeChecks::unchecked()` would.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Checks {
    Bounded,
    Trusted,
}

/// The compute entry point `entry_point` of `wgsl`, its pipeline overrides `constants`
/// applied, as SPIR-V words with every floating-point operation marked `NoContraction`.
pub(crate) fn compile(
    wgsl: &str,
    entry_point: &str,
    constants: &[(&str, f64)],
    checks: Checks,
) -> Result<Vec<u32>> {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        Error::Gpu(one_line(&format!(
            "compiling the kernel to exact SPIR-V: {what}: {e}"
        )))
    };
    dump_kernel(wgsl);
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| fail("parsing", &e))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::FLOAT64,
    )
    .validate(&module)
    .map_err(|e| fail("validating", &e.into_inner()))?;
    let mut overrides = naga::back::PipelineConstants::default();
    for &(name, value) in constants {
        overrides.insert(name.to_string(), value);
    }
    let stage = naga::ShaderStage::Compute;
    let (module, info) = naga::back::pipeline_constants::process_overrides(
        &module,
        &info,
        Some((stage, entry_point)),
        &overrides,
    )
    .map_err(|e| fail("applying the overrides", &e))?;
    let checked = match checks {
        Checks::Bounded => naga::proc::BoundsCheckPolicy::Restrict,
        Checks::Trusted => naga::proc::BoundsCheckPolicy::Unchecked,
    };
    let options = naga::back::spv::Options {
        lang_version: (1, 0),
        flags: naga::back::spv::WriterFlags::empty(),
        bounds_check_policies: naga::proc::BoundsCheckPolicies {
            index: checked,
            buffer: checked,
            image_load: checked,
            binding_array: naga::proc::BoundsCheckPolicy::Unchecked,
        },
        zero_initialize_workgroup_memory: naga::back::spv::ZeroInitializeWorkgroupMemoryMode::None,
        force_loop_bounding: checks == Checks::Bounded,
        ..naga::back::spv::Options::default()
    };
    let pipeline = naga::back::spv::PipelineOptions {
        shader_stage: stage,
        entry_point: entry_point.to_string(),
    };
    let words = naga::back::spv::write_vec(&module, &info, &options, Some(&pipeline))
        .map_err(|e| fail("writing SPIR-V", &e))?;
    mark_float_arithmetic_exact(&words).map_err(|e| fail("decorating", &e))
}

/// `words` with an `OpDecorate %r NoContraction` for the result `%r` of every
/// floating-point arithmetic instruction, placed after the module's other annotations.
pub(crate) fn mark_float_arithmetic_exact(words: &[u32]) -> std::result::Result<Vec<u32>, String> {
    if words.len() < HEADER_WORDS {
        return Err("shorter than a SPIR-V header".into());
    }
    let mut results = Vec::new();
    let mut annotations_end = None;
    let mut at = HEADER_WORDS;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        let opcode = words[at] & 0xffff;
        if count == 0 || at + count > words.len() {
            return Err(format!("malformed instruction at word {at}"));
        }
        if ANNOTATIONS.contains(&opcode) {
            annotations_end = Some(at + count);
        } else if opcode == OP_FUNCTION && annotations_end.is_none() {
            annotations_end = Some(at);
        }
        // Every arithmetic opcode above is `OpX %type %result ...`.
        if FLOAT_ARITHMETIC.contains(&opcode) && count >= 3 {
            results.push(words[at + 2]);
        }
        at += count;
    }
    let insert_at = annotations_end.ok_or("no annotation section and no function")?;
    let mut out = Vec::with_capacity(words.len() + 3 * results.len());
    out.extend_from_slice(&words[..insert_at]);
    for id in results {
        out.extend_from_slice(&[(3 << 16) | OP_DECORATE, id, NO_CONTRACTION]);
    }
    out.extend_from_slice(&words[insert_at..]);
    Ok(out)
}

/// A shader module from exact SPIR-V `words` with compute entry point `entry_point`.
///
/// # Safety
/// `words` must be a valid module for `device`, as [`compile`] writes it.
pub(crate) unsafe fn module(
    device: &wgpu::Device,
    label: &str,
    entry_point: &str,
    words: &[u32],
) -> wgpu::ShaderModule {
    let descriptor = wgpu::ShaderModuleDescriptorPassthrough {
        label: Some(label),
        entry_points: Cow::Owned(vec![wgpu::PassthroughShaderEntryPoint {
            name: Cow::Owned(entry_point.to_string()),
            workgroup_size: (1, 1, 1),
        }]),
        spirv: Some(Cow::Borrowed(words)),
        ..Default::default()
    };
    // SAFETY: the caller's promise; naga validated the module `words` came from.
    unsafe { device.create_shader_module_passthrough(descriptor) }
}

/// The compute pipeline of `entry_point` in the kernel `wgsl`, its overrides set to
/// `constants`, compiled to exact SPIR-V with `checks` ([`compile`]) and laid out as
/// `layout`; `what` names the kernel in an error.
///
/// # Safety
/// With [`Checks::Trusted`], every index the kernel forms must be in range and every loop
/// bounded by construction, as the caller proves for its kernel.
pub(crate) unsafe fn pipeline(
    device: &wgpu::Device,
    (wgsl, entry_point, constants, checks): (&str, &str, &[(&str, f64)], Checks),
    layout: &wgpu::PipelineLayout,
    what: &str,
) -> Result<wgpu::ComputePipeline> {
    let words = compile(wgsl, entry_point, constants, checks)?;
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    // SAFETY: `compile` validated the module; its indices are the caller's promise, or
    // checked.
    let module = unsafe { module(device, &format!("{entry_point}.spv"), entry_point, &words) };
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry_point),
        layout: Some(layout),
        module: &module,
        entry_point: Some(entry_point),
        // The overrides are set in the SPIR-V already.
        compilation_options: Default::default(),
        cache: None,
    });
    match pollster::block_on(scope.pop()) {
        Some(e) => Err(Error::Gpu(one_line(&format!("compiling {what}: {e}")))),
        None => Ok(pipeline),
    }
}

/// The variable naming a folder into which every kernel compiled is written, as
/// `<crc32>-<bytes>.wgsl`: how `scripts/kernels-compare.sh` sees whether a change to the
/// compiler changed the text of any kernel.
pub(crate) const DUMP_KERNELS: &str = "RIGID_CROWD_DUMP_KERNELS";

fn dump_kernel(wgsl: &str) {
    let Some(folder) = std::env::var_os(DUMP_KERNELS) else {
        return;
    };
    let name = format!(
        "{:08x}-{}.wgsl",
        crc32fast::hash(wgsl.as_bytes()),
        wgsl.len()
    );
    let path = std::path::Path::new(&folder).join(name);
    if let Err(e) = std::fs::write(&path, wgsl) {
        eprintln!(
            "warning: {DUMP_KERNELS}: could not write {}: {e}",
            path.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::gpu::kernel::kernel_spec::KernelSpec;
    use crate::backends::gpu::kernel::shader::kernel_source;
    use crate::backends::gpu::kernel::tangent_kernel::tangent_source;
    use crate::backends::gpu::options::GpuOptions;
    use crate::model::precision::Precision;
    use crate::physics::dual_wgsl::MovingNumbers;
    use std::collections::{BTreeMap, BTreeSet};

    /// wgpu's Vulkan backend numbers a bind group's bindings 0, 1, ... in the order of its
    /// layout's entries, and hands that map to naga for the shaders it compiles; the SPIR-V
    /// written here keeps the WGSL's numbers. So each entry point of every kernel must use,
    /// in each group, bindings numbered 0, 1, ... without a hole, as `bind_group_layout`
    /// numbers the layouts' (a list read at binding 2 with none at 1 read nothing on
    /// lavapipe).
    #[test]
    fn every_entry_points_bindings_are_numbered_from_0_without_a_hole() {
        let spec = KernelSpec::general();
        let plain = kernel_source(&GpuOptions::default(), &spec, None).0;
        let tangent = tangent_source(
            (Precision::F32, false),
            &spec,
            (1, MovingNumbers::ALL),
            None,
        );
        for (kernel, source) in [("plain", plain), ("tangent", tangent)] {
            let module = naga::front::wgsl::parse_str(&source).unwrap();
            let info = naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::FLOAT64,
            )
            .validate(&module)
            .unwrap();
            for (i, entry) in module.entry_points.iter().enumerate() {
                let used = info.get_entry_point(i);
                let mut groups: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
                for (handle, variable) in module.global_variables.iter() {
                    if let (false, Some(at)) = (used[handle].is_empty(), &variable.binding) {
                        groups.entry(at.group).or_default().insert(at.binding);
                    }
                }
                assert!(!groups.is_empty(), "{kernel} kernel, {}", entry.name);
                for (group, bindings) in &groups {
                    let from_0: BTreeSet<u32> = (0..bindings.len() as u32).collect();
                    assert_eq!(
                        bindings, &from_0,
                        "{kernel} kernel, {}, group {group}",
                        entry.name
                    );
                }
            }
        }
    }

    #[test]
    fn every_float_operation_is_decorated_once_after_the_annotations() {
        let source = "@group(0) @binding(0) var<storage, read_write> data: array<f32>;
            @compute @workgroup_size(1) fn main() {
                data[0] = data[1] * data[2] + data[1] * data[3] - data[4] / sqrt(data[5]);
            }";
        let words = compile(source, "main", &[], Checks::Bounded).unwrap();
        let mut decorated = Vec::new();
        let mut arithmetic = Vec::new();
        let mut at = HEADER_WORDS;
        while at < words.len() {
            let count = (words[at] >> 16) as usize;
            let opcode = words[at] & 0xffff;
            if opcode == OP_DECORATE && words[at + 2] == NO_CONTRACTION {
                assert!(arithmetic.is_empty(), "a decoration after the code");
                decorated.push(words[at + 1]);
            }
            if FLOAT_ARITHMETIC.contains(&opcode) {
                arithmetic.push(words[at + 2]);
            }
            at += count;
        }
        // Two products, one sum, one quotient, one difference.
        assert_eq!(arithmetic.len(), 5, "{arithmetic:?}");
        assert_eq!(decorated, arithmetic);
    }

    #[test]
    fn truncated_spirv_is_refused() {
        assert!(mark_float_arithmetic_exact(&[0x0723_0203, 0x0001_0000, 0, 10]).is_err());
        let mut words = vec![0x0723_0203, 0x0001_0000, 0, 10, 0];
        words.push((9 << 16) | OP_DECORATE);
        assert!(mark_float_arithmetic_exact(&words).is_err());
    }
}
