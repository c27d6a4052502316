#![doc = include_str!("crate-docs.md")]
#![warn(missing_docs)]

// The layers, each depending only on those above it in this list (tests/module_graph.rs).
mod assembly;
mod backends;
#[cfg(feature = "cli")]
mod bench;
mod checkpoint;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
mod model;
#[cfg(feature = "mpi")]
pub mod mpi;
mod physics;
pub mod record;
pub mod render;
mod simulation;
mod verify;

pub use backends::gpu;
pub use verify::analytic;

pub use assembly::crowd::Crowd;
pub use assembly::generate::CrowdSpec;
pub use assembly::scene::{SCENE_VERSION, Scene};
pub use checkpoint::{CHECKPOINT_VERSION, Checkpoint, RecordingPlan, RunPlan};
pub use model::backend::Backend;
pub use model::body::{Body, BodyState, ModelPose};
pub use model::error::{Error, Result};
pub use model::fault::{Envelope, Fault, FaultRules, OnFault, QuarantinedBody};
pub use model::force::{Force, ForceKind};
pub use model::integrator::Integrator;
pub use model::mass::{MassProperties, ModelFrame};
pub use model::mesh::{MeshIntegrals, TriangleMesh};
pub use model::plane::Plane;
pub use model::shape::{Shape, ShapeKind};
pub use model::states::{Scalar, StateArrays, StatesMut};
pub use physics::custom_force::{
    CustomForce, CustomForceFn, CustomForceInput, ExternalLoad, ForceInput, ForceLaw,
};
/// The physics' number type and the types a [`ForceLaw`] is written with.
pub use physics::{
    algebra::{Quat, Vec3},
    motion::Load,
    scalar::{Carried, Scalar as Real},
    trig::sin_cos,
};
pub use record::csv::{CSV_HEADER, write_states_csv};
pub use simulation::{Simulation, StatesTicket};
pub use verify::compare::{Deviation, differing_bodies};
pub use verify::cross_check::{CrossCheck, cross_check, cross_check_crowd};

/// Largest relative deviation accepted between the f32 GPU backend and the f64 CPU reference
/// by `rigid-crowd check` and the cross-check tests (see the README for what was measured).
pub const GPU_TOLERANCE: f64 = 1e-3;

/// Largest relative deviation accepted between `gpu-f64` and the f64 CPU reference after one
/// step: the same algorithm in the same precision, so only round-off differs.
pub const GPU_F64_STEP_TOLERANCE: f64 = 1e-12;

/// Largest relative deviation accepted between `gpu-f64` and the f64 CPU reference after
/// 1,000 steps (`rigid-crowd check`, the cross-check tests): round-off grown by the dynamics.
pub const GPU_F64_TOLERANCE: f64 = 1e-9;

pub use glam;
pub use wgpu;

/// The Rust examples of the README and docs/render.md, compiled (and the README's run) as doc
/// tests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
#[doc = include_str!("../docs/render.md")]
struct DocumentedExamples;
