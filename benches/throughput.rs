//! Body-steps per second of each backend (criterion): the f64 reference, the fast f32 CPU
//! path and the GPU kernel, on the workload of `rigid-crowd bench`; and the cost of reading a
//! million states back, as `Vec<Body>` and as lean arrays (group `reads`). `RIGID_CROWD_BENCH_SMOKE=1`
//! shrinks the sizes so CI can smoke-run the benches; `rigid-crowd bench` is the fuller
//! comparison (adapter, roofline, JSON and plot).

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rigid_crowd::cli::bench_workload as workload;
use rigid_crowd::gpu::GpuContext;
use rigid_crowd::{Backend, Simulation, StateArrays};

/// Steps per measured iteration: on the GPU one submission of several (fused) dispatches,
/// as in real use.
const STEPS: u64 = 16;

fn sizes() -> Vec<usize> {
    if std::env::var_os("RIGID_CROWD_BENCH_SMOKE").is_some() {
        vec![1_000]
    } else {
        vec![1_000, 10_000, 100_000]
    }
}

/// Benches `make`'s simulation at each size, `STEPS` steps per iteration.
fn bench_backend(c: &mut Criterion, group: &str, make: impl Fn(usize) -> Simulation) {
    let mut group = c.benchmark_group(group);
    for n in sizes() {
        let mut sim = make(n);
        group.throughput(Throughput::Elements(n as u64 * STEPS));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                sim.step(black_box(STEPS)).unwrap();
                sim.finish().unwrap();
            })
        });
    }
    group.finish();
}

fn cpu_backends(c: &mut Criterion) {
    for backend in [Backend::Reference, Backend::FastCpu] {
        bench_backend(c, backend.name(), |n| {
            Simulation::new(&workload(n, 1).unwrap(), backend).unwrap()
        });
    }
}

fn gpu(c: &mut Criterion) {
    let ctx = match GpuContext::new() {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("gpu benches skipped: {e}");
            return;
        }
    };
    let group = format!("gpu ({})", ctx.adapter_info().name);
    bench_backend(c, &group, |n| {
        Simulation::gpu(&workload(n, 1).unwrap(), &ctx).unwrap()
    });
}

/// Bodies per read in the `reads` group.
fn read_size() -> usize {
    if std::env::var_os("RIGID_CROWD_BENCH_SMOKE").is_some() {
        1_000
    } else {
        1_000_000
    }
}

/// One read of every state: `bodies()` against the lean reads into reused arrays.
fn reads(c: &mut Criterion) {
    let n = read_size();
    let crowd = workload(n, 1).unwrap();
    let ctx = GpuContext::new().ok();
    let mut group = c.benchmark_group("reads");
    group
        .sample_size(10)
        .throughput(Throughput::Elements(n as u64));
    for backend in [Backend::FastCpu, Backend::Gpu] {
        let mut sim = match (&ctx, backend) {
            (Some(ctx), Backend::Gpu) => Simulation::gpu(&crowd, ctx).unwrap(),
            (None, Backend::Gpu) => continue,
            _ => Simulation::new(&crowd, backend).unwrap(),
        };
        let name = |what| BenchmarkId::new(what, format!("{} {n}", backend.name()));
        group.bench_function(name("bodies"), |b| {
            b.iter(|| black_box(sim.bodies().unwrap()))
        });
        let mut state = StateArrays::<f32>::state(n);
        group.bench_function(name("state arrays"), |b| {
            b.iter(|| sim.read_states(black_box(state.as_mut())).unwrap())
        });
        let mut poses = StateArrays::<f32>::poses(n);
        group.bench_function(name("poses"), |b| {
            b.iter(|| sim.read_states(black_box(poses.as_mut())).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, cpu_backends, gpu, reads);
criterion_main!(benches);
