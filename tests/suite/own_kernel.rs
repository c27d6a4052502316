//! A kernel of the caller's own reads a simulation's GPU storage where the integration left
//! it, declared by nothing but `gpu::layout_wgsl`: the values it sees are the states and
//! constants the host API reports, bit for bit, in both precisions.

use crate::common;

use common::gpu;
use rigid_crowd::gpu::{LAYOUT_VERSION, Precision, layout_wgsl};
use rigid_crowd::wgpu;
use rigid_crowd::{Backend, Crowd, CrowdSpec, Force, ForceKind, Simulation};

/// The caller's kernel: per body, its position, its orientation (as stored, x y z w), its
/// velocity P * inv_mass from the constants, and its clock step and layout version.
const CALLERS_KERNEL: &str = "
@group(0) @binding(0) var<storage, read> states: array<BodyState>;
@group(0) @binding(1) var<storage, read> constants: array<BodyConstants>;
@group(0) @binding(2) var<storage, read_write> out: array<vec4<REAL>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if i >= arrayLength(&states) {
        return;
    }
    let s = states[i];
    out[4u * i] = vec4<REAL>(s.position, REAL(0.0));
    out[4u * i + 1u] = s.orientation;
    out[4u * i + 2u] = vec4<REAL>(s.linear_momentum * constants[i].inv_mass, REAL(0.0));
    let step = s.step_low + STEPS_PER_OVERFLOW * s.step_high;
    out[4u * i + 3u] = vec4<REAL>(REAL(step), REAL(RIGID_CROWD_LAYOUT_VERSION), REAL(0.0), REAL(0.0));
}
";

/// Runs the caller's kernel over the first chunk of `sim` and reads what it wrote.
fn run_callers_kernel(sim: &Simulation, precision: Precision) -> Vec<f64> {
    let ctx = sim.gpu_context().expect("a GPU simulation");
    let device = ctx.device();
    let chunks = sim.gpu_chunks();
    assert_eq!(chunks.len(), 1, "the test crowd fits one chunk");
    let chunk = &chunks[0];
    let real = match precision {
        Precision::F32 => "f32",
        Precision::F64 => "f64",
    };
    let source = format!(
        "{}\n{}",
        layout_wgsl(precision),
        CALLERS_KERNEL.replace("REAL", real)
    );
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("the caller's kernel"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("the caller's kernel"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let bodies = chunk.bodies.len();
    let scalar = precision.scalar_bytes() as u64;
    let out = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("the caller's output"),
        size: bodies as u64 * 16 * scalar,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("the caller's staging"),
        size: out.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: chunk.states.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: chunk.constants.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: out.as_entire_binding(),
            },
        ],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups((bodies as u32).div_ceil(64), 1, 1);
    }
    encoder.copy_buffer_to_buffer(&out, 0, &staging, 0, out.size());
    ctx.queue().submit([encoder.finish()]);
    staging
        .slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.unwrap());
    device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let view = staging.slice(..).get_mapped_range().unwrap();
    match precision {
        Precision::F32 => bytemuck::cast_slice::<u8, f32>(&view)
            .iter()
            .map(|&x| x as f64)
            .collect(),
        Precision::F64 => bytemuck::cast_slice::<u8, f64>(&view).to_vec(),
    }
}

#[test]
fn a_callers_kernel_reads_the_states_and_constants_through_the_published_layout() {
    let crowd = Crowd::new(CrowdSpec::new(500, 12).generate().unwrap(), 1e-3).with_force(
        Force::on_all(ForceKind::LinearDrag {
            linear: 0.4,
            angular: 0.1,
        }),
    );
    let steps = 37;
    for backend in [Backend::Gpu, Backend::GpuF64] {
        let precision = backend.gpu_precision().unwrap();
        let mut sim = Simulation::on_backend(&crowd, backend, gpu()).unwrap();
        sim.step(steps).unwrap();
        let seen = run_callers_kernel(&sim, precision);
        let bodies = sim.bodies().unwrap();
        for (i, body) in bodies.iter().enumerate() {
            let at = |k: usize| &seen[16 * i + 4 * k..16 * i + 4 * k + 4];
            // The raw state: centre of mass and principal frame, as the kernel keeps it.
            let s = &body.state;
            assert_eq!(
                at(0)[..3],
                s.position.to_array(),
                "{backend:?} position {i}"
            );
            let q = s.orientation;
            assert_eq!(at(1), [q.x, q.y, q.z, q.w], "{backend:?} orientation {i}");
            // P * inv_mass in the buffer's precision: in f64 the host's very product, in
            // f32 that product rounded at most twice (inv_mass, then the product).
            let v = body.velocity().to_array();
            let tolerance = match precision {
                Precision::F32 => 2.0 * f64::from(f32::EPSILON),
                Precision::F64 => 0.0,
            };
            for k in 0..3 {
                let error = (at(2)[k] - v[k]).abs();
                assert!(
                    error <= tolerance * v[k].abs(),
                    "{backend:?} v {i}: {:?} {v:?}",
                    at(2)
                );
            }
            assert_eq!(
                at(3)[..2],
                [steps as f64, LAYOUT_VERSION as f64],
                "{backend:?} {i}"
            );
        }
    }
}
