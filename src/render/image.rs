//! Rendered frames on the host: RGBA8 pixels, PNG files (the `png` feature), and contact
//! sheets of several frames.

#[cfg(feature = "png")]
use std::io::Write;
#[cfg(feature = "png")]
use std::path::Path;

#[cfg(feature = "png")]
use crate::checkpoint::atomic_file::AtomicFile;
#[cfg(feature = "png")]
use crate::model::error::{Error, Result};

/// An 8-bit sRGB RGBA image, rows top to bottom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height` pixels of 4 bytes, row by row.
    pub rgba: Vec<u8>,
}

impl Image {
    /// The pixel at column `x`, row `y`.
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        let at = 4 * (y as usize * self.width as usize + x as usize);
        [
            self.rgba[at],
            self.rgba[at + 1],
            self.rgba[at + 2],
            self.rgba[at + 3],
        ]
    }

    /// Encodes the image as a PNG into `out`.
    #[cfg(feature = "png")]
    pub fn encode_png(&self, out: impl Write) -> std::io::Result<()> {
        let mut encoder = png::Encoder::new(out, self.width, self.height);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_source_srgb(png::SrgbRenderingIntent::Perceptual);
        encoder.set_compression(png::Compression::High);
        let mut writer = encoder.write_header().map_err(std::io::Error::other)?;
        writer
            .write_image_data(&self.rgba)
            .map_err(std::io::Error::other)?;
        writer.finish().map_err(std::io::Error::other)
    }

    /// Writes the image to `path` as a PNG; the file appears only once it is complete.
    #[cfg(feature = "png")]
    pub fn write_png(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let mut file = AtomicFile::create(path)?;
        self.encode_png(file.writer())
            .map_err(|e| Error::io(path, e))?;
        file.commit()
    }

    /// `frames` (all of one size) laid out in rows of `columns`, left to right and top to
    /// bottom, separated by `gap` pixels of `background`.
    pub fn contact_sheet(frames: &[Image], columns: u32, gap: u32, background: [u8; 4]) -> Image {
        let (Some(first), true) = (frames.first(), columns > 0) else {
            return Image {
                width: 0,
                height: 0,
                rgba: Vec::new(),
            };
        };
        let (w, h) = (first.width, first.height);
        let columns = columns.min(frames.len() as u32);
        let rows = (frames.len() as u32).div_ceil(columns);
        let width = columns * w + (columns - 1) * gap;
        let height = rows * h + (rows - 1) * gap;
        let mut rgba = background.repeat(width as usize * height as usize);
        for (index, frame) in frames.iter().enumerate() {
            assert_eq!((frame.width, frame.height), (w, h), "frames differ in size");
            let (column, row) = (index as u32 % columns, index as u32 / columns);
            let (x0, y0) = (column * (w + gap), row * (h + gap));
            for y in 0..h {
                let from = 4 * (y * w) as usize;
                let to = 4 * ((y0 + y) * width + x0) as usize;
                rgba[to..to + 4 * w as usize]
                    .copy_from_slice(&frame.rgba[from..from + 4 * w as usize]);
            }
        }
        Image {
            width,
            height,
            rgba,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solid(width: u32, height: u32, value: u8) -> Image {
        Image {
            width,
            height,
            rgba: vec![value; (4 * width * height) as usize],
        }
    }

    #[test]
    #[cfg(feature = "png")]
    fn a_png_round_trips() {
        let mut image = solid(5, 3, 0);
        for (i, byte) in image.rgba.iter_mut().enumerate() {
            *byte = (i * 7 % 256) as u8;
        }
        let mut bytes = Vec::new();
        image.encode_png(&mut bytes).unwrap();
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .unwrap();
        let mut decoded = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut decoded).unwrap();
        assert_eq!((info.width, info.height), (5, 3));
        assert_eq!(&decoded[..info.buffer_size()], &image.rgba[..]);
    }

    #[test]
    fn a_contact_sheet_places_each_frame_in_its_cell() {
        let frames: Vec<Image> = (1..=3).map(|v| solid(4, 2, v * 10)).collect();
        let sheet = Image::contact_sheet(&frames, 2, 1, [255, 0, 0, 255]);
        assert_eq!((sheet.width, sheet.height), (9, 5));
        assert_eq!(sheet.pixel(0, 0), [10; 4]);
        assert_eq!(sheet.pixel(4, 0), [255, 0, 0, 255]);
        assert_eq!(sheet.pixel(8, 1), [20; 4]);
        assert_eq!(sheet.pixel(3, 4), [30; 4]);
        assert_eq!(sheet.pixel(5, 4), [255, 0, 0, 255]);
    }
}
