//! Timing each backend on the benchmark workload: warm-up excluded, median of repeats,
//! GPU time from timestamp queries where the adapter has them.

use std::time::Instant;

use serde::Serialize;

use crate::backends::gpu::{
    GpuContext, GpuOptions, Precision, copy_bandwidth, tangent_bytes_per_body,
};
use crate::bench::labels::describe_options;
use crate::bench::workload::Workload;
use crate::model::backend::Backend;
use crate::model::error::{Error, Result};
use crate::simulation::facade::Simulation;

/// Bytes one unfused f32 step must move per body: the 64-byte state read and written, the
/// 48-byte constants read. Twice that in f64 (`bytes_per_body_step`).
pub const BYTES_PER_BODY_STEP: f64 = 64.0 + 64.0 + 48.0;

/// Bytes one unfused step must move per body with scalars of `precision`.
pub fn bytes_per_body_step(precision: Precision) -> f64 {
    BYTES_PER_BODY_STEP * precision.scalar_bytes() as f64 / 4.0
}

/// FLOP per byte of device memory traffic of the gravity-and-drag RK4 kernel with
/// `steps_per_dispatch` steps fused: a fused dispatch reads and writes each body once for
/// all its steps. Against an adapter's FLOP/s over bytes/s (its ridge point) this says
/// whether the kernel is bound by memory (below) or by arithmetic (above).
pub fn arithmetic_intensity(precision: Precision, steps_per_dispatch: u32) -> f64 {
    FLOP_PER_BODY_STEP * steps_per_dispatch as f64 / bytes_per_body_step(precision)
}

/// Floating-point operations per RK4 body-step of the workload (gravity and drag), counted
/// by hand from shaders/: four derivatives of about 134 (auxiliaries 84, forces 18, spin
/// 32), four stage updates of 26, the weighted sum 53, renormalization 12.
pub const FLOP_PER_BODY_STEP: f64 = 4.0 * 134.0 + 4.0 * 26.0 + 53.0 + 12.0;

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchPlan {
    /// Crowd sizes.
    pub bodies: Vec<usize>,
    /// Steps per timed run.
    pub steps: u64,
    /// Timed runs per configuration (the median is reported); one untimed warm-up precedes.
    pub repeats: usize,
    /// Backends to run.
    pub backends: Vec<Backend>,
    /// GPU kernel variants (fusion, workgroup size, bounds checks); one row each, for each
    /// GPU backend (whose precision replaces the variant's).
    pub gpu_variants: Vec<GpuOptions>,
    /// Thread counts for the CPU backends; one row each.
    pub cpu_threads: Vec<usize>,
    /// What the crowd feels.
    pub workload: Workload,
    /// GPU device counts; one row each (the crowd split over that many devices). With more
    /// than one count, every GPU row is timed by the host's wall clock, the same for all.
    pub devices: Vec<usize>,
    /// The tangents each row carries, one row each on a backend that carries them (`None`:
    /// none, the plain run, the only row of the others): a name of `Simulation::start_tangents`.
    pub tangents: Vec<Option<String>>,
}

/// One row of the benchmark table.
#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    /// `cpu-ref`, `cpu`, `gpu` or `gpu-f64`.
    pub backend: String,
    /// The precision the backend computes in: `f32` or `f64`.
    pub precision: String,
    /// Threads (CPU) or kernel options (GPU).
    pub variant: String,
    /// The adapter (GPU) or CPU description.
    pub adapter: String,
    /// Bodies in the crowd.
    pub bodies: usize,
    /// Steps per timed run.
    pub steps: u64,
    /// Median seconds of the timed runs.
    pub seconds: f64,
    /// Every timed run, in seconds.
    pub runs: Vec<f64>,
    /// `timestamp` (device timestamp queries) or `wall` (submit-and-wait host clock).
    pub clock: String,
    /// GPU only: seconds of set-up and first run beyond a warm run (wall clock): the kernels'
    /// compile (naga, pipelines, a driver's compile at first dispatch, as lavapipe's) and the
    /// buffers'; near zero where the device held the kernels already (an earlier row's).
    pub compile_seconds: Option<f64>,
    /// Body-steps per second.
    pub body_steps_per_second: f64,
    /// `bytes_per_body_step` times body-steps per second: the bandwidth an unfused step
    /// would need at this rate.
    pub effective_gb_per_second: f64,
    /// GPU only: bytes the kernel really moves per second over the measured copy bandwidth.
    pub fraction_of_copy_bandwidth: Option<f64>,
    /// GPU only: arithmetic throughput, `FLOP_PER_BODY_STEP` times body-steps per second.
    pub gflop_per_second: Option<f64>,
    /// GPU only: the kernel's [`arithmetic_intensity`] (gravity-drag workload).
    pub flop_per_byte: Option<f64>,
    /// GPU only: operations per body-step of the kernel built for this crowd, read off the IR
    /// its physics is traced into (src/backends/gpu/kernel/op_count.rs), at this row's fusion.
    pub ops_per_body_step: Option<f64>,
    /// Body-steps per second over the `cpu-ref` row of the same size (best thread count).
    pub speedup_over_cpu_ref: Option<f64>,
    /// Body-steps per second over the `cpu` row of the same size (best thread count).
    pub speedup_over_cpu: Option<f64>,
    /// GPU devices the crowd was split over (1 on the CPU).
    pub devices: usize,
    /// With several devices: body-steps per second over the devices times those of the
    /// same variant on one device, measured in the same run.
    pub parallel_efficiency: Option<f64>,
    /// The tangents carried (`Simulation::start_tangents`), if any.
    pub tangents: Option<String>,
    /// With tangents: the bytes they take per body beside the state.
    pub tangent_bytes_per_body: Option<usize>,
    /// With tangents: the time per body-step over the plain row's of the same backend and
    /// threads, measured in the same run.
    pub cost_over_plain: Option<f64>,
}

/// The copy bandwidth measured for one crowd size.
#[derive(Clone, Debug, Serialize)]
pub struct CopyBandwidth {
    /// Crowd size the copy matches (bytes copied: half of one unfused step's traffic).
    pub bodies: usize,
    /// Bytes read plus written per second, in GB/s.
    pub gb_per_second: f64,
    /// `timestamp` or `wall`.
    pub clock: String,
}

/// Everything one `rigid-crowd bench` run measured.
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    /// The host CPU and its logical cores.
    pub cpu: String,
    /// The GPU adapter, if one was used.
    pub adapter: Option<String>,
    /// What the crowd felt (`--workload`).
    pub workload: String,
    /// Copy bandwidth per size (GPU runs only).
    pub copy_bandwidth: Vec<CopyBandwidth>,
    /// One row per backend, variant and size.
    pub rows: Vec<Measurement>,
    /// GPU throughput recorded against unrecorded (`rigid-crowd bench --record-every K`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recording: Vec<crate::bench::recording::RecordingCost>,
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

/// The host CPU's model name and logical core count.
pub fn cpu_description() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{model}, {cores} logical cores")
}

impl BenchPlan {
    /// Runs every configuration; `on_row` sees each row as soon as it is measured.
    pub fn run(
        &self,
        gpus: &[GpuContext],
        mut on_row: impl FnMut(&Measurement),
    ) -> Result<BenchReport> {
        let ctx = gpus.first();
        if self.repeats == 0 {
            return Err(Error::invalid("--repeats", "must be at least 1"));
        }
        let cpu = cpu_description();
        let mut report = BenchReport {
            cpu: cpu.clone(),
            adapter: ctx.map(|c| c.describe()),
            workload: self.workload.name().to_string(),
            copy_bandwidth: Vec::new(),
            rows: Vec::new(),
            recording: Vec::new(),
        };
        for &bodies in &self.bodies {
            let crowd = self.workload.crowd(bodies, 1)?;
            let first_row = report.rows.len();
            for &backend in &self.backends {
                match backend {
                    Backend::Reference | Backend::FastCpu => {
                        for &threads in &self.cpu_threads {
                            let mut plain = None;
                            for tangents in &self.tangents {
                                let tangents = tangents.as_deref();
                                let mut row =
                                    self.measure_cpu(&crowd, backend, threads, tangents, &cpu)?;
                                match tangents {
                                    None => plain = Some(row.body_steps_per_second),
                                    Some(_) => {
                                        row.cost_over_plain =
                                            plain.map(|p| p / row.body_steps_per_second)
                                    }
                                }
                                on_row(&row);
                                report.rows.push(row);
                            }
                        }
                    }
                    Backend::Gpu | Backend::GpuF64 => {
                        let ctx = ctx.ok_or_else(|| {
                            Error::NoAdapter(format!("the {backend} backend needs an adapter"))
                        })?;
                        let precision = backend.gpu_precision().unwrap_or_default();
                        let (copy, copy_clock) = copy_bandwidth(
                            ctx,
                            (BYTES_PER_BODY_STEP / 2.0 * bodies as f64) as u64,
                            self.repeats,
                        )?;
                        report.copy_bandwidth.push(CopyBandwidth {
                            bodies,
                            gb_per_second: copy / 1e9,
                            clock: clock_name(copy_clock).into(),
                        });
                        for options in &self.gpu_variants {
                            // f64 kernels divide in f64 whatever the variant: one row.
                            if precision == Precision::F64 && options.f32_divisions_in_f64 {
                                continue;
                            }
                            let options = GpuOptions {
                                precision,
                                ..*options
                            };
                            let mut one_device = None;
                            for &devices in &self.devices {
                                let devices = gpus.get(..devices).ok_or_else(|| {
                                    Error::invalid(
                                        "--devices",
                                        format!("{devices} devices asked for, {} open", gpus.len()),
                                    )
                                })?;
                                let mut plain = None;
                                for tangents in &self.tangents {
                                    let tangents = tangents.as_deref();
                                    let mut row =
                                        self.measure_gpu(&crowd, devices, options, copy, tangents)?;
                                    match (tangents, devices.len()) {
                                        (Some(_), _) => {
                                            row.cost_over_plain =
                                                plain.map(|p| p / row.body_steps_per_second)
                                        }
                                        (None, n) => {
                                            plain = Some(row.body_steps_per_second);
                                            match n {
                                                1 => one_device = plain,
                                                n => {
                                                    row.parallel_efficiency =
                                                        one_device.map(|one| {
                                                            row.body_steps_per_second
                                                                / (n as f64 * one)
                                                        })
                                                }
                                            }
                                        }
                                    }
                                    on_row(&row);
                                    report.rows.push(row);
                                }
                            }
                        }
                    }
                }
            }
            fill_speedups(&mut report.rows[first_row..]);
        }
        Ok(report)
    }

    fn measure_cpu(
        &self,
        crowd: &crate::assembly::crowd::Crowd,
        backend: Backend,
        threads: usize,
        tangents: Option<&str>,
        cpu: &str,
    ) -> Result<Measurement> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| Error::invalid("--threads", e.to_string()))?;
        let mut sim = Simulation::new(crowd, backend)?;
        let mut variant = format!("{threads} threads");
        let mut tangent_bytes = None;
        if let Some(name) = tangents {
            sim.start_tangents(&[name])?;
            let numbers = sim.tangent_plan().map_or(0, |plan| plan.body_len());
            let bytes = numbers * backend.precision().scalar_bytes();
            variant = format!("{variant}, {name}, {bytes} B/body");
            tangent_bytes = Some(bytes);
        }
        let runs = pool.install(|| -> Result<Vec<f64>> {
            sim.step(self.steps)?; // warm-up: caches, page faults, thread start
            let mut runs = Vec::with_capacity(self.repeats);
            for _ in 0..self.repeats {
                let start = Instant::now();
                sim.step(self.steps)?;
                runs.push(start.elapsed().as_secs_f64());
            }
            Ok(runs)
        })?;
        let mut row = self.row(
            backend,
            variant,
            cpu.to_string(),
            crowd.bodies.len(),
            runs,
            "wall",
        );
        row.tangents = tangents.map(str::to_string);
        row.tangent_bytes_per_body = tangent_bytes;
        Ok(row)
    }

    fn measure_gpu(
        &self,
        crowd: &crate::assembly::crowd::Crowd,
        devices: &[GpuContext],
        options: GpuOptions,
        copy_bytes_per_second: f64,
        tangents: Option<&str>,
    ) -> Result<Measurement> {
        let set_up = Instant::now();
        let mut sim = Simulation::gpu_on_devices(crowd, devices, options)?;
        if let Some(name) = tangents {
            sim.start_tangents(&[name])?;
        }
        sim.timed_steps(self.steps)?; // warm-up: pipeline, first touch of the buffers
        let cold = set_up.elapsed().as_secs_f64();
        let mut warm = Vec::with_capacity(self.repeats);
        let mut runs = Vec::with_capacity(self.repeats);
        let mut clock = "timestamp";
        // Rows on different device counts are compared, so all take the same clock.
        let wall_only = self.devices.iter().any(|&n| n > 1);
        for _ in 0..self.repeats {
            let times = sim.timed_steps(self.steps)?;
            warm.push(times.wall.as_secs_f64());
            runs.push(match times.device {
                Some(device) if !wall_only => device.as_secs_f64(),
                _ => {
                    clock = "wall";
                    times.wall.as_secs_f64()
                }
            });
        }
        let mut variant = describe_options(sim.gpu_options().unwrap_or(&options));
        if devices.len() > 1 {
            variant += &format!(", {} devices", devices.len());
        }
        let tangent_bytes = tangents.zip(sim.tangent_plan()).map(|(name, plan)| {
            let bytes = tangent_bytes_per_body(plan.width(), options.precision) as usize;
            variant += &format!(", {name}, {bytes} B/body");
            bytes
        });
        let mut row = self.row(
            Backend::gpu(options.precision),
            variant,
            devices[0].describe(),
            crowd.bodies.len(),
            runs,
            clock,
        );
        let moved = bytes_per_body_step(options.precision) / options.steps_per_dispatch as f64;
        row.devices = devices.len();
        row.compile_seconds = (!warm.is_empty()).then(|| (cold - median(&warm)).max(0.0));
        row.tangents = tangents.map(str::to_string);
        row.tangent_bytes_per_body = tangent_bytes;
        row.ops_per_body_step = Some(
            crate::backends::gpu::kernel::op_count::crowd_kernel_ops(crowd, &options)
                .per_body_step(options.steps_per_dispatch),
        );
        row.fraction_of_copy_bandwidth =
            Some(moved * row.body_steps_per_second / copy_bytes_per_second);
        // The bytes moved are the plain kernel's; the operations, the tangent blocks'.
        if let Some(plan) = tangents.and(sim.tangent_plan()) {
            let widest = options.tangent_block_on(devices[0].adapter_info().device_type);
            row.ops_per_body_step =
                Some(crate::backends::gpu::kernel::op_count::crowd_tangent_ops(
                    crowd,
                    &options,
                    (plan, widest),
                ));
            row.fraction_of_copy_bandwidth = None;
            return Ok(row);
        }
        // The operation count is of the gravity-and-drag step.
        if self.workload == Workload::GravityDrag {
            row.gflop_per_second = Some(FLOP_PER_BODY_STEP * row.body_steps_per_second / 1e9);
            row.flop_per_byte = Some(arithmetic_intensity(
                options.precision,
                options.steps_per_dispatch,
            ));
        }
        Ok(row)
    }

    fn row(
        &self,
        backend: Backend,
        variant: String,
        adapter: String,
        bodies: usize,
        runs: Vec<f64>,
        clock: &str,
    ) -> Measurement {
        let seconds = median(&runs).max(1e-12);
        let rate = bodies as f64 * self.steps as f64 / seconds;
        let precision = backend.precision();
        Measurement {
            backend: backend.name().to_string(),
            precision: precision.wgsl_type().to_string(),
            variant,
            adapter,
            bodies,
            steps: self.steps,
            seconds,
            runs,
            clock: clock.to_string(),
            compile_seconds: None,
            body_steps_per_second: rate,
            effective_gb_per_second: bytes_per_body_step(precision) * rate / 1e9,
            fraction_of_copy_bandwidth: None,
            gflop_per_second: None,
            flop_per_byte: None,
            ops_per_body_step: None,
            speedup_over_cpu_ref: None,
            speedup_over_cpu: None,
            devices: 1,
            parallel_efficiency: None,
            tangents: None,
            tangent_bytes_per_body: None,
            cost_over_plain: None,
        }
    }
}

fn clock_name(device: bool) -> &'static str {
    if device { "timestamp" } else { "wall" }
}

/// Speed-ups over the fastest plain `cpu-ref` and `cpu` rows among `rows` (one crowd size).
fn fill_speedups(rows: &mut [Measurement]) {
    let best = |rows: &[Measurement], name: &str| {
        rows.iter()
            .filter(|r| r.backend == name && r.tangents.is_none())
            .map(|r| r.body_steps_per_second)
            .reduce(f64::max)
    };
    let reference = best(rows, Backend::Reference.name());
    let fast = best(rows, Backend::FastCpu.name());
    for row in rows {
        row.speedup_over_cpu_ref = reference.map(|b| row.body_steps_per_second / b);
        row.speedup_over_cpu = fast.map(|b| row.body_steps_per_second / b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_run() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[5.0]), 5.0);
    }

    #[test]
    fn fusing_steps_multiplies_the_work_per_byte_and_f64_halves_it() {
        let unfused = arithmetic_intensity(Precision::F32, 1);
        assert!((unfused - 705.0 / 176.0).abs() < 1e-12, "{unfused}");
        assert!((arithmetic_intensity(Precision::F32, 8) - 8.0 * unfused).abs() < 1e-12);
        assert!((arithmetic_intensity(Precision::F64, 1) - 0.5 * unfused).abs() < 1e-12);
    }

    #[test]
    fn a_cpu_only_plan_measures_every_row_with_speedups() {
        let plan = BenchPlan {
            bodies: vec![64, 200],
            steps: 3,
            repeats: 3,
            backends: vec![Backend::Reference, Backend::FastCpu],
            gpu_variants: vec![],
            cpu_threads: vec![1, 2],
            workload: Workload::GravityDrag,
            devices: vec![1],
            tangents: vec![None],
        };
        let mut seen = 0;
        let report = plan.run(&[], |_| seen += 1).unwrap();
        assert_eq!(report.rows.len(), 8);
        assert_eq!(seen, 8);
        for row in &report.rows {
            assert_eq!(row.runs.len(), 3);
            assert!(row.body_steps_per_second > 0.0);
            let expected = row.bodies as f64 * 3.0 / row.seconds;
            assert!((row.body_steps_per_second - expected).abs() <= 1e-9 * expected);
            assert!(row.speedup_over_cpu_ref.is_some() && row.speedup_over_cpu.is_some());
        }
        // The best reference row of each size is the yardstick: its speed-up is exactly 1.
        for size in [64, 200] {
            let best = report
                .rows
                .iter()
                .filter(|r| r.bodies == size && r.backend == "cpu-ref")
                .map(|r| r.speedup_over_cpu_ref.unwrap())
                .fold(0.0, f64::max);
            assert_eq!(best, 1.0);
        }
    }

    /// Tangent rows run where a backend carries them, after the plain row they are costed
    /// against, and give the tangents' bytes per body: `13 x k` numbers of the backend's
    /// precision.
    #[test]
    fn tangent_rows_follow_the_plain_row_of_a_backend_that_carries_them() {
        let plan = BenchPlan {
            bodies: vec![64],
            steps: 2,
            repeats: 1,
            backends: vec![Backend::Reference, Backend::FastCpu],
            gpu_variants: vec![],
            cpu_threads: vec![1],
            workload: Workload::GravityDrag,
            devices: vec![1],
            tangents: vec![None, Some("mass".into()), Some("state".into())],
        };
        let report = plan.run(&[], |_| {}).unwrap();
        let rows: Vec<(&str, Option<&str>, Option<usize>)> = (report.rows.iter())
            .map(|r| {
                let tangents = r.tangents.as_deref();
                (r.backend.as_str(), tangents, r.tangent_bytes_per_body)
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("cpu-ref", None, None),
                ("cpu-ref", Some("mass"), Some(13 * 8)),
                ("cpu-ref", Some("state"), Some(13 * 13 * 8)),
                ("cpu", None, None),
                ("cpu", Some("mass"), Some(13 * 4)),
                ("cpu", Some("state"), Some(13 * 13 * 4)),
            ]
        );
        assert_eq!(report.rows[2].variant, "1 threads, state, 1352 B/body");
        for row in report.rows[1..3].iter().chain(&report.rows[4..6]) {
            assert!(row.cost_over_plain.is_some_and(|c| c > 0.0));
        }
        assert!(report.rows[0].cost_over_plain.is_none());
    }
}
