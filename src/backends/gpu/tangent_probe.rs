//! Tangents on the device from the one definition: a body's steps traced over
//! `Dual<Traced<f64>, N>` to WGSL, compiled to exact SPIR-V (every float operation
//! `NoContraction`) and run on the adapter, against the reference's `Dual<f64, N>` run of the
//! same steps, bit for bit.

use wgpu::util::DeviceExt;

use crate::backends::gpu::GpuContext;
use crate::backends::gpu::device::exact_spirv::{self, Checks};
use crate::backends::gpu::device::readback::read_buffer;
use crate::body_steps::derivative::ForceEnv;
use crate::body_steps::tangents::BodyInputs;
use crate::model::force::ForceKind;
use crate::model::force::ForceType;
use crate::model::integrator::Integrator;
use crate::model::tangent::{Direction, ParameterSlot};
use crate::physics::algebra::{SymMat3, Vec3};
use crate::physics::dual::Dual;
use crate::physics::forces::{Body, Parameters, add_force};
use crate::physics::integrators::{renormalize, step};
use crate::physics::motion::{self, Load, MassConstants, State};
use crate::physics::scalar::{Carried, Scalar};
use crate::physics::trace::{Traced, trace_function};

const N: usize = 4;
const STEPS: u64 = 2;
const DT: f64 = 0.01;
/// The directions: `P_x`, `L_y`, the mass, the spring's stiffness.
const DIRECTIONS: [Direction; N] = [
    Direction::State(7),
    Direction::State(11),
    Direction::Mass,
    Direction::Force {
        force: 1,
        slot: ParameterSlot::Scalar(0),
    },
];

/// The derivative the reference takes (`body_steps::derivative::derivative_of`) for forces the physics
/// adds itself: the load (zero) first, then each force in order.
fn derivative<R: Scalar>(
    y: &State<R>,
    mass: &MassConstants<R>,
    forces: &[(ForceType, Parameters<R>)],
    t: R,
) -> motion::Derivative<R> {
    let aux = motion::auxiliaries(y, mass);
    let body = Body {
        state: y,
        mass,
        aux: &aux,
        time: t,
    };
    let zero = Vec3::splat(R::constant(0.0));
    let mut total = Load {
        force: zero,
        torque: zero,
    };
    for (kind, parameters) in forces {
        add_force(*kind, parameters, &body, &mut total);
    }
    motion::derivative(y, &aux, total)
}

/// One body's inputs as the probe's kernel reads them.
struct Inputs<R> {
    state: State<R>,
    constants: MassConstants<R>,
    forces: Vec<(ForceType, Parameters<R>)>,
}

/// The inputs of forces `kinds` from `read`, which hands out the state, the mass constants
/// and each force's parameters (two vectors, four scalars) in that order.
fn read_inputs<R: Scalar>(kinds: &[ForceKind], mut read: impl FnMut() -> R) -> Inputs<R> {
    let mut state: Vec<R> = (0..13).map(|_| read()).collect();
    let state = State::from_scalars(&mut state.drain(..));
    let (mass, inv_mass) = (read(), read());
    let entries: [R; 6] = std::array::from_fn(|_| read());
    let forces = kinds
        .iter()
        .map(|kind| {
            let vectors = std::array::from_fn(|_| Vec3::new(read(), read(), read()));
            let scalars = std::array::from_fn(|_| read());
            (kind.force_type(), Parameters { vectors, scalars })
        })
        .collect();
    Inputs {
        state,
        constants: MassConstants {
            mass,
            inv_mass,
            inv_inertia: SymMat3::from_entries(entries),
        },
        forces,
    }
}

/// The state after `steps` RK4 steps of [`DT`], `q` renormalized after each.
fn run<R: Scalar>(inputs: &Inputs<R>, steps: u64) -> State<R> {
    let (constants, forces) = (&inputs.constants, &inputs.forces[..]);
    let mut y = inputs.state;
    for s in 0..steps {
        let mut f = |y: &State<R>, at: R| derivative(y, constants, forces, at);
        let (t, h) = (R::constant(s as f64 * DT), R::constant(DT));
        y = renormalize(step(Integrator::Rk4, &y, constants, t, h, &mut f));
    }
    y
}

/// The scalars of `inputs` in [`read_inputs`]'s order, each a value followed by its `N`
/// tangents.
fn flatten(inputs: &BodyInputs<Dual<f64, N>>) -> Vec<f64> {
    let mut duals = inputs.state.to_scalars();
    let c = &inputs.constants;
    duals.extend([c.mass, c.inv_mass]);
    let i = c.inv_inertia;
    duals.extend([i.xx, i.yy, i.zz, i.xy, i.xz, i.yz]);
    for term in &inputs.forces {
        for v in term.parameters.vectors {
            duals.extend([v.x, v.y, v.z]);
        }
        duals.extend(term.parameters.scalars);
    }
    duals
        .iter()
        .flat_map(|d| std::iter::once(d.value).chain(d.tangent))
        .collect()
}

/// The duals of `state`, each a value followed by its tangents.
fn scalars<R: Copy + Scalar>(state: &State<Dual<R, N>>) -> Vec<R> {
    state
        .to_scalars()
        .iter()
        .flat_map(|d| std::iter::once(d.value).chain(d.tangent))
        .collect()
}

/// The WGSL kernel in precision `F` that reads [`flatten`]'s layout from `data`, takes
/// `STEPS` steps and writes the end state's duals after the inputs.
fn kernel<F: Scalar + Into<f64>>(kinds: &[ForceKind], input_scalars: usize) -> String {
    let function = trace_function("fn tangent_steps()", || {
        let mut next = 0;
        let read = || {
            let at = next;
            next += N + 1;
            Dual {
                value: Traced::<F>::input(&format!("data[{at}]")),
                tangent: std::array::from_fn(|k| Traced::input(&format!("data[{}]", at + 1 + k))),
            }
        };
        let end = run(&read_inputs(kinds, read), STEPS);
        let mut tail = String::new();
        for (k, scalar) in scalars(&end).iter().enumerate() {
            tail += &format!("    data[{}] = {scalar};\n", input_scalars + k);
        }
        tail
    });
    let real = if F::IS_F64 { "f64" } else { "f32" };
    format!(
        "alias real = {real};\n@group(0) @binding(0) var<storage, read_write> data: array<real>;\n\
         {function}\n@compute @workgroup_size(1) fn main() {{ tangent_steps(); }}\n"
    )
}

/// `data` after one invocation of `source`'s `main`, compiled to exact SPIR-V.
fn device_run<T: bytemuck::Pod>(ctx: &GpuContext, source: &str, data: &[T]) -> Vec<T> {
    let words = exact_spirv::compile(source, "main", &[], Checks::Bounded).unwrap();
    let device = &ctx.device;
    let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("tangent probe"),
        contents: bytemuck::cast_slice(data),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
    });
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("tangent probe"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: false },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("tangent probe"),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    // SAFETY: naga validated the module the words came from; it indexes one buffer with
    // constant indices inside it.
    let module = unsafe { exact_spirv::module(device, "tangent probe", "main", &words) };
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("tangent probe"),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("tangent probe"),
        layout: &layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: buffer.as_entire_binding(),
        }],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }
    ctx.queue.submit([encoder.finish()]);
    read_buffer(ctx, &buffer, data.len()).unwrap()
}

/// The probe's forces: gravity, a spring, quadratic drag.
fn probe_forces() -> Vec<ForceKind> {
    let v = glam::DVec3::new;
    vec![
        ForceKind::Gravity {
            acceleration: v(0.0, 0.0, -9.81),
        },
        ForceKind::Spring {
            anchor: v(0.0, 1.0, 2.0),
            attach: v(0.3, 0.2, -0.5),
            stiffness: 5.0,
            damping: 0.4,
        },
        ForceKind::QuadraticDrag {
            linear: 0.2,
            angular: 0.1,
        },
    ]
}

/// The probe's body under `kinds`, seeded along [`DIRECTIONS`].
fn seeded_body(kinds: &[ForceKind]) -> BodyInputs<'_, Dual<f64, N>> {
    let (state, mass) = crate::body_steps::stepper::tests::tumbling_brick();
    let forces: Vec<&ForceKind> = kinds.iter().collect();
    BodyInputs::of(&state, &mass, &forces, &[]).seeded(&mass, &DIRECTIONS)
}

/// Runs the kernel in precision `F` over `inputs` and asserts that every scalar it writes
/// has `expected`'s bits.
fn assert_device_gives<F: Scalar + Into<f64> + bytemuck::Pod>(
    ctx: &GpuContext,
    kinds: &[ForceKind],
    inputs: &[F],
    expected: &[F],
) {
    let mut data = inputs.to_vec();
    data.resize(inputs.len() + expected.len(), F::zeroed());
    let out = device_run(ctx, &kernel::<F>(kinds, inputs.len()), &data);
    let got = &out[inputs.len()..];
    let bits = |x: &F| bytemuck::bytes_of(x).to_vec();
    let differ = got
        .iter()
        .zip(expected)
        .filter(|(g, e)| bits(g) != bits(e))
        .count();
    assert_eq!(differ, 0, "{differ} of {} scalars differ", expected.len());
}

#[test]
fn gpu_f64_tangents_equal_the_references_bit_for_bit() {
    let ctx = GpuContext::new().expect("the tangent probe needs a GPU adapter (see README)");
    let kinds = probe_forces();
    let seeded = seeded_body(&kinds);
    let reference = seeded.run(Integrator::Rk4, ForceEnv::default(), 0, STEPS, DT);
    assert_device_gives(&ctx, &kinds, &flatten(&seeded), &scalars(&reference));
    assert!(
        scalars(&reference)
            .iter()
            .skip(1)
            .step_by(N + 1)
            .any(|&t| t != 0.0)
    );
}

#[test]
fn gpu_f32_tangents_equal_the_cpus_and_stay_near_the_references() {
    let ctx = GpuContext::new().expect("the tangent probe needs a GPU adapter (see README)");
    let kinds = probe_forces();
    let seeded = seeded_body(&kinds);
    let data: Vec<f32> = flatten(&seeded).iter().map(|&x| x as f32).collect();
    let read_f32 = |steps: u64| {
        let mut next = 0;
        let inputs = read_inputs(&kinds, || {
            let at = next;
            next += N + 1;
            Dual {
                value: data[at],
                tangent: std::array::from_fn(|k| data[at + 1 + k]),
            }
        });
        run(&inputs, steps)
    };
    assert_device_gives(&ctx, &kinds, &data, &scalars(&read_f32(STEPS)));

    // Over 1,000 steps: each f32 tangent against the reference's, relative to the largest
    // entry of its direction (its column).
    let steps = 1_000;
    let f32_end = read_f32(steps).to_scalars();
    let f64_end = seeded
        .run(Integrator::Rk4, ForceEnv::default(), 0, steps, DT)
        .to_scalars();
    let mut worst = 0.0_f64;
    for i in 0..N {
        let column: Vec<f64> = f64_end.iter().map(|d| d.tangent[i]).collect();
        let scale = column.iter().fold(0.0_f64, |m, t| m.max(t.abs()));
        for (single, double) in f32_end.iter().zip(&column) {
            let error = (f64::from(single.tangent[i]) - double).abs() / scale;
            worst = crate::verify::compare::largest(worst, error);
        }
    }
    println!("f32 tangents after {steps} steps: worst {worst:.2e} of their column");
    assert!(
        worst <= 1e-3,
        "f32 tangents {worst:e} of their column from f64"
    );
}
