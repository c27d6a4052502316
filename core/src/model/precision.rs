//! The two precisions the GPU kernel is compiled in: one WGSL source over the scalar alias
//! `real`, built as f32 or f64, and the Rust scalar types its records hold.

use std::fmt::Debug;

use bytemuck::Pod;

/// The floating-point precision of the GPU kernel and its state buffers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Precision {
    /// f32: every adapter; what `--backend gpu` runs.
    #[default]
    F32,
    /// f64: adapters with `SHADER_F64` (most desktop Vulkan drivers, NVIDIA data-centre GPUs,
    /// Mesa's lavapipe); what `--backend gpu-f64` runs. The same algorithm as the f64 CPU
    /// reference, so the two agree to round-off.
    F64,
}

impl Precision {
    /// The WGSL scalar type `real` stands for.
    pub fn wgsl_type(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }

    /// Bytes of one scalar.
    pub fn scalar_bytes(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }
}

/// A scalar type the GPU records hold: `f32` or `f64`. The padding types make each record
/// match its WGSL struct, whose vectors of f64 align to 32 bytes where f32 ones align to 16.
pub trait Real: Pod + Default + Debug + PartialEq {
    /// The precision of this scalar (for the layout test).
    #[doc(hidden)]
    const PRECISION: Precision;
    /// Four bytes of padding in f64 records, none in f32 ones (after a `u32` that follows a
    /// `vec3<real>`, which fills the vector's fourth lane only in f32).
    type Pad4: Pod + Default + Debug + PartialEq;
    /// Sixteen bytes of padding at the end of f64 records whose size must round up to 32.
    type Pad16: Pod + Default + Debug + PartialEq;

    /// The nearest value of this type.
    fn from_f64(value: f64) -> Self;
    /// The exact f64 value.
    fn to_f64(self) -> f64;
}

impl Real for f32 {
    #[doc(hidden)]
    const PRECISION: Precision = Precision::F32;
    type Pad4 = ();
    type Pad16 = ();

    fn from_f64(value: f64) -> Self {
        value as f32
    }

    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Real for f64 {
    #[doc(hidden)]
    const PRECISION: Precision = Precision::F64;
    type Pad4 = u32;
    type Pad16 = [u32; 4];

    fn from_f64(value: f64) -> Self {
        value
    }

    fn to_f64(self) -> f64 {
        self
    }
}

/// Runs `$body` with `$R` bound to the Rust scalar type of `$precision`.
#[macro_export]
#[doc(hidden)]
macro_rules! with_real {
    ($precision:expr, $R:ident => $body:expr) => {
        match $precision {
            $crate::model::precision::Precision::F32 => {
                type $R = f32;
                $body
            }
            $crate::model::precision::Precision::F64 => {
                type $R = f64;
                $body
            }
        }
    };
}
pub use crate::with_real;
