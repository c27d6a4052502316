//! The storage a GPU simulation integrates in, opened to passes of the caller's own: draw
//! the crowd, or feed it to a kernel, without reading it back. The record layout is a
//! stable, versioned part of the API: [`layout_wgsl`] gives its WGSL declarations, cut
//! from the very source the integration kernel is compiled from.

use std::ops::Range;

use crate::backends::gpu::kernel::shader::{COMMON, layout_constants};
use crate::model::precision::Precision;

/// The version of the storage layout [`layout_wgsl`] declares. It changes whenever a field
/// of `BodyState` or `BodyConstants` moves or changes meaning; code that reads the buffers
/// can check it (the WGSL has it as `RIGID_CROWD_LAYOUT_VERSION`). Version 2: a healthy
/// body's `status` may also be `RESTING_STATUS`, a body the kernel found at rest.
pub const LAYOUT_VERSION: u32 = 2;

/// The structs of the layout, in the order they are declared.
const LAYOUT_STRUCTS: [&str; 2] = ["BodyState", "BodyConstants"];

/// One chunk of a GPU simulation's storage: the buffers of the contiguous run of bodies
/// `bodies` (a crowd larger than one storage binding is split into several chunks).
///
/// Record `k` of each buffer is body `bodies.start + k`. The buffers have `STORAGE`,
/// `VERTEX` and `COPY_SRC` usage: bind them read-only in a compute or render pass, as an
/// instance vertex buffer (f32 only), or copy them. Work submitted to the simulation's
/// queue after [`Simulation::step`](crate::Simulation::step) sees the states those steps
/// leave. Never write to them: the simulation owns them, and a write would be lost or
/// would corrupt the run.
#[derive(Clone, Debug)]
pub struct GpuChunk<'a> {
    /// Crowd indices of the chunk's bodies.
    pub bodies: Range<usize>,
    /// One `BodyState` per body (64 bytes in f32, 128 in f64), as the last step left it.
    pub states: &'a wgpu::Buffer,
    /// One `BodyConstants` per body (64 bytes in f32, 128 in f64), fixed for the run.
    pub constants: &'a wgpu::Buffer,
}

/// The WGSL declarations of the storage layout in `precision`: `BodyState` and
/// `BodyConstants` with their documentation, the constants their fields refer to
/// (`STEPS_PER_OVERFLOW`, `SHAPE_*`, `FORCE_*`) and `RIGID_CROWD_LAYOUT_VERSION`. Prepend it
/// to a shader of your own and bind a chunk's buffers as
/// `var<storage, read> states: array<BodyState>`.
///
/// Orientations are stored `x, y, z, w` (vector part first), the order WGSL quaternion code
/// uses; the host API hands them out `w, x, y, z`.
pub fn layout_wgsl(precision: Precision) -> String {
    let real = precision.wgsl_type();
    let structs: Vec<String> = LAYOUT_STRUCTS
        .iter()
        .map(|name| with_real(wgsl_struct(COMMON, name), real))
        .collect();
    format!(
        "// rigid-crowd storage layout, version {LAYOUT_VERSION}, {real}.\n\
         const RIGID_CROWD_LAYOUT_VERSION: u32 = {LAYOUT_VERSION}u;\n\
         {constants}\n{structs}",
        constants = layout_constants(),
        structs = structs.join("\n"),
    )
}

/// The declaration of struct `name` in `source`, with the doc comment above it.
fn wgsl_struct<'a>(source: &'a str, name: &str) -> &'a str {
    let header = format!("struct {name} {{");
    let start = source
        .find(&header)
        .unwrap_or_else(|| panic!("shaders/common.wgsl declares `{header}`"));
    let end = start + source[start..].find("\n}").expect("a struct ends") + "\n}\n".len();
    // Back over the doc comment's lines.
    let mut first = start;
    while let Some(line_start) = source[..first.saturating_sub(1)].rfind('\n') {
        if !source[line_start + 1..first].starts_with("///") {
            break;
        }
        first = line_start + 1;
    }
    &source[first..end]
}

/// `text` with every identifier `real` replaced by `ty`.
fn with_real(text: &str, ty: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    for c in text.chars().chain(std::iter::once('\n')) {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        out.push_str(if word == "real" { ty } else { &word });
        word.clear();
        out.push(c);
    }
    out.pop();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::gpu::kernel::layout::{BodyConstantsGpu, BodyStateGpu};
    use std::mem::offset_of;

    /// The published offsets, version 1's (version 2 gave `status` a value, not a place).
    /// A change here is a new layout: bump `LAYOUT_VERSION` and say so in the README.
    #[test]
    fn layout_version_2_keeps_the_offsets_of_version_1() {
        assert_eq!(LAYOUT_VERSION, 2);
        let state_f32 = [
            offset_of!(BodyStateGpu<f32>, position),
            offset_of!(BodyStateGpu<f32>, step_low),
            offset_of!(BodyStateGpu<f32>, orientation),
            offset_of!(BodyStateGpu<f32>, linear_momentum),
            offset_of!(BodyStateGpu<f32>, step_high),
            offset_of!(BodyStateGpu<f32>, angular_momentum),
            offset_of!(BodyStateGpu<f32>, status),
        ];
        assert_eq!(state_f32, [0, 12, 16, 32, 44, 48, 60]);
        let state_f64 = [
            offset_of!(BodyStateGpu<f64>, position),
            offset_of!(BodyStateGpu<f64>, step_low),
            offset_of!(BodyStateGpu<f64>, orientation),
            offset_of!(BodyStateGpu<f64>, linear_momentum),
            offset_of!(BodyStateGpu<f64>, step_high),
            offset_of!(BodyStateGpu<f64>, angular_momentum),
            offset_of!(BodyStateGpu<f64>, status),
        ];
        assert_eq!(state_f64, [0, 24, 32, 64, 88, 96, 120]);
        let constants_f32 = [
            offset_of!(BodyConstantsGpu<f32>, shape),
            offset_of!(BodyConstantsGpu<f32>, mass),
            offset_of!(BodyConstantsGpu<f32>, inv_mass),
            offset_of!(BodyConstantsGpu<f32>, inv_inertia),
            offset_of!(BodyConstantsGpu<f32>, force_first),
            offset_of!(BodyConstantsGpu<f32>, shape_kind),
            offset_of!(BodyConstantsGpu<f32>, own_kinds),
        ];
        assert_eq!(constants_f32, [0, 16, 20, 24, 48, 56, 60]);
        let constants_f64 = [
            offset_of!(BodyConstantsGpu<f64>, shape),
            offset_of!(BodyConstantsGpu<f64>, mass),
            offset_of!(BodyConstantsGpu<f64>, inv_mass),
            offset_of!(BodyConstantsGpu<f64>, inv_inertia),
            offset_of!(BodyConstantsGpu<f64>, force_first),
            offset_of!(BodyConstantsGpu<f64>, shape_kind),
            offset_of!(BodyConstantsGpu<f64>, own_kinds),
        ];
        assert_eq!(constants_f64, [0, 32, 40, 48, 96, 104, 108]);
    }

    #[test]
    fn the_layout_is_cut_from_the_kernels_own_source() {
        for precision in [Precision::F32, Precision::F64] {
            let wgsl = layout_wgsl(precision);
            let real = precision.wgsl_type();
            assert!(
                wgsl.contains(&format!("    position: vec3<{real}>,\n")),
                "{wgsl}"
            );
            assert!(wgsl.contains(&format!("    mass: {real},\n")), "{wgsl}");
            assert!(
                wgsl.contains("/// Momentum-form state of one body"),
                "{wgsl}"
            );
            assert!(
                !wgsl.contains("real>") && !wgsl.contains(": real"),
                "{wgsl}"
            );
            assert!(wgsl.contains("const RIGID_CROWD_LAYOUT_VERSION: u32 = 2u;"));
            assert!(
                !wgsl.contains("struct Plane"),
                "only the per-body records: {wgsl}"
            );
        }
    }

    #[test]
    fn only_the_identifier_real_is_replaced() {
        assert_eq!(
            with_real("a: real, b: vec3<real>, really: unreal", "f64"),
            "a: f64, b: vec3<f64>, really: unreal"
        );
    }
}
