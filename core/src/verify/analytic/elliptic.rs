//! Jacobi elliptic functions and the complete elliptic integral of the first kind, by the
//! arithmetic-geometric mean (Abramowitz & Stegun 16.4 and 17.6).

use std::f64::consts::FRAC_PI_2;

/// `sn`, `cn` and `dn` of one argument and parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JacobiElliptic {
    /// `sn(u | m) = sin(am u)`.
    pub sn: f64,
    /// `cn(u | m) = cos(am u)`.
    pub cn: f64,
    /// `dn(u | m) = sqrt(1 - m sn^2)`.
    pub dn: f64,
}

/// AGM steps beyond which the sequence has long converged: the error squares every step,
/// so for `m < 1` a dozen steps reach f64 round-off.
const MAX_AGM_STEPS: usize = 64;

/// The AGM sequence from `a0 = 1`, `b0 = sqrt(1 - m)`, `c0 = sqrt(m)` (A&S 16.4.1), as the
/// pairs `(a_n, c_n)` until `c_n` is negligible against `a_n`.
fn agm_sequence(m: f64) -> Vec<(f64, f64)> {
    let (mut a, mut b) = (1.0f64, (1.0 - m).sqrt());
    let mut steps = vec![(a, m.sqrt())];
    while steps.len() < MAX_AGM_STEPS && steps[steps.len() - 1].1 > f64::EPSILON * a {
        let c = 0.5 * (a - b);
        (a, b) = (0.5 * (a + b), (a * b).sqrt());
        steps.push((a, c));
    }
    steps
}

/// The Jacobi elliptic functions `sn`, `cn`, `dn` of argument `u` and parameter
/// `m = k^2` in `[0, 1]`, by the descending Landen transformation (A&S 16.4.3).
/// `m = 0` gives `(sin u, cos u, 1)`, `m = 1` gives `(tanh u, sech u, sech u)`.
/// Returns NaN in every field for `m` outside `[0, 1]` or a non-finite `u`.
pub fn jacobi_elliptic(u: f64, m: f64) -> JacobiElliptic {
    if !(0.0..=1.0).contains(&m) || !u.is_finite() {
        return JacobiElliptic {
            sn: f64::NAN,
            cn: f64::NAN,
            dn: f64::NAN,
        };
    }
    if m == 1.0 {
        // The AGM of (1, 0) never converges; the limit is closed-form.
        let sech = 1.0 / u.cosh();
        return JacobiElliptic {
            sn: u.tanh(),
            cn: sech,
            dn: sech,
        };
    }
    let steps = agm_sequence(m);
    let n = steps.len() - 1;
    if n == 0 {
        // m below f64 round-off: sn = sin u to round-off.
        return JacobiElliptic {
            sn: u.sin(),
            cn: u.cos(),
            dn: ((1.0 - m) + m * u.cos().powi(2)).sqrt(),
        };
    }
    // phi_N = 2^N a_N u, then phi_{n-1} = (phi_n + asin(c_n / a_n sin phi_n)) / 2.
    let mut phi = 2f64.powi(n as i32) * steps[n].0 * u;
    for &(a, c) in steps[1..].iter().rev() {
        phi = 0.5 * (phi + (c / a * phi.sin()).asin());
    }
    let (sn, cn) = phi.sin_cos();
    JacobiElliptic {
        sn,
        cn,
        // NOTE: not A&S's cos(phi_0) / cos(phi_1 - phi_0), which is 0/0 at u = K and loses
        // digits near it; dn^2 = (1 - m) + m cn^2 adds two non-negative terms instead.
        dn: ((1.0 - m) + m * cn * cn).sqrt(),
    }
}

/// The complete elliptic integral of the first kind `K(m) = pi / (2 AGM(1, sqrt(1 - m)))`
/// (A&S 17.6), for `m` in `[0, 1]`: the quarter period of `sn` and `cn`. `K(1)` is
/// infinite; `m` outside `[0, 1]` gives NaN.
pub fn complete_elliptic_k(m: f64) -> f64 {
    if !(0.0..=1.0).contains(&m) {
        return f64::NAN;
    }
    if m == 1.0 {
        return f64::INFINITY;
    }
    let steps = agm_sequence(m);
    FRAC_PI_2 / steps[steps.len() - 1].0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A few ulps of quantities of size 1 after a dozen AGM steps and as many `asin`s.
    const ROUND_OFF: f64 = 1e-14;

    #[test]
    fn identities_hold_across_parameters_and_arguments() {
        for m in [0.0, 1e-20, 1e-6, 0.1, 0.5, 0.9, 0.999, 1.0 - 1e-9, 1.0] {
            for i in -40..=40 {
                let u = 0.37 * i as f64;
                let e = jacobi_elliptic(u, m);
                assert!(
                    (e.sn * e.sn + e.cn * e.cn - 1.0).abs() < ROUND_OFF,
                    "m {m} u {u}"
                );
                assert!(
                    (e.dn * e.dn + m * e.sn * e.sn - 1.0).abs() < ROUND_OFF,
                    "m {m} u {u}: {e:?}"
                );
            }
        }
    }

    #[test]
    fn values_match_tabulated_ones() {
        // sn, cn, dn(-14.06 | 1e-6) and (0.8 | 0.7), computed to 30 digits by mpmath.
        for (u, m, expected) in [
            (
                -14.06,
                1e-6,
                [
                    -0.997_023_839_259_518_6,
                    0.077_093_864_530_257_26,
                    0.999_999_502_971_608_5,
                ],
            ),
            (
                0.8,
                0.7,
                [
                    0.680_226_533_395_951_8,
                    0.733_001_953_110_717_2,
                    0.822_255_619_795_260_6,
                ],
            ),
        ] {
            let e = jacobi_elliptic(u, m);
            for (got, want) in [e.sn, e.cn, e.dn].into_iter().zip(expected) {
                assert!((got - want).abs() < ROUND_OFF, "u {u} m {m}: {e:?}");
            }
        }
    }

    #[test]
    fn parameter_limits_are_circular_and_hyperbolic() {
        for u in [-2.0, -0.3, 0.0, 0.7, 5.0] {
            let circular = jacobi_elliptic(u, 0.0);
            assert!((circular.sn - f64::sin(u)).abs() < ROUND_OFF);
            assert!((circular.cn - f64::cos(u)).abs() < ROUND_OFF);
            assert_eq!(circular.dn, 1.0);
            // Just below m = 1 the AGM path must agree with the closed form of m = 1:
            // the functions move by O(1 - m) there.
            let near = jacobi_elliptic(u, 1.0 - 1e-12);
            let limit = jacobi_elliptic(u, 1.0);
            assert!((limit.sn - u.tanh()).abs() < ROUND_OFF);
            assert!((near.sn - limit.sn).abs() < 1e-10, "{near:?} vs {limit:?}");
            assert!((near.cn - limit.cn).abs() < 1e-10);
            assert!((near.dn - limit.dn).abs() < 1e-10);
        }
    }

    #[test]
    fn derivatives_are_cn_dn_and_friends() {
        // d sn/du = cn dn, d cn/du = -sn dn, d dn/du = -m sn cn, by central differences
        // (error O(d^2) ~ 1e-10, round-off ~ 1e-16 / d ~ 1e-11).
        let (m, d) = (0.8, 1e-5);
        for i in 0..30 {
            let u = 0.29 * i as f64;
            let (lo, mid, hi) = (
                jacobi_elliptic(u - d, m),
                jacobi_elliptic(u, m),
                jacobi_elliptic(u + d, m),
            );
            let slope = |a: f64, b: f64| (b - a) / (2.0 * d);
            assert!((slope(lo.sn, hi.sn) - mid.cn * mid.dn).abs() < 1e-9);
            assert!((slope(lo.cn, hi.cn) + mid.sn * mid.dn).abs() < 1e-9);
            assert!((slope(lo.dn, hi.dn) + m * mid.sn * mid.cn).abs() < 1e-9);
        }
    }

    #[test]
    fn k_takes_its_tabulated_values_and_is_the_quarter_period() {
        // K(m) to 16 digits (A&S table 17.1; the lemniscate constant for m = 1/2).
        for (m, k) in [
            (0.0, FRAC_PI_2),
            (0.1, 1.612_441_348_720_219),
            (0.5, 1.854_074_677_301_372),
            (0.9, 2.578_092_113_348_173),
            (0.99, 3.695_637_362_989_875),
        ] {
            assert!((complete_elliptic_k(m) - k).abs() < 4e-15, "K({m})");
            let quarter = jacobi_elliptic(complete_elliptic_k(m), m);
            assert!((quarter.sn - 1.0).abs() < ROUND_OFF, "sn(K) = 1 at m {m}");
            assert!(quarter.cn.abs() < ROUND_OFF, "cn(K) = 0 at m {m}");
        }
        assert_eq!(complete_elliptic_k(1.0), f64::INFINITY);
        assert!(complete_elliptic_k(1.5).is_nan());
        assert!(jacobi_elliptic(0.3, -0.1).sn.is_nan());
    }
}
