//! How the integration kernel is built and dispatched: workgroup size, fused steps and
//! bounds checks. The defaults come from the sweeps recorded in BENCHMARKS.md.

use crate::assembly::crowd::Crowd;
use crate::model::error::{Error, Result};
use crate::model::precision::Precision;
use crate::physics::custom_force::CustomForce;
use crate::physics::dual_wgsl::TRACED_WIDTHS;

/// How the GPU kernel is built: its precision, and tuning choices that give the same physics
/// and differ in speed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuOptions {
    /// Invocations per workgroup (the WGSL `workgroup_size` override constant).
    pub workgroup_size: u32,
    /// Steps each dispatch takes before writing the states back. Forces depend only on the
    /// body's own state, so K fused steps read and write each body's state once instead of
    /// K times; results match unfused runs to round-off.
    pub steps_per_dispatch: u32,
    /// Compile the kernel without wgpu's injected bounds checks
    /// (`create_shader_module_trusted`). Sound because every index the kernel uses is
    /// checked against the buffer lengths on the host; see `gpu/pipeline.rs`.
    pub trusted_shader: bool,
    /// The precision the kernel computes and stores the states in.
    pub precision: Precision,
    /// Compile the kernel for the crowd: only its integrator, its force kinds, and contacts
    /// only if it has planes, so the driver drops the rest. `false` compiles the general
    /// kernel (every force kind and shape, contacts, the crowd's integrator), which gives
    /// bit-identical results, slower: for comparison.
    pub specialized: bool,
    /// f32 kernels only: take each division and square root in f64 and round the result to
    /// f32. That is the correctly rounded f32 result wherever the driver's f64 `/` and `sqrt`
    /// are exact, so `gpu` gives `cpu`'s bits on drivers whose f32 ones are approximate, as
    /// NVIDIA's are (`rigid-crowd info` probes which). Needs `SHADER_F64`.
    pub f32_divisions_in_f64: bool,
    /// The widest block of directions a tangent kernel carries at once: 4 or 1, or `None`
    /// (the default) for the adapter's: 4 on a CPU adapter such as lavapipe, 1 on a GPU
    /// ([`Self::tangent_block_on`]). Each block runs the whole step. On lavapipe the Jacobian
    /// runs 1.7x faster in blocks of 4; on an H100 it ran 2.0x (f32) and 2.7x (f64) faster in
    /// blocks of 1 (BENCHMARKS.md). The tangents are the same bits either way. With `None`
    /// on a CPU adapter a run starts in blocks of 1, whose kernels compile in a third of the
    /// time, and moves to blocks of 4 once it is long enough to repay theirs
    /// ([`Self::starts_narrow_on`]).
    pub widest_tangent_block: Option<usize>,
}

impl Default for GpuOptions {
    fn default() -> Self {
        Self {
            workgroup_size: 64,
            steps_per_dispatch: 8,
            trusted_shader: true,
            precision: Precision::F32,
            specialized: true,
            f32_divisions_in_f64: false,
            widest_tangent_block: None,
        }
    }
}

impl GpuOptions {
    /// The options a kernel for `crowd` is built with: these, except that a crowd with a
    /// custom force (the user's code, about which nothing can be proven) always keeps the
    /// bounds checks.
    pub fn for_crowd(self, crowd: &Crowd) -> Self {
        Self {
            trusted_shader: self.compiles_trusted(crowd.custom_force.as_ref()),
            ..self
        }
    }

    /// Whether the kernel is compiled without bounds checks: asked for, and no custom force.
    pub(crate) fn compiles_trusted(&self, custom_force: Option<&CustomForce>) -> bool {
        self.trusted_shader && custom_force.is_none_or(CustomForce::is_law)
    }

    /// Whether the kernel's divisions and square roots are taken in f64: asked for, and the
    /// kernel is f32.
    pub fn divides_in_f64(&self) -> bool {
        self.f32_divisions_in_f64 && self.precision == Precision::F32
    }

    /// The widest tangent block on an adapter of `device_type`: the one asked for, else 4 on
    /// a CPU adapter (whose vector units a wide block fills) and 1 on a GPU (where a wide
    /// block's registers cost more than its shared primal saves).
    pub fn tangent_block_on(&self, device_type: wgpu::DeviceType) -> usize {
        self.widest_tangent_block
            .unwrap_or(if device_type == wgpu::DeviceType::Cpu {
                4
            } else {
                1
            })
    }

    /// Whether tangents on an adapter of `device_type` start in blocks of 1 and widen to
    /// [`Self::tangent_block_on`]'s once a run has carried enough body-steps
    /// (`GpuSimulation`'s `WIDEN_AFTER_BODY_STEPS`): where no width is asked for and the
    /// adapter's is wider than 1.
    pub fn starts_narrow_on(&self, device_type: wgpu::DeviceType) -> bool {
        self.widest_tangent_block.is_none() && self.tangent_block_on(device_type) > 1
    }

    /// Checks the options against the adapter's limits and features; errors name the option.
    pub fn validate_for(&self, limits: &wgpu::Limits, supports_f64: bool) -> Result<()> {
        if self.divides_in_f64() && !supports_f64 {
            return Err(Error::invalid(
                "f32_divisions_in_f64",
                "needs an adapter with SHADER_F64 (`rigid-crowd info` lists them)".to_string(),
            ));
        }
        self.validate(limits)
    }

    /// Checks the options against the adapter's limits; errors name the option.
    pub fn validate(&self, limits: &wgpu::Limits) -> Result<()> {
        let largest = limits
            .max_compute_invocations_per_workgroup
            .min(limits.max_compute_workgroup_size_x);
        if self.workgroup_size == 0 || self.workgroup_size > largest {
            return Err(Error::invalid(
                "workgroup_size",
                format!(
                    "must be between 1 and {largest} on this adapter, got {}",
                    self.workgroup_size
                ),
            ));
        }
        if let Some(widest) = self.widest_tangent_block
            && !TRACED_WIDTHS.contains(&widest)
        {
            return Err(Error::invalid(
                "widest_tangent_block",
                format!("must be one of {TRACED_WIDTHS:?}, got {widest}"),
            ));
        }
        if self.steps_per_dispatch == 0 {
            return Err(Error::invalid(
                "steps_per_dispatch",
                "must be at least 1".to_string(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// f64 divisions need an adapter with SHADER_F64: without one the option is refused in a
    /// line naming it; an f64 kernel divides in f64 anyway, so there it changes nothing.
    #[test]
    fn f32_divisions_in_f64_need_shader_f64() {
        let limits = wgpu::Limits::default();
        let options = GpuOptions {
            f32_divisions_in_f64: true,
            ..GpuOptions::default()
        };
        let refused = options
            .validate_for(&limits, false)
            .unwrap_err()
            .to_string();
        assert!(refused.contains("f32_divisions_in_f64") && refused.contains("SHADER_F64"));
        assert!(!refused.contains('\n'), "{refused}");
        assert!(options.validate_for(&limits, true).is_ok());
        let f64_kernel = GpuOptions {
            precision: Precision::F64,
            ..options
        };
        assert!(!f64_kernel.divides_in_f64());
        assert!(f64_kernel.validate_for(&limits, false).is_ok());
        assert!(GpuOptions::default().validate_for(&limits, false).is_ok());
    }

    /// The tangent kernels are traced in blocks of 1 and 4 only: another widest block is
    /// refused in one line naming the option.
    #[test]
    fn the_widest_tangent_block_is_a_traced_width() {
        let limits = wgpu::Limits::default();
        for (widest, ok) in [(1, true), (4, true), (0, false), (2, false), (16, false)] {
            let options = GpuOptions {
                widest_tangent_block: Some(widest),
                ..GpuOptions::default()
            };
            match options.validate(&limits) {
                Ok(()) => assert!(ok, "{widest} accepted"),
                Err(e) => {
                    assert!(!ok, "{widest}: {e}");
                    assert!(e.to_string().contains("widest_tangent_block"), "{e}");
                }
            }
        }
    }

    /// Unasked, the block is 4 on a CPU adapter and 1 on a GPU; asked, it is the one asked for.
    #[test]
    fn the_widest_tangent_block_follows_the_adapter_unless_asked() {
        use wgpu::DeviceType::{Cpu, DiscreteGpu, IntegratedGpu, VirtualGpu};
        let unasked = GpuOptions::default();
        assert_eq!(unasked.tangent_block_on(Cpu), 4);
        for gpu in [DiscreteGpu, IntegratedGpu, VirtualGpu] {
            assert_eq!(unasked.tangent_block_on(gpu), 1);
        }
        for asked in [1, 4] {
            let options = GpuOptions {
                widest_tangent_block: Some(asked),
                ..unasked
            };
            assert_eq!(options.tangent_block_on(Cpu), asked);
            assert_eq!(options.tangent_block_on(DiscreteGpu), asked);
        }
    }
}
