#![doc = include_str!("crate-docs.md")]
#![warn(missing_docs)]

pub mod analytic;
mod atomic_file;
mod backend;
#[cfg(feature = "cli")]
mod bench;
mod body;
mod body_masses;
mod body_source;
mod checkpoint;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
mod codes;
mod compare;
mod cross_check;
mod crowd;
mod csv;
mod custom_force;
mod eigen;
mod error;
mod fault;
mod force;
mod force_table;
mod generate;
mod input_file;
mod integrator;
#[cfg(feature = "cli")]
mod integrator_table;
mod mass;
mod mesh;
#[cfg(feature = "mpi")]
pub mod mpi;
mod physics;
mod plane;
mod profile;
pub mod record;
mod scene;
mod shape;
mod simulation;
mod states;
mod validate;

mod cpu;
mod cpu_ref;
pub mod gpu;
pub mod render;

pub use backend::Backend;
pub use body::{Body, BodyState, ModelPose};
pub use checkpoint::{CHECKPOINT_VERSION, Checkpoint, RecordingPlan, RunPlan};
pub use compare::{Deviation, differing_bodies};
pub use cross_check::{CrossCheck, cross_check, cross_check_crowd};
pub use crowd::Crowd;
pub use csv::{CSV_HEADER, write_states_csv};
pub use custom_force::{
    CustomForce, CustomForceFn, CustomForceInput, ExternalLoad, ForceInput, ForceLaw,
};
pub use error::{Error, Result};
pub use fault::{Envelope, Fault, FaultRules, OnFault, QuarantinedBody};
pub use force::{Force, ForceKind};
pub use generate::CrowdSpec;
pub use integrator::Integrator;
pub use mass::{MassProperties, ModelFrame};
pub use mesh::{MeshIntegrals, TriangleMesh};
/// The physics' number type and the types a [`ForceLaw`] is written with.
pub use physics::{
    algebra::{Quat, Vec3},
    motion::Load,
    scalar::{Carried, Scalar as Real},
    trig::sin_cos,
};
pub use plane::Plane;
pub use scene::{SCENE_VERSION, Scene};
pub use shape::{Shape, ShapeKind};
pub use simulation::{Simulation, StatesTicket};
pub use states::{Scalar, StateArrays, StatesMut};

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
