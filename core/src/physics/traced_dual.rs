//! Dual numbers over the tracer with every operation a call, which the tangent kernels'
//! generators trace the physics over.
//!
//! [`Dual`]'s operations are inlined, as the CPU's lanes need. Traced over them, each
//! generator of a tangent kernel (a whole integrator step over duals) became one function of
//! tens of thousands of copies of dual arrays, and LLVM's memcpy optimization spent minutes
//! of every release build on the two of width 4. Out of line, each operation is compiled once
//! per precision and width. The operations are [`Dual`]'s own, called in the same order, so
//! the WGSL printed is the same, operation for operation.

use std::marker::PhantomData;
use std::ops::{Add, Div, Mul, Neg, Sub};

use super::dual::Dual;
use super::scalar::{Carried, FirstSweep, Scalar};
use super::trace::{Trace, Traced};

/// A [`Dual`] of width `W` over numbers traced in precision `F`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TracedDual<'t, F, const W: usize>(pub Dual<Traced<'t, F>, W>);

impl<'t, F: Scalar + Into<f64>, const W: usize> TracedDual<'t, F, W> {
    /// The WGSL expression `expression`, read in `trace`, along no direction.
    pub fn fixed(trace: &'t Trace, expression: &str) -> Self {
        Self(Dual::fixed(Traced::input(trace, expression)))
    }
}

macro_rules! out_of_line {
    ($trait:ident, $method:ident) => {
        impl<F: Scalar + Into<f64>, const W: usize> $trait for TracedDual<'_, F, W> {
            type Output = Self;
            #[inline(never)]
            fn $method(self, o: Self) -> Self {
                Self(self.0.$method(o.0))
            }
        }
    };
}
out_of_line!(Add, add);
out_of_line!(Sub, sub);
out_of_line!(Mul, mul);
out_of_line!(Div, div);

impl<F: Scalar + Into<f64>, const W: usize> Neg for TracedDual<'_, F, W> {
    type Output = Self;
    #[inline(never)]
    fn neg(self) -> Self {
        Self(-self.0)
    }
}

/// A value carried through a branch or a loop, seen as the [`Dual`]s it holds.
#[derive(Clone, Copy)]
struct AsDuals<V, F>(V, PhantomData<F>);

fn as_duals<V, F>(value: V) -> AsDuals<V, F> {
    AsDuals(value, PhantomData)
}

impl<'t, F: Scalar + Into<f64>, V: Carried<TracedDual<'t, F, W>>, const W: usize>
    Carried<Dual<Traced<'t, F>, W>> for AsDuals<V, F>
{
    fn push_scalars(&self, out: &mut Vec<Dual<Traced<'t, F>, W>>) {
        out.extend(self.0.to_scalars().into_iter().map(|d| d.0));
    }
    fn from_scalars(scalars: &mut impl Iterator<Item = Dual<Traced<'t, F>, W>>) -> Self {
        AsDuals(V::from_scalars(&mut scalars.map(TracedDual)), PhantomData)
    }
}

impl<'t, F: Scalar + Into<f64>, const W: usize> Scalar for TracedDual<'t, F, W> {
    type Bool = <Traced<'t, F> as Scalar>::Bool;
    const IS_F64: bool = F::IS_F64;

    fn constant(value: f64) -> Self {
        Self(Dual::constant(value))
    }
    #[inline(never)]
    fn sqrt(self) -> Self {
        Self(self.0.sqrt())
    }
    #[inline(never)]
    fn floor(self) -> Self {
        Self(self.0.floor())
    }
    #[inline(never)]
    fn less(self, other: Self) -> Self::Bool {
        self.0.less(other.0)
    }
    #[inline(never)]
    fn equals(self, other: Self) -> Self::Bool {
        self.0.equals(other.0)
    }
    #[inline(never)]
    fn select(condition: Self::Bool, if_true: Self, if_false: Self) -> Self {
        Self(Dual::select(condition, if_true.0, if_false.0))
    }
    fn not(condition: Self::Bool) -> Self::Bool {
        Dual::<Traced<'t, F>, W>::not(condition)
    }
    fn if_then<V: Carried<Self>>(condition: Self::Bool, value: V, then: impl FnOnce(V) -> V) -> V {
        let carried = AsDuals::<V, F>(value, PhantomData);
        Dual::<Traced<'t, F>, W>::if_then(condition, carried, |AsDuals(v, _)| {
            AsDuals(then(v), PhantomData)
        })
        .0
    }
    fn repeat<V: Carried<Self>>(times: u32, value: V, mut body: impl FnMut(V) -> V) -> V {
        let carried = AsDuals::<V, F>(value, PhantomData);
        Dual::<Traced<'t, F>, W>::repeat(times, carried, |AsDuals(v, _)| {
            AsDuals(body(v), PhantomData)
        })
        .0
    }
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
        let constants: Vec<_> = constants.iter().map(|&c| as_duals::<_, F>(c)).collect();
        let mut held: Vec<_> = accumulated.iter().map(|&a| as_duals::<_, F>(a)).collect();
        let shared = Dual::<Traced<'t, F>, W>::sweep_points(
            sweeps,
            as_duals::<_, F>(shared),
            &constants,
            &mut held,
            |s, c, a, first| {
                let (s, a) = turn(s.0, &c.0, a.0, first);
                (as_duals(s), as_duals(a))
            },
        );
        for (out, a) in accumulated.iter_mut().zip(held) {
            *out = a.0;
        }
        shared.0
    }
}
