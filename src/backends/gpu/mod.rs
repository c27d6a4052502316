//! The GPU backends (`gpu` in f32, `gpu-f64`): body states in storage buffers, WGSL kernels
//! through wgpu, one source compiled in either precision. `kernel/` assembles the kernel's
//! source (no device in it), `device/` is the wgpu plumbing, and the backend itself (the
//! simulation, its chunks of buffers and its shards over devices) sits here.

mod buffers;
mod chunk;
#[cfg(test)]
mod derivative_probe;
pub(crate) mod device;
pub(crate) mod kernel;
mod near_list;
mod options;
mod shards;
mod simulation;
mod tangents;

pub use crate::model::precision::Precision;
pub use buffers::{GpuChunk, LAYOUT_VERSION, layout_wgsl};
pub use device::arithmetic_probe::{
    ArithmeticReport, OperationReport, PROBED_OPERANDS, probe_arithmetic,
};
#[cfg(feature = "cli")]
pub(crate) use device::context::NO_ADAPTER_HINT;
pub use device::context::{
    AdapterSummary, DeviceCount, GpuContext, MEMORY_BUDGET_VAR, list_adapters,
};
pub use device::device_select::quiet_device_select_without_wayland;
pub(crate) use device::readback::read_buffer;
#[cfg(feature = "cli")]
pub(crate) use device::timing::copy_bandwidth;
pub use options::GpuOptions;
pub(crate) use shards::GpuShards;
pub(crate) use simulation::GpuSimulation;
pub use simulation::StepTimes;
pub(crate) use simulation::check_scope;
#[cfg(feature = "cli")]
pub(crate) use tangents::tangent_bytes_per_body;
