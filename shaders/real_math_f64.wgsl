// The math the kernels need beyond + - * / and sqrt, for `real = f64`. GLSL.std.450 defines
// sin, cos, exp and the other transcendental built-ins for 16- and 32-bit floats only, and
// naga emits them for f64 without a word, so an f64 kernel must never call them (a test in
// src/gpu/builtins.rs fails if it does): sin and cos are written out here in exact f64
// arithmetic. Twin of shaders/real_math_f32.wgsl; accuracy measured in src/gpu/shader.rs.

// pi/2 in three pieces of 33 bits: k * piece is exact for |k| < 2^20 (|x| < 1.6e6), so the
// reduced argument keeps full precision (Cody and Waite).
const PIO2_HIGH: real = 1.57079632673412561417e+00;
const PIO2_MID: real = 6.07710050630396597660e-11;
const PIO2_LOW: real = 2.02226624871116645580e-21;
const TWO_OVER_PI: real = 6.36619772367581382433e-01;

/// x - k pi/2 with k the nearest integer to x 2/pi, and k mod 4.
struct Reduced {
    r: real,
    quadrant: u32,
}

fn reduce_quarter_turns(x: real) -> Reduced {
    let k = floor(x * TWO_OVER_PI + real(0.5));
    let r = ((x - k * PIO2_HIGH) - k * PIO2_MID) - k * PIO2_LOW;
    return Reduced(r, u32(i32(k) & 3));
}

/// sin on [-pi/4, pi/4]: odd minimax polynomial (coefficients of fdlibm's kernel).
fn sin_kernel(x: real) -> real {
    let z = x * x;
    let tail = real(8.33333333332248946124e-03) + z * (real(-1.98412698298579493134e-04)
        + z * (real(2.75573137070700676789e-06) + z * (real(-2.50507602534068634195e-08)
        + z * real(1.58969099521155010221e-10))));
    return x + x * z * (real(-1.66666666666666324348e-01) + z * tail);
}

/// cos on [-pi/4, pi/4]: even minimax polynomial, 1 - z/2 summed so the rounding of
/// 1 - z/2 is carried (as fdlibm's kernel does).
fn cos_kernel(x: real) -> real {
    let z = x * x;
    let r = z * z * (real(4.16666666666666019037e-02) + z * (real(-1.38888888888741095749e-03)
        + z * (real(2.48015872894767294178e-05) + z * (real(-2.75573143513906633035e-07)
        + z * (real(2.08757232129817482790e-09) + z * real(-1.13596475577881948265e-11))))));
    let half_z = real(0.5) * z;
    let w = real(1.0) - half_z;
    return w + (((real(1.0) - w) - half_z) + r);
}

fn sin_real(x: real) -> real {
    let reduced = reduce_quarter_turns(x);
    let s = sin_kernel(reduced.r);
    let c = cos_kernel(reduced.r);
    switch reduced.quadrant {
        case 0u: { return s; }
        case 1u: { return c; }
        case 2u: { return -s; }
        default: { return -c; }
    }
}

fn cos_real(x: real) -> real {
    let reduced = reduce_quarter_turns(x);
    let s = sin_kernel(reduced.r);
    let c = cos_kernel(reduced.r);
    switch reduced.quadrant {
        case 0u: { return c; }
        case 1u: { return -s; }
        case 2u: { return -c; }
        default: { return s; }
    }
}

/// Whether every component is finite. WGSL has no bit cast of f64 to u32s; a NaN fails every
/// comparison and an infinity exceeds the largest finite f64 (the non-finite tests run the
/// f64 kernel too).
fn all_finite(v: vec4<real>) -> bool {
    return all(abs(v) <= vec4<real>(LARGEST_FINITE));
}
