//! Forward-mode derivatives: a number that carries its value and its derivatives along `N`
//! directions. Each operation of [`Scalar`] is the chain rule written over the base type's
//! own operations, so the physics run over `Dual<f64, N>` gives the f64 run's values bit for
//! bit, with their tangents beside them; run over the tracer, it prints WGSL that computes
//! both.
//!
//! Where the physics branches (a [`select`](Scalar::select), a contact test), the tangent is
//! the taken side's: the derivative of the piecewise-smooth step, one-sided at a switch.
//!
//! A term whose derivative factor is zero by construction (a constant's, in a trace; see
//! [`Scalar::is_zero_by_construction`]) is left out, and a derivative with no term left is
//! that zero. Numbers computed at run time never are, so the CPU computes every term: an
//! `a 0` it adds is a zero of either sign, which can change the sign of a zero sum but never
//! a number. So the traced kernels agree with the CPU up to the sign of zeros, and the
//! tangents read out (every `-0` made `+0`) are the same bits.

use std::ops::{Add, Div, Mul, Neg, Sub};

use super::scalar::{Carried, FirstSweep, Scalar, sweep_in_turn};

/// The widths `N` that tangents run in (`body_steps::tangents` picks blocks of them per
/// count of directions; a force law has an instance for each). The state's 13 run in blocks
/// of 4, 4, 4 and 1: one block of 16 (17 f64 a number) measured slower than those four on
/// `cpu-ref` (17.6 against 14.3 plain runs): the three recomputations of the values it saves
/// cost less than the memory its wide numbers move.
pub(crate) const DUAL_WIDTHS: [usize; 2] = [1, 4];

/// The widths `N` that the `cpu` backend's tangents run in over lanes, `Dual<Lanes, N>`
/// (a force law has an instance for each). Each such number holds `N + 1` registers for eight
/// bodies: a block of 8 measured slower than two of 4, one of 5 no faster. A block of 2
/// carries the last two of ten columns (the Jacobian's without the position's) or of the
/// inertia's six in one run instead of two blocks of 1: 2% to 4% faster for the Jacobian and
/// 7% for the inertia (`rigid-crowd bench --backends cpu --bodies 1e5 --tangents
/// none,mass,inertia,state`, 2-core AMD EPYC).
pub(crate) const LANE_DUAL_WIDTHS: [usize; 3] = [1, 2, 4];

/// The widest dual any backend runs its tangents in: no block carries more columns.
pub(crate) const WIDEST_DUAL: usize = 4;
const _: () = assert!(DUAL_WIDTHS[1] <= WIDEST_DUAL && LANE_DUAL_WIDTHS[2] <= WIDEST_DUAL);

/// `value` and its derivative along each of `N` directions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dual<R, const N: usize> {
    pub value: R,
    pub tangent: [R; N],
}

impl<R: Scalar, const N: usize> Dual<R, N> {
    /// A number that does not move along any direction.
    #[inline(always)]
    pub fn fixed(value: R) -> Self {
        Self {
            value,
            tangent: [R::constant(0.0); N],
        }
    }

    /// `value` moving with derivative 1 along the directions `columns` (a bit each).
    #[inline(always)]
    pub fn seeded_along(value: R, columns: u8) -> Self {
        let mut d = Self::fixed(value);
        for (j, tangent) in d.tangent.iter_mut().enumerate() {
            if columns & 1 << j != 0 {
                *tangent = R::constant(1.0);
            }
        }
        d
    }

    /// `value` as the input that direction `direction` moves: its tangent is 1 there.
    #[cfg(test)]
    #[inline(always)]
    pub fn seeded(value: R, direction: usize) -> Self {
        let mut d = Self::fixed(value);
        d.tangent[direction] = R::constant(1.0);
        d
    }

    #[inline(always)]
    fn with(value: R, tangent: impl FnMut(usize) -> R) -> Self {
        Self {
            value,
            tangent: std::array::from_fn(tangent),
        }
    }
}

// Each operation below is the chain rule with every term, which every number type runs, and
// for a type that holds literals (the tracer) the same terms through these helpers, which
// leave out what is zero by construction. The two are kept apart: one generic form, whose
// helpers fold away for the CPU's types, still compiled the reference's 16-wide dual steps
// 12% to 29% slower (scripts/bench-compare.sh, 2-core AMD EPYC).

/// Whether `x` is zero by construction.
#[inline(always)]
fn zero<R: Scalar>(x: R) -> bool {
    R::HOLDS_LITERALS && x.is_zero_by_construction()
}

/// `a + b`.
#[inline(always)]
fn plus<R: Scalar>(a: R, b: R) -> R {
    match (zero(a), zero(b)) {
        (true, _) => b,
        (false, true) => a,
        (false, false) => a + b,
    }
}

/// `a - b`.
#[inline(always)]
fn minus<R: Scalar>(a: R, b: R) -> R {
    match (zero(a), zero(b)) {
        (_, true) => a,
        (true, false) => negated(b),
        (false, false) => a - b,
    }
}

/// `-a`.
#[inline(always)]
fn negated<R: Scalar>(a: R) -> R {
    if zero(a) { a } else { -a }
}

/// `a b`.
#[inline(always)]
fn product<R: Scalar>(a: R, b: R) -> R {
    match (zero(a), zero(b)) {
        (true, _) => a,
        (false, true) => b,
        (false, false) => a * b,
    }
}

/// `a / b`, for a numerator `a` (the divisors, values, are never zero by construction).
#[inline(always)]
fn quotient<R: Scalar>(a: R, b: R) -> R {
    if zero(a) { a } else { a / b }
}

impl<R: Scalar, const N: usize> Add for Dual<R, N> {
    type Output = Self;
    #[inline(always)]
    fn add(self, b: Self) -> Self {
        if !R::HOLDS_LITERALS {
            return Self::with(self.value + b.value, |i| self.tangent[i] + b.tangent[i]);
        }
        Self::with(self.value + b.value, |i| {
            plus(self.tangent[i], b.tangent[i])
        })
    }
}

impl<R: Scalar, const N: usize> Sub for Dual<R, N> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, b: Self) -> Self {
        if !R::HOLDS_LITERALS {
            return Self::with(self.value - b.value, |i| self.tangent[i] - b.tangent[i]);
        }
        Self::with(self.value - b.value, |i| {
            minus(self.tangent[i], b.tangent[i])
        })
    }
}

impl<R: Scalar, const N: usize> Neg for Dual<R, N> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        if !R::HOLDS_LITERALS {
            return Self::with(-self.value, |i| -self.tangent[i]);
        }
        Self::with(-self.value, |i| negated(self.tangent[i]))
    }
}

impl<R: Scalar, const N: usize> Mul for Dual<R, N> {
    type Output = Self;
    /// `(a b)' = a' b + a b'`.
    #[inline(always)]
    #[allow(clippy::suspicious_arithmetic_impl)] // the chain rule
    fn mul(self, b: Self) -> Self {
        if !R::HOLDS_LITERALS {
            return Self::with(self.value * b.value, |i| {
                self.tangent[i] * b.value + self.value * b.tangent[i]
            });
        }
        Self::with(self.value * b.value, |i| {
            plus(
                product(self.tangent[i], b.value),
                product(self.value, b.tangent[i]),
            )
        })
    }
}

impl<R: Scalar, const N: usize> Div for Dual<R, N> {
    type Output = Self;
    /// `(a / b)' = (a' - (a / b) b') / b`.
    #[inline(always)]
    #[allow(clippy::suspicious_arithmetic_impl)] // the chain rule
    fn div(self, b: Self) -> Self {
        let value = self.value / b.value;
        if !R::HOLDS_LITERALS {
            return Self::with(value, |i| {
                (self.tangent[i] - value * b.tangent[i]) / b.value
            });
        }
        Self::with(value, |i| {
            let numerator = minus(self.tangent[i], product(value, b.tangent[i]));
            quotient(numerator, b.value)
        })
    }
}

/// The scalars of a value carried through a branch or a loop, each dual number as its value
/// followed by its `N` tangents: what the base type's branch carries.
#[derive(Clone, Copy)]
struct Flat<V, const N: usize>(V);

impl<R: Scalar, V: Carried<Dual<R, N>>, const N: usize> Carried<R> for Flat<V, N> {
    fn push_scalars(&self, out: &mut Vec<R>) {
        for d in self.0.to_scalars() {
            out.push(d.value);
            out.extend(d.tangent);
        }
    }
    fn from_scalars(scalars: &mut impl Iterator<Item = R>) -> Self {
        let mut duals = std::iter::from_fn(|| {
            let value = scalars.next()?;
            let tangent = std::array::from_fn(|_| scalars.next().expect("N tangents a value"));
            Some(Dual { value, tangent })
        });
        Flat(V::from_scalars(&mut duals))
    }
}

impl<R: Scalar, const N: usize> Scalar for Dual<R, N> {
    type Bool = R::Bool;
    const IS_F64: bool = R::IS_F64;

    #[inline(always)]
    fn constant(value: f64) -> Self {
        Self::fixed(R::constant(value))
    }
    /// `sqrt(a)' = a' / (2 sqrt(a))`, and 0 at `a = 0`, where the physics takes square roots
    /// only of squared lengths that multiply what vanishes with them (`|v| v`).
    #[inline(always)]
    fn sqrt(self) -> Self {
        let root = self.value.sqrt();
        let zero = R::constant(0.0);
        let at_zero = root.equals(zero);
        if !R::HOLDS_LITERALS {
            return Self::with(root, |i| {
                R::select(at_zero, zero, self.tangent[i] / (root + root))
            });
        }
        Self::with(root, |i| match self::zero(self.tangent[i]) {
            true => self.tangent[i],
            false => R::select(at_zero, zero, self.tangent[i] / (root + root)),
        })
    }
    /// Piecewise constant: no tangent.
    #[inline(always)]
    fn floor(self) -> Self {
        Self::fixed(self.value.floor())
    }
    #[inline(always)]
    fn less(self, other: Self) -> Self::Bool {
        self.value.less(other.value)
    }
    #[inline(always)]
    fn equals(self, other: Self) -> Self::Bool {
        self.value.equals(other.value)
    }
    #[inline(always)]
    fn select(condition: Self::Bool, if_true: Self, if_false: Self) -> Self {
        if !R::HOLDS_LITERALS {
            return Self::with(R::select(condition, if_true.value, if_false.value), |i| {
                R::select(condition, if_true.tangent[i], if_false.tangent[i])
            });
        }
        Self::with(R::select(condition, if_true.value, if_false.value), |i| {
            let (t, f) = (if_true.tangent[i], if_false.tangent[i]);
            match zero(t) && zero(f) {
                true => t,
                false => R::select(condition, t, f),
            }
        })
    }
    #[inline(always)]
    fn not(condition: Self::Bool) -> Self::Bool {
        R::not(condition)
    }
    #[inline(always)]
    fn if_then<V: Carried<Self>>(condition: Self::Bool, value: V, then: impl FnOnce(V) -> V) -> V {
        R::if_then(condition, Flat::<V, N>(value), |Flat(v)| Flat(then(v))).0
    }
    #[inline(always)]
    fn repeat<V: Carried<Self>>(times: u32, value: V, mut body: impl FnMut(V) -> V) -> V {
        R::repeat(times, Flat::<V, N>(value), |Flat(v)| Flat(body(v))).0
    }
    /// The base type's sweeps over the flat values, where it holds literals (the tracer's
    /// loop); nested loops over the duals otherwise, as they always ran.
    #[inline(always)]
    fn sweep_points<S, C, A>(
        sweeps: u32,
        shared: S,
        constants: &[C],
        accumulated: &mut [A],
        mut turn: impl FnMut(S, &C, A, FirstSweep<Self::Bool>) -> (S, A),
    ) -> S
    where
        S: Carried<Self>,
        C: Carried<Self> + Copy,
        A: Carried<Self> + Copy,
    {
        if !R::HOLDS_LITERALS {
            return sweep_in_turn(sweeps, shared, constants, accumulated, turn);
        }
        let constants: Vec<Flat<C, N>> = constants.iter().map(|&c| Flat(c)).collect();
        let mut flat: Vec<Flat<A, N>> = accumulated.iter().map(|&a| Flat(a)).collect();
        let shared = R::sweep_points(
            sweeps,
            Flat(shared),
            &constants,
            &mut flat,
            |s, c, a, first| {
                let (s, a) = turn(s.0, &c.0, a.0, first);
                (Flat(s), Flat(a))
            },
        );
        for (out, a) in accumulated.iter_mut().zip(flat) {
            *out = a.0;
        }
        shared.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::trig::sin_cos;

    type D2 = Dual<f64, 2>;

    fn x_and_y(x: f64, y: f64) -> (D2, D2) {
        (D2::seeded(x, 0), D2::seeded(y, 1))
    }

    #[test]
    fn products_quotients_and_roots_follow_the_chain_rule() {
        let (x, y) = x_and_y(3.0, -2.0);
        // f = x y / sqrt(x^2 + y^2): df/dx = y^3 / r^3, df/dy = x^3 / r^3.
        let r2 = x * x + y * y;
        let f = x * y / r2.sqrt();
        let r3 = 13.0_f64.powf(1.5);
        assert_eq!(f.value, 3.0 * -2.0 / 13.0_f64.sqrt());
        assert!((f.tangent[0] - (-8.0 / r3)).abs() < 1e-15);
        assert!((f.tangent[1] - 27.0 / r3).abs() < 1e-15);
        let g = -(x - y) / y;
        // g = 1 - x / y: dg/dx = -1/y, dg/dy = x / y^2.
        assert_eq!(g.tangent, [0.5, 0.75]);
    }

    #[test]
    fn a_root_of_zero_has_no_tangent_and_a_floor_none() {
        let (x, _) = x_and_y(0.0, 1.0);
        assert_eq!((x * x).sqrt().tangent, [0.0, 0.0]);
        let (x, _) = x_and_y(2.5, 1.0);
        assert_eq!(x.floor(), D2::fixed(2.0));
    }

    #[test]
    fn sine_and_cosine_differentiate_to_each_other() {
        for angle in [-7.0, -1.2, 0.0, 0.3, 2.0, 40.0] {
            let (x, _) = x_and_y(angle, 0.0);
            let (sin, cos) = sin_cos(x);
            let (s, c) = sin_cos(angle);
            assert_eq!(
                (sin.value, cos.value),
                (s, c),
                "values are the f64 run's bits"
            );
            assert!((sin.tangent[0] - angle.cos()).abs() < 4e-16, "{angle}");
            assert!((cos.tangent[0] + angle.sin()).abs() < 4e-16, "{angle}");
        }
    }

    #[test]
    fn branches_and_loops_carry_the_taken_sides_tangents() {
        let (x, y) = x_and_y(2.0, 5.0);
        let bigger = D2::select(x.less(y), y, x);
        assert_eq!(bigger.tangent, [0.0, 1.0]);
        let squared = D2::if_then(x.less(y), x, |v| v * v);
        assert_eq!((squared.value, squared.tangent), (4.0, [4.0, 0.0]));
        let kept = D2::if_then(y.less(x), x, |v| v * v);
        assert_eq!(kept, x);
        // x^8 by three squarings: d/dx = 8 x^7.
        let (power, carried) = D2::repeat(3, (x, y), |(v, w)| (v * v, w));
        assert_eq!((power.value, power.tangent), (256.0, [1024.0, 0.0]));
        assert_eq!(carried, y);
    }
}
