//! Interactive viewer: a scene's crowd integrating on the GPU, drawn each frame from the
//! kernel's own state buffers by the library renderer that `rigid-crowd render` uses.
//!
//! ```text
//! cargo run --release --example viewer -- scenes/picture.json [STEPS_PER_FRAME]
//! ```
//!
//! Drag with the left mouse button to orbit, scroll to zoom, space to pause or resume, `.` or
//! the right arrow to take one frame's steps while paused, Esc to quit. The window title shows
//! the body count and the body-steps per second.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rigid_crowd::gpu::GpuContext;
use rigid_crowd::render::{Camera, RenderTargets, Renderer};
use rigid_crowd::{Crowd, Scene, Simulation};
use winit::application::ApplicationHandler;
use winit::dpi::PhysicalPosition;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::window::{Window, WindowId};

/// Radians of orbit per pixel of mouse drag.
const ORBIT_PER_PIXEL: f32 = 0.006;
/// How often the title's rate is refreshed.
const RATE_WINDOW: Duration = Duration::from_millis(500);

/// Everything that exists once the window does.
struct View {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    ctx: GpuContext,
    sim: Simulation,
    renderer: Renderer,
    targets: RenderTargets,
    camera: Camera,
}

struct App {
    crowd: Crowd,
    steps_per_frame: u64,
    view: Option<View>,
    paused: bool,
    step_once: bool,
    dragging: bool,
    cursor: Option<PhysicalPosition<f64>>,
    /// Body-steps taken since `since`, for the rate in the title.
    body_steps: f64,
    since: Instant,
    rate: f64,
}

impl App {
    fn open(&self, event_loop: &ActiveEventLoop) -> Result<View, String> {
        let attributes = Window::default_attributes().with_title("rigid-crowd");
        let window = Arc::new(
            event_loop
                .create_window(attributes)
                .map_err(|e| e.to_string())?,
        );
        let (ctx, surface) = GpuContext::with_surface(window.clone()).map_err(|e| e.to_string())?;
        let size = window.inner_size();
        let mut config = surface
            .get_default_config(ctx.adapter(), size.width.max(1), size.height.max(1))
            .ok_or("the adapter cannot present to this window")?;
        // The renderer shades in linear light; an sRGB surface encodes it for the screen.
        let caps = surface.get_capabilities(ctx.adapter());
        if let Some(&srgb) = caps.formats.iter().find(|f| f.is_srgb()) {
            config.format = srgb;
        }
        surface.configure(ctx.device(), &config);
        let sim = Simulation::gpu(&self.crowd, &ctx).map_err(|e| e.to_string())?;
        let renderer =
            Renderer::new(&sim, &self.crowd, config.format).map_err(|e| e.to_string())?;
        let targets = RenderTargets::new(&renderer, config.width, config.height);
        let camera = renderer.default_camera();
        Ok(View {
            window,
            surface,
            config,
            ctx,
            sim,
            renderer,
            targets,
            camera,
        })
    }

    fn title(&self, bodies: usize) -> String {
        let state = if self.paused { " (paused)" } else { "" };
        format!(
            "rigid-crowd: {bodies} bodies, {:.3e} body-steps/s{state}",
            self.rate
        )
    }
}

impl View {
    fn resize(&mut self, width: u32, height: u32) {
        self.config.width = width.max(1);
        self.config.height = height.max(1);
        self.surface.configure(self.ctx.device(), &self.config);
        self.targets = RenderTargets::new(&self.renderer, self.config.width, self.config.height);
    }

    /// Draws one frame; a surface that is not ready this time is simply skipped.
    fn redraw(&mut self) -> Result<(), String> {
        let frame = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(frame) => frame,
            wgpu::CurrentSurfaceTexture::Suboptimal(frame) => frame,
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                self.resize(self.config.width, self.config.height);
                return Ok(());
            }
            _ => return Ok(()),
        };
        let output = frame.texture.create_view(&Default::default());
        let mut encoder = self
            .ctx
            .device()
            .create_command_encoder(&Default::default());
        self.renderer
            .draw(&mut encoder, &self.targets, &output, &self.camera);
        self.ctx.queue().submit([encoder.finish()]);
        self.window.pre_present_notify();
        self.ctx.queue().present(frame);
        Ok(())
    }
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.view.is_some() {
            return;
        }
        match self.open(event_loop) {
            Ok(view) => self.view = Some(view),
            Err(e) => {
                eprintln!("error: {e}");
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _: WindowId, event: WindowEvent) {
        let Some(view) = self.view.as_mut() else {
            return;
        };
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(size) => view.resize(size.width, size.height),
            WindowEvent::MouseInput {
                state,
                button: MouseButton::Left,
                ..
            } => self.dragging = state == ElementState::Pressed,
            WindowEvent::CursorMoved { position, .. } => {
                if let (true, Some(last)) = (self.dragging, self.cursor) {
                    let (dx, dy) = (position.x - last.x, position.y - last.y);
                    view.camera
                        .orbit(-dx as f32 * ORBIT_PER_PIXEL, dy as f32 * ORBIT_PER_PIXEL);
                }
                self.cursor = Some(position);
            }
            WindowEvent::MouseWheel { delta, .. } => {
                let lines = match delta {
                    MouseScrollDelta::LineDelta(_, y) => y,
                    MouseScrollDelta::PixelDelta(p) => p.y as f32 / 40.0,
                };
                view.camera.zoom(0.9f32.powf(lines));
            }
            WindowEvent::KeyboardInput { event, .. } if event.state == ElementState::Pressed => {
                match event.logical_key {
                    Key::Named(NamedKey::Space) => self.paused = !self.paused,
                    Key::Named(NamedKey::ArrowRight) => self.step_once = true,
                    Key::Character(ref c) if c.as_str() == "." => self.step_once = true,
                    Key::Named(NamedKey::Escape) => event_loop.exit(),
                    _ => {}
                }
            }
            WindowEvent::RedrawRequested => {
                if !self.paused || std::mem::take(&mut self.step_once) {
                    if let Err(e) = view.sim.step(self.steps_per_frame) {
                        eprintln!("error: {e}");
                        event_loop.exit();
                        return;
                    }
                    self.body_steps += (view.sim.body_count() as u64 * self.steps_per_frame) as f64;
                }
                if let Err(e) = view.redraw() {
                    eprintln!("error: {e}");
                    event_loop.exit();
                    return;
                }
                let elapsed = self.since.elapsed();
                if elapsed >= RATE_WINDOW {
                    self.rate = self.body_steps / elapsed.as_secs_f64();
                    self.body_steps = 0.0;
                    self.since = Instant::now();
                    let bodies = view.sim.body_count();
                    let title = self.title(bodies);
                    if let Some(view) = self.view.as_ref() {
                        view.window.set_title(&title);
                    }
                }
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, _: &ActiveEventLoop) {
        if let Some(view) = &self.view {
            view.window.request_redraw();
        }
    }
}

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let usage = "usage: viewer SCENE.json [STEPS_PER_FRAME]";
    let Some(path) = args.next() else {
        eprintln!("{usage}");
        return std::process::ExitCode::from(2);
    };
    let steps_per_frame = match args.next().map(|s| s.parse::<u64>()) {
        None => 10,
        Some(Ok(n)) if n >= 1 => n,
        Some(_) => {
            eprintln!("error: STEPS_PER_FRAME: must be a whole number >= 1 ({usage})");
            return std::process::ExitCode::from(2);
        }
    };
    let scene = match Scene::load(&path) {
        Ok(scene) => scene,
        Err(e) => {
            eprintln!("error: {path}: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let event_loop = match EventLoop::new() {
        Ok(event_loop) => event_loop,
        Err(e) => {
            eprintln!("error: no window system: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let mut app = App {
        crowd: scene.crowd,
        steps_per_frame,
        view: None,
        paused: false,
        step_once: false,
        dragging: false,
        cursor: None,
        body_steps: 0.0,
        since: Instant::now(),
        rate: 0.0,
    };
    if let Err(e) = event_loop.run_app(&mut app) {
        eprintln!("error: {e}");
        return std::process::ExitCode::FAILURE;
    }
    std::process::ExitCode::SUCCESS
}
