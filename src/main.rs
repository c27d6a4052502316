//! `rigid-crowd`: run scenes, cross-check the GPU against the CPU reference, demo, list adapters.

use std::process::ExitCode;

fn main() -> ExitCode {
    // SAFETY: first thing in main, before any thread exists.
    unsafe { rigid_crowd::gpu::quiet_device_select_without_wayland() };
    rigid_crowd::cli::main()
}
