//! The backends a crowd can be integrated on, as users name them. A leaf module: the
//! simulation, the checkpoint format and the command line all depend on it.

use crate::model::names::parse_name;
use crate::model::precision::Precision;

/// Which backend integrates a crowd.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The f64 CPU reference, written for clarity: what every other backend is checked against.
    Reference,
    /// The fast f32 CPU path: structure of arrays, SIMD blocks of eight bodies, every core.
    FastCpu,
    /// The f32 WGSL kernels on a GPU adapter.
    Gpu,
    /// The same WGSL kernels compiled in f64, on adapters with `SHADER_F64`: the same
    /// algorithm and precision as the reference, so the two agree to round-off.
    GpuF64,
}

impl Backend {
    /// Every backend, reference first. A backend's position here is its checkpoint tag:
    /// never reorder.
    pub const ALL: [Backend; 4] = [
        Backend::Reference,
        Backend::FastCpu,
        Backend::Gpu,
        Backend::GpuF64,
    ];

    /// The name the command line uses: `cpu-ref`, `cpu`, `gpu` or `gpu-f64`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Reference => "cpu-ref",
            Backend::FastCpu => "cpu",
            Backend::Gpu => "gpu",
            Backend::GpuF64 => "gpu-f64",
        }
    }

    /// The GPU kernel's precision, on the GPU backends.
    pub fn gpu_precision(self) -> Option<Precision> {
        match self {
            Backend::Gpu => Some(Precision::F32),
            Backend::GpuF64 => Some(Precision::F64),
            Backend::Reference | Backend::FastCpu => None,
        }
    }

    /// The precision it computes in: f64 on `cpu-ref` and `gpu-f64`, f32 on `cpu` and `gpu`.
    pub fn precision(self) -> Precision {
        match self {
            Backend::Reference | Backend::GpuF64 => Precision::F64,
            Backend::FastCpu | Backend::Gpu => Precision::F32,
        }
    }

    /// The GPU backend of `precision`.
    pub fn gpu(precision: Precision) -> Self {
        match precision {
            Precision::F32 => Backend::Gpu,
            Precision::F64 => Backend::GpuF64,
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Backend {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        parse_name(&Backend::ALL, Backend::name, s)
            .map_err(|names| format!("unknown backend `{s}` (expected {names})"))
    }
}
