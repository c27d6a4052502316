//! The wgpu plumbing: adapter and device, bind group layouts, pipelines compiled to exact
//! SPIR-V and cached, readbacks (blocking and double-buffered), timestamps, and the probe of
//! whether the driver rounds as the CPU does.

pub(crate) mod arithmetic_probe;
pub(crate) mod async_readback;
pub(crate) mod bindings;
pub(crate) mod context;
pub(crate) mod device_select;
pub(crate) mod exact_spirv;
pub(crate) mod pipeline;
pub(crate) mod pipeline_cache;
#[cfg(test)]
pub(crate) mod probe;
pub(crate) mod readback;
pub(crate) mod timing;
