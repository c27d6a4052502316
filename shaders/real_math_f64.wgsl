// The finiteness and same-bits tests for `real = f64`. sin and cos are generated with the physics
// (core/src/physics/trig.rs): GLSL.std.450 defines the transcendental built-ins for 16- and 32-bit
// floats only, and naga emits them for f64 without a word, so an f64 kernel must never call
// them (a test in src/backends/gpu/kernel/builtins.rs fails if it does).

/// Whether every component is finite. WGSL has no bit cast of f64 to u32s; a NaN fails every
/// comparison and an infinity exceeds the largest finite f64 (the non-finite tests run the
/// f64 kernel too).
fn all_finite(v: vec4<real>) -> bool {
    return all(abs(v) <= vec4<real>(LARGEST_FINITE));
}

/// Whether `a` and `b` hold the same bits. `==` takes -0 for 0, and WGSL has no bit cast of
/// f64: the reciprocals of the zeros (-inf and inf) tell them apart. A NaN is never the same.
fn same_bits(a: vec4<real>, b: vec4<real>) -> bool {
    let one = vec4<real>(1.0);
    return all((a == b) & (one / a == one / b));
}
