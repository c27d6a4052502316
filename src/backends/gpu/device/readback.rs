//! Copying a storage buffer back to the host: the one place that maps memory.

use bytemuck::Pod;

use crate::backends::gpu::device::context::{GpuContext, one_line};
use crate::model::error::Result;

/// Reads the first `count` elements of `buffer` (which needs `COPY_SRC`), waiting for the GPU.
pub(crate) fn read_buffer<T: Pod>(
    ctx: &GpuContext,
    buffer: &wgpu::Buffer,
    count: usize,
) -> Result<Vec<T>> {
    read_buffer_at(ctx, buffer, 0, count)
}

/// Reads `count` elements of `buffer` from element `first` on (`size_of::<T>()` must be a
/// multiple of 4), waiting for the GPU.
pub(crate) fn read_buffer_at<T: Pod>(
    ctx: &GpuContext,
    buffer: &wgpu::Buffer,
    first: usize,
    count: usize,
) -> Result<Vec<T>> {
    let size = (count * size_of::<T>()) as u64;
    if size == 0 {
        return Ok(Vec::new());
    }
    let staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback staging"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("readback"),
        });
    encoder.copy_buffer_to_buffer(buffer, (first * size_of::<T>()) as u64, &staging, 0, size);
    ctx.queue.submit([encoder.finish()]);

    let slice = staging.slice(..);
    let (sender, receiver) = futures_intrusive::channel::shared::oneshot_channel();
    slice.map_async(wgpu::MapMode::Read, move |result| {
        sender.send(result).ok();
    });
    // A lost device fails the wait or the mapping; say that, not the symptom.
    let failed = |message: String| ctx.gpu_error(message);
    ctx.device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| failed(one_line(&format!("waiting for readback: {e}"))))?;
    match pollster::block_on(receiver.receive()) {
        Some(Ok(())) => {}
        Some(Err(e)) => return Err(failed(one_line(&format!("mapping readback buffer: {e}")))),
        None => return Err(failed("readback was cancelled".to_string())),
    }
    let data = {
        let view = slice
            .get_mapped_range()
            .map_err(|e| ctx.gpu_error(one_line(&e.to_string())))?;
        bytemuck::pod_collect_to_vec(&view)
    };
    staging.unmap();
    ctx.take_uncaptured()?;
    Ok(data)
}
