//! `rigid-crowd info`: adapters and the limits that bound a crowd.

use std::process::ExitCode;

use rigid_crowd::{Result, gpu::list_adapters};

pub fn info() -> Result<ExitCode> {
    let adapters = list_adapters();
    if adapters.is_empty() {
        println!(
            "no GPU adapters found: {}",
            rigid_crowd::gpu::NO_ADAPTER_HINT
        );
        return Ok(ExitCode::SUCCESS);
    }
    for (i, a) in adapters.iter().enumerate() {
        let (info, l) = (&a.info, &a.limits);
        println!(
            "[{i}] {} ({:?}, {:?})",
            info.name, info.backend, info.device_type
        );
        println!("    driver: {} {}", info.driver, info.driver_info);
        println!(
            "    max_storage_buffer_binding_size: {} bytes",
            l.max_storage_buffer_binding_size
        );
        println!("    max_buffer_size: {} bytes", l.max_buffer_size);
        println!(
            "    max_compute_workgroups_per_dimension: {}",
            l.max_compute_workgroups_per_dimension
        );
        println!(
            "    max_compute_invocations_per_workgroup: {}",
            l.max_compute_invocations_per_workgroup
        );
        println!(
            "    bodies per storage binding: {} (larger crowds are split across bindings)",
            a.bodies_per_binding()
        );
        match (a.device_memory, a.largest_crowd()) {
            (Some(bytes), Some(bodies)) => println!(
                "    device memory: {bytes} bytes; largest crowd: {bodies} bodies (without per-body forces)"
            ),
            _ => println!("    device memory: not reported by this backend"),
        }
    }
    Ok(ExitCode::SUCCESS)
}
