//! Eight f32 lanes: the number type the `cpu` backend runs the physics over
//! ([`Scalar`]), so a block of eight bodies is the definition in `core/src/physics` applied to
//! eight bodies at once. Every operation is a plain loop over the lanes, which LLVM turns
//! into SIMD instructions, and each lane rounds as the f32 GPU kernel does.

use std::ops::{Add, Div, Mul, Neg, Sub};

use crate::physics::algebra::Vec3;
use crate::physics::dual::Dual;
use crate::physics::scalar::{Carried, Scalar};

/// Bodies per block: eight f32 lanes fill two SSE or one AVX register.
pub(crate) const LANES: usize = 8;

/// One f32 per body of a block, aligned so a block field is one aligned 256-bit load.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(align(32))]
pub(crate) struct Lanes(pub [f32; LANES]);

/// One comparison's outcome per lane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct LaneBools(pub [bool; LANES]);

/// A 3-vector per lane.
pub(crate) type Vec3Lanes = Vec3<Lanes>;

// NOTE: the indexed loops below are deliberate: LLVM turns them into whole-register
// operations, while zipped iterators measured about 25% slower.
#[allow(clippy::needless_range_loop)]
impl Lanes {
    #[inline(always)]
    pub fn splat(value: f32) -> Self {
        Self([value; LANES])
    }

    #[inline(always)]
    pub fn map(self, f: impl Fn(f32) -> f32) -> Self {
        let mut out = [0.0; LANES];
        for i in 0..LANES {
            out[i] = f(self.0[i]);
        }
        Self(out)
    }

    #[inline(always)]
    #[cfg_attr(target_arch = "x86_64", allow(dead_code))]
    pub(super) fn zip(self, other: Self, f: impl Fn(f32, f32) -> f32) -> Self {
        let mut out = [0.0; LANES];
        for i in 0..LANES {
            out[i] = f(self.0[i], other.0[i]);
        }
        Self(out)
    }

    #[inline(always)]
    fn compare(self, other: Self, f: impl Fn(f32, f32) -> bool) -> LaneBools {
        let mut out = [false; LANES];
        for i in 0..LANES {
            out[i] = f(self.0[i], other.0[i]);
        }
        LaneBools(out)
    }
}

/// A number type holding one f32 per lane of a block, which the block loop runs the physics
/// over: [`Lanes`] everywhere, and on x86-64 an AVX register inside the AVX2 clone. The
/// blocks are stored as [`Lanes`]; a run converts at its start and end.
pub(crate) trait LaneType: Scalar + From<Lanes> + Into<Lanes> {
    /// `value` in every lane.
    fn splat(value: f32) -> Self;
    /// `value` in every lane, moving along the columns `columns` (a bit each) with
    /// derivative 1: lanes without tangents have no columns.
    #[inline(always)]
    fn seeded(value: f32, columns: u8) -> Self {
        let _ = columns;
        Self::splat(value)
    }
    /// A condition that holds in lane `lane` only.
    fn lane_is(lane: usize) -> Self::Bool;
    /// The lanes where `holds` does, one bit each.
    fn mask(holds: Self::Bool) -> u8;
    /// The numbers' values alone: the type itself, or for lanes of duals the lanes under
    /// them. The fault rules judge values, and cost nothing more with tangents.
    type Values: LaneType<Bool = Self::Bool>;
    /// The values of `self`.
    fn values(self) -> Self::Values;
    /// The same numbers on [`Lanes`], the type a force law's lane instances take:
    /// [`Lanes`], or for lanes of duals duals over [`Lanes`], tangents kept.
    type OnLanes: Scalar + 'static;
    /// `self` on [`Lanes`].
    fn to_lanes(self) -> Self::OnLanes;
    /// `lanes` back in this type.
    fn from_lanes(lanes: Self::OnLanes) -> Self;
}

/// Dual numbers over lanes are lanes too: eight bodies' values, each with its tangents, which
/// the `cpu` backend's tangents run in. A number converted from [`Lanes`] moves along no
/// direction; one converted to [`Lanes`] is its values (what the keyframes' clock reads).
impl<L: LaneType, const N: usize> LaneType for Dual<L, N> {
    type Values = L;
    #[inline(always)]
    fn values(self) -> L {
        self.value
    }
    type OnLanes = Dual<L::OnLanes, N>;
    #[inline(always)]
    fn to_lanes(self) -> Self::OnLanes {
        Dual {
            value: self.value.to_lanes(),
            tangent: std::array::from_fn(|i| self.tangent[i].to_lanes()),
        }
    }
    #[inline(always)]
    fn from_lanes(lanes: Self::OnLanes) -> Self {
        Dual {
            value: L::from_lanes(lanes.value),
            tangent: std::array::from_fn(|i| L::from_lanes(lanes.tangent[i])),
        }
    }
    #[inline(always)]
    fn splat(value: f32) -> Self {
        Dual::fixed(L::splat(value))
    }
    #[inline(always)]
    fn seeded(value: f32, columns: u8) -> Self {
        Dual::seeded_along(L::splat(value), columns)
    }
    #[inline(always)]
    fn lane_is(lane: usize) -> L::Bool {
        L::lane_is(lane)
    }
    #[inline(always)]
    fn mask(holds: L::Bool) -> u8 {
        L::mask(holds)
    }
}

impl<L: LaneType, const N: usize> From<Lanes> for Dual<L, N> {
    #[inline(always)]
    fn from(lanes: Lanes) -> Self {
        Dual::fixed(L::from(lanes))
    }
}

impl<L: LaneType, const N: usize> From<Dual<L, N>> for Lanes {
    #[inline(always)]
    fn from(d: Dual<L, N>) -> Self {
        d.value.into()
    }
}

/// [`Scalar::if_then`] on lanes: every lane's `then` is computed where any lane needs it, and
/// each lane keeps its own outcome.
pub(crate) fn if_any_lane<L: LaneType, V: Carried<L>>(
    condition: L::Bool,
    value: V,
    then: impl FnOnce(V) -> V,
) -> V {
    if L::mask(condition) == 0 {
        return value;
    }
    let kept = value.to_scalars();
    let taken = then(value).to_scalars();
    let mut picked = kept
        .into_iter()
        .zip(taken)
        .map(|(kept, taken)| L::select(condition, taken, kept));
    V::from_scalars(&mut picked)
}

impl LaneType for Lanes {
    type Values = Self;
    #[inline(always)]
    fn values(self) -> Self {
        self
    }
    type OnLanes = Self;
    #[inline(always)]
    fn to_lanes(self) -> Self {
        self
    }
    #[inline(always)]
    fn from_lanes(lanes: Self) -> Self {
        lanes
    }
    #[inline(always)]
    fn splat(value: f32) -> Self {
        Lanes::splat(value)
    }
    #[inline(always)]
    fn lane_is(lane: usize) -> LaneBools {
        LaneBools(std::array::from_fn(|l| l == lane))
    }
    #[inline(always)]
    fn mask(holds: LaneBools) -> u8 {
        (0..LANES).fold(0, |mask, lane| mask | ((holds.0[lane] as u8) << lane))
    }
}

/// The four arithmetic operations and the square root lane by lane. On x86-64 they are
/// SSE instructions on two halves (SSE2 is in every x86-64 CPU, so they inline into every
/// clone): written as plain loops over eight floats, LLVM's SLP vectorizer regrouped the
/// floats of neighbouring fields into mixed registers and shuffles, which doubled the
/// derivative's instructions.
#[cfg(target_arch = "x86_64")]
mod ops {
    use super::Lanes;
    use std::arch::x86_64::{
        __m128, _mm_add_ps, _mm_div_ps, _mm_loadu_ps, _mm_mul_ps, _mm_sqrt_ps, _mm_storeu_ps,
        _mm_sub_ps,
    };

    #[inline(always)]
    fn halves(l: Lanes) -> (__m128, __m128) {
        // SAFETY: `l.0` holds eight floats: two unaligned loads of four read inside it.
        unsafe {
            (
                _mm_loadu_ps(l.0.as_ptr()),
                _mm_loadu_ps(l.0.as_ptr().add(4)),
            )
        }
    }

    #[inline(always)]
    fn join(low: __m128, high: __m128) -> Lanes {
        let mut out = Lanes::default();
        // SAFETY: two stores of four floats inside the eight of `out.0`.
        unsafe {
            _mm_storeu_ps(out.0.as_mut_ptr(), low);
            _mm_storeu_ps(out.0.as_mut_ptr().add(4), high);
        }
        out
    }

    /// `$name(a, b)`: SSE's `$intrinsic` on each half.
    macro_rules! sse_binary {
        ($name:ident, $intrinsic:ident) => {
            #[inline(always)]
            pub fn $name(a: Lanes, b: Lanes) -> Lanes {
                let ((a0, a1), (b0, b1)) = (halves(a), halves(b));
                // SAFETY: SSE is part of x86-64: every x86-64 CPU runs it.
                unsafe { join($intrinsic(a0, b0), $intrinsic(a1, b1)) }
            }
        };
    }
    sse_binary!(add, _mm_add_ps);
    sse_binary!(sub, _mm_sub_ps);
    sse_binary!(mul, _mm_mul_ps);
    sse_binary!(div, _mm_div_ps);

    #[inline(always)]
    pub fn sqrt(a: Lanes) -> Lanes {
        let (low, high) = halves(a);
        // SAFETY: SSE is part of x86-64: every x86-64 CPU runs it.
        unsafe { join(_mm_sqrt_ps(low), _mm_sqrt_ps(high)) }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod ops {
    use super::Lanes;

    /// `$name(a, b)`: `$op` lane by lane.
    macro_rules! scalar_binary {
        ($name:ident, $op:tt) => {
            #[inline(always)]
            pub fn $name(a: Lanes, b: Lanes) -> Lanes {
                a.zip(b, |x, y| x $op y)
            }
        };
    }
    scalar_binary!(add, +);
    scalar_binary!(sub, -);
    scalar_binary!(mul, *);
    scalar_binary!(div, /);

    #[inline(always)]
    pub fn sqrt(a: Lanes) -> Lanes {
        a.map(f32::sqrt)
    }
}

macro_rules! lane_operator {
    ($trait:ident, $method:ident) => {
        impl $trait for Lanes {
            type Output = Self;
            #[inline(always)]
            fn $method(self, rhs: Self) -> Self {
                ops::$method(self, rhs)
            }
        }
    };
}
lane_operator!(Add, add);
lane_operator!(Sub, sub);
lane_operator!(Mul, mul);
lane_operator!(Div, div);

impl Neg for Lanes {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        self.map(|a| -a)
    }
}

#[allow(clippy::needless_range_loop)]
impl Scalar for Lanes {
    type Bool = LaneBools;
    const IS_F64: bool = false;

    #[inline(always)]
    fn constant(value: f64) -> Self {
        Self::splat(value as f32)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        ops::sqrt(self)
    }
    #[inline(always)]
    fn floor(self) -> Self {
        self.map(f32::floor)
    }
    #[inline(always)]
    fn less(self, other: Self) -> LaneBools {
        self.compare(other, |a, b| a < b)
    }
    #[inline(always)]
    fn equals(self, other: Self) -> LaneBools {
        self.compare(other, |a, b| a == b)
    }
    #[inline(always)]
    fn select(condition: LaneBools, if_true: Self, if_false: Self) -> Self {
        // As bits, so LLVM blends registers: picking values made it store the chosen lanes
        // with a masked store, which later loads cannot forward from.
        let mut out = [0.0; LANES];
        for i in 0..LANES {
            let mask = 0u32.wrapping_sub(condition.0[i] as u32);
            out[i] =
                f32::from_bits((if_true.0[i].to_bits() & mask) | (if_false.0[i].to_bits() & !mask));
        }
        Self(out)
    }
    #[inline(always)]
    fn not(condition: LaneBools) -> LaneBools {
        let mut out = [false; LANES];
        for i in 0..LANES {
            out[i] = !condition.0[i];
        }
        LaneBools(out)
    }
    fn if_then<V: Carried<Self>>(condition: LaneBools, value: V, then: impl FnOnce(V) -> V) -> V {
        if_any_lane(condition, value, then)
    }
    #[inline(always)]
    fn repeat<V: Carried<Self>>(times: u32, value: V, mut body: impl FnMut(V) -> V) -> V {
        (0..times).fold(value, |v, _| body(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::algebra::Quat;

    fn lanes_of(f: impl Fn(usize) -> f32) -> Lanes {
        Lanes(std::array::from_fn(f))
    }

    /// Each lane of the physics on lanes is the physics in f32, bit for bit: the quaternion
    /// and matrix products of `core/src/physics` on eight bodies at once against one at a time.
    #[test]
    fn each_lane_computes_the_f32_definition_bit_for_bit() {
        let q = Quat::new(
            lanes_of(|i| 0.9 - 0.1 * i as f32),
            lanes_of(|i| 0.1 * i as f32),
            lanes_of(|i| -0.3 + 0.05 * i as f32),
            Lanes::splat(0.2),
        );
        let v = Vec3::new(
            lanes_of(|i| i as f32),
            lanes_of(|i| 1.0 - i as f32),
            Lanes::splat(0.5),
        );
        let rotated = q.normalize().to_rotation().mul_vec(v);
        let spun = Quat::pure_product(v, q).product(q.conjugate());
        let (sin, cos) = crate::physics::trig::sin_cos(v.x * Lanes::splat(3.7));
        for i in 0..LANES {
            let q1 = Quat::new(q.w.0[i], q.x.0[i], q.y.0[i], q.z.0[i]);
            let v1 = Vec3::new(v.x.0[i], v.y.0[i], v.z.0[i]);
            let r1 = q1.normalize().to_rotation().mul_vec(v1);
            assert_eq!(
                [rotated.x.0[i], rotated.y.0[i], rotated.z.0[i]],
                [r1.x, r1.y, r1.z]
            );
            let s1 = Quat::pure_product(v1, q1).product(q1.conjugate());
            let lane = [spun.w.0[i], spun.x.0[i], spun.y.0[i], spun.z.0[i]];
            assert_eq!(lane, [s1.w, s1.x, s1.y, s1.z], "lane {i}");
            assert_eq!(
                (sin.0[i], cos.0[i]),
                crate::physics::trig::sin_cos(v1.x * 3.7)
            );
        }
    }

    /// A branch runs where any lane takes it and each lane keeps its own outcome.
    #[test]
    fn a_branch_keeps_each_lanes_own_outcome() {
        let x = lanes_of(|i| i as f32 - 3.5);
        let positive = Lanes::splat(0.0).less(x);
        let doubled = Lanes::if_then(positive, x, |x| x * Lanes::splat(2.0));
        let expected = lanes_of(|i| {
            let x = i as f32 - 3.5;
            if x > 0.0 { 2.0 * x } else { x }
        });
        assert_eq!(doubled, expected);
        let none = Lanes::if_then(
            Lanes::not(Lanes::splat(0.0).less(Lanes::splat(1.0))),
            x,
            |_| unreachable!("no lane takes the branch"),
        );
        assert_eq!(none, x);
    }
}
