//! `rigid-crowd`: run scenes, cross-check the GPU against the CPU reference, demo, list adapters.

use std::process::ExitCode;

fn main() -> ExitCode {
    quiet_device_select_without_wayland();
    rigid_crowd::cli::main()
}

/// Mesa's device-select Vulkan layer (installed with its drivers, loaded implicitly) looks for
/// a Wayland compositor to rank adapters, and libwayland prints "XDG_RUNTIME_DIR is invalid
/// or not set" twice when there is no runtime directory: noise on every GPU start in
/// containers. Without that directory no compositor can be reached, so the probe cannot
/// succeed; `NODEVICE_SELECT=1`, the layer's own off switch, skips it. Nothing else is
/// hidden: the layer only orders adapters, and we choose among them ourselves. A value the
/// user set is left alone.
fn quiet_device_select_without_wayland() {
    let runtime_dir = std::env::var_os("XDG_RUNTIME_DIR").map(std::path::PathBuf::from);
    let reachable = runtime_dir.is_some_and(|dir| dir.is_absolute() && dir.is_dir());
    if !reachable && std::env::var_os("NODEVICE_SELECT").is_none() {
        // SAFETY: called first thing in main, before any thread exists.
        unsafe { std::env::set_var("NODEVICE_SELECT", "1") };
    }
}
