//! Tangents on the device from the one definition: a body's steps traced over
//! `Dual<Traced<f64>, N>` to WGSL, compiled to exact SPIR-V (every float operation
//! `NoContraction`) and run on the adapter, against the reference's `Dual<f64, N>` run of the
//! same steps, bit for bit.

use wgpu::util::DeviceExt;

use crate::backends::cpu_ref::derivative::ForceEnv;
use crate::backends::cpu_ref::tangents::BodyInputs;
use crate::backends::gpu::GpuContext;
use crate::backends::gpu::device::exact_spirv::{self, Checks};
use crate::backends::gpu::device::readback::read_buffer;
use crate::model::force::ForceKind;
use crate::model::integrator::Integrator;
use crate::model::tangent::{Direction, ParameterSlot};
use crate::physics::algebra::Vec3;
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

/// The derivative the reference takes (`cpu_ref::derivative_of`) for forces the physics
/// adds itself: the load (zero) first, then each force in order.
fn derivative<R: Scalar>(
    y: &State<R>,
    mass: &MassConstants<R>,
    forces: &[(crate::model::force::ForceType, Parameters<R>)],
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

/// The scalars of `inputs` that the device reads: the state, the mass constants and the
/// forces' parameters, each a value followed by its `N` tangents.
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

/// The WGSL kernel that reads [`flatten`]'s layout from `data`, takes the steps and writes
/// the end state's duals after the inputs.
fn kernel(kinds: &[ForceKind], input_scalars: usize) -> String {
    let function = trace_function("fn tangent_steps()", || {
        let mut next = 0;
        let mut read = || {
            let value = Traced::<f64>::input(&format!("data[{next}]"));
            let tangent =
                std::array::from_fn(|k| Traced::input(&format!("data[{}]", next + 1 + k)));
            next += N + 1;
            Dual { value, tangent }
        };
        let mut state_scalars: Vec<_> = (0..13).map(|_| read()).collect();
        let state = State::from_scalars(&mut state_scalars.drain(..));
        let (mass, inv_mass) = (read(), read());
        let entries: [_; 6] = std::array::from_fn(|_| read());
        let constants = MassConstants {
            mass,
            inv_mass,
            inv_inertia: crate::physics::algebra::SymMat3::from_entries(entries),
        };
        let forces: Vec<_> = kinds
            .iter()
            .map(|kind| {
                let vectors = std::array::from_fn(|_| Vec3::new(read(), read(), read()));
                let scalars = std::array::from_fn(|_| read());
                (kind.force_type(), Parameters { vectors, scalars })
            })
            .collect();
        let fixed = |v: f64| Dual::<Traced<f64>, N>::constant(v);
        let mut y = state;
        for s in 0..STEPS {
            let mut f = |y: &State<_>, at| derivative(y, &constants, &forces, at);
            let (t, h) = (fixed(s as f64 * DT), fixed(DT));
            y = renormalize(step(Integrator::Rk4, &y, &constants, t, h, &mut f));
        }
        let mut tail = String::new();
        let mut at = input_scalars;
        for d in y.to_scalars() {
            for scalar in std::iter::once(d.value).chain(d.tangent) {
                tail += &format!("    data[{at}] = {scalar};\n");
                at += 1;
            }
        }
        tail
    });
    format!(
        "alias real = f64;\n@group(0) @binding(0) var<storage, read_write> data: array<f64>;\n\
         {function}\n@compute @workgroup_size(1) fn main() {{ tangent_steps(); }}\n"
    )
}

#[test]
fn gpu_f64_tangents_equal_the_references_bit_for_bit() {
    let ctx = GpuContext::new().expect("the tangent probe needs a GPU adapter (see README)");
    let (state, mass) = crate::backends::cpu_ref::integrate::tests::tumbling_brick();
    let v = glam::DVec3::new;
    let kinds = [
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
    ];
    let forces: Vec<&ForceKind> = kinds.iter().collect();
    let seeded = BodyInputs::of(&state, &mass, &forces, &[]).seeded(&mass, &DIRECTIONS);
    let reference = seeded.run(Integrator::Rk4, ForceEnv::default(), 0, STEPS, DT);
    let expected: Vec<f64> = reference
        .to_scalars()
        .iter()
        .flat_map(|d| std::iter::once(d.value).chain(d.tangent))
        .collect();

    let mut data = flatten(&seeded);
    let input_scalars = data.len();
    data.resize(input_scalars + expected.len(), 0.0);
    let source = kernel(&kinds, input_scalars);
    let words = exact_spirv::compile(&source, "main", &[], Checks::Bounded).unwrap();
    let device = &ctx.device;
    let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("tangent probe"),
        contents: bytemuck::cast_slice(&data),
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
    let out: Vec<f64> = read_buffer(&ctx, &buffer, data.len()).unwrap();
    let got = &out[input_scalars..];
    let differing: Vec<usize> = (0..expected.len())
        .filter(|&k| got[k].to_bits() != expected[k].to_bits())
        .collect();
    assert!(
        differing.is_empty(),
        "{} of {} scalars differ, first at {}: gpu {:e}, cpu-ref {:e}",
        differing.len(),
        expected.len(),
        differing[0],
        got[differing[0]],
        expected[differing[0]]
    );
    assert!(expected.iter().skip(1).step_by(N + 1).any(|&t| t != 0.0));
}
