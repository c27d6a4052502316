//! Eight f32 lanes in one AVX register, for the clone of the block loop compiled for AVX2:
//! each operation is one AVX instruction, so LLVM has nothing to regroup. Only code
//! compiled with AVX enabled (the `*_avx2` clones in `simulation.rs`) may use this type.

use std::arch::x86_64::*;
use std::ops::{Add, Div, Mul, Neg, Sub};

use crate::physics::lanes::{LANES, LaneType, Lanes, if_any_lane};
use crate::physics::scalar::{Carried, Scalar};

/// Eight f32 lanes in an AVX register.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub(crate) struct AvxLanes(__m256);

/// One comparison's outcome per lane: all bits set where it holds.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub(crate) struct AvxMask(__m256);

// SAFETY (every `unsafe` block below): the intrinsics need AVX, and an `AvxLanes` exists only
// inside code compiled for AVX2 on a CPU that has it (see the module comment); the loads and
// stores read and write the eight floats of a `Lanes`.

impl From<Lanes> for AvxLanes {
    #[inline(always)]
    fn from(l: Lanes) -> Self {
        Self(unsafe { _mm256_loadu_ps(l.0.as_ptr()) })
    }
}

impl From<AvxLanes> for Lanes {
    #[inline(always)]
    fn from(a: AvxLanes) -> Self {
        let mut out = Lanes::default();
        unsafe { _mm256_storeu_ps(out.0.as_mut_ptr(), a.0) };
        out
    }
}

macro_rules! avx_operator {
    ($trait:ident, $method:ident, $intrinsic:ident) => {
        impl $trait for AvxLanes {
            type Output = Self;
            #[inline(always)]
            fn $method(self, rhs: Self) -> Self {
                Self(unsafe { $intrinsic(self.0, rhs.0) })
            }
        }
    };
}
avx_operator!(Add, add, _mm256_add_ps);
avx_operator!(Sub, sub, _mm256_sub_ps);
avx_operator!(Mul, mul, _mm256_mul_ps);
avx_operator!(Div, div, _mm256_div_ps);

impl Neg for AvxLanes {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Self(unsafe { _mm256_xor_ps(self.0, _mm256_set1_ps(-0.0)) })
    }
}

impl LaneType for AvxLanes {
    type Values = Self;
    #[inline(always)]
    fn values(self) -> Self {
        self
    }
    type OnLanes = Lanes;
    #[inline(always)]
    fn to_lanes(self) -> Lanes {
        self.into()
    }
    #[inline(always)]
    fn from_lanes(lanes: Lanes) -> Self {
        lanes.into()
    }
    #[inline(always)]
    fn splat(value: f32) -> Self {
        Self(unsafe { _mm256_set1_ps(value) })
    }
    #[inline(always)]
    fn lane_is(lane: usize) -> AvxMask {
        let lanes = unsafe { _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7) };
        let wanted = unsafe { _mm256_set1_epi32(lane as i32) };
        AvxMask(unsafe { _mm256_castsi256_ps(_mm256_cmpeq_epi32(lanes, wanted)) })
    }
    #[inline(always)]
    fn mask(holds: AvxMask) -> u8 {
        unsafe { _mm256_movemask_ps(holds.0) as u8 }
    }
}

impl Scalar for AvxLanes {
    type Bool = AvxMask;
    const IS_F64: bool = false;

    #[inline(always)]
    fn constant(value: f64) -> Self {
        Self(unsafe { _mm256_set1_ps(value as f32) })
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        Self(unsafe { _mm256_sqrt_ps(self.0) })
    }
    #[inline(always)]
    fn floor(self) -> Self {
        Self(unsafe { _mm256_floor_ps(self.0) })
    }
    #[inline(always)]
    fn less(self, other: Self) -> AvxMask {
        AvxMask(unsafe { _mm256_cmp_ps::<_CMP_LT_OQ>(self.0, other.0) })
    }
    #[inline(always)]
    fn equals(self, other: Self) -> AvxMask {
        AvxMask(unsafe { _mm256_cmp_ps::<_CMP_EQ_OQ>(self.0, other.0) })
    }
    #[inline(always)]
    fn select(condition: AvxMask, if_true: Self, if_false: Self) -> Self {
        Self(unsafe { _mm256_blendv_ps(if_false.0, if_true.0, condition.0) })
    }
    #[inline(always)]
    fn not(condition: AvxMask) -> AvxMask {
        let all = unsafe { _mm256_castsi256_ps(_mm256_set1_epi32(-1)) };
        AvxMask(unsafe { _mm256_xor_ps(condition.0, all) })
    }
    fn if_then<V: Carried<Self>>(condition: AvxMask, value: V, then: impl FnOnce(V) -> V) -> V {
        if_any_lane(condition, value, then)
    }
    #[inline(always)]
    fn repeat<V: Carried<Self>>(times: u32, value: V, mut body: impl FnMut(V) -> V) -> V {
        (0..times).fold(value, |v, _| body(v))
    }
}

const _: () = assert!(LANES == 8);
