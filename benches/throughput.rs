//! Body-steps per second of each backend (criterion): the f64 reference, the fast f32 CPU
//! path and the GPU kernel, on `rigid_crowd::bench::workload`. `RIGID_CROWD_BENCH_SMOKE=1`
//! shrinks the sizes so CI can smoke-run the benches; `rigid-crowd bench` is the fuller
//! comparison (adapter, roofline, JSON and plot).

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rigid_crowd::bench::workload;
use rigid_crowd::gpu::GpuContext;
use rigid_crowd::{Backend, Simulation};

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

criterion_group!(benches, cpu_backends, gpu);
criterion_main!(benches);
