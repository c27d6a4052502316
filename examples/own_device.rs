//! Bring your own device: a program that already has a wgpu device (a game, a renderer, an
//! engine) runs a crowd on it and draws it with a render pass of its own. The vertex shader
//! reads each body's position and orientation straight from the simulation's state buffers,
//! declared by `gpu::layout_wgsl`: nothing is read back to draw, and no rigid-crowd renderer
//! is involved.
//!
//! `cargo run --release --example own_device [OUT.ppm]` draws three frames of a falling crowd
//! seen from the side (each body a square coloured by where its body x axis points) and
//! writes the last one as a PPM image if asked.

use std::error::Error;

use rigid_crowd::glam::{DVec3, Quat, Vec2, Vec3};
use rigid_crowd::gpu::{GpuContext, Precision, layout_wgsl};
use rigid_crowd::wgpu;
use rigid_crowd::{Crowd, CrowdSpec, Force, ForceKind, Simulation};

/// Side of the square image, in pixels.
pub const SIZE: u32 = 256;
/// Half the side of each body's square, in pixels.
pub const HALF_SQUARE: f32 = 3.0;
const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;
const BACKGROUND: [u8; 4] = [20, 24, 32, 255];

/// The caller's own drawing code: everything but the struct declarations is theirs.
const SHADER: &str = "
@group(0) @binding(0) var<storage, read> states: array<BodyState>;

struct View {
    centre: vec2<f32>,
    /// Clip units per metre.
    scale: f32,
    /// Half the square's side, in clip units.
    half_square: f32,
}
@group(0) @binding(1) var<uniform> view: View;

struct Varying {
    @builtin(position) clip: vec4<f32>,
    @location(0) colour: vec3<f32>,
}

/// `v` rotated by the unit quaternion `q`, stored x, y, z, w.
fn rotate(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let t = 2.0 * cross(q.xyz, v);
    return v + q.w * t + cross(q.xyz, t);
}

@vertex
fn body_square(@builtin(vertex_index) corner: u32, @builtin(instance_index) body: u32) -> Varying {
    let offsets = array(vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(-1.0, 1.0),
                        vec2(-1.0, 1.0), vec2(1.0, -1.0), vec2(1.0, 1.0));
    let state = states[body];
    // Seen from the side: world x to the right, world z up.
    let at = (state.position.xz - view.centre) * view.scale;
    var out: Varying;
    out.clip = vec4(at + offsets[corner] * view.half_square, 0.5, 1.0);
    out.colour = 0.5 + 0.5 * rotate(state.orientation, vec3(1.0, 0.0, 0.0));
    return out;
}

@fragment
fn fill(in: Varying) -> @location(0) vec4<f32> {
    return vec4(in.colour, 1.0);
}
";

/// The framing: the crowd's horizontal centre, a scale that fits it with room to fall.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct View {
    pub centre: [f32; 2],
    pub scale: f32,
    pub half_square: f32,
}

impl View {
    /// Clip coordinates of a world position.
    pub fn clip(&self, position: Vec3) -> Vec2 {
        (Vec2::new(position.x, position.z) - Vec2::from(self.centre)) * self.scale
    }

    /// The pixel (column, row) a world position lands in.
    pub fn pixel(&self, position: Vec3) -> (i64, i64) {
        let clip = self.clip(position);
        let column = (clip.x + 1.0) * 0.5 * SIZE as f32;
        let row = (1.0 - clip.y) * 0.5 * SIZE as f32;
        (column.floor() as i64, row.floor() as i64)
    }
}

/// The colour the shader gives a body of orientation `q` (w, x, y, z), as 8-bit values.
pub fn colour(q: [f32; 4]) -> [f32; 3] {
    let [w, x, y, z] = q;
    let axis = Quat::from_xyzw(x, y, z, w) * Vec3::X;
    (axis * 0.5 + 0.5).to_array().map(|c| c * 255.0)
}

/// One drawn frame and the poses it was drawn from (read back only to check the picture).
pub struct Frame {
    pub pixels: Vec<[u8; 4]>,
    pub positions: Vec<[f32; 3]>,
    pub orientations: Vec<[f32; 4]>,
}

/// What a program of its own would have: an adapter, a device and a queue, made without
/// rigid-crowd.
fn callers_device() -> Result<(wgpu::Adapter, wgpu::Device, wgpu::Queue), Box<dyn Error>> {
    let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    descriptor.backends = wgpu::Backends::PRIMARY;
    let instance = wgpu::Instance::new(descriptor);
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))?;
    let (device, queue) = pollster::block_on(adapter.request_device(&Default::default()))?;
    Ok((adapter, device, queue))
}

/// `bodies` bodies falling under gravity, drawn every `steps_per_frame` steps, `frames`
/// times, on a device this function makes itself.
pub fn falling_crowd_frames(
    bodies: usize,
    frames: usize,
    steps_per_frame: u64,
) -> Result<(View, Vec<Frame>), Box<dyn Error>> {
    let (adapter, device, queue) = callers_device()?;
    let ctx = GpuContext::from_device(adapter, device.clone(), queue.clone())?;
    let crowd = Crowd::new(CrowdSpec::new(bodies, 5).generate()?, 1e-3).with_force(Force::on_all(
        ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        },
    ));
    let mut sim = Simulation::gpu(&crowd, &ctx)?;

    // Frame the crowd as it starts, leaving the lower half of the picture to fall into.
    let (mut positions, mut orientations) = (vec![[0f32; 3]; bodies], vec![[0f32; 4]; bodies]);
    sim.read_poses(&mut positions, &mut orientations)?;
    let (low, high) = positions.iter().fold(
        (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
        |(low, high), &p| (low.min(p.into()), high.max(p.into())),
    );
    let reach = (high - low).max_element().max(1.0);
    let view = View {
        centre: [0.5 * (low.x + high.x), low.z],
        scale: 0.9 / reach,
        half_square: 2.0 * HALF_SQUARE / SIZE as f32,
    };

    let source = format!("{}\n{SHADER}", layout_wgsl(Precision::F32));
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("my crowd drawing"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("my crowd drawing"),
        layout: None,
        vertex: wgpu::VertexState {
            module: &module,
            entry_point: Some("body_square"),
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: Default::default(),
        depth_stencil: None,
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &module,
            entry_point: Some("fill"),
            compilation_options: Default::default(),
            targets: &[Some(FORMAT.into())],
        }),
        multiview_mask: None,
        cache: None,
    });
    let uniform = wgpu::util::DeviceExt::create_buffer_init(
        &device,
        &wgpu::util::BufferInitDescriptor {
            label: Some("my view"),
            contents: bytemuck::bytes_of(&view),
            usage: wgpu::BufferUsages::UNIFORM,
        },
    );
    // One bind group per chunk of the crowd's storage (one chunk unless the crowd is huge).
    let groups: Vec<(wgpu::BindGroup, u32)> = sim
        .gpu_chunks()
        .iter()
        .map(|chunk| {
            let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("my crowd chunk"),
                layout: &pipeline.get_bind_group_layout(0),
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: chunk.states.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: uniform.as_entire_binding(),
                    },
                ],
            });
            (group, chunk.bodies.len() as u32)
        })
        .collect();
    let target = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("my frame"),
        size: wgpu::Extent3d {
            width: SIZE,
            height: SIZE,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("my frame, read back"),
        size: (SIZE * SIZE * 4) as u64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });

    let mut drawn = Vec::with_capacity(frames);
    for frame in 0..frames {
        if frame > 0 {
            // Queued on the shared queue; the pass below is submitted after it, so it
            // draws the states these steps leave.
            sim.step(steps_per_frame)?;
        }
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let view = target.create_view(&Default::default());
            let [r, g, b, _] = BACKGROUND.map(|c| c as f64 / 255.0);
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("my crowd"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color { r, g, b, a: 1.0 }),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                ..Default::default()
            });
            pass.set_pipeline(&pipeline);
            for (group, bodies) in &groups {
                pass.set_bind_group(0, group, &[]);
                pass.draw(0..6, 0..*bodies);
            }
        }
        encoder.copy_texture_to_buffer(
            target.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &readback,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(SIZE * 4),
                    rows_per_image: None,
                },
            },
            target.size(),
        );
        queue.submit([encoder.finish()]);
        readback.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        device.poll(wgpu::PollType::wait_indefinitely())?;
        let pixels = bytemuck::cast_slice(&readback.slice(..).get_mapped_range()?).to_vec();
        readback.unmap();
        sim.read_poses(&mut positions, &mut orientations)?;
        drawn.push(Frame {
            pixels,
            positions: positions.clone(),
            orientations: orientations.clone(),
        });
    }
    Ok((view, drawn))
}

/// Writes `pixels` (SIZE x SIZE, RGBA) as a binary PPM image.
fn write_ppm(path: &str, pixels: &[[u8; 4]]) -> std::io::Result<()> {
    let mut bytes = format!("P6\n{SIZE} {SIZE}\n255\n").into_bytes();
    bytes.extend(pixels.iter().flat_map(|p| [p[0], p[1], p[2]]));
    std::fs::write(path, bytes)
}

/// Draws the crowd and, given a path, writes the last frame there.
pub fn run(out: Option<&str>) -> Result<usize, Box<dyn Error>> {
    let (_, frames) = falling_crowd_frames(400, 3, 150)?;
    let last = frames.last().expect("three frames");
    let covered = last.pixels.iter().filter(|&&p| p != BACKGROUND).count();
    println!(
        "drew 400 bodies in {covered} of {} pixels",
        last.pixels.len()
    );
    if let Some(path) = out {
        write_ppm(path, &last.pixels)?;
        println!("wrote {path}");
    }
    Ok(covered)
}

#[allow(dead_code)] // the tests call `run`
fn main() -> Result<(), Box<dyn Error>> {
    run(std::env::args().nth(1).as_deref()).map(|_| ())
}
