// The math the kernels need beyond + - * / and sqrt, for `real = f32`: the built-ins,
// exactly as the f32 kernel has always used them. Twin of shaders/real_math_f64.wgsl.

fn sin_real(x: real) -> real {
    return sin(x);
}

fn cos_real(x: real) -> real {
    return cos(x);
}

/// Whether every component is finite, judged on the bits (an exponent of all ones is NaN or
/// infinity): WGSL lets compilers assume floats are finite, so `x != x` may fold away.
fn all_finite(v: vec4<real>) -> bool {
    let exponent = vec4<u32>(0x7f800000u);
    return all((bitcast<vec4<u32>>(v) & exponent) != exponent);
}
