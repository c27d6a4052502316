//! The renderer: binds each chunk's state buffer (written by the integration kernel) to the
//! vertex stage and draws one instance per body, so no state passes through the host.

use std::ops::Range;

use glam::Vec3;
use wgpu::util::DeviceExt;

use crate::assembly::crowd::Crowd;
use crate::backends::gpu::{GpuChunk, GpuContext};
use crate::model::error::{Error, Result};
use crate::render::camera::Camera;
use crate::render::instances::grouped_records;
use crate::render::mesh::{Mesh, MeshVertex, UnitMesh};
use crate::render::pipeline::{DEPTH_FORMAT, Pipelines, SAMPLE_COUNT, ViewGpu};
use crate::render::stage::Stage;
use crate::simulation::facade::Simulation;

/// Background colour (linear RGB): a pale sky.
const SKY: wgpu::Color = wgpu::Color {
    r: 0.55,
    g: 0.68,
    b: 0.85,
    a: 1.0,
};
/// Share of the light that is ambient.
const AMBIENT: f32 = 0.35;

/// Draws a GPU [`Simulation`]'s crowd on its floor, reading the states where the kernel left
/// them.
#[derive(Debug)]
pub struct Renderer {
    ctx: GpuContext,
    format: wgpu::TextureFormat,
    pipelines: Pipelines,
    view: wgpu::Buffer,
    view_group: wgpu::BindGroup,
    mesh_vertices: wgpu::Buffer,
    mesh_indices: wgpu::Buffer,
    /// Index range and base vertex of each unit mesh, in [`UnitMesh::ALL`] order.
    meshes: [(Range<u32>, i32); 4],
    chunks: Vec<ChunkDraw>,
    floor: Option<(wgpu::Buffer, u32)>,
    stage: Stage,
    body_count: usize,
}

/// One chunk's bindings and the instance range of each unit mesh in its render records.
#[derive(Debug)]
struct ChunkDraw {
    group: wgpu::BindGroup,
    instances: [Range<u32>; 4],
}

/// The multisampled colour and depth attachments of frames of one size.
#[derive(Debug)]
pub struct RenderTargets {
    color: wgpu::TextureView,
    depth: wgpu::TextureView,
    width: u32,
    height: u32,
}

impl RenderTargets {
    /// Attachments for `width x height` frames drawn by `renderer`.
    pub fn new(renderer: &Renderer, width: u32, height: u32) -> Self {
        let texture = |label, format| {
            renderer
                .ctx
                .device
                .create_texture(&wgpu::TextureDescriptor {
                    label: Some(label),
                    size: wgpu::Extent3d {
                        width,
                        height,
                        depth_or_array_layers: 1,
                    },
                    mip_level_count: 1,
                    sample_count: SAMPLE_COUNT,
                    dimension: wgpu::TextureDimension::D2,
                    format,
                    usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                    view_formats: &[],
                })
                .create_view(&Default::default())
        };
        Self {
            color: texture("render colour", renderer.format),
            depth: texture("render depth", DEPTH_FORMAT),
            width,
            height,
        }
    }

    /// Width and height in pixels.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }
}

impl Renderer {
    /// A renderer of `sim`, whose crowd is `crowd` (for the shapes, the planes and the camera's
    /// framing), drawing into colour targets of `format`.
    pub fn new(sim: &Simulation, crowd: &Crowd, format: wgpu::TextureFormat) -> Result<Self> {
        let (Some(ctx), Some(precision)) = (sim.gpu_context(), sim.backend().gpu_precision())
        else {
            return Err(Error::invalid(
                "backend",
                format!(
                    "drawing reads the states on the GPU: run the crowd on `gpu` or `gpu-f64`, not `{}`",
                    sim.backend().name()
                ),
            ));
        };
        let ctx = ctx.clone();
        let device = &ctx.device;
        if crowd.bodies.len() != sim.body_count() {
            return Err(Error::Gpu(format!(
                "the crowd has {} bodies but the simulation {}",
                crowd.bodies.len(),
                sim.body_count()
            )));
        }
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let pipelines = Pipelines::new(device, format, precision);
        let stage = Stage::of(crowd);
        let view = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("render view"),
            size: size_of::<ViewGpu>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let view_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("render view"),
            layout: &pipelines.view_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: view.as_entire_binding(),
            }],
        });

        let (mut vertices, mut indices) = (Vec::<MeshVertex>::new(), Vec::<u32>::new());
        let meshes = UnitMesh::ALL.map(|kind| {
            let mesh = Mesh::unit(kind);
            let base = vertices.len() as i32;
            let first = indices.len() as u32;
            vertices.extend_from_slice(&mesh.vertices);
            indices.extend_from_slice(&mesh.indices);
            (first..indices.len() as u32, base)
        });
        let init = |label, contents: &[u8], usage| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage,
            })
        };
        let mesh_vertices = init(
            "unit mesh vertices",
            bytemuck::cast_slice(&vertices),
            wgpu::BufferUsages::VERTEX,
        );
        let mesh_indices = init(
            "unit mesh indices",
            bytemuck::cast_slice(&indices),
            wgpu::BufferUsages::INDEX,
        );
        let floor = (!stage.floor.is_empty()).then(|| {
            let buffer = init(
                "floor",
                bytemuck::cast_slice(&stage.floor),
                wgpu::BufferUsages::VERTEX,
            );
            (buffer, stage.floor.len() as u32)
        });

        let chunks = sim
            .gpu_chunks()
            .into_iter()
            .filter(|chunk| !chunk.bodies.is_empty())
            .map(|GpuChunk { bodies, states, .. }| {
                let masses: Vec<_> = crowd.bodies[bodies.clone()]
                    .iter()
                    .map(|b| b.mass)
                    .collect();
                let (records, instances) = grouped_records(&masses, bodies.start);
                let records = init(
                    "render bodies",
                    bytemuck::cast_slice(&records),
                    wgpu::BufferUsages::STORAGE,
                );
                let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("render chunk"),
                    layout: &pipelines.chunk_layout,
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: states.as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: records.as_entire_binding(),
                        },
                    ],
                });
                ChunkDraw { group, instances }
            })
            .collect();
        crate::backends::gpu::check_scope(scope, "building the renderer")?;
        ctx.take_uncaptured()?;
        Ok(Self {
            ctx,
            format,
            pipelines,
            view,
            view_group,
            mesh_vertices,
            mesh_indices,
            meshes,
            chunks,
            floor,
            stage,
            body_count: crowd.bodies.len(),
        })
    }

    /// The stage: up, the framed sphere, the floor.
    pub fn stage(&self) -> &Stage {
        &self.stage
    }

    /// A camera that frames the crowd as it was when the renderer was made, and its floor.
    pub fn default_camera(&self) -> Camera {
        Camera::framing(self.stage.centre, self.stage.radius, self.stage.up)
    }

    /// The colour format the pipelines draw into.
    pub fn format(&self) -> wgpu::TextureFormat {
        self.format
    }

    /// The context the renderer draws on (the simulation's).
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// How many bodies each frame draws.
    pub fn body_count(&self) -> usize {
        self.body_count
    }

    /// Encodes a frame seen by `camera`: clears `targets`, draws the floor and every body, and
    /// resolves into `output` (a single-sample view of `targets`' size and the renderer's
    /// format). Writes the camera into the view uniform now; submit before the next `draw`.
    pub fn draw(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        targets: &RenderTargets,
        output: &wgpu::TextureView,
        camera: &Camera,
    ) {
        let aspect = targets.width as f32 / targets.height.max(1) as f32;
        let eye = camera.eye();
        let towards_eye = (eye - camera.target).normalize_or_zero();
        // Light from high up, a little to the side of the eye, so faces differ in shade.
        let side = camera.up.cross(towards_eye).normalize_or_zero();
        let light = (2.0 * camera.up + towards_eye + 0.7 * side).normalize_or(camera.up);
        let view = ViewGpu {
            view_projection: camera
                .view_projection(aspect, self.stage.radius)
                .to_cols_array_2d(),
            eye: eye.extend(self.stage.checker).to_array(),
            light: light.extend(AMBIENT).to_array(),
            up: camera.up.normalize_or(Vec3::Z).extend(0.0).to_array(),
        };
        self.ctx
            .queue
            .write_buffer(&self.view, 0, bytemuck::bytes_of(&view));

        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("crowd"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &targets.color,
                depth_slice: None,
                resolve_target: Some(output),
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(SKY),
                    store: wgpu::StoreOp::Discard,
                },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &targets.depth,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Discard,
                }),
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_bind_group(0, &self.view_group, &[]);
        if let Some((floor, count)) = &self.floor {
            pass.set_pipeline(&self.pipelines.floor);
            pass.set_vertex_buffer(0, floor.slice(..));
            pass.draw(0..*count, 0..1);
        }
        pass.set_pipeline(&self.pipelines.bodies);
        pass.set_vertex_buffer(0, self.mesh_vertices.slice(..));
        pass.set_index_buffer(self.mesh_indices.slice(..), wgpu::IndexFormat::Uint32);
        for chunk in &self.chunks {
            pass.set_bind_group(1, &chunk.group, &[]);
            for (kind, (indices, base)) in self.meshes.iter().enumerate() {
                let instances = chunk.instances[kind].clone();
                if !instances.is_empty() {
                    pass.draw_indexed(indices.clone(), *base, instances);
                }
            }
        }
    }
}
