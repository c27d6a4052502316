//! The model: what a crowd is made of and how a run is set, with no physics in it. Bodies,
//! mass properties, shapes and meshes, force kinds, planes, integrators, fault kinds and the
//! fault policy, backends and precisions, the errors, and the checks on input values.

pub mod backend;
pub mod body;
pub mod codes;
pub mod collisions;
pub mod eigen;
pub mod error;
pub mod fault;
pub mod fault_rules;
pub mod force;
pub mod force_declaration;
pub(crate) mod input_file;
pub mod integrator;
pub mod mass;
pub mod mesh;
pub mod names;
pub mod plane;
pub mod precision;
pub(crate) mod quarantine;
pub mod shape;
pub mod states;
pub mod tangent;
pub mod validate;
