// The finiteness and same-bits tests for `real = f32`. sin and cos are generated with the physics
// (core/src/physics/trig.rs), in f32 as in f64: the built-ins differ from driver to driver.

/// Whether every component is finite, judged on the bits (an exponent of all ones is NaN or
/// infinity): WGSL lets compilers assume floats are finite, so `x != x` may fold away.
fn all_finite(v: vec4<real>) -> bool {
    let exponent = vec4<u32>(0x7f800000u);
    return all((bitcast<vec4<u32>>(v) & exponent) != exponent);
}

/// Whether `a` and `b` hold the same bits (`==` takes -0 for 0).
fn same_bits(a: vec4<real>, b: vec4<real>) -> bool {
    return all(bitcast<vec4<u32>>(a) == bitcast<vec4<u32>>(b));
}
