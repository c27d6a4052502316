//! The `rigid-crowd` command line in a program that registers a force law of its own (the
//! soft tether of `examples/force_law.rs`): its scenes name the law, `run --sensitivity`
//! takes derivatives along its numbers on every backend, and `resume` attaches it again.
//!
//! `cargo run --release --example force_law_cli -- run tether.json --backend gpu-f64 \
//!     --out final.npz --sensitivity forces[1].anchor,forces[1].stiffness`
//!
//! Every subcommand and flag is `rigid-crowd`'s: `--help` lists them.

use std::process::ExitCode;

#[allow(dead_code)] // The law and its scene; the example's own checks are not used here.
#[path = "force_law.rs"]
mod force_law;

fn main() -> ExitCode {
    // As `rigid-crowd` does: no Wayland probe (and its noise) where none can answer.
    // SAFETY: first thing in main, before any thread exists.
    unsafe { rigid_crowd::gpu::quiet_device_select_without_wayland() };
    match force_law::laws() {
        Ok(laws) => rigid_crowd::cli::main_with_laws(laws),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
