//! The integration tests, one module per subject, linked into one test binary: a binary per
//! subject linked the library thirty times over, most of CI's test time. Three stay apart:
//! `tests/read_allocations.rs`, whose counting allocator must see no other test's
//! allocations, `tests/long_runs.rs`, which reads the whole process's resident memory, and
//! `tests/mpi.rs`, which needs the `mpi` feature.
//!
//! One subject runs with `cargo test --release --test suite NAME::`.

#[path = "../common/mod.rs"]
mod common;

mod analytic;
mod bad_input;
mod checkpoints;
mod cli;
mod cli_output;
mod collisions;
mod contacts;
mod crash;
mod determinism;
mod examples;
mod fast_paths_match_reference;
mod fault_cli;
mod faults;
mod force_laws;
mod forces;
mod full_disk;
mod gpu_f64;
mod gpu_limits;
mod gpu_tangents;
mod kernel_spec;
mod lean_reads;
mod module_graph;
mod multi_device;
mod non_finite;
mod own_device;
mod own_kernel;
mod progress_steps;
mod quarantine;
mod recording;
mod render;
mod rest;
mod scale;
mod set_states;
mod shapes;
mod tops;
