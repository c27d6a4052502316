//! Memory stays flat over long runs on the GPU: 10,000 frames recorded with the
//! non-blocking readback, and 1,000 simulations created, stepped and dropped on one device.
//! Measured by the process's resident memory (VmRSS) and by wgpu's own count of the live
//! resources of each kind (`Instance::generate_report`), after a warm-up (pipelines
//! compiled, allocator pools grown) against the end. A leak of one buffer per frame or per
//! simulation shows as hundreds of buffers more, and as tens of megabytes.

use std::sync::Mutex;

use rigid_crowd::gpu::GpuContext;
use rigid_crowd::record::record_run;
use rigid_crowd::wgpu;
use rigid_crowd::{Integrator, Simulation, cross_check_crowd};

/// One test at a time: resident memory is the whole process's.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Resident memory of this process, in bytes.
fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .expect("VmRSS in /proc/self/status");
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("VmRSS: N kB");
    kib * 1024
}

/// The live resources wgpu holds for the user, by kind.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Live {
    buffers: usize,
    bind_groups: usize,
    bind_group_layouts: usize,
    pipelines: usize,
    command_encoders: usize,
    command_buffers: usize,
    query_sets: usize,
    shader_modules: usize,
}

impl Live {
    fn count(instance: &wgpu::Instance) -> Self {
        let report = instance
            .generate_report()
            .expect("a native instance reports its resources");
        let hub = report.hub_report();
        Self {
            buffers: hub.buffers.num_kept_from_user,
            bind_groups: hub.bind_groups.num_kept_from_user,
            bind_group_layouts: hub.bind_group_layouts.num_kept_from_user,
            pipelines: hub.compute_pipelines.num_kept_from_user,
            command_encoders: hub.command_encoders.num_kept_from_user,
            command_buffers: hub.command_buffers.num_kept_from_user,
            query_sets: hub.query_sets.num_kept_from_user,
            shader_modules: hub.shader_modules.num_kept_from_user,
        }
    }
}

/// A device on an instance of our own, so that its resources can be counted.
fn device() -> (wgpu::Instance, GpuContext) {
    let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    descriptor.backends = wgpu::Backends::PRIMARY;
    let instance = wgpu::Instance::new(descriptor);
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))
        .expect("GPU tests need an adapter");
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("long runs"),
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .expect("a device");
    let ctx = GpuContext::from_device(adapter, device, queue).unwrap();
    (instance, ctx)
}

/// Waits until the device has finished everything and released what was dropped.
fn settle(ctx: &GpuContext) {
    ctx.device()
        .poll(wgpu::PollType::wait_indefinitely())
        .unwrap();
}

const MIB: f64 = 1024.0 * 1024.0;

/// The largest growth of resident memory accepted from the warm-up to the end. A leak of
/// one state buffer per frame or per simulation (64 kB and more at these crowd sizes)
/// grows it by hundreds of megabytes over the runs below.
const RESIDENT_GROWTH_BOUND: u64 = 24 << 20;

#[test]
fn ten_thousand_recorded_readbacks_keep_memory_flat() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (instance, ctx) = device();
    let crowd = cross_check_crowd(256, 3, Integrator::Rk4, 1e-3).unwrap();
    let mut sim = Simulation::gpu(&crowd, &ctx).unwrap();
    let frames = 10_000u64;
    let warm = 1_000;
    let mut at_warm = None;
    let mut handed_out = 0u64;
    let started = std::time::Instant::now();
    // Every step recorded: each frame is read back without blocking, double-buffered.
    record_run(
        &mut sim,
        frames,
        1,
        |step, _, bodies| {
            assert_eq!(step, handed_out);
            assert_eq!(bodies.len(), 256);
            handed_out += 1;
            if step == warm {
                at_warm = Some((resident_bytes(), Live::count(&instance)));
            }
            Ok(())
        },
        |_| {},
    )
    .unwrap();
    settle(&ctx);
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(handed_out, frames + 1);
    let (resident_warm, live_warm) = at_warm.unwrap();
    let (resident_end, live_end) = (resident_bytes(), Live::count(&instance));
    let growth = resident_end.saturating_sub(resident_warm);
    println!(
        "{frames} readbacks in {seconds:.1} s: resident {:.1} MiB after {warm}, {:.1} MiB at the end \
         ({:+.3} kB per readback); live {live_end:?}",
        resident_warm as f64 / MIB,
        resident_end as f64 / MIB,
        (resident_end as f64 - resident_warm as f64) / 1024.0 / (frames - warm) as f64,
    );
    assert_eq!(
        live_end, live_warm,
        "wgpu resources grew over the readbacks"
    );
    assert!(
        growth < RESIDENT_GROWTH_BOUND,
        "resident memory grew by {:.1} MiB over {} readbacks",
        growth as f64 / MIB,
        frames - warm
    );
    drop(sim);
    settle(&ctx);
}

#[test]
fn a_thousand_simulations_created_stepped_and_dropped_keep_memory_flat() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (instance, ctx) = device();
    let crowd = cross_check_crowd(1024, 4, Integrator::Rk4, 1e-3).unwrap();
    let (cycles, warm) = (1_000, 100);
    let before = Live::count(&instance);
    let mut at_warm = None;
    let started = std::time::Instant::now();
    for cycle in 0..cycles {
        if cycle == warm {
            settle(&ctx);
            at_warm = Some((resident_bytes(), Live::count(&instance)));
        }
        let mut sim = Simulation::gpu(&crowd, &ctx).unwrap();
        sim.step(2).unwrap();
        let bodies = sim.bodies().unwrap();
        assert_eq!(bodies.len(), crowd.bodies.len());
        drop(sim);
    }
    settle(&ctx);
    let seconds = started.elapsed().as_secs_f64();
    let (resident_warm, live_warm) = at_warm.unwrap();
    let (resident_end, live_end) = (resident_bytes(), Live::count(&instance));
    let growth = resident_end.saturating_sub(resident_warm);
    println!(
        "{cycles} simulations in {seconds:.1} s: resident {:.1} MiB after {warm}, {:.1} MiB at the end \
         ({:+.3} kB per simulation); live before {before:?}, after {warm} {live_warm:?}, at the end {live_end:?}",
        resident_warm as f64 / MIB,
        resident_end as f64 / MIB,
        (resident_end as f64 - resident_warm as f64) / 1024.0 / (cycles - warm) as f64,
    );
    assert_eq!(live_end, live_warm, "wgpu resources grew over the cycles");
    // Nothing of a dropped simulation stays but the context's cached pipelines.
    assert_eq!(live_end.buffers, before.buffers, "{live_end:?}");
    assert_eq!(live_end.bind_groups, before.bind_groups, "{live_end:?}");
    assert!(
        growth < RESIDENT_GROWTH_BOUND,
        "resident memory grew by {:.1} MiB over {} simulations",
        growth as f64 / MIB,
        cycles - warm
    );
}
