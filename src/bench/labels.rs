//! How the benchmark tables name a configuration.

use crate::backends::gpu::GpuOptions;

/// Describes GPU options the way the table shows them.
pub fn describe_options(o: &GpuOptions) -> String {
    format!(
        "fuse {}, wg {}, {}",
        o.steps_per_dispatch,
        o.workgroup_size,
        if o.trusted_shader {
            "trusted"
        } else {
            "checked"
        }
    ) + if o.specialized { "" } else { ", general" }
        + if o.divides_in_f64() { ", / in f64" } else { "" }
        + &match o.widest_tangent_block {
            None => String::new(),
            Some(widest) => format!(", blocks of {widest}"),
        }
}
