//! What a simulation runs on: a backend and, on `gpu`, how its kernel divides.

use crate::backends::gpu::{GpuOptions, Precision};
use crate::checkpoint::Checkpoint;
use crate::model::backend::Backend;

/// The backend a simulation runs on and, on `gpu` only, whether its kernel takes the f32
/// divisions and square roots in f64 ([`GpuOptions::f32_divisions_in_f64`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RunsOn {
    pub backend: Backend,
    f32_divisions_in_f64: bool,
}

impl From<Backend> for RunsOn {
    fn from(backend: Backend) -> Self {
        Self {
            backend,
            f32_divisions_in_f64: false,
        }
    }
}

impl RunsOn {
    /// `backend`, its f32 divisions in f64 if `f32_divisions_in_f64`: refused, naming
    /// `field`, on any backend but `gpu` (the others have no f32 kernel to change).
    #[cfg(any(feature = "cli", test))]
    pub fn new(
        backend: Backend,
        f32_divisions_in_f64: bool,
        field: &str,
    ) -> crate::model::error::Result<Self> {
        if f32_divisions_in_f64 && backend != Backend::Gpu {
            return Err(crate::model::error::Error::invalid(
                field,
                format!("applies to the `gpu` backend only, not `{backend}`"),
            ));
        }
        Ok(Self {
            backend,
            f32_divisions_in_f64,
        })
    }

    /// Continuing `checkpoint` on `backend`: on `gpu`, dividing as the checkpoint's kernel did.
    pub fn resuming(checkpoint: &Checkpoint, backend: Backend) -> Self {
        Self {
            backend,
            f32_divisions_in_f64: checkpoint.f32_divisions_in_f64 && backend == Backend::Gpu,
        }
    }

    /// The kernel options of a GPU backend: its precision and division, the rest default.
    pub fn gpu_options(self) -> GpuOptions {
        GpuOptions {
            precision: self.backend.gpu_precision().unwrap_or(Precision::F32),
            f32_divisions_in_f64: self.f32_divisions_in_f64,
            ..GpuOptions::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only `gpu` has an f32 kernel whose divisions can move to f64; asking any other
    /// backend is one line naming the field.
    #[test]
    fn only_gpu_takes_its_f32_divisions_in_f64() {
        let on = RunsOn::new(Backend::Gpu, true, "--f32-divisions-in-f64").unwrap();
        assert!(on.gpu_options().f32_divisions_in_f64);
        assert_eq!(on.gpu_options().precision, Precision::F32);
        for backend in [Backend::Reference, Backend::FastCpu, Backend::GpuF64] {
            let refused = RunsOn::new(backend, true, "--f32-divisions-in-f64").unwrap_err();
            assert_eq!(
                refused.to_string(),
                format!(
                    "--f32-divisions-in-f64: applies to the `gpu` backend only, not `{backend}`"
                )
            );
            let plain = RunsOn::new(backend, false, "--f32-divisions-in-f64").unwrap();
            assert_eq!(plain, RunsOn::from(backend));
            assert!(!plain.gpu_options().f32_divisions_in_f64);
        }
        let f64_kernel = RunsOn::from(Backend::GpuF64).gpu_options();
        assert_eq!(f64_kernel.precision, Precision::F64);
    }
}
