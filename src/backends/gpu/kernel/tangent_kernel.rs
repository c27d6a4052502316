//! The source of the kernel that carries tangents: the integration kernel's source (its
//! storage, step clock and fault rules), the physics traced over dual numbers of one width
//! (`physics::dual_wgsl`), the generated visits of the integrators and force kinds, and the
//! plumbing of `shaders/integrate_tangents.wgsl`, whose entry point is `integrate_tangents`.

use crate::assembly::crowd::Crowd;
use crate::backends::gpu::kernel::kernel_spec::KernelSpec;
use crate::backends::gpu::kernel::shader::{INTEGRATE_TANGENTS, integrate_source};
use crate::body_steps::tangents::directions_of;
use crate::model::codes::Coded;
use crate::model::force::{ForceKind, ForceType};
use crate::model::integrator::Integrator;
use crate::model::precision::Precision;
use crate::model::shape::ShapeKind;
use crate::model::tangent::{Direction, TangentPlan};
use crate::physics::custom_force::CustomForce;
use crate::physics::dual_wgsl::{
    MovingInputs, TRACED_WIDTHS, dual_contact_wgsl, dual_physics_wgsl, with_moving_inputs,
};
use crate::physics::trace::f32_divisions_in_f64;

/// The widths of the GPU's dual blocks: those the physics over duals is traced in.
pub(crate) const GPU_WIDTHS: [usize; 2] = TRACED_WIDTHS;

/// The blocks a tangent kernel carries `k` directions in, none wider than `widest`
/// (`GpuOptions::widest_tangent_block`), chosen by the CPU's cost model.
pub(crate) fn gpu_blocks(k: usize, widest: usize) -> Vec<usize> {
    let widths: Vec<usize> = GPU_WIDTHS.into_iter().filter(|&w| w <= widest).collect();
    crate::body_steps::tangents::block_widths_among(k, &widths)
}

/// The directions of `plan` as they would be for a body under every force of `crowd`.
pub(crate) fn crowd_directions(plan: &TangentPlan, crowd: &Crowd) -> Vec<Option<Direction>> {
    let forces: Vec<&ForceKind> = crowd.forces.iter().map(|f| &f.kind).collect();
    let origins: Vec<usize> = (0..forces.len()).collect();
    directions_of(plan, &forces, &origins)
}

/// A block of a body's columns as a tangent kernel carries it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GpuBlock {
    /// The kernel's dual width (one of [`GPU_WIDTHS`]).
    pub width: usize,
    /// The columns it carries (at most `width`).
    pub columns: std::ops::Range<usize>,
    /// The inputs its columns move, for which its kernel is compiled.
    pub moving: MovingInputs,
}

/// The blocks of the columns `directions` (as `directions_of` gives them, a column that
/// moves nothing on these bodies `None`), none wider than `widest`: each with the inputs
/// its columns move. The Jacobian's blocks move none but the state.
pub(crate) fn gpu_blocks_of(directions: &[Option<Direction>], widest: usize) -> Vec<GpuBlock> {
    let mut first = 0;
    gpu_blocks(directions.len(), widest)
        .into_iter()
        .map(|width| {
            let columns = first..(first + width).min(directions.len());
            first = columns.end;
            let any = |moves: fn(&Direction) -> bool| {
                directions[columns.clone()].iter().flatten().any(moves)
            };
            let moving = MovingInputs {
                constants: any(|d| matches!(d, Direction::Mass | Direction::Inertia(_))),
                parameters: any(|d| matches!(d, Direction::Force { .. })),
                planes: any(|d| matches!(d, Direction::Plane { .. })),
            };
            GpuBlock {
                width,
                columns,
                moving,
            }
        })
        .collect()
}

/// The entry point of the tangent kernel.
pub(crate) const ENTRY_POINT: &str = "integrate_tangents";

/// The tangent kernel's source in `precision` for blocks of `width` directions (one of
/// [`GPU_WIDTHS`]), beside the plain kernel of `spec`: with the cases of `spec`'s
/// integrators and force kinds only, as the plain kernel has (a driver inlines every call,
/// and each case is the physics over duals at every stage). A crowd's custom force comes in
/// as its law traced over duals; one that is not a law has no case (the host refuses it).
/// Its f32 divisions and square roots are taken in f64 if `divisions_in_f64`
/// (`GpuOptions::f32_divisions_in_f64`); the inputs its block does not move are read as
/// fixed (`moving`).
pub(crate) fn tangent_source(
    (precision, divisions_in_f64): (Precision, bool),
    spec: &KernelSpec,
    (width, moving): (usize, MovingInputs),
    custom_force: Option<&CustomForce>,
) -> String {
    f32_divisions_in_f64(divisions_in_f64, || {
        with_moving_inputs(moving, || {
            traced_tangent_source(precision, spec, width, custom_force)
        })
    })
}

/// [`tangent_source`] in the divisions the trace is set to print.
fn traced_tangent_source(
    precision: Precision,
    spec: &KernelSpec,
    width: usize,
    custom_force: Option<&CustomForce>,
) -> String {
    let (plain, _) = integrate_source(precision, spec, None);
    let (dual, contact): (String, fn(&[ShapeKind]) -> String) = match (precision, width) {
        (Precision::F32, 1) => (dual_physics_wgsl::<f32, 1>(), dual_contact_wgsl::<f32, 1>),
        (Precision::F32, 4) => (dual_physics_wgsl::<f32, 4>(), dual_contact_wgsl::<f32, 4>),
        (Precision::F64, 1) => (dual_physics_wgsl::<f64, 1>(), dual_contact_wgsl::<f64, 1>),
        (Precision::F64, 4) => (dual_physics_wgsl::<f64, 4>(), dual_contact_wgsl::<f64, 4>),
        _ => panic!("GPU tangent blocks are compiled in widths {GPU_WIDTHS:?}, not {width}"),
    };
    let custom = custom_force.and_then(|custom| custom.dual_wgsl(precision, width));
    let contact = match spec.contacts() {
        true => contact(spec.shapes()),
        false => NO_DUAL_CONTACTS.to_string(),
    };
    [
        plain.as_str(),
        &dual,
        &contact,
        &scheme_wgsl(spec.integrators()),
        &force_visit_wgsl(spec, custom.is_some()),
        &custom.unwrap_or_default(),
        INTEGRATE_TANGENTS,
    ]
    .join("\n")
}

/// What a kernel without planes calls in the contact code it folds away.
const NO_DUAL_CONTACTS: &str = "fn dual_step_acceleration(start: DualMotion, next: DualMotion, \
c: DualConstants, h: real) -> DualVec3 {
    var zero: DualVec3;
    return zero;
}
fn dual_resolve_plane(s: DualMotion, c: DualConstants, shape_kind: u32, shape: vec4<real>, \
plane: DualPlane, acceleration: DualVec3, h: real) -> DualMotion {
    return s;
}
";

/// `dual_kernel_split_axes` (the principal axes, where an integrator splits) and
/// `dual_scheme_step`: the step of the crowd's integrator (`params.integrator`); an unknown
/// code is reported as the plain kernel reports it.
fn scheme_wgsl(integrators: &[Integrator]) -> String {
    let cases: String = integrators
        .iter()
        .map(|integrator| {
            format!(
                "        case {}: {{\n            next = dual_{}_step(s, c, axes, t, h, index);\n        }}\n",
                integrator.wgsl_constant(),
                integrator.name()
            )
        })
        .collect();
    let split_axes = if integrators.iter().any(|i| i.splits_the_rotation()) {
        "    return dual_split_axes(c);\n"
    } else {
        "    var unread: DualSplitAxes;\n    return unread;\n"
    };
    format!(
        "/// The body's principal axes when a splitting integrator can run here, else never read.\n\
         fn dual_kernel_split_axes(c: DualConstants) -> DualSplitAxes {{\n{split_axes}}}\n\n\
         /// One step of the crowd's integrator over duals, before q is renormalized.\n\
         fn dual_scheme_step(s: DualMotion, c: DualConstants, axes: DualSplitAxes, t: real, \
         h: real, index: u32) \
         -> DualMotion {{\n    var next = s;\n    switch params.integrator {{\n{cases}        \
         default: {{\n            atomicMin(&faults.first_unknown_code, params.first_body + index);\n        \
         }}\n    }}\n    return next;\n}}\n"
    )
}

/// The call that adds a record of `kind` to `total`, with its `f` and `p` (parameters from
/// the plumbing's `dual_parameters`) in scope: a keyframed record's scale from
/// `keyframe_scale`, a custom force's load from its law's `dual_custom_force` where
/// `custom_law`. `None` for a kind without code here (a custom force without a law, which
/// the host refuses).
fn force_call(kind: ForceType, custom_law: bool) -> Option<String> {
    Some(match kind {
        ForceType::Custom if custom_law => "dual_custom_force(s, c, aux, t, body, total)".into(),
        ForceType::Custom => return None,
        ForceType::Keyframed => {
            "dual_add_keyframed(p, keyframe_scale(f.keyframe_first, f.keyframe_count, t[0]), \
             total)"
                .into()
        }
        _ => format!("dual_force_{}(p, s, c, aux, t, total)", kind.name()),
    })
}

/// `dual_add_force`, record `record`'s load added to `total` by the record's kind (a kind
/// without code is reported as unknown), and `dual_add_global_forces`, every global
/// record's: called one by one where the plain kernel calls them so (their kinds known when
/// the kernel is built, so no switch holds every kind's dual code in the loop), else in a
/// loop over `dual_add_force`.
fn force_visit_wgsl(spec: &KernelSpec, custom_law: bool) -> String {
    let mut cases = String::new();
    for kind in spec.force_kinds() {
        if let Some(call) = force_call(kind, custom_law) {
            cases += &format!(
                "        case {}: {{\n            out = {call};\n        }}\n",
                kind.wgsl_constant()
            );
        }
    }
    let globals = match spec.global_calls() {
        Some(kinds) => kinds
            .iter()
            .enumerate()
            .map(|(i, &kind)| match force_call(kind, custom_law) {
                Some(call) => format!(
                    "    {{\n        let f = forces[{i}u];\n        let p = dual_parameters({i}u);\n        \
                     let total = out;\n        out = {call};\n    }}\n"
                ),
                None => "    atomicMin(&faults.first_unknown_code, body);\n".to_string(),
            })
            .collect(),
        None => "    for (var i = 0u; i < params.global_force_count; i++) {\n        \
                 out = dual_add_force(i, s, c, aux, t, out, body);\n    }\n"
            .to_string(),
    };
    format!(
        "/// Record `record`'s force and torque over duals added to `total`.\n\
         fn dual_add_force(record: u32, s: DualMotion, c: DualConstants, aux: DualAuxiliaries, \
         t: DualReal, total: DualLoad, body: u32) -> DualLoad {{\n    let f = forces[record];\n    \
         let p = dual_parameters(record);\n    var out = total;\n    switch f.kind {{\n{cases}        \
         default: {{\n            atomicMin(&faults.first_unknown_code, body);\n        }}\n    }}\n    \
         return out;\n}}\n\n\
         /// The force and torque over duals of every force acting on all bodies added to `total`.\n\
         fn dual_add_global_forces(s: DualMotion, c: DualConstants, aux: DualAuxiliaries, \
         t: DualReal, total: DualLoad, body: u32) -> DualLoad {{\n    var out = total;\n\
         {globals}    return out;\n}}\n"
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
                let source = tangent_source(
                    (precision, false),
                    &KernelSpec::general(),
                    (width, MovingInputs::ALL),
                    None,
                );
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

    /// Under `f32_divisions_in_f64` every division and square root of the f32 tangent kernel,
    /// on values and on derivatives, is taken in f64, and the kernel still compiles.
    #[test]
    fn f32_tangent_kernels_divide_in_f64_when_asked() {
        for width in GPU_WIDTHS {
            let source = tangent_source(
                (Precision::F32, true),
                &KernelSpec::general(),
                (width, MovingInputs::ALL),
                None,
            );
            let divisions: Vec<&str> = source
                .lines()
                .filter(|l| l.trim_start().starts_with("let "))
                .filter(|l| l.contains(" / ") || l.contains("sqrt("))
                .collect();
            assert!(divisions.len() > 100, "width {width}: {}", divisions.len());
            for line in &divisions {
                let widened = line.contains("f32(f64(") || line.contains("f32(sqrt(f64(");
                assert!(widened, "width {width}: {line}");
            }
            let compiled = exact_spirv::compile(
                &source,
                ENTRY_POINT,
                &[("workgroup_size", 64.0)],
                Checks::Bounded,
            );
            assert!(compiled.is_ok(), "width {width}: {compiled:?}");
        }
    }

    /// The Jacobian's 13 directions go in blocks of 4 and a 1 by default, in 13 blocks of 1
    /// when no block may be wider; every direction is carried once either way.
    #[test]
    fn blocks_are_no_wider_than_asked() {
        let fours = gpu_blocks(13, 4);
        assert!(fours.contains(&4) && fours.iter().all(|w| GPU_WIDTHS.contains(w)));
        assert!(fours.iter().sum::<usize>() >= 13 && fours.len() < 13);
        assert_eq!(gpu_blocks(13, 1), vec![1; 13]);
        assert_eq!(gpu_blocks(1, 4), vec![1]);
    }
}
