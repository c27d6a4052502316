//! Does an adapter round like the CPU? The kernel's f32 and f64 results equal the CPU
//! backends' bit for bit only where the driver evaluates each `+ - * / sqrt` as IEEE 754
//! says: correctly rounded, and `a*b + c` not fused. This probe compiles the operations
//! the way the kernel is compiled (exact SPIR-V where the device takes it), runs them on
//! many operands and compares every result with the CPU's, so `rigid-crowd info` can say
//! which operation departs on which adapter, and by how many ulps.
//!
//! In f32 it also measures `/` and `sqrt` taken in f64 and rounded back to f32: with 53
//! bits against 24, that double rounding is still correct, so where the f64 operations are
//! exact it is a correctly rounded f32 division and square root.

use wgpu::util::DeviceExt;

use crate::backends::gpu::device::bindings::bind_group_layout;
use crate::backends::gpu::device::context::{GpuContext, one_line};
use crate::backends::gpu::device::exact_spirv::{self, Checks};
use crate::backends::gpu::device::readback::read_buffer;
use crate::model::error::{Error, Result};
use crate::model::precision::{Precision, Real};

/// Operand triples `(a, b, c)` probed per precision.
pub const PROBED_OPERANDS: usize = 1 << 16;
const WORKGROUP: usize = 64;
const ENTRY: &str = "probe";

/// The probed operations, in the order the kernel writes their results.
const OPERATIONS: [&str; 7] = [
    "a + b",
    "a - b",
    "a * b",
    "a * b + c",
    "a / b",
    "sqrt(a)",
    "1 / sqrt(a)",
];
/// The f32-only extras: `/` and `sqrt` taken in f64 and rounded to f32.
const THROUGH_F64: [&str; 2] = ["a / b via f64", "sqrt(a) via f64"];

/// One operation's results against the CPU's.
#[derive(Clone, Debug, PartialEq)]
pub struct OperationReport {
    /// The operation, as `info` prints it (`a / b`, `sqrt(a) via f64`).
    pub operation: &'static str,
    /// Results whose bits differ from the CPU's correctly rounded ones.
    pub differing: usize,
    /// The largest distance from the CPU's result, in units in the last place.
    pub worst_ulps: u64,
}

/// An adapter's arithmetic in one precision.
#[derive(Clone, Debug, PartialEq)]
pub struct ArithmeticReport {
    /// The precision the operations ran in.
    pub precision: Precision,
    /// Whether the operations went to the driver as exact SPIR-V (`NoContraction`), as the
    /// kernel does, rather than as WGSL the driver may rearrange.
    pub exact_spirv: bool,
    /// Operand triples probed.
    pub operands: usize,
    /// Each operation's results against the CPU's.
    pub operations: Vec<OperationReport>,
}

impl ArithmeticReport {
    /// One line: `exact` or the operations that depart and by how much.
    pub fn summary(&self) -> String {
        let departs: Vec<String> = self
            .operations
            .iter()
            .filter(|op| op.differing > 0)
            .map(|op| {
                format!(
                    "{} differs in {} (at most {} ulp)",
                    op.operation, op.differing, op.worst_ulps
                )
            })
            .collect();
        let how = if self.exact_spirv {
            "exact SPIR-V"
        } else {
            "WGSL"
        };
        let verdict = if departs.is_empty() {
            "every result equals the CPU's".to_string()
        } else {
            departs.join("; ")
        };
        format!(
            "{} arithmetic ({how}, {} operands; + - * a*b+c / sqrt 1/sqrt{}): {verdict}",
            self.precision.wgsl_type(),
            self.operands,
            if self.precision == Precision::F32 {
                ", and / sqrt via f64"
            } else {
                ""
            },
        )
    }
}

/// A scalar the probe runs in: its bits as a signed integer line, so that the distance
/// between two finite values of one sign is their ulp distance.
trait Probed: Real + Copy {
    fn ordered_bits(self) -> i64;
    fn operations(a: Self, b: Self, c: Self) -> Vec<Self>;
}

impl Probed for f32 {
    fn ordered_bits(self) -> i64 {
        let bits = self.to_bits() as i32;
        (if bits < 0 { i32::MIN - bits } else { bits }) as i64
    }
    fn operations(a: f32, b: f32, c: f32) -> Vec<f32> {
        let root = a.abs().sqrt();
        vec![
            a + b,
            a - b,
            a * b,
            a * b + c,
            a / b,
            root,
            1.0 / root,
            a / b,
            root,
        ]
    }
}

impl Probed for f64 {
    fn ordered_bits(self) -> i64 {
        let bits = self.to_bits() as i64;
        if bits < 0 { i64::MIN - bits } else { bits }
    }
    fn operations(a: f64, b: f64, c: f64) -> Vec<f64> {
        let root = a.abs().sqrt();
        vec![a + b, a - b, a * b, a * b + c, a / b, root, 1.0 / root]
    }
}

/// The probe's WGSL in `precision`: one thread per operand triple.
fn source(precision: Precision) -> String {
    let real = precision.wgsl_type();
    let (count, extras) = match precision {
        Precision::F32 => (
            OPERATIONS.len() + THROUGH_F64.len(),
            "    out[o + 7u] = f32(f64(a) / f64(b));\n    out[o + 8u] = f32(sqrt(f64(abs(a))));\n",
        ),
        Precision::F64 => (OPERATIONS.len(), ""),
    };
    format!(
        "@group(0) @binding(0) var<storage, read> operands: array<{real}>;\n\
         @group(0) @binding(1) var<storage, read_write> out: array<{real}>;\n\
         @compute @workgroup_size({WORKGROUP})\n\
         fn {ENTRY}(@builtin(global_invocation_id) id: vec3<u32>) {{\n\
         \x20   let i = id.x;\n\
         \x20   if i >= {PROBED_OPERANDS}u {{ return; }}\n\
         \x20   let a = operands[3u * i];\n\
         \x20   let b = operands[3u * i + 1u];\n\
         \x20   let c = operands[3u * i + 2u];\n\
         \x20   let root = sqrt(abs(a));\n\
         \x20   let o = {count}u * i;\n\
         \x20   out[o] = a + b;\n\
         \x20   out[o + 1u] = a - b;\n\
         \x20   out[o + 2u] = a * b;\n\
         \x20   out[o + 3u] = a * b + c;\n\
         \x20   out[o + 4u] = a / b;\n\
         \x20   out[o + 5u] = root;\n\
         \x20   out[o + 6u] = 1.0 / root;\n\
         {extras}}}\n"
    )
}

/// Operand `k` of triple `i`: a sign, a mantissa from a Weyl sequence (every bit pattern
/// equally likely, no two triples alike) and an exponent in `[-8, 8]`, so that no result
/// is subnormal, which some GPUs flush to zero.
fn operand(i: usize, k: usize) -> f64 {
    const WEYL: [u64; 3] = [
        0x9e37_79b9_7f4a_7c15,
        0xc2b2_ae3d_27d4_eb4f,
        0x1656_67b1_9e37_79f9,
    ];
    let bits = (i as u64 + 1).wrapping_mul(WEYL[k]);
    let mantissa = 1.0 + (bits >> 11) as f64 / (1u64 << 53) as f64;
    let exponent = ((bits >> 3) % 17) as i32 - 8;
    let sign = if (bits >> 40) & 1 == 1 { -1.0 } else { 1.0 };
    sign * mantissa * 2f64.powi(exponent)
}

/// Runs the probe in `precision` on `ctx`'s device: which operations give the CPU's bits.
/// Errors if the device lacks `precision` or the probe does not compile.
pub fn probe_arithmetic(ctx: &GpuContext, precision: Precision) -> Result<ArithmeticReport> {
    ctx.check_precision(precision)?;
    match precision {
        Precision::F32 => probe_in::<f32>(ctx, precision),
        Precision::F64 => probe_in::<f64>(ctx, precision),
    }
}

fn probe_in<R: Probed>(ctx: &GpuContext, precision: Precision) -> Result<ArithmeticReport> {
    let operands: Vec<R> = (0..PROBED_OPERANDS)
        .flat_map(|i| (0..3).map(move |k| R::from_f64(operand(i, k))))
        .collect();
    let names: Vec<&'static str> = match precision {
        Precision::F32 => OPERATIONS.iter().chain(&THROUGH_F64).copied().collect(),
        Precision::F64 => OPERATIONS.to_vec(),
    };
    let (device_results, exact_spirv) = run_on_device(ctx, precision, &operands, names.len())?;
    let mut operations: Vec<OperationReport> = names
        .iter()
        .map(|&operation| OperationReport {
            operation,
            differing: 0,
            worst_ulps: 0,
        })
        .collect();
    for (triple, got) in operands
        .chunks_exact(3)
        .zip(device_results.chunks_exact(names.len()))
    {
        let want = R::operations(triple[0], triple[1], triple[2]);
        for ((report, &want), &got) in operations.iter_mut().zip(&want).zip(got) {
            tally(report, want, got);
        }
    }
    Ok(ArithmeticReport {
        precision,
        exact_spirv,
        operands: PROBED_OPERANDS,
        operations,
    })
}

/// Counts `got` against `want` in `report`.
fn tally<R: Probed>(report: &mut OperationReport, want: R, got: R) {
    if want.ordered_bits() != got.ordered_bits() {
        report.differing += 1;
        let ulps = want.ordered_bits().abs_diff(got.ordered_bits());
        report.worst_ulps = report.worst_ulps.max(ulps);
    }
}

/// The device's results, `per_triple` of them per operand triple, and whether the probe
/// went to the driver as exact SPIR-V.
fn run_on_device<R: Probed>(
    ctx: &GpuContext,
    precision: Precision,
    operands: &[R],
    per_triple: usize,
) -> Result<(Vec<R>, bool)> {
    let device = &ctx.device;
    let wgsl = source(precision);
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let exact = device
        .features()
        .contains(wgpu::Features::PASSTHROUGH_SHADERS);
    let module = if exact {
        let words = exact_spirv::compile(&wgsl, ENTRY, &[], Checks::Bounded)?;
        // SAFETY: `compile` validated the module; its only indices are checked.
        unsafe { exact_spirv::module(device, "arithmetic_probe.spv", ENTRY, &words) }
    } else {
        device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("arithmetic_probe.wgsl"),
            source: wgpu::ShaderSource::Wgsl(wgsl.into()),
        })
    };
    let storage = wgpu::BufferBindingType::Storage { read_only: true };
    let output = wgpu::BufferBindingType::Storage { read_only: false };
    let layout = bind_group_layout(device, "arithmetic probe", &[storage, output]);
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("arithmetic probe"),
        layout: Some(
            &device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("arithmetic probe"),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            }),
        ),
        module: &module,
        entry_point: Some(ENTRY),
        compilation_options: Default::default(),
        cache: None,
    });
    let input = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("probe operands"),
        contents: bytemuck::cast_slice(operands),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let count = PROBED_OPERANDS * per_triple;
    let results = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("probe results"),
        size: (count * precision.scalar_bytes()) as u64,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("arithmetic probe"),
        layout: &layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: input.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: results.as_entire_binding(),
            },
        ],
    });
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(Error::Gpu(one_line(&format!(
            "compiling the arithmetic probe: {e}"
        ))));
    }
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(PROBED_OPERANDS.div_ceil(WORKGROUP) as u32, 1, 1);
    }
    ctx.queue.submit([encoder.finish()]);
    Ok((read_buffer(ctx, &results, count)?, exact))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lavapipe (what the tests run on) rounds every operation as IEEE 754 says, in both
    /// precisions: the bit-for-bit tests stand on this.
    #[test]
    fn on_the_test_adapter_every_operation_gives_the_cpus_bits() {
        let ctx = GpuContext::new().expect("a GPU adapter (lavapipe in CI)");
        for precision in [Precision::F32, Precision::F64] {
            let report = probe_arithmetic(&ctx, precision).unwrap();
            assert!(report.exact_spirv, "{}", report.summary());
            for op in &report.operations {
                assert_eq!(op.differing, 0, "{}", report.summary());
            }
            assert!(report.summary().ends_with("every result equals the CPU's"));
        }
    }

    /// The comparison catches a departure of one ulp: a fused `a*b + c`, as a driver free to
    /// contract would compute it, differs from the CPU's on many operands, by one ulp mostly.
    #[test]
    fn a_fused_multiply_add_is_caught() {
        let mut report = OperationReport {
            operation: "a * b + c",
            differing: 0,
            worst_ulps: 0,
        };
        for i in 0..PROBED_OPERANDS {
            let [a, b, c] = [0, 1, 2].map(|k| operand(i, k) as f32);
            tally(&mut report, a * b + c, a.mul_add(b, c));
        }
        assert!(report.differing > PROBED_OPERANDS / 10, "{report:?}");
        assert!(report.worst_ulps >= 1, "{report:?}");
    }

    /// The ulp distance counts across zero and between neighbours.
    #[test]
    fn ordered_bits_measure_ulps() {
        let one = 1.0f32;
        assert_eq!(
            f32::from_bits(one.to_bits() + 3).ordered_bits() - one.ordered_bits(),
            3
        );
        assert_eq!(0.0f32.ordered_bits(), (-0.0f32).ordered_bits());
        assert_eq!(
            f64::MIN_POSITIVE.ordered_bits(),
            -(-f64::MIN_POSITIVE).ordered_bits()
        );
    }

    /// The operands cover every exponent in [-8, 8] and both signs.
    #[test]
    fn operands_span_their_range() {
        let exponents: std::collections::BTreeSet<i32> = (0..PROBED_OPERANDS)
            .map(|i| operand(i, 1).abs().log2().floor() as i32)
            .collect();
        assert_eq!(exponents, (-8..=8).collect());
        assert!((0..100).any(|i| operand(i, 0) < 0.0) && (0..100).any(|i| operand(i, 0) > 0.0));
    }
}
