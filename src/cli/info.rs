//! `rigid-crowd info`: adapters and the limits that bound a crowd.

use std::process::ExitCode;

use crate::Result;
use crate::backends::gpu::{
    GpuContext, Precision, list_adapters, probe_arithmetic, tangent_bytes_per_body,
};
use crate::model::tangent::STATE_COMPONENTS;

pub fn info() -> Result<ExitCode> {
    let adapters = list_adapters();
    if adapters.is_empty() {
        println!(
            "no GPU adapters found: {}",
            crate::backends::gpu::NO_ADAPTER_HINT
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
            "    f64 kernels (SHADER_F64, the gpu-f64 backend): {}",
            if a.supports_f64 { "yes" } else { "no" }
        );
        let precisions: &[Precision] = if a.supports_f64 {
            &[Precision::F32, Precision::F64]
        } else {
            &[Precision::F32]
        };
        for &precision in precisions {
            println!(
                "    bodies per storage binding, {}: {} (larger crowds are split across bindings)",
                precision.wgsl_type(),
                a.bodies_per_binding(precision)
            );
        }
        match a.device_memory {
            Some(bytes) => {
                let largest: Vec<String> = precisions
                    .iter()
                    .filter_map(|&p| {
                        let bodies = a.largest_crowd(p)?;
                        Some(format!("{bodies} bodies in {}", p.wgsl_type()))
                    })
                    .collect();
                println!(
                    "    device memory: {bytes} bytes; largest crowd: {} (without per-body forces)",
                    largest.join(", ")
                );
                let with_jacobian: Vec<String> = precisions
                    .iter()
                    .filter_map(|&p| {
                        let extra = tangent_bytes_per_body(STATE_COMPONENTS, p);
                        let bodies = a.largest_crowd_with(p, extra)?;
                        Some(format!("{bodies} bodies in {}", p.wgsl_type()))
                    })
                    .collect();
                println!(
                    "    largest crowd carrying the Jacobian (--jacobian: {} more bytes per body in f32, {} in f64): {}",
                    tangent_bytes_per_body(STATE_COMPONENTS, Precision::F32),
                    tangent_bytes_per_body(STATE_COMPONENTS, Precision::F64),
                    with_jacobian.join(", ")
                );
            }
            None => println!("    device memory: not reported by this backend"),
        }
        print_arithmetic(i, precisions);
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether adapter `index` rounds each operation the kernel uses as the CPU does: where it
/// does, its kernels give the CPU backends' bits.
fn print_arithmetic(index: usize, precisions: &[Precision]) {
    let ctx = match GpuContext::open_adapter(index) {
        Ok(ctx) => ctx,
        Err(e) => {
            println!("    arithmetic: not probed ({e})");
            return;
        }
    };
    for &precision in precisions {
        match probe_arithmetic(&ctx, precision) {
            Ok(report) => println!("    {}", report.summary()),
            Err(e) => println!("    {} arithmetic: not probed ({e})", precision.wgsl_type()),
        }
    }
}
