//! Finds the calls of WGSL built-ins that GLSL.std.450 defines only for 16- and 32-bit
//! floats (sin, cos, exp, pow, ...) made with f64 operands. naga accepts them without a word
//! and emits instructions whose results are NaN or garbage on f64, so the f64 kernel, and a
//! custom force compiled into it, must never make one.

use wgpu::naga;

/// The math functions GLSL.std.450 defines only for 16- and 32-bit floats.
fn is_32_bit_only(fun: naga::MathFunction) -> bool {
    use naga::MathFunction as M;
    matches!(
        fun,
        M::Cos
            | M::Cosh
            | M::Sin
            | M::Sinh
            | M::Tan
            | M::Tanh
            | M::Acos
            | M::Asin
            | M::Atan
            | M::Atan2
            | M::Asinh
            | M::Acosh
            | M::Atanh
            | M::Radians
            | M::Degrees
            | M::Exp
            | M::Exp2
            | M::Log
            | M::Log2
            | M::Pow
    )
}

/// The WGSL name of a math function, for messages.
fn wgsl_name(fun: naga::MathFunction) -> String {
    let debug = format!("{fun:?}");
    let mut name = String::new();
    for (i, c) in debug.chars().enumerate() {
        match i {
            0 => name.extend(c.to_lowercase()),
            _ => name.push(c),
        }
    }
    name
}

/// Each call in `source` of a 32-bit-only built-in with an f64 operand, as
/// `name (in function fn_name)`; empty if none. Errors if the source does not parse or
/// validate (the caller compiles it next and reports that properly).
pub(crate) fn f32_only_builtins_on_f64(source: &str) -> Result<Vec<String>, String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| e.emit_to_string(source))?;
    let mut found = Vec::new();
    let mut scan = |function: &naga::Function, function_info: &naga::valid::FunctionInfo| {
        for (handle, expression) in function.expressions.iter() {
            let naga::Expression::Math { fun, arg, .. } = *expression else {
                continue;
            };
            if !is_32_bit_only(fun) {
                continue;
            }
            let _ = handle;
            let operand = function_info[arg].ty.inner_with(&module.types);
            let is_f64 = operand
                .scalar()
                .is_some_and(|s| s.kind == naga::ScalarKind::Float && s.width == 8);
            if is_f64 {
                let name = function.name.as_deref().unwrap_or("?");
                found.push(format!("{} (in function {name})", wgsl_name(fun)));
            }
        }
    };
    for (handle, function) in module.functions.iter() {
        scan(function, &info[handle]);
    }
    for (index, entry) in module.entry_points.iter().enumerate() {
        scan(&entry.function, info.get_entry_point(index));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::gpu::kernel::kernel_spec::KernelSpec;
    use crate::backends::gpu::kernel::shader::plain_source;
    use crate::model::precision::Precision;
    use crate::physics::custom_force::CustomForce;
    use crate::physics::trace::Tracer;

    #[test]
    fn sin_of_an_f64_is_found_with_its_function() {
        let source = "fn wobble(x: f64) -> f64 { return sin(x) + sqrt(x); }";
        assert_eq!(
            f32_only_builtins_on_f64(source).unwrap(),
            vec!["sin (in function wobble)".to_string()]
        );
        let vector = "fn spread(v: vec3<f64>) -> vec3<f64> { return exp(v); }";
        assert_eq!(f32_only_builtins_on_f64(vector).unwrap().len(), 1);
    }

    #[test]
    fn sin_of_an_f32_is_fine() {
        let source = "fn wobble(x: f32) -> f32 { return sin(x) + pow(x, 2.0); }";
        assert!(f32_only_builtins_on_f64(source).unwrap().is_empty());
    }

    #[test]
    fn the_f64_kernel_calls_no_32_bit_only_built_in() {
        let source = |precision, custom_force: Option<&str>| {
            let custom = custom_force.map(|wgsl| CustomForce::gpu_only(wgsl, "custom_force"));
            plain_source(
                (Tracer::NATIVE, precision),
                &KernelSpec::general(),
                custom.as_ref(),
            )
            .0
        };
        let f64_source = source(Precision::F64, None);
        let with_drag = source(
            Precision::F64,
            Some(crate::verify::check_crowd::QUADRATIC_DRAG_WGSL),
        );
        // Neither kernel calls the built-in sin or cos any more: both precisions run the
        // definition's (core/src/physics/trig.rs). The scan's sharpness is the test above that
        // finds `sin` in an f64 function.
        let f32_source = source(Precision::F32, None);
        for kernel in [&f64_source, &with_drag, &f32_source] {
            assert_eq!(
                f32_only_builtins_on_f64(kernel).unwrap(),
                Vec::<String>::new()
            );
        }
        for builtin in [" sin(", " cos(", "(sin(", "(cos("] {
            assert!(
                !f32_source.contains(builtin),
                "the f32 kernel calls {builtin}"
            );
            assert!(
                !f64_source.contains(builtin),
                "the f64 kernel calls {builtin}"
            );
        }
    }
}
