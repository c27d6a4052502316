//! Body-steps per second of each backend (criterion). `RIGID_CROWD_BENCH_SMOKE=1` shrinks the
//! sizes so CI can smoke-run the benches; `rigid-crowd bench` is the fuller comparison.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rigid_crowd::glam::DVec3;
use rigid_crowd::gpu::GpuContext;
use rigid_crowd::{Crowd, CrowdSpec, Force, ForceKind, Simulation};

/// GPU steps per measured iteration: one submission of several dispatches, as in real use.
const GPU_STEPS: u64 = 10;

fn sizes() -> Vec<usize> {
    if std::env::var_os("RIGID_CROWD_BENCH_SMOKE").is_some() {
        vec![1_000]
    } else {
        vec![1_000, 10_000, 100_000]
    }
}

fn crowd(bodies: usize) -> Crowd {
    Crowd::new(CrowdSpec::new(bodies, 1).generate().unwrap(), 1e-3)
        .with_force(Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        }))
        .with_force(Force::on_all(ForceKind::LinearDrag {
            linear: 0.3,
            angular: 0.05,
        }))
}

fn cpu_reference(c: &mut Criterion) {
    let mut group = c.benchmark_group("cpu-ref");
    for n in sizes() {
        let mut sim = Simulation::cpu(&crowd(n)).unwrap();
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| sim.step(black_box(1)).unwrap())
        });
    }
    group.finish();
}

fn gpu(c: &mut Criterion) {
    let ctx = match GpuContext::new() {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("gpu benches skipped: {e}");
            return;
        }
    };
    let mut group = c.benchmark_group(format!("gpu ({})", ctx.adapter_info().name));
    for n in sizes() {
        let mut sim = Simulation::gpu(&crowd(n), &ctx).unwrap();
        group.throughput(Throughput::Elements(n as u64 * GPU_STEPS));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                sim.step(black_box(GPU_STEPS)).unwrap();
                sim.finish().unwrap();
            })
        });
    }
    group.finish();
}

criterion_group!(benches, cpu_reference, gpu);
criterion_main!(benches);
