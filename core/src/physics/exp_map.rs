//! The exponential map of rotation vectors onto unit quaternions, which `lie_rk4` and the
//! Lie–Poisson splittings turn the body with.

use super::algebra::{Quat, Vec3};
use super::scalar::Scalar;
use super::trig::sin_cos;

/// `|theta|` below which [`exp_rotation`] takes its Taylor series: there the dropped
/// `|theta|^6` terms are below the precision's round-off.
#[inline(always)]
pub fn exp_series_below<R: Scalar>() -> R {
    R::constant(if R::IS_F64 { 1e-3 } else { 1e-2 })
}

/// The unit quaternion of rotation vector `theta`,
/// `(cos(|theta|/2), sin(|theta|/2) theta/|theta|)`: the exponential map onto S^3.
#[inline(always)]
pub fn exp_rotation<R: Scalar>(theta: Vec3<R>) -> Quat<R> {
    let angle = theta.length();
    let a2 = angle * angle;
    let c = |v: f64| R::constant(v);
    let series_cos = c(1.0) - a2 / c(8.0) + a2 * a2 / c(384.0);
    let series_sin = c(0.5) - a2 / c(48.0) + a2 * a2 / c(3840.0);
    let (sin, cos) = sin_cos(c(0.5) * angle);
    // At angle 0 the quotient is NaN, and the series is selected. `sin (1/angle)`, not
    // `sin / angle`: compilers turn a quotient by a square root into a product with its
    // reciprocal square root (Mesa does), which rounds differently.
    let small = angle.less(exp_series_below());
    let cos_half = R::select(small, series_cos, cos);
    let sin_half_over_angle = R::select(small, series_sin, sin * (c(1.0) / angle));
    let v = theta * sin_half_over_angle;
    Quat::new(cos_half, v.x, v.y, v.z)
}
