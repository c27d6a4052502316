//! `rigid-crowd render SCENE.json --frames N --every K --out DIR/`: PNG frames of the crowd,
//! drawn on the GPU straight from the integration kernel's state buffers.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use crate::backends::gpu::GpuContext;
use crate::render::{CAPTURE_FORMAT, FrameCapture, Image, Renderer};
use crate::{Error, Result, Scene, Simulation};
use clap::Args;

/// Most frames one command writes (the names have room for them).
const MAX_FRAMES: u64 = 100_000;
/// Gap between the cells of a contact sheet, pixels.
const SHEET_GAP: u32 = 4;

#[derive(Args, Debug)]
pub struct RenderArgs {
    /// Scene file (JSON, version 1).
    scene: PathBuf,
    /// Number of frames; the first shows the scene's starting state.
    #[arg(long, default_value_t = 8)]
    frames: u64,
    /// Steps integrated between consecutive frames.
    #[arg(long, default_value_t = 100)]
    every: u64,
    /// Folder for frame_0000.png, frame_0001.png, ... (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Frame width in pixels.
    #[arg(long, default_value_t = 960)]
    width: u32,
    /// Frame height in pixels.
    #[arg(long, default_value_t = 540)]
    height: u32,
    /// Also write DIR/sheet.png: every frame tiled this many across.
    #[arg(long, value_name = "COLUMNS")]
    sheet: Option<u32>,
    /// The force laws a scene may name besides the built-in kinds: those of a program that
    /// runs this command line with its own laws (`cli::main_with_laws`).
    #[arg(skip)]
    pub(crate) laws: crate::ForceLaws,
}

pub fn render(args: RenderArgs) -> Result<ExitCode> {
    if !(1..=MAX_FRAMES).contains(&args.frames) {
        return Err(Error::invalid(
            "--frames",
            format!("must be between 1 and {MAX_FRAMES} (got {})", args.frames),
        ));
    }
    if args.every == 0 {
        return Err(Error::invalid(
            "--every",
            "must be at least 1 step between frames (got 0)",
        ));
    }
    if args.sheet == Some(0) {
        return Err(Error::invalid(
            "--sheet",
            "must be at least 1 column (got 0)",
        ));
    }
    let scene = Scene::load_with_laws(&args.scene, &args.laws)
        .map_err(|e| e.within(format_args!("{}: ", args.scene.display())))?;
    let ctx = GpuContext::new()?;
    let mut sim = Simulation::gpu(&scene.crowd, &ctx)?;
    let renderer = Renderer::new(&sim, &scene.crowd, CAPTURE_FORMAT)?;
    let capture = FrameCapture::new(&renderer, args.width, args.height)?;
    // Only once every flag has been checked, so a bad one leaves no folder behind.
    std::fs::create_dir_all(&args.out).map_err(|e| Error::io(&args.out, e))?;
    let camera = renderer.default_camera();
    let digits = (args.frames - 1).to_string().len().max(4);
    let mut sheet_frames = Vec::new();
    let start = Instant::now();
    for frame in 0..args.frames {
        if frame > 0 {
            sim.step(args.every)?;
        }
        let image = capture.capture(&renderer, &camera)?;
        image.write_png(frame_path(&args.out, frame, digits))?;
        if args.sheet.is_some() {
            sheet_frames.push(image);
        }
    }
    sim.finish()?;
    let elapsed = start.elapsed().as_secs_f64();
    if let Some(columns) = args.sheet {
        Image::contact_sheet(&sheet_frames, columns, SHEET_GAP, [255; 4])
            .write_png(args.out.join("sheet.png"))?;
    }
    let steps = (args.frames - 1) * args.every;
    eprintln!(
        "{} frames of {} bodies ({}x{}), {} steps apart, {steps} steps in all, on {}: {elapsed:.2} s; wrote {}",
        args.frames,
        renderer.body_count(),
        args.width,
        args.height,
        args.every,
        ctx.describe(),
        frame_path(&args.out, 0, digits).display(),
    );
    Ok(ExitCode::SUCCESS)
}

fn frame_path(dir: &Path, frame: u64, digits: usize) -> PathBuf {
    dir.join(format!("frame_{frame:0digits$}.png"))
}
