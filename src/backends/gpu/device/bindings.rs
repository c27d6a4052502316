//! The integration kernel's bindings: what its pipeline layout declares, every chunk binds,
//! and a device must allow.

const READ_ONLY: wgpu::BufferBindingType = wgpu::BufferBindingType::Storage { read_only: true };
const READ_WRITE: wgpu::BufferBindingType = wgpu::BufferBindingType::Storage { read_only: false };

/// The integration kernel's bindings in binding order (integrate.wgsl): params, states,
/// constants, forces, keyframes, loads, planes, faults.
pub(crate) const INTEGRATE_BINDINGS: [wgpu::BufferBindingType; 8] = [
    wgpu::BufferBindingType::Uniform,
    READ_WRITE,
    READ_ONLY,
    READ_ONLY,
    READ_ONLY,
    READ_ONLY,
    READ_ONLY,
    READ_WRITE,
];

/// Storage buffers the integration kernel binds: the device's
/// `max_storage_buffers_per_shader_stage` must allow them.
pub(crate) const INTEGRATE_STORAGE_BUFFERS: u32 = {
    let mut count = 0;
    let mut i = 0;
    while i < INTEGRATE_BINDINGS.len() {
        if matches!(
            INTEGRATE_BINDINGS[i],
            wgpu::BufferBindingType::Storage { .. }
        ) {
            count += 1;
        }
        i += 1;
    }
    count
};
