//! Stage-level twin test of the kernel's `dual_derivative` (shaders/derivative.wgsl) against the
//! f64 reference's (core/src/body_steps/derivative.rs): one evaluation per body on the device, compared
//! term by term (velocity, dq/dt, force, torque and the angular velocity of `auxiliaries`)
//! in both precisions. The probe entry point (shaders/derivative_probe.wgsl) is appended to
//! the integrate module, so it calls the very functions and reads the very bindings the
//! kernel does; only the integration around them is left out.
//!
//! Each term is measured per body as `|gpu - cpu| / max(|cpu|, scale)`, with vector norms
//! and `scale` the largest `|cpu|` of that term over all bodies (what is asserted). Two
//! stricter measures are printed alongside, not asserted: `scale` the root mean square over
//! the bodies, and no scale at all (`|gpu - cpu| / |cpu|`). They exceed the f64 bound where
//! a term is ill-conditioned on one body: a spring's stretch `position + arm - anchor` is a
//! difference of coordinates of ~100 m for a stretch of ~0.3 m, so a one-ulp difference in
//! `arm` (the device fuses the matrix product into FMAs) flips the rounding of
//! `position + arm` by an ulp of 100, ~1e-14, which the stiffness carries into the torque.
//! In f32 the sinusoidal force's argument `2 pi f t + phase` reaches ~1,200 rad
//! (`cross_check_crowd` sets `phase = 0.618 i`), where one f32 rounding is ~6e-5 rad: the f32
//! bound is set above that.

use std::time::Instant;

use wgpu::util::DeviceExt;

use crate::assembly::crowd::Crowd;
use crate::assembly::force_table::ForceTable;
use crate::backends::gpu::GpuContext;
use crate::backends::gpu::chunk::dispatch_grid;
use crate::backends::gpu::device::probe;
use crate::backends::gpu::device::readback::read_buffer;
use crate::backends::gpu::kernel::kernel_spec::KernelSpec;
use crate::backends::gpu::kernel::layout::{DispatchParams, Encode, decode_states};
use crate::backends::gpu::kernel::shader::{NO_FAULTS, plain_source};
use crate::body_steps::derivative::{ForceEnv, auxiliaries, derivative};
use crate::model::body::BodyState;
use crate::model::codes::Coded;
use crate::model::force::ForceKind;
use crate::model::integrator::Integrator;
use crate::model::precision::{Precision, Real, with_real};
use crate::physics::trace::Tracer;
use crate::simulation::facade::Simulation;
use crate::verify::check_crowd::cross_check_crowd;

/// The probe entry point, appended to the integrate module.
const PROBE: &str = include_str!("../../../shaders/derivative_probe.wgsl");
const WORKGROUP_SIZE: u32 = 64;
const BODIES: usize = 2000;
const SEED: u64 = 17;
const DT: f64 = 1e-3;
/// The clock step of the compared states: t = 0.15, inside the keyframe table's first
/// segment, with the sinusoidal and custom forces away from their t = 0 values.
const START_STEP: u64 = 150;
/// The terms, in the order the probe writes them.
const TERMS: [&str; 5] = ["velocity", "spin", "force", "torque", "omega"];
/// Round-off of f64: the measured worst is ~2e-15.
const F64_BOUND: f64 = 1e-14;
/// Round-off of f32 (2^-24 = 6e-8) amplified by the sinusoid's argument of ~1,200 rad: the
/// measured worst is ~1.1e-5 (force, on a body with a sinusoidal force).
const F32_BOUND: f64 = 3e-5;

/// One body's terms as 4-vectors (the unused lane zero), in `TERMS` order.
type Terms = [[f64; 4]; 5];

/// `cross_check_crowd` (every force type, keyframes and the custom WGSL force) after
/// `START_STEP` reference steps, so orientations, spins and momenta are generic, with its
/// clock at `START_STEP`.
fn probe_crowd() -> Crowd {
    let mut crowd = cross_check_crowd(BODIES, SEED, Integrator::Rk4, DT).unwrap();
    let mut sim = Simulation::reference(&crowd).unwrap();
    sim.step(START_STEP).unwrap();
    crowd.bodies = sim.bodies().unwrap();
    crowd.start_step = START_STEP;
    crowd.validate().unwrap();
    crowd
}

/// What the device computed, and the states and time it computed them at.
struct DeviceRun {
    terms: Vec<Terms>,
    /// The states decoded from the bytes uploaded (rounded to the precision's records).
    states: Vec<BodyState>,
    /// The time the kernel's `step_time` gives each body's clock, in the precision's
    /// arithmetic (each product and the sum rounded, as the kernel rounds them).
    times: Vec<f64>,
}

/// `step_time` of shaders/integrate.wgsl evaluated in `precision`.
fn kernel_step_time(precision: Precision, step: u64, dt: f64) -> f64 {
    let overflow = crate::physics::clock::STEPS_PER_OVERFLOW;
    let (low, high) = (step % overflow, step / overflow);
    match precision {
        Precision::F32 => {
            let dt = dt as f32;
            (low as f32 * dt + high as f32 * (overflow as f32 * dt)) as f64
        }
        Precision::F64 => low as f64 * dt + high as f64 * (overflow as f64 * dt),
    }
}

/// Runs the probe on every body of `crowd`: one `dual_derivative` evaluation each.
fn on_device(ctx: &GpuContext, crowd: &Crowd, precision: Precision) -> DeviceRun {
    let device = &ctx.device;
    let encode = Encode(precision);
    let table = ForceTable::new(crowd, crowd.bodies.len());
    let count = crowd.bodies.len();
    let (keyframes, spans) = encode.keyframes(&crowd.keyframes);
    let states = encode.states(crowd.bodies.iter().map(|b| &b.state), crowd.start_step);
    let decoded = decode_states(precision, &states);
    let grid = dispatch_grid(count as u32, WORKGROUP_SIZE, 65_535);
    let params = encode.params(&DispatchParams {
        body_count: count as u32,
        global_force_count: table.global_count as u32,
        integrator: crowd.integrator.code(),
        row_width: grid.0 * WORKGROUP_SIZE,
        steps_per_dispatch: 1,
        first_body: 0,
        dt: crowd.dt,
        fault_rules: crowd.fault_rules,
        planes: &[],
    });

    let (kernel, _) = plain_source(
        (Tracer::NATIVE, precision),
        &KernelSpec::general(),
        crowd.custom_force.as_ref(),
    );
    let source = [kernel.as_str(), PROBE].join("\n");
    let init = |label, contents: &[u8], usage| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage,
        })
    };
    let storage = wgpu::BufferUsages::STORAGE;
    let params = init("probe params", &params, wgpu::BufferUsages::UNIFORM);
    let states = init("probe states", &states, storage);
    let constants = init(
        "probe constants",
        &encode.constants(&crowd.bodies, &table),
        storage,
    );
    let forces = init("probe forces", &encode.forces(&table, &spans), storage);
    let keyframes = init("probe keyframes", &keyframes, storage);
    let loads = init("probe loads", &encode.no_loads(), storage);
    let faults = init(
        "probe faults",
        bytemuck::cast_slice(&NO_FAULTS),
        storage | wgpu::BufferUsages::COPY_SRC,
    );
    let out_records = 5 * count;
    let out = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("probe out"),
        size: (out_records * 4 * precision.scalar_bytes()) as u64,
        usage: storage | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    // The auto layout holds the bindings the entry point reaches: not the planes (6), which
    // only the contact code reads.
    let bound = [
        (0, &params),
        (1, &states),
        (2, &constants),
        (3, &forces),
        (4, &keyframes),
        (5, &loads),
        (7, &faults),
        (8, &out),
    ];
    probe::dispatch(
        ctx,
        &format!("derivative probe, {precision:?}"),
        &source,
        "derivative_probe",
        &[("workgroup_size", WORKGROUP_SIZE as f64)],
        &bound,
        grid,
    );
    let terms = with_real!(precision, R => read_terms::<R>(ctx, &out, count));
    let faults: Vec<u32> = read_buffer(ctx, &faults, NO_FAULTS.len()).unwrap();
    assert_eq!(
        faults, NO_FAULTS,
        "{precision:?}: the probe raised a fault (unknown force code?)"
    );
    DeviceRun {
        terms,
        times: decoded
            .iter()
            .map(|&(_, step)| kernel_step_time(precision, step, crowd.dt))
            .collect(),
        states: decoded.into_iter().map(|(state, _)| state).collect(),
    }
}

/// The probe's output, widened to f64.
fn read_terms<R: Real>(ctx: &GpuContext, out: &wgpu::Buffer, count: usize) -> Vec<Terms> {
    let reals: Vec<R> = read_buffer(ctx, out, 20 * count).unwrap();
    reals
        .chunks_exact(20)
        .map(|body| {
            std::array::from_fn(|term| std::array::from_fn(|k| body[4 * term + k].to_f64()))
        })
        .collect()
}

/// The reference's terms of every body of `crowd`, at the states and times the device saw.
fn on_cpu(crowd: &Crowd, states: &[BodyState], times: &[f64]) -> Vec<Terms> {
    let table = ForceTable::new(crowd, crowd.bodies.len());
    crowd
        .bodies
        .iter()
        .zip(states.iter().zip(times))
        .enumerate()
        .map(|(i, (body, (state, &t)))| {
            let env = ForceEnv {
                body: i,
                load: Default::default(),
                keyframes: &crowd.keyframes,
                custom_force: crowd.custom_force.as_ref(),
            };
            let d = derivative(state, &body.mass, table.acting_on(i), t, &env);
            let omega = auxiliaries(state, &body.mass).angular_velocity;
            let v = |v: glam::DVec3| [v.x, v.y, v.z, 0.0];
            [
                v(d.velocity),
                d.spin.to_array(),
                v(d.force),
                v(d.torque),
                v(omega),
            ]
        })
        .collect()
}

fn norm(v: [f64; 4]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// How the error of a term is scaled: against the largest `|cpu|` of the term over the
/// bodies, against their root mean square, or against nothing (plain relative error).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Floor {
    Largest,
    Rms,
    None,
}

/// Per body and term, `|gpu - cpu| / max(|cpu|, scale)`, with `scale` as `floor` says.
fn errors(gpu: &[Terms], cpu: &[Terms], floor: Floor) -> Vec<[f64; 5]> {
    assert_eq!(gpu.len(), cpu.len());
    let scale: [f64; 5] = std::array::from_fn(|term| {
        let sizes = cpu.iter().map(|b| norm(b[term]));
        match floor {
            Floor::Largest => sizes.fold(0.0, f64::max),
            Floor::Rms => (sizes.map(|x| x * x).sum::<f64>() / cpu.len() as f64).sqrt(),
            Floor::None => 0.0,
        }
    });
    gpu.iter()
        .zip(cpu)
        .map(|(g, c)| {
            std::array::from_fn(|term| {
                let diff = std::array::from_fn(|k| g[term][k] - c[term][k]);
                norm(diff) / norm(c[term]).max(scale[term]).max(f64::MIN_POSITIVE)
            })
        })
        .collect()
}

/// The largest error of each term and the body it occurs on.
fn worst(errors: &[[f64; 5]]) -> [(f64, usize); 5] {
    std::array::from_fn(|term| {
        errors
            .iter()
            .enumerate()
            .map(|(body, e)| (e[term], body))
            .fold(
                (0.0, 0),
                |a, b| if b.0 > a.0 || b.0.is_nan() { b } else { a },
            )
    })
}

/// Prints the largest error of each term under every floor, and returns those under
/// `Floor::Largest`, the asserted measure.
fn measure(precision: Precision, gpu: &[Terms], cpu: &[Terms]) -> [(f64, usize); 5] {
    let [largest, rms, plain] =
        [Floor::Largest, Floor::Rms, Floor::None].map(|floor| worst(&errors(gpu, cpu, floor)));
    println!(
        "{precision:?} largest |gpu - cpu| / max(|cpu|, scale) per term over {} bodies:",
        gpu.len()
    );
    println!(
        "{precision:?} {:>8}  {:>20}  {:>20}  {:>20}",
        "term", "scale = largest", "scale = rms", "plain relative"
    );
    for (term, name) in TERMS.iter().enumerate() {
        let cell = |(error, body): (f64, usize)| format!("{error:.3e} (body {body:>4})");
        println!(
            "{precision:?} {name:>8}  {:>20}  {:>20}  {:>20}",
            cell(largest[term]),
            cell(rms[term]),
            cell(plain[term])
        );
    }
    largest
}

/// Every term of every body within `bound`.
fn assert_within(precision: Precision, worst: &[(f64, usize); 5], bound: f64) {
    for (name, &(error, body)) in TERMS.iter().zip(worst) {
        assert!(
            error <= bound,
            "{precision:?}: {name} of body {body} is {error:.3e} from the reference (bound {bound:e})"
        );
    }
}

fn context(precision: Precision) -> GpuContext {
    let ctx = GpuContext::new().expect("the derivative probe needs a GPU adapter (see README)");
    if precision == Precision::F64 {
        assert!(
            ctx.supports_f64(),
            "the f64 derivative probe needs an adapter with SHADER_F64 (lavapipe has it)"
        );
    }
    ctx
}

/// The probe crowd and what the kernel of `precision` computed for it.
fn probe_run(precision: Precision) -> (Crowd, DeviceRun) {
    let crowd = probe_crowd();
    let ctx = context(precision);
    let start = Instant::now();
    let run = on_device(&ctx, &crowd, precision);
    println!(
        "{precision:?}: probe built and run in {:.2?}",
        start.elapsed()
    );
    (crowd, run)
}

#[test]
fn f64_derivative_matches_the_reference_term_by_term() {
    let precision = Precision::F64;
    let (crowd, run) = probe_run(precision);
    assert!(
        run.times
            .iter()
            .all(|&t| t == crowd.time_after(0) && t > 0.0)
    );
    // In f64 the upload is exact: the device sees the reference's own states.
    assert!(
        run.states
            .iter()
            .zip(&crowd.bodies)
            .all(|(s, b)| *s == b.state)
    );
    let cpu = on_cpu(&crowd, &run.states, &run.times);
    let worst_terms = measure(precision, &run.terms, &cpu);
    assert_within(precision, &worst_terms, F64_BOUND);

    // Sharpness: one spring's damping off by one part in 1e6 on the device alone must break
    // the bound on that spring's body, and on no other.
    let mut perturbed = crowd.clone();
    let (spring_body, damping) = perturbed
        .forces
        .iter_mut()
        .find_map(|f| match (&mut f.kind, f.body) {
            (ForceKind::Spring { damping, .. }, Some(body)) => Some((body, damping)),
            _ => None,
        })
        .expect("cross_check_crowd puts springs on every fifth body");
    *damping *= 1.0 + 1e-6;
    let run = on_device(&context(precision), &perturbed, precision);
    let errors = errors(&run.terms, &cpu, Floor::Largest);
    let [_, _, force, torque, _] = errors[spring_body];
    println!(
        "{precision:?}, damping of body {spring_body}'s spring x (1 + 1e-6): force {force:.3e}, \
         torque {torque:.3e}"
    );
    assert!(
        force > F64_BOUND && torque > F64_BOUND,
        "a damping off by 1e-6 went unnoticed: force {force:.3e}, torque {torque:.3e}"
    );
    for (body, e) in errors.iter().enumerate() {
        if body != spring_body {
            assert!(
                e.iter().all(|&x| x <= F64_BOUND),
                "body {body} moved with another body's spring: {e:?}"
            );
        }
    }
}

#[test]
fn f32_derivative_matches_the_reference_to_f32_round_off() {
    let precision = Precision::F32;
    let (crowd, run) = probe_run(precision);
    assert!(run.times.iter().all(|&t| t > 0.0));
    // The reference at the f32-rounded states and time the device saw (its constants and
    // force parameters stay f64: their rounding is part of the f32 error measured).
    let cpu = on_cpu(&crowd, &run.states, &run.times);
    let worst_terms = measure(precision, &run.terms, &cpu);
    assert_within(precision, &worst_terms, F32_BOUND);
}
