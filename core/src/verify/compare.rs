//! The comparison every deviation is folded with.

/// The larger of `a` and `b`, and NaN if either is: a deviation that is NaN must fail every
/// comparison, where `f64::max` would return the other operand and hide it.
pub fn largest(a: f64, b: f64) -> f64 {
    if a.is_nan() || a >= b { a } else { b }
}
