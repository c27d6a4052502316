//! WGSL sources, assembled from `shaders/`: the shared declarations are prepended to each
//! kernel, and the crowd's custom force (or one that returns zero) is appended.

/// Shared structs and quaternion helpers.
const COMMON: &str = include_str!("../../shaders/common.wgsl");
/// Force accumulation and the state derivative.
const DERIVATIVE: &str = include_str!("../../shaders/derivative.wgsl");
/// Contact with static planes.
const CONTACT: &str = include_str!("../../shaders/contact.wgsl");
/// The integration kernel.
const INTEGRATE: &str = include_str!("../../shaders/integrate.wgsl");

/// The `custom_force` of a crowd without one; no force record ever calls it.
const NO_CUSTOM_FORCE: &str = "fn custom_force(position: vec3<f32>, orientation: vec4<f32>, \
velocity: vec3<f32>, angular_velocity: vec3<f32>, mass: f32, time: f32, body: u32) -> Load {
    return Load(vec3<f32>(0.0), vec3<f32>(0.0));
}
";

/// The integration kernel's source, and the line on which the custom force's source starts
/// (1-based), so compiler messages can point into the user's own text. WGSL declarations may
/// come in any order, so the user's code goes last and keeps its own line numbers + offset.
pub(crate) fn integrate_source(custom_force: Option<&str>) -> (String, u32) {
    let joined = [COMMON, DERIVATIVE, CONTACT, INTEGRATE].join("\n");
    let kernel = joined.trim_end();
    let first_custom_line = kernel.lines().count() as u32 + 2;
    let custom = custom_force.unwrap_or(NO_CUSTOM_FORCE);
    (format!("{kernel}\n\n{custom}"), first_custom_line)
}

/// Full source of the layout probe used by the Rust/WGSL layout test.
#[cfg(test)]
pub(crate) fn layout_probe_source() -> String {
    [COMMON, include_str!("../../shaders/layout_probe.wgsl")].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_custom_force_starts_on_the_line_reported() {
        let (source, first) = integrate_source(Some("// first custom line\nfn x() {}"));
        let line = source.lines().nth(first as usize - 1);
        assert_eq!(line, Some("// first custom line"));
    }
}
