//! The kernels' bindings: what their pipeline layouts declare, every chunk binds, and a
//! device must allow.

const READ_ONLY: wgpu::BufferBindingType = wgpu::BufferBindingType::Storage { read_only: true };
const READ_WRITE: wgpu::BufferBindingType = wgpu::BufferBindingType::Storage { read_only: false };

/// The integration kernel's bindings in binding order (integrate.wgsl): params, states,
/// constants, forces, keyframes, loads, planes, faults. The tangent kernel binds them too,
/// as its group 0.
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

/// The tangent kernel's own bindings, its group 1 (tangent_block.wgsl): the block,
/// tangents, constant seeds, force origins, number seeds, plane seeds.
pub(crate) const TANGENT_BINDINGS: [wgpu::BufferBindingType; 6] = [
    wgpu::BufferBindingType::Uniform,
    READ_WRITE,
    READ_ONLY,
    READ_ONLY,
    READ_ONLY,
    READ_ONLY,
];

/// The plain kernel's hand-over list, its group 1 where it has contact code (`HAND_OVER` in
/// src/backends/gpu/kernel/shader.rs): the parity, which says which of the list's headers
/// the dispatch fills or takes, and the list, read-write as `integrate` binds it
/// (`integrate_near` binds it read-only: [`near_bind_group_layout`]).
pub(crate) const NEAR_BINDINGS: [wgpu::BufferBindingType; 2] =
    [wgpu::BufferBindingType::Uniform, READ_WRITE];

/// Storage buffers the integration kernel's group 0 binds.
pub(crate) const INTEGRATE_STORAGE_BUFFERS: u32 = storage_buffers(&INTEGRATE_BINDINGS);

/// Storage buffers the plain kernel binds, its hand-over list included: the device's
/// `max_storage_buffers_per_shader_stage` must allow them.
pub(crate) const PLAIN_STORAGE_BUFFERS: u32 =
    INTEGRATE_STORAGE_BUFFERS + storage_buffers(&NEAR_BINDINGS);

/// Storage buffers the tangent kernel binds besides the integration kernel's.
pub(crate) const TANGENT_STORAGE_BUFFERS: u32 = storage_buffers(&TANGENT_BINDINGS);

const fn storage_buffers(bindings: &[wgpu::BufferBindingType]) -> u32 {
    let mut count = 0;
    let mut i = 0;
    while i < bindings.len() {
        if matches!(bindings[i], wgpu::BufferBindingType::Storage { .. }) {
            count += 1;
        }
        i += 1;
    }
    count
}

/// The integration kernel's group 0 ([`INTEGRATE_BINDINGS`]): what every chunk's bind groups
/// are made for, and what the plain and the tangent pipelines declare (wgpu takes layouts of
/// the same entries as one, so a chunk's bind groups serve both).
pub(crate) fn integrate_bind_group_layout(device: &wgpu::Device) -> wgpu::BindGroupLayout {
    bind_group_layout(device, "integrate bindings", &INTEGRATE_BINDINGS)
}

/// The plain kernel's group 1 where it hands contacts over ([`NEAR_BINDINGS`]), with the
/// list read-only where the pipeline `takes` the bodies (`integrate_near`, whose indirect
/// arguments the list also holds: a read-write binding of it there would conflict).
pub(crate) fn near_bind_group_layout(device: &wgpu::Device, takes: bool) -> wgpu::BindGroupLayout {
    let [parity, list] = NEAR_BINDINGS;
    let list = match takes {
        true => READ_ONLY,
        false => list,
    };
    bind_group_layout(device, "near list bindings", &[parity, list])
}

/// The bind group of `buffers` for `layout`, bound in order from 0.
pub(crate) fn bind_buffers(
    device: &wgpu::Device,
    label: &str,
    layout: &wgpu::BindGroupLayout,
    buffers: &[&wgpu::Buffer],
) -> wgpu::BindGroup {
    let whole: Vec<_> = buffers
        .iter()
        .map(|b| b.as_entire_buffer_binding())
        .collect();
    bind_buffer_ranges(device, label, layout, &whole)
}

/// The bind group of the buffer ranges `bindings` for `layout`, bound in order from 0.
pub(crate) fn bind_buffer_ranges(
    device: &wgpu::Device,
    label: &str,
    layout: &wgpu::BindGroupLayout,
    bindings: &[wgpu::BufferBinding<'_>],
) -> wgpu::BindGroup {
    let entries: Vec<_> = (0..)
        .zip(bindings)
        .map(|(binding, range)| wgpu::BindGroupEntry {
            binding,
            resource: wgpu::BindingResource::Buffer(range.clone()),
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &entries,
    })
}

/// The bind group layout of `bindings`, numbered from 0, seen by compute shaders. Numbered
/// 0, 1, ... without a hole, as wgpu's Vulkan backend numbers them for the driver: the
/// kernels' SPIR-V (exact_spirv.rs) keeps the WGSL's numbers.
pub(crate) fn bind_group_layout(
    device: &wgpu::Device,
    label: &str,
    bindings: &[wgpu::BufferBindingType],
) -> wgpu::BindGroupLayout {
    let entries: Vec<_> = (0..)
        .zip(bindings)
        .map(|(binding, &ty)| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect();
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &entries,
    })
}
