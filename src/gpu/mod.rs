//! The f32 GPU backend: body states in storage buffers, WGSL kernels through wgpu.

mod context;
mod integrate;
pub(crate) mod layout;
mod readback;
mod shader;

pub use context::{AdapterSummary, GpuContext, NO_ADAPTER_HINT, list_adapters};
pub use integrate::GpuSimulation;
