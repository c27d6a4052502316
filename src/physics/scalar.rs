//! The number type the physics is written over: `f64` (the reference and `gpu-f64`), `f32`
//! (`gpu`) and [`Traced`](super::trace::Traced) (which prints what it computes as WGSL).
//! Only the operations IEEE 754 rounds correctly appear here (`+ - * /`, `sqrt`, `floor`,
//! comparisons and a select), so the same operations in the same order give the same bits
//! on every backend that honours IEEE arithmetic.

use std::fmt::Debug;
use std::ops::{Add, Div, Mul, Neg, Sub};

/// A real number in one precision, as the physics sees it.
pub trait Scalar:
    Copy
    + Debug
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// The outcome of a comparison.
    type Bool: Copy;
    /// Whether the precision is f64 (constants and series that depend on it pick by this).
    const IS_F64: bool;

    /// `value` rounded to the precision.
    fn constant(value: f64) -> Self;
    /// The correctly rounded square root.
    fn sqrt(self) -> Self;
    /// The largest integer not above `self`.
    fn floor(self) -> Self;
    /// `self < other`.
    fn less(self, other: Self) -> Self::Bool;
    /// `self == other`.
    fn equals(self, other: Self) -> Self::Bool;
    /// `if_true` where `condition` holds, else `if_false`. Both are computed: the physics
    /// picks between values, never between paths, so every backend runs the same operations.
    fn select(condition: Self::Bool, if_true: Self, if_false: Self) -> Self;
}

/// The machine types: every operation is the hardware's own, correctly rounded.
macro_rules! machine_scalar {
    ($t:ty, $is_f64:literal) => {
        impl Scalar for $t {
            type Bool = bool;
            const IS_F64: bool = $is_f64;

            fn constant(value: f64) -> Self {
                value as $t
            }
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            fn less(self, other: Self) -> bool {
                self < other
            }
            fn equals(self, other: Self) -> bool {
                self == other
            }
            fn select(condition: bool, if_true: Self, if_false: Self) -> Self {
                if condition { if_true } else { if_false }
            }
        }
    };
}
machine_scalar!(f64, true);
machine_scalar!(f32, false);
