//! The model: what a crowd is made of and how a run is set, with no physics in it. Bodies,
//! mass properties, shapes and meshes, force kinds, planes, integrators, fault kinds and the
//! fault policy, backends and precisions, the errors, and the checks on input values.

pub(crate) mod backend;
pub(crate) mod body;
pub(crate) mod codes;
pub(crate) mod eigen;
pub(crate) mod error;
pub(crate) mod fault;
pub(crate) mod fault_rules;
pub(crate) mod force;
pub(crate) mod input_file;
pub(crate) mod integrator;
pub(crate) mod mass;
pub(crate) mod mesh;
pub(crate) mod names;
pub(crate) mod plane;
pub(crate) mod precision;
pub(crate) mod quarantine;
pub(crate) mod shape;
pub(crate) mod states;
pub(crate) mod tangent;
pub(crate) mod validate;
