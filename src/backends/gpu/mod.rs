//! The GPU backends (`gpu` in f32, `gpu-f64`): body states in storage buffers, WGSL kernels
//! through wgpu, one source compiled in either precision.

mod async_readback;
mod bindings;
mod buffers;
mod builtins;
mod chunk;
mod context;
#[cfg(test)]
mod derivative_probe;
mod exact_spirv;
mod kernel_spec;
pub(crate) mod layout;
#[cfg(any(test, feature = "cli"))]
pub(crate) mod op_count;
mod options;
mod pipeline;
mod pipeline_cache;
#[cfg(test)]
mod probe;
mod readback;
pub(crate) mod shader;
mod shards;
mod simulation;
mod timing;

pub use crate::model::precision::Precision;
pub use buffers::{GpuChunk, LAYOUT_VERSION, layout_wgsl};
#[cfg(feature = "cli")]
pub(crate) use context::NO_ADAPTER_HINT;
pub use context::{AdapterSummary, DeviceCount, GpuContext, MEMORY_BUDGET_VAR, list_adapters};
pub use options::GpuOptions;
pub(crate) use readback::read_buffer;
pub(crate) use shards::GpuShards;
pub(crate) use simulation::GpuSimulation;
pub use simulation::StepTimes;
pub(crate) use simulation::check_scope;
#[cfg(feature = "cli")]
pub(crate) use timing::copy_bandwidth;
