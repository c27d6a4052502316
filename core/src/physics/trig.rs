//! `sin` and `cos` written out in the physics' own operations, so the CPU and the GPU compute
//! them the same way (the GPU's built-ins differ by driver, and WGSL has none in f64).
//! Cody–Waite reduction by quarter turns, then minimax polynomials on `[-pi/4, pi/4]`:
//! fdlibm's kernels in f64 (within 2 ulp of the true value for `|x| < 1e5`), Cephes'
//! single-precision kernels in f32.

// The coefficients are quoted as their sources publish them.
#![allow(clippy::excessive_precision)]

use super::scalar::Scalar;

/// `2 / pi`.
const TWO_OVER_PI: f64 = std::f64::consts::FRAC_2_PI;

/// `pi/2` in three pieces, the first ones short enough that `k * piece` is exact for every
/// quarter-turn count `k` the kernels meet (33 bits each in f64: `|k| < 2^20`; 8 and 11
/// bits in f32: `|k| < 2^13`).
#[inline(always)]
fn half_pi_pieces<R: Scalar>() -> [R; 3] {
    let pieces = if R::IS_F64 {
        [
            1.570_796_326_734_125_614_17e0,
            6.077_100_506_303_965_976_6e-11,
            2.022_266_248_711_166_455_8e-21,
        ]
    } else {
        [
            1.570_312_5,
            4.837_512_969_970_703_125e-4,
            7.549_789_954_891_882_16e-8,
        ]
    };
    pieces.map(R::constant)
}

/// `c0 + z (c1 + z (c2 + ...))`: Horner's scheme, highest coefficient innermost.
#[inline(always)]
fn horner<R: Scalar>(z: R, coefficients: &[f64]) -> R {
    let (last, rest) = coefficients
        .split_last()
        .expect("a polynomial has coefficients");
    rest.iter()
        .rev()
        .fold(R::constant(*last), |acc, &c| R::constant(c) + z * acc)
}

/// `sin r` for `|r| <= pi/4`.
#[inline(always)]
fn sin_kernel<R: Scalar>(r: R) -> R {
    let z = r * r;
    if R::IS_F64 {
        let tail = horner(
            z,
            &[
                8.333_333_333_322_489_461_24e-3,
                -1.984_126_982_985_794_931_34e-4,
                2.755_731_370_707_006_767_89e-6,
                -2.505_076_025_340_686_341_95e-8,
                1.589_690_995_211_550_102_21e-10,
            ],
        );
        r + r * z * (R::constant(-1.666_666_666_666_663_243_48e-1) + z * tail)
    } else {
        let p = horner(
            z,
            &[-1.666_665_461_1e-1, 8.332_160_873_6e-3, -1.951_529_589_1e-4],
        );
        r + r * z * p
    }
}

/// `cos r` for `|r| <= pi/4`.
#[inline(always)]
fn cos_kernel<R: Scalar>(r: R) -> R {
    let z = r * r;
    let half_z = R::constant(0.5) * z;
    let coefficients: &[f64] = if R::IS_F64 {
        &[
            4.166_666_666_666_660_190_37e-2,
            -1.388_888_888_887_410_957_49e-3,
            2.480_158_728_947_672_941_78e-5,
            -2.755_731_435_139_066_330_35e-7,
            2.087_572_321_298_174_827_9e-9,
            -1.135_964_755_778_819_482_65e-11,
        ]
    } else {
        &[
            4.166_664_568_298_827e-2,
            -1.388_731_625_493_765e-3,
            2.443_315_711_809_948e-5,
        ]
    };
    // Not fdlibm's `w + ((1 - w) - z/2 + ...)` with `w = 1 - z/2`, which carries the
    // rounding of `1 - z/2`: compilers free to fold `1 - (1 - z/2)` to `z/2` (Mesa is,
    // without `NoContraction`) would drop the carry.
    let p = horner(z, coefficients);
    (R::constant(1.0) - half_z) + z * z * p
}

/// `(sin x, cos x)`.
#[inline(always)]
pub fn sin_cos<R: Scalar>(x: R) -> (R, R) {
    let k = (x * R::constant(TWO_OVER_PI) + R::constant(0.5)).floor();
    let [high, mid, low] = half_pi_pieces::<R>();
    let r = ((x - k * high) - k * mid) - k * low;
    // k mod 4 in 0..4, exactly: k / 4 and its floor are exact for integers this small.
    let quadrant = k - (k * R::constant(0.25)).floor() * R::constant(4.0);
    let (s, c) = (sin_kernel(r), cos_kernel(r));
    let pick = |q0: R, q1: R, q2: R, q3: R| {
        let is = |n: f64| quadrant.equals(R::constant(n));
        R::select(
            is(0.0),
            q0,
            R::select(is(1.0), q1, R::select(is(2.0), q2, q3)),
        )
    };
    (pick(s, c, -s, -c), pick(c, -s, -c, s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::compare::largest;
    use crate::verify::xorshift::Xorshift64;

    /// Error in units of the precision's epsilon, relative away from zero, absolute near it.
    fn error(got: f64, expected: f64, epsilon: f64) -> f64 {
        (got - expected).abs() / (epsilon * expected.abs().max(0.25))
    }

    fn uniform(rng: &mut Xorshift64, span: f64) -> f64 {
        (rng.unit() * 2.0 - 1.0) * span
    }

    /// The largest error, in units of `epsilon`, over 50,000 arguments drawn in
    /// `[-span, span]`: `at` gives the argument it evaluated, its `(sin, cos)` and the exact
    /// ones.
    fn worst_ulps(
        rng: &mut Xorshift64,
        span: f64,
        epsilon: f64,
        at: impl Fn(f64) -> (f64, [f64; 2], [f64; 2]),
    ) -> f64 {
        let mut worst: f64 = 0.0;
        for _ in 0..50_000 {
            let (x, got, exact) = at(uniform(rng, span));
            let e = largest(
                error(got[0], exact[0], epsilon),
                error(got[1], exact[1], epsilon),
            );
            assert!(!e.is_nan(), "x = {x}: sin {}, cos {}", got[0], got[1]);
            worst = largest(worst, e);
        }
        worst
    }

    #[test]
    fn f64_sin_and_cos_are_within_two_ulps_of_the_correctly_rounded_ones() {
        let mut rng = Xorshift64(0x9e37_79b9_7f4a_7c15);
        for span in [1.0, 10.0, 1e3, 1e5] {
            let worst = worst_ulps(&mut rng, span, f64::EPSILON, |x| {
                let (s, c) = sin_cos(x);
                (x, [s, c], [x.sin(), x.cos()])
            });
            assert!(worst <= 2.0, "|x| <= {span:e}: {worst:.2} ulps");
        }
        assert_eq!(sin_cos(0.0_f64), (0.0, 1.0));
    }

    #[test]
    fn f32_sin_and_cos_are_within_two_ulps_for_arguments_up_to_ten_thousand() {
        let mut rng = Xorshift64(0x2545_f491_4f6c_dd1d);
        for span in [1.0, 10.0, 1e3, 1e4] {
            let worst = worst_ulps(&mut rng, span, f32::EPSILON as f64, |x| {
                let x = x as f32;
                let (s, c) = sin_cos(x);
                let exact = (x as f64).sin_cos();
                (x as f64, [s as f64, c as f64], [exact.0, exact.1])
            });
            assert!(worst <= 2.0, "|x| <= {span:e}: {worst:.2} ulps");
        }
    }

    #[test]
    fn every_quadrant_has_its_sign() {
        for (x, s, c) in [
            (1.0_f64, 1.0, 1.0),
            (2.0, 1.0, -1.0),
            (4.0, -1.0, -1.0),
            (5.5, -1.0, 1.0),
        ] {
            for x in [x, -x] {
                let (sin, cos) = sin_cos(x);
                let expected_sin = if x < 0.0 { -s } else { s };
                assert_eq!(sin.signum(), expected_sin, "sin {x}");
                assert_eq!(cos.signum(), c, "cos {x}");
            }
        }
    }
}
