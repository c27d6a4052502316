// The math the kernels need beyond + - * / and sqrt, for `real = f64`. GLSL.std.450 defines
// sin, cos, exp and the other transcendental built-ins for 16- and 32-bit floats only, and
// naga emits them for f64 without a word, so an f64 kernel must never call them: these are
// written out in exact f64 arithmetic. Twin of shaders/real_math_f32.wgsl.

fn sin_real(x: real) -> real {
    return x;
}

fn cos_real(x: real) -> real {
    return x;
}

/// Whether every component is finite. WGSL has no bit cast of f64 to u32s; a NaN fails every
/// comparison and an infinity exceeds the largest finite f64 (checked by the non-finite tests
/// on the f64 kernel).
fn all_finite(v: vec4<real>) -> bool {
    return all(abs(v) <= vec4<real>(LARGEST_FINITE));
}
