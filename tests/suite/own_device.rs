//! A crowd runs on a wgpu device the caller made (`GpuContext::from_device`): the results
//! match the f64 reference, the caller's error handler stays theirs, and a device without
//! what the kernel needs is refused with the missing limit named.

use std::sync::{Arc, Mutex};

use rigid_crowd::gpu::GpuContext;
use rigid_crowd::wgpu;
use rigid_crowd::{
    Backend, Deviation, Error, GPU_TOLERANCE, Integrator, Simulation, cross_check_crowd,
};

/// The caller's adapter, and a device on it made with `limits` and no optional features,
/// as a program that never heard of rigid-crowd would make it.
fn callers_device(limits: wgpu::Limits) -> (wgpu::Adapter, wgpu::Device, wgpu::Queue) {
    let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    descriptor.backends = wgpu::Backends::PRIMARY;
    let instance = wgpu::Instance::new(descriptor);
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))
        .expect("GPU tests need an adapter");
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("the caller's device"),
        required_limits: limits,
        ..Default::default()
    }))
    .expect("the adapter opens a device with default limits");
    (adapter, device, queue)
}

#[test]
fn a_crowd_runs_on_the_callers_device_and_their_error_handler_stays_theirs() {
    let (adapter, device, queue) = callers_device(wgpu::Limits::default());
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = Arc::clone(&seen);
    device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
        sink.lock().unwrap().push(e.to_string());
    }));
    let ctx = GpuContext::from_device(adapter, device.clone(), queue).unwrap();

    let crowd = cross_check_crowd(200, 4, Integrator::Rk4, 1e-3).unwrap();
    let steps = 60;
    let mut gpu = Simulation::gpu(&crowd, &ctx).unwrap();
    gpu.step(steps).unwrap();
    let mut reference = Simulation::new(&crowd, Backend::Reference).unwrap();
    reference.step(steps).unwrap();
    let deviation = Deviation::between(&gpu.bodies().unwrap(), &reference.bodies().unwrap());
    assert!(
        deviation.max() < GPU_TOLERANCE,
        "on the caller's device: {deviation:?}"
    );
    assert!(deviation.max() > 0.0, "f32 against f64 differs somewhere");

    // The device was made without SHADER_F64: gpu-f64 says so instead of failing inside.
    assert!(!ctx.supports_f64());
    match Simulation::on_backend(&crowd, Backend::GpuF64, &ctx) {
        Err(Error::Gpu(message)) => assert!(message.contains("SHADER_F64"), "{message}"),
        other => panic!("expected the SHADER_F64 error, got {:?}", other.map(|_| ())),
    }

    // Nothing of ours reached the caller's handler, and the handler is still theirs: a
    // mistake of their own (a mapped buffer whose size is not a multiple of 4) reaches it.
    assert!(
        seen.lock().unwrap().is_empty(),
        "{:?}",
        seen.lock().unwrap()
    );
    let _mistake = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("the caller's mistake"),
        size: 3,
        usage: wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: true,
    });
    assert_eq!(seen.lock().unwrap().len(), 1, "{:?}", seen.lock().unwrap());
}

#[test]
fn a_device_with_too_few_storage_buffers_is_refused_naming_the_limit() {
    let limits = wgpu::Limits {
        max_storage_buffers_per_shader_stage: 4,
        ..wgpu::Limits::default()
    };
    let (adapter, device, queue) = callers_device(limits);
    let message = match GpuContext::from_device(adapter, device, queue) {
        Err(Error::Gpu(message)) => message,
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    };
    assert!(
        message.contains("max_storage_buffers_per_shader_stage") && message.contains("binds 8"),
        "{message}"
    );
}
