//! The number type the physics is written over: `f64` (the reference and `gpu-f64`), `f32`
//! (`gpu`) and [`Traced`](super::trace::Traced) (which prints what it computes as WGSL).
//! Only the operations IEEE 754 rounds correctly appear here (`+ - * /`, `sqrt`, `floor`,
//! comparisons and a select), so the same operations in the same order give the same bits
//! on every backend that honours IEEE arithmetic. Structured helpers carry the physics'
//! branches and loops ([`Scalar::if_then`], [`Scalar::repeat`], [`Scalar::sweep_points`]):
//! Rust's `if` and `for` on the CPU, WGSL's on the GPU.

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
    /// The negation of `condition`.
    fn not(condition: Self::Bool) -> Self::Bool;
    /// `then(value)` where `condition` holds, else `value`: a branch that skips work (a
    /// [`select`](Scalar::select) computes both sides).
    fn if_then<V: Carried<Self>>(condition: Self::Bool, value: V, then: impl FnOnce(V) -> V) -> V;
    /// `body` applied `times` times to `value`: a loop, not unrolled on the GPU.
    fn repeat<V: Carried<Self>>(times: u32, value: V, body: impl FnMut(V) -> V) -> V;
    /// Gauss–Seidel over points: `turn` applied to each point in order, `sweeps` times over.
    /// A turn reads `shared`, its point's `constants` and what the point `accumulated`, and
    /// whether it is in the first sweep, and hands out the new `shared` and the point's new
    /// accumulated values. Nested loops here; the tracer prints one loop over one point's
    /// code (`sweep_in_turn` is what it computes).
    #[inline(always)]
    fn sweep_points<S, C, A>(
        sweeps: u32,
        shared: S,
        constants: &[C],
        accumulated: &mut [A],
        turn: impl FnMut(S, &C, A, FirstSweep<Self::Bool>) -> (S, A),
    ) -> S
    where
        S: Carried<Self>,
        C: Carried<Self> + Copy,
        A: Carried<Self> + Copy,
    {
        sweep_in_turn(sweeps, shared, constants, accumulated, turn)
    }
    /// Whether values can be zero by construction ([`is_zero_by_construction`]): only the
    /// tracer's. For every other type the chain rule compiles to every term, as written.
    ///
    /// [`is_zero_by_construction`]: Scalar::is_zero_by_construction
    const HOLDS_LITERALS: bool = false;
    /// Whether the value is zero by construction, whatever the inputs: a literal the
    /// tracer holds. The chain rule of the dual numbers leaves out a term with
    /// such a factor. A number computed at run time never is.
    #[inline(always)]
    fn is_zero_by_construction(self) -> bool {
        false
    }
}

/// [`Scalar::sweep_points`] as nested loops: for each sweep, each point in order.
#[inline(always)]
pub fn sweep_in_turn<S, C, A: Copy, B>(
    sweeps: u32,
    mut shared: S,
    constants: &[C],
    accumulated: &mut [A],
    mut turn: impl FnMut(S, &C, A, FirstSweep<B>) -> (S, A),
) -> S {
    assert_eq!(constants.len(), accumulated.len(), "one constant per point");
    for sweep in 0..sweeps {
        for (constant, point) in constants.iter().zip(accumulated.iter_mut()) {
            (shared, *point) = turn(shared, constant, *point, FirstSweep::Known(sweep == 0));
        }
    }
    shared
}

/// Whether a turn of [`Scalar::sweep_points`] is in the first sweep over the points: known
/// where the sweeps are nested loops, a condition on the loop's counter where they are one
/// traced loop.
#[derive(Clone, Copy, Debug)]
pub enum FirstSweep<B> {
    Known(bool),
    AtRunTime(B),
}

impl<B: Copy> FirstSweep<B> {
    /// `then(value)` in the first sweep, `value` in the others: what a point computes once
    /// and keeps for the later sweeps, written once in a traced loop's body.
    #[inline(always)]
    pub fn then<R: Scalar<Bool = B>, V: Carried<R>>(
        self,
        value: V,
        then: impl FnOnce(V) -> V,
    ) -> V {
        match self {
            FirstSweep::Known(true) => then(value),
            FirstSweep::Known(false) => value,
            FirstSweep::AtRunTime(first) => R::if_then(first, value, then),
        }
    }
}

/// Values a branch or a loop carries: a fixed number of scalars of precision `R`.
pub trait Carried<R>: Sized {
    /// Appends the scalars, in a fixed order.
    fn push_scalars(&self, out: &mut Vec<R>);
    /// The value of the scalars `push_scalars` gave, read in the same order.
    fn from_scalars(scalars: &mut impl Iterator<Item = R>) -> Self;

    /// The scalars, in order.
    fn to_scalars(&self) -> Vec<R> {
        let mut out = Vec::new();
        self.push_scalars(&mut out);
        out
    }
}

impl<R: Scalar> Carried<R> for R {
    fn push_scalars(&self, out: &mut Vec<R>) {
        out.push(*self);
    }
    fn from_scalars(scalars: &mut impl Iterator<Item = R>) -> Self {
        scalars.next().expect("as many scalars as were pushed")
    }
}

impl<R, T: Carried<R>, const N: usize> Carried<R> for [T; N] {
    fn push_scalars(&self, out: &mut Vec<R>) {
        self.iter().for_each(|t| t.push_scalars(out));
    }
    fn from_scalars(scalars: &mut impl Iterator<Item = R>) -> Self {
        std::array::from_fn(|_| T::from_scalars(scalars))
    }
}

macro_rules! carried_tuple {
    ($($t:ident),+) => {
        impl<R, $($t: Carried<R>),+> Carried<R> for ($($t,)+) {
            #[allow(non_snake_case)]
            fn push_scalars(&self, out: &mut Vec<R>) {
                let ($($t,)+) = self;
                $($t.push_scalars(out);)+
            }
            fn from_scalars(scalars: &mut impl Iterator<Item = R>) -> Self {
                ($($t::from_scalars(scalars),)+)
            }
        }
    };
}
/// [`Carried`] for a struct over `R` whose fields are carried: their scalars in the order
/// the fields are listed (a struct expression evaluates its fields in the order written).
macro_rules! carried_struct {
    ($name:ident { $($field:ident),+ $(,)? }) => {
        impl<R: $crate::physics::scalar::Scalar> $crate::physics::scalar::Carried<R> for $name<R> {
            fn push_scalars(&self, out: &mut Vec<R>) {
                $($crate::physics::scalar::Carried::push_scalars(&self.$field, out);)+
            }
            fn from_scalars(scalars: &mut impl Iterator<Item = R>) -> Self {
                Self { $($field: $crate::physics::scalar::Carried::from_scalars(scalars),)+ }
            }
        }
    };
}
pub(crate) use carried_struct;

carried_tuple!(A, B);
carried_tuple!(A, B, C);
carried_tuple!(A, B, C, D);
carried_tuple!(A, B, C, D, E);
carried_tuple!(A, B, C, D, E, G);

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
            fn not(condition: bool) -> bool {
                !condition
            }
            fn if_then<V: Carried<Self>>(
                condition: bool,
                value: V,
                then: impl FnOnce(V) -> V,
            ) -> V {
                if condition { then(value) } else { value }
            }
            fn repeat<V: Carried<Self>>(times: u32, value: V, mut body: impl FnMut(V) -> V) -> V {
                (0..times).fold(value, |v, _| body(v))
            }
        }
    };
}
machine_scalar!(f64, true);
machine_scalar!(f32, false);
