//! WGSL sources, assembled from `shaders/`: the shared declarations are prepended to each kernel.

/// Shared structs and quaternion helpers.
const COMMON: &str = include_str!("../../shaders/common.wgsl");
/// Force accumulation and the state derivative.
const DERIVATIVE: &str = include_str!("../../shaders/derivative.wgsl");
/// Contact with static planes.
const CONTACT: &str = include_str!("../../shaders/contact.wgsl");
/// The integration kernel.
const INTEGRATE: &str = include_str!("../../shaders/integrate.wgsl");

/// Full source of the integration kernel.
pub(crate) fn integrate_source() -> String {
    [COMMON, DERIVATIVE, CONTACT, INTEGRATE].join("\n")
}

/// Full source of the layout probe used by the Rust/WGSL layout test.
#[cfg(test)]
pub(crate) fn layout_probe_source() -> String {
    [COMMON, include_str!("../../shaders/layout_probe.wgsl")].join("\n")
}
