//! Quieting Mesa's device-select Vulkan layer where no Wayland compositor can be reached.

/// Mesa's device-select Vulkan layer (installed with its drivers, loaded implicitly) looks for
/// a Wayland compositor to rank adapters, and libwayland prints "XDG_RUNTIME_DIR is invalid
/// or not set" twice when there is no runtime directory: noise on every GPU start in
/// containers. Without that directory no compositor can be reached, so the probe cannot
/// succeed; `NODEVICE_SELECT=1`, the layer's own off switch, skips it. Nothing else is
/// hidden: the layer only orders adapters, and we choose among them ourselves. A value the
/// user set is left alone. `rigid-crowd`'s `main` calls it first, as a program running the
/// command line with its own laws (`cli::main_with_laws`) should.
///
/// # Safety
///
/// It sets an environment variable, so no other thread may exist yet (as for
/// [`std::env::set_var`]): call it first thing in `main`.
pub unsafe fn quiet_device_select_without_wayland() {
    let runtime_dir = std::env::var_os("XDG_RUNTIME_DIR").map(std::path::PathBuf::from);
    let reachable = runtime_dir.is_some_and(|dir| dir.is_absolute() && dir.is_dir());
    if !reachable && std::env::var_os("NODEVICE_SELECT").is_none() {
        // SAFETY: the caller guarantees that no other thread exists.
        unsafe { std::env::set_var("NODEVICE_SELECT", "1") };
    }
}
