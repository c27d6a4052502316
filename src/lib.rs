#![doc = include_str!("crate-docs.md")]
#![warn(missing_docs)]

// The layers, bottom first: each depends only on those declared before it
// (tests/suite/module_graph.rs checks it).

// The layers below the GPU live in the rigid-crowd-core crate (core/), which names neither
// wgpu nor naga: what a crowd is made of, the one definition of the physics, a crowd put
// together, one body's steps, and the CPU backends. Here they keep their paths
// (`crate::model::...`).
use rigid_crowd_core::{assembly, body_steps, model, physics};

// The instances of the definition: cpu-ref and cpu (from the core crate), and the GPU with its
// device plumbing.
mod backends;

// Checkpoint files and the run plan they carry.
mod checkpoint;

// The facade: one API over every backend.
mod simulation;

// Around the facade: recordings, verification, rendering, ranks.
pub mod record;

mod verify;

pub mod render;

#[cfg(feature = "mpi")]
pub mod mpi;

// The front ends: benchmarks and the command line.
#[cfg(feature = "cli")]
mod bench;

#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;

pub use backends::gpu;
pub use verify::analytic;

pub use assembly::crowd::Crowd;
pub use assembly::force_laws::ForceLaws;
pub use assembly::generate::CrowdSpec;
pub use assembly::scene::{SCENE_VERSION, Scene};
pub use checkpoint::{CHECKPOINT_VERSION, Checkpoint, RecordingPlan, RunPlan};
pub use model::backend::Backend;
pub use model::body::{Body, BodyState, ModelPose};
pub use model::collisions::Collisions;
pub use model::error::{Error, Result};
pub use model::fault::Fault;
pub use model::fault_rules::{Envelope, FaultRules, OnFault, QuarantinedBody};
pub use model::force::{
    Force, ForceKind, ForceParameters, LawDeclaration, ParameterDeclaration, ParameterShape,
};
pub use model::integrator::Integrator;
pub use model::mass::{MassProperties, ModelFrame};
pub use model::mesh::{MeshIntegrals, TriangleMesh};
pub use model::plane::Plane;
pub use model::shape::{Shape, ShapeKind};
pub use model::states::{Scalar, StateArrays, StatesMut};
pub use model::tangent::{STATE_COMPONENTS, Tangent, TangentPlan};
pub use physics::custom_force::{CustomForce, CustomForceFn};
pub use physics::force_law::{CustomForceInput, ExternalLoad, ForceInput, ForceLaw, Parameters};
/// The physics' number type and the types a [`ForceLaw`] is written with.
pub use physics::{
    algebra::{Quat, Vec3},
    motion::Load,
    scalar::{Carried, Scalar as Real},
    trig::sin_cos,
};
pub use record::csv::{CSV_HEADER, write_states_csv};
pub use simulation::{Simulation, StatesTicket};
pub use verify::check_crowd::cross_check_crowd;
pub use verify::compare::{Deviation, differing_bodies};
pub use verify::cross_check::{CrossCheck, cross_check, cross_check_with};

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
