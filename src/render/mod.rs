//! Pictures of a GPU crowd: instanced unit meshes placed by the states in the integration
//! kernel's own buffers (nothing is read back to draw), Lambert shading, a depth buffer, the
//! crowd's planes (or a ground plane) as a checkered floor, and a camera that frames the crowd.
//!
//! Boxes, spheres, cylinders, capsules and ellipsoids are drawn as they are; a body without a
//! closed-form shape (an OBJ mesh, or a body given by its inertia) is drawn as the uniform box
//! with the same mass and inertia, along its principal axes.

mod camera;
mod capture;
mod image;
mod instances;
mod mesh;
mod pipeline;
mod renderer;
mod stage;

pub use camera::Camera;
pub use capture::{CAPTURE_FORMAT, FrameCapture};
pub use image::Image;
pub use instances::base_color;
pub use pipeline::SAMPLE_COUNT;
pub use renderer::{RenderTargets, Renderer};
pub use stage::Stage;
