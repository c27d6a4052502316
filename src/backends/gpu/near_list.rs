//! The list of bodies the plain kernel hands over near a plane (shaders/near_list.wgsl), and
//! each fused dispatch's three dispatches around it: every body's steps (`integrate`, which
//! lists the bodies that come near a plane), the list sized and emptied for the next dispatch
//! (`size_near`), then the listed bodies' remaining steps with contacts (`integrate_near`,
//! dispatched indirectly over as many workgroups as the list needs). A body far from every
//! plane never runs the contact code, and the bodies near one run it apart from the others.

use crate::backends::gpu::device::bindings::{
    NEAR_SIZE_BINDINGS, bind_buffers, bind_group_layout, near_bind_group_layout,
};
use crate::backends::gpu::device::pipeline::NearPipelines;
use crate::backends::gpu::kernel::shader::NEAR_LIST;

/// `size_near`'s module, after the list's declarations.
const NEAR_SIZE: &str = include_str!("../../../shaders/near_size.wgsl");

/// Bytes before the list's entries: the count, the count taken and two words of padding.
const HEADER_BYTES: u64 = 16;

/// Bytes of one entry: a body's chunk index and the step it resumes at.
const ENTRY_BYTES: u64 = 8;

/// The list's buffer and the indirect dispatch's, with their bind groups and `size_near`.
#[derive(Debug)]
pub(crate) struct NearList {
    /// The list (zeroed at creation: empty), the plain kernel's group 1.
    list: wgpu::BindGroup,
    /// `integrate_near`'s workgroups, which `size_near` writes.
    groups: wgpu::Buffer,
    /// The list and the workgroups, `size_near`'s group 0.
    size_bindings: wgpu::BindGroup,
    size: wgpu::ComputePipeline,
}

impl NearList {
    /// A list that holds `capacity` bodies (at least the largest chunk's, since each body is
    /// handed over at most once a dispatch), for a kernel of `workgroup_size`.
    pub fn new(device: &wgpu::Device, capacity: usize, workgroup_size: u32) -> Self {
        let buffer = |label, size, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage: wgpu::BufferUsages::STORAGE | usage,
                mapped_at_creation: false,
            })
        };
        let entries = HEADER_BYTES + ENTRY_BYTES * capacity.max(1) as u64;
        let list_buffer = buffer("bodies near a plane", entries, wgpu::BufferUsages::empty());
        let groups = buffer("near dispatch", 12, wgpu::BufferUsages::INDIRECT);
        let list = bind_buffers(
            device,
            "bodies near a plane",
            &near_bind_group_layout(device),
            &[&list_buffer],
        );
        let size_layout = bind_group_layout(device, "size_near bindings", &NEAR_SIZE_BINDINGS);
        let size_bindings = bind_buffers(
            device,
            "size_near bindings",
            &size_layout,
            &[&list_buffer, &groups],
        );
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("near_size.wgsl"),
            source: wgpu::ShaderSource::Wgsl(format!("{NEAR_LIST}{NEAR_SIZE}").into()),
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("size_near"),
            bind_group_layouts: &[Some(&size_layout)],
            immediate_size: 0,
        });
        let size = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("size_near"),
            layout: Some(&layout),
            module: &module,
            entry_point: Some("size_near"),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants: &[("workgroup_size", workgroup_size as f64)],
                zero_initialize_workgroup_memory: false,
            },
            cache: None,
        });
        Self {
            list,
            groups,
            size_bindings,
            size,
        }
    }

    /// Binds the list as group 1 of `pass`, whose plain kernel hands contacts over.
    pub fn bind(&self, pass: &mut wgpu::ComputePass<'_>) {
        pass.set_bind_group(1, &self.list, &[]);
    }

    /// One fused dispatch of a chunk bound as `bindings`, over `grid` workgroups:
    /// `integrate`, then the bodies it listed. `integrate` is the pass's pipeline after.
    pub fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        (integrate, near): (&wgpu::ComputePipeline, &NearPipelines),
        (bindings, grid): (&wgpu::BindGroup, (u32, u32)),
    ) {
        pass.set_pipeline(integrate);
        pass.set_bind_group(0, bindings, &[]);
        pass.set_bind_group(1, &self.list, &[]);
        pass.dispatch_workgroups(grid.0, grid.1, 1);
        pass.set_pipeline(&self.size);
        pass.set_bind_group(0, &self.size_bindings, &[]);
        pass.dispatch_workgroups(1, 1, 1);
        pass.set_pipeline(&near.integrate_near);
        pass.set_bind_group(0, bindings, &[]);
        pass.set_bind_group(1, &self.list, &[]);
        pass.dispatch_workgroups_indirect(&self.groups, 0);
        pass.set_pipeline(integrate);
    }
}
