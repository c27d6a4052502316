//! The render pipelines (bodies and floor) built from shaders/render.wgsl, and the layout of
//! the per-frame view uniform.

use bytemuck::{Pod, Zeroable};

use crate::backends::gpu::kernel::shader::common_source;
use crate::model::precision::Precision;
use crate::render::mesh::MeshVertex;

/// Vertex and fragment stages of the bodies and the floor.
const RENDER: &str = include_str!("../../shaders/render.wgsl");

/// Samples per pixel: edges of thousands of small bodies alias badly with one.
pub const SAMPLE_COUNT: u32 = 4;
/// Depth buffer format.
pub(crate) const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// Per-frame view settings; kept in sync with `View` in shaders/render.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct ViewGpu {
    /// World to clip, column-major.
    pub view_projection: [[f32; 4]; 4],
    /// xyz: eye; w: edge of the floor's checker squares.
    pub eye: [f32; 4],
    /// xyz: unit direction towards the light; w: ambient share.
    pub light: [f32; 4],
    /// xyz: unit up; w unused.
    pub up: [f32; 4],
}

/// The two pipelines and the layouts of their bind groups.
#[derive(Debug)]
pub(crate) struct Pipelines {
    pub bodies: wgpu::RenderPipeline,
    pub floor: wgpu::RenderPipeline,
    /// Group 0: the view uniform.
    pub view_layout: wgpu::BindGroupLayout,
    /// Group 1 of the body pipeline: one chunk's states and render records.
    pub chunk_layout: wgpu::BindGroupLayout,
}

/// The source the render pipelines are built from, reading states of `precision`.
pub(crate) fn render_source(precision: Precision) -> String {
    [common_source(precision).as_str(), RENDER].join("\n")
}

fn entry(binding: u32, ty: wgpu::BufferBindingType) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
        ty: wgpu::BindingType::Buffer {
            ty,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

impl Pipelines {
    /// Builds both pipelines for colour targets of `format`, reading states of `precision`.
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat, precision: Precision) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("render.wgsl"),
            source: wgpu::ShaderSource::Wgsl(render_source(precision).into()),
        });
        let view_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("render view"),
            entries: &[entry(0, wgpu::BufferBindingType::Uniform)],
        });
        let read_only = wgpu::BufferBindingType::Storage { read_only: true };
        let chunk_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("render chunk"),
            entries: &[entry(0, read_only), entry(1, read_only)],
        });
        let layout = |label, groups: &[Option<&wgpu::BindGroupLayout>]| {
            device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(label),
                bind_group_layouts: groups,
                immediate_size: 0,
            })
        };
        let bodies_layout = layout("render bodies", &[Some(&view_layout), Some(&chunk_layout)]);
        let floor_layout = layout("render floor", &[Some(&view_layout)]);
        let vertex_attributes =
            wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32, 2 => Float32x3];
        let vertex_buffers = [Some(wgpu::VertexBufferLayout {
            array_stride: size_of::<MeshVertex>() as u64,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &vertex_attributes,
        })];
        let pipeline = |label, layout: &wgpu::PipelineLayout, stage: &str, cull_mode| {
            let vertex_entry = format!("{stage}_vertex");
            let fragment_entry = format!("{stage}_fragment");
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(label),
                layout: Some(layout),
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some(&vertex_entry),
                    compilation_options: Default::default(),
                    buffers: &vertex_buffers,
                },
                primitive: wgpu::PrimitiveState {
                    topology: wgpu::PrimitiveTopology::TriangleList,
                    front_face: wgpu::FrontFace::Ccw,
                    cull_mode,
                    ..Default::default()
                },
                depth_stencil: Some(wgpu::DepthStencilState {
                    format: DEPTH_FORMAT,
                    depth_write_enabled: Some(true),
                    depth_compare: Some(wgpu::CompareFunction::Less),
                    stencil: Default::default(),
                    bias: Default::default(),
                }),
                multisample: wgpu::MultisampleState {
                    count: SAMPLE_COUNT,
                    ..Default::default()
                },
                fragment: Some(wgpu::FragmentState {
                    module: &module,
                    entry_point: Some(&fragment_entry),
                    compilation_options: Default::default(),
                    targets: &[Some(wgpu::ColorTargetState {
                        format,
                        blend: None,
                        write_mask: wgpu::ColorWrites::ALL,
                    })],
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        // Every unit mesh is closed and wound outward, so back faces are never seen. A plane
        // is seen only from the bodies' side, so walls between the eye and the crowd vanish.
        let bodies = pipeline("bodies", &bodies_layout, "body", Some(wgpu::Face::Back));
        let floor = pipeline("floor", &floor_layout, "floor", Some(wgpu::Face::Back));
        Self {
            bodies,
            floor,
            view_layout,
            chunk_layout,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gpu_records_have_their_wgsl_sizes() {
        assert_eq!(size_of::<ViewGpu>(), 112);
        assert_eq!(size_of::<MeshVertex>(), 32);
        assert_eq!(size_of::<crate::render::instances::RenderBodyGpu>(), 64);
    }
}
