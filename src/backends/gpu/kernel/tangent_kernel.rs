//! The source of the kernel that carries tangents: the integration kernel's source (its
//! storage, step clock and fault rules), the physics traced over dual numbers of one width
//! (`physics::dual_wgsl`), the generated visits of the integrators and force kinds, and the
//! plumbing of `shaders/integrate_tangents.wgsl`, whose entry point is `integrate_tangents`.

use crate::backends::gpu::kernel::kernel_spec::KernelSpec;
use crate::backends::gpu::kernel::shader::{INTEGRATE_TANGENTS, integrate_source};
use crate::model::codes::Coded;
use crate::model::force::ForceType;
use crate::model::integrator::Integrator;
use crate::model::precision::Precision;
use crate::physics::dual_wgsl::dual_physics_wgsl;

/// The widths of the GPU's dual blocks: a driver inlines the physics over duals at every
/// stage of the step, and a block of 16 (17 numbers for each) made lavapipe's compile of
/// the cross-check crowd's kernel run for minutes; blocks of 4 compile in seconds.
pub(crate) const GPU_WIDTHS: [usize; 2] = [1, 4];

/// The entry point of the tangent kernel.
pub(crate) const ENTRY_POINT: &str = "integrate_tangents";

/// The tangent kernel's source in `precision` for blocks of `width` directions (one of
/// [`GPU_WIDTHS`]), beside the plain kernel of `spec`: with the cases of `spec`'s
/// integrators and force kinds only, as the plain kernel has (a driver inlines every call,
/// and each case is the physics over duals at every stage).
pub(crate) fn tangent_source(precision: Precision, spec: &KernelSpec, width: usize) -> String {
    let (plain, _) = integrate_source(precision, spec, None);
    let dual = match (precision, width) {
        (Precision::F32, 1) => dual_physics_wgsl::<f32, 1>(),
        (Precision::F32, 4) => dual_physics_wgsl::<f32, 4>(),
        (Precision::F64, 1) => dual_physics_wgsl::<f64, 1>(),
        (Precision::F64, 4) => dual_physics_wgsl::<f64, 4>(),
        _ => panic!("GPU tangent blocks are compiled in widths {GPU_WIDTHS:?}, not {width}"),
    };
    [
        plain.as_str(),
        &dual,
        &scheme_wgsl(spec.integrators()),
        &force_visit_wgsl(&spec.force_kinds()),
        INTEGRATE_TANGENTS,
    ]
    .join("\n")
}

/// `dual_scheme_step`: the step of the crowd's integrator (`params.integrator`); an unknown
/// code is reported as the plain kernel reports it.
fn scheme_wgsl(integrators: &[Integrator]) -> String {
    let cases: String = integrators
        .iter()
        .map(|integrator| {
            format!(
                "        case {}: {{\n            next = dual_{}_step(s, c, t, h, index);\n        }}\n",
                integrator.wgsl_constant(),
                integrator.name()
            )
        })
        .collect();
    format!(
        "/// One step of the crowd's integrator over duals, before q is renormalized.\n\
         fn dual_scheme_step(s: DualMotion, c: DualConstants, t: real, h: real, index: u32) \
         -> DualMotion {{\n    var next = s;\n    switch params.integrator {{\n{cases}        \
         default: {{\n            atomicMin(&faults.first_unknown_code, params.first_body + index);\n        \
         }}\n    }}\n    return next;\n}}\n"
    )
}

/// `dual_add_force`: record `record`'s load added to `total`, by the record's kind; its
/// parameters come from the plumbing's `dual_parameters`, a keyframed record's scale from
/// `keyframe_scale`. A kind without code here (a custom force, which the host refuses) is
/// reported as unknown.
fn force_visit_wgsl(kinds: &[ForceType]) -> String {
    let mut cases = String::new();
    for &kind in kinds {
        let call = match kind {
            ForceType::Custom => continue,
            ForceType::Keyframed => "dual_add_keyframed(p, keyframe_scale(f.keyframe_first, \
                                     f.keyframe_count, t[0]), total)"
                .to_string(),
            _ => format!("dual_force_{}(p, s, c, aux, t, total)", kind.name()),
        };
        cases += &format!(
            "        case {}: {{\n            out = {call};\n        }}\n",
            kind.wgsl_constant()
        );
    }
    format!(
        "/// Record `record`'s force and torque over duals added to `total`.\n\
         fn dual_add_force(record: u32, s: DualMotion, c: DualConstants, aux: DualAuxiliaries, \
         t: DualReal, total: DualLoad, body: u32) -> DualLoad {{\n    let f = forces[record];\n    \
         let p = dual_parameters(record);\n    var out = total;\n    switch f.kind {{\n{cases}        \
         default: {{\n            atomicMin(&faults.first_unknown_code, body);\n        }}\n    }}\n    \
         return out;\n}}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::gpu::device::exact_spirv::{self, Checks};

    /// Every width compiles in both precisions to SPIR-V with exact arithmetic, from the
    /// general kernel's source (every integrator and force kind).
    #[test]
    fn every_width_compiles_in_both_precisions() {
        for precision in [Precision::F32, Precision::F64] {
            for width in GPU_WIDTHS {
                let source = tangent_source(precision, &KernelSpec::general(), width);
                let compiled = exact_spirv::compile(
                    &source,
                    ENTRY_POINT,
                    &[("workgroup_size", 64.0)],
                    Checks::Bounded,
                );
                assert!(
                    compiled.is_ok(),
                    "{precision:?} width {width}: {compiled:?}"
                );
            }
        }
    }
}
