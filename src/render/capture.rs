//! Frames rendered off screen and read back as images: the one place a rendered frame leaves
//! the GPU.

use crate::backends::gpu::read_buffer;
use crate::model::error::{Error, Result};
use crate::render::camera::Camera;
use crate::render::image::Image;
use crate::render::renderer::{RenderTargets, Renderer};

/// Format of captured frames; PNG's sRGB RGBA8 byte for byte.
pub const CAPTURE_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;

/// Row pitch of texture-to-buffer copies.
const ROW_ALIGNMENT: u32 = wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;

/// Renders frames of one size into a texture and reads them back.
#[derive(Debug)]
pub struct FrameCapture {
    targets: RenderTargets,
    output: wgpu::Texture,
    rows: wgpu::Buffer,
    padded_row: u32,
}

impl FrameCapture {
    /// A capture of `width x height` frames (each between 1 and the device's largest texture)
    /// for `renderer`, which must draw [`CAPTURE_FORMAT`].
    pub fn new(renderer: &Renderer, width: u32, height: u32) -> Result<Self> {
        let largest = renderer.context().limits().max_texture_dimension_2d;
        for (flag, value) in [("--width", width), ("--height", height)] {
            if value == 0 || value > largest {
                return Err(Error::invalid(
                    flag,
                    format!("must be between 1 and {largest} pixels on this adapter (got {value})"),
                ));
            }
        }
        if renderer.format() != CAPTURE_FORMAT {
            return Err(Error::Gpu(format!(
                "frames are captured as {CAPTURE_FORMAT:?}, but the renderer draws {:?}",
                renderer.format()
            )));
        }
        let device = &renderer.context().device;
        let output = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("captured frame"),
            size: wgpu::Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: CAPTURE_FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        let padded_row = (4 * width).div_ceil(ROW_ALIGNMENT) * ROW_ALIGNMENT;
        let rows = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("captured rows"),
            size: padded_row as u64 * height as u64,
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        Ok(Self {
            targets: RenderTargets::new(renderer, width, height),
            output,
            rows,
            padded_row,
        })
    }

    /// Renders the crowd as it is now (after every step queued so far) and reads the image.
    pub fn capture(&self, renderer: &Renderer, camera: &Camera) -> Result<Image> {
        let ctx = renderer.context();
        let (width, height) = self.targets.size();
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("render frame"),
            });
        let view = self.output.create_view(&Default::default());
        renderer.draw(&mut encoder, &self.targets, &view, camera);
        encoder.copy_texture_to_buffer(
            self.output.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &self.rows,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(self.padded_row),
                    rows_per_image: Some(height),
                },
            },
            wgpu::Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
        );
        ctx.queue.submit([encoder.finish()]);
        let padded: Vec<u8> = read_buffer(ctx, &self.rows, (self.padded_row * height) as usize)?;
        let row = 4 * width as usize;
        let rgba = padded
            .chunks_exact(self.padded_row as usize)
            .flat_map(|r| &r[..row])
            .copied()
            .collect();
        Ok(Image {
            width,
            height,
            rgba,
        })
    }
}
