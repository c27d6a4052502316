//! How the integration kernel is built and dispatched: workgroup size, fused steps and
//! bounds checks. The defaults come from the sweeps recorded in BENCHMARKS.md.

use crate::assembly::crowd::Crowd;
use crate::model::error::{Error, Result};
use crate::model::precision::Precision;
use crate::physics::custom_force::CustomForce;

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
    /// kernel (every case), which gives bit-identical results, slower: for comparison.
    pub specialized: bool,
}

impl Default for GpuOptions {
    fn default() -> Self {
        Self {
            workgroup_size: 64,
            steps_per_dispatch: 8,
            trusted_shader: true,
            precision: Precision::F32,
            specialized: true,
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
        if self.steps_per_dispatch == 0 {
            return Err(Error::invalid(
                "steps_per_dispatch",
                "must be at least 1".to_string(),
            ));
        }
        Ok(())
    }
}
