//! The layers of rigid-crowd below the GPU: what a crowd is made of, the one definition of the
//! physics and its number types, a crowd put together, one body's steps, and the CPU backends
//! (`cpu-ref`, `cpu`) with their concrete instances of the physics.
//!
//! A crate of its own so that it names neither wgpu nor naga: it compiles beside them in a
//! fresh build, and an edit to the layers above (the GPU host, the command line, records,
//! checkpoints) does not compile the CPU instances again. Its modules are the `rigid-crowd`
//! crate's own (`crate::model`, `crate::physics`, ... there, through re-exports); its public
//! API is `rigid-crowd`'s, not this crate's.

// The layers, bottom first: each depends only on those declared before it
// (the rigid-crowd crate's tests/suite/module_graph.rs checks it).

// What a crowd is made of and how a run is set: bodies, shapes, forces, planes, integrators,
// fault kinds and rules, errors.
pub mod model;

// The one definition of the physics, generic over the number type, and its number types.
pub mod physics;

// A crowd put together: scene files, the generator, body sources, the packed tables.
pub mod assembly;

// One body's steps under the crowd's forces, over f64, f32 and dual numbers: the reference's
// steps and the tangents that cpu-ref and cpu carry.
pub mod body_steps;

// The CPU instances of the definition: cpu-ref and cpu.
pub mod backends;

// What the checks grade against: closed-form solutions, the cross-check crowd, test numbers.
pub mod verify;
