//! Integration pipelines kept per device, keyed by everything that changes the compiled
//! kernel: many simulations of the same kind share one pipeline, and a crowd of a kind seen
//! before skips the driver's compilation.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::backends::gpu::kernel::kernel_spec::KernelSpec;
use crate::model::error::Result;
use crate::model::precision::Precision;

/// What a compiled integration pipeline depends on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PipelineKey {
    pub spec: KernelSpec,
    pub precision: Precision,
    pub workgroup_size: u32,
    pub trusted: bool,
    /// The custom force's WGSL, which is part of the module.
    pub custom_force: Option<String>,
    /// A tangent kernel's (`integrate_tangents`) dual width and the inputs its block moves
    /// over the run (closed over the physics, so blocks that move the same share a kernel);
    /// `None` for the plain kernel.
    pub tangent_block: Option<(usize, crate::physics::dual_wgsl::MovingNumbers)>,
    /// f32 divisions and square roots taken in f64 (`GpuOptions::f32_divisions_in_f64`).
    pub divisions_in_f64: bool,
}

/// The pipelines built on one device so far.
#[derive(Debug, Default)]
pub(crate) struct PipelineCache {
    pipelines: Mutex<HashMap<PipelineKey, wgpu::ComputePipeline>>,
}

impl PipelineCache {
    /// The pipeline for `key`, built by `build` the first time it is asked for. A build that
    /// fails is not kept, so the next request reports the same error.
    pub fn get_or_build(
        &self,
        key: PipelineKey,
        build: impl FnOnce() -> Result<wgpu::ComputePipeline>,
    ) -> Result<wgpu::ComputePipeline> {
        if let Some(pipeline) = self.lock().get(&key) {
            return Ok(pipeline.clone());
        }
        // Built outside the lock: compiling takes long, and another thread may build a
        // different kind meanwhile (two racing builds of one key both succeed; one is kept).
        let pipeline = build()?;
        self.lock().entry(key).or_insert(pipeline.clone());
        Ok(pipeline)
    }

    /// How many pipelines are kept.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PipelineKey, wgpu::ComputePipeline>> {
        self.pipelines.lock().unwrap_or_else(|p| p.into_inner())
    }
}
