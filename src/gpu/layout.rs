//! The GPU storage layouts, byte for byte the structs in `shaders/common.wgsl`.

use bytemuck::{Pod, Zeroable};

use crate::body::{Body, BodyState};
use crate::force::ForceKind;
use crate::force_table::ForceTable;
use crate::integrator::Integrator;

/// Momentum-form state of one body; kept in sync with `BodyState` in shaders/common.wgsl.
/// One 64-byte record per body: each step reads and writes exactly one record.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct BodyStateGpu {
    /// xyz = x, w unused.
    pub position: [f32; 4],
    /// Quaternion as (x, y, z, w).
    pub orientation: [f32; 4],
    /// xyz = P, w unused.
    pub linear_momentum: [f32; 4],
    /// xyz = L, w unused.
    pub angular_momentum: [f32; 4],
}

/// Per-body constants; kept in sync with `BodyConstants` in shaders/common.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct BodyConstantsGpu {
    pub mass: f32,
    pub inv_mass: f32,
    pub inv_inertia_xx: f32,
    pub inv_inertia_yy: f32,
    pub inv_inertia_zz: f32,
    pub inv_inertia_xy: f32,
    pub inv_inertia_xz: f32,
    pub inv_inertia_yz: f32,
    pub force_first: u32,
    pub force_count: u32,
    pub _pad: [u32; 2],
}

/// One force source; kept in sync with `Force` in shaders/common.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct ForceGpu {
    pub kind: u32,
    pub _pad: [u32; 3],
    pub a: [f32; 4],
    pub b: [f32; 4],
    pub c: [f32; 4],
}

/// Dispatch parameters; kept in sync with `Params` in shaders/common.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct ParamsGpu {
    pub body_count: u32,
    pub global_force_count: u32,
    pub integrator: u32,
    pub row_width: u32,
    pub dt: f32,
    pub steps_per_dispatch: u32,
    pub _pad: [u32; 2],
}

/// Matches `FORCE_*` in shaders/common.wgsl.
const FORCE_GRAVITY: u32 = 0;
const FORCE_LINEAR_DRAG: u32 = 1;
const FORCE_POINT: u32 = 2;
const FORCE_SPRING: u32 = 3;

/// Matches `INTEGRATOR_*` in shaders/common.wgsl.
pub(crate) fn integrator_code(integrator: Integrator) -> u32 {
    match integrator {
        Integrator::Euler => 0,
        Integrator::Rk4 => 1,
        Integrator::SymplecticEuler => 2,
        Integrator::LieRk4 => 3,
    }
}

fn vec4(v: glam::DVec3, w: f64) -> [f32; 4] {
    [v.x as f32, v.y as f32, v.z as f32, w as f32]
}

impl From<&BodyState> for BodyStateGpu {
    fn from(s: &BodyState) -> Self {
        let q = s.orientation;
        Self {
            position: vec4(s.position, 0.0),
            orientation: [q.x as f32, q.y as f32, q.z as f32, q.w as f32],
            linear_momentum: vec4(s.linear_momentum, 0.0),
            angular_momentum: vec4(s.angular_momentum, 0.0),
        }
    }
}

impl BodyStateGpu {
    /// Back to the f64 state (exact widening).
    pub fn to_state(self) -> BodyState {
        let v = |a: [f32; 4]| glam::DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64);
        let q = self.orientation;
        BodyState {
            position: v(self.position),
            orientation: glam::DQuat::from_xyzw(q[0] as f64, q[1] as f64, q[2] as f64, q[3] as f64),
            linear_momentum: v(self.linear_momentum),
            angular_momentum: v(self.angular_momentum),
        }
    }
}

impl BodyConstantsGpu {
    /// Constants of `body`, whose own forces are `range = (first, count)` in the force table.
    pub fn new(body: &Body, range: (u32, u32)) -> Self {
        let m = body.mass.inv_inertia_body();
        Self {
            mass: body.mass.mass() as f32,
            inv_mass: body.mass.inv_mass() as f32,
            inv_inertia_xx: m.x_axis.x as f32,
            inv_inertia_yy: m.y_axis.y as f32,
            inv_inertia_zz: m.z_axis.z as f32,
            inv_inertia_xy: m.y_axis.x as f32,
            inv_inertia_xz: m.z_axis.x as f32,
            inv_inertia_yz: m.z_axis.y as f32,
            force_first: range.0,
            force_count: range.1,
            _pad: [0; 2],
        }
    }
}

impl From<&ForceKind> for ForceGpu {
    fn from(kind: &ForceKind) -> Self {
        let zero = [0.0; 4];
        let (kind, a, b, c) = match *kind {
            ForceKind::Gravity { acceleration } => {
                (FORCE_GRAVITY, vec4(acceleration, 0.0), zero, zero)
            }
            ForceKind::LinearDrag { linear, angular } => (
                FORCE_LINEAR_DRAG,
                [linear as f32, angular as f32, 0.0, 0.0],
                zero,
                zero,
            ),
            ForceKind::PointForce { force, point } => {
                (FORCE_POINT, vec4(force, 0.0), vec4(point, 0.0), zero)
            }
            ForceKind::Spring {
                anchor,
                attach,
                stiffness,
                damping,
            } => (
                FORCE_SPRING,
                vec4(anchor, 0.0),
                vec4(attach, 0.0),
                [stiffness as f32, damping as f32, 0.0, 0.0],
            ),
        };
        Self {
            kind,
            _pad: [0; 3],
            a,
            b,
            c,
        }
    }
}

/// The force table as GPU records; never empty, since a binding cannot be zero-sized.
pub(crate) fn forces_gpu(table: &ForceTable) -> Vec<ForceGpu> {
    let mut forces: Vec<ForceGpu> = table.forces.iter().map(ForceGpu::from).collect();
    if forces.is_empty() {
        forces.push(ForceGpu::default());
    }
    forces
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::GpuContext;
    use crate::gpu::readback::read_buffer;
    use wgpu::util::DeviceExt;

    #[test]
    fn struct_sizes_match_the_wgsl_strides() {
        assert_eq!(size_of::<BodyStateGpu>(), 64);
        assert_eq!(size_of::<BodyConstantsGpu>(), 48);
        assert_eq!(size_of::<ForceGpu>(), 64);
        assert_eq!(size_of::<ParamsGpu>(), 32);
    }

    /// Words that are distinct, normal f32 values (denormals could be flushed on the GPU).
    fn distinct_words<const N: usize>(first: usize) -> [u32; N] {
        std::array::from_fn(|k| (first + k + 1) as f32).map(f32::to_bits)
    }

    /// Two records: element 0 zeroed, element 1 the probe words (checks the array stride).
    fn pair<T: Pod, const N: usize>(words: [u32; N]) -> Vec<T> {
        vec![T::zeroed(), bytemuck::cast(words)]
    }

    #[test]
    fn rust_and_wgsl_agree_on_every_field_offset() {
        let ctx = GpuContext::new().expect("the layout test needs a GPU adapter (see README)");
        let state: [u32; 16] = distinct_words(0);
        let constants: [u32; 12] = distinct_words(16);
        let force: [u32; 16] = distinct_words(28);
        let params: [u32; 8] = distinct_words(44);
        let device = &ctx.device;
        let buffer = |label, contents: &[u8], usage| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage,
            })
        };
        let storage = wgpu::BufferUsages::STORAGE;
        let states = buffer(
            "states",
            bytemuck::cast_slice(&pair::<BodyStateGpu, 16>(state)),
            storage,
        );
        let consts = buffer(
            "constants",
            bytemuck::cast_slice(&pair::<BodyConstantsGpu, 12>(constants)),
            storage,
        );
        let forces = buffer(
            "forces",
            bytemuck::cast_slice(&pair::<ForceGpu, 16>(force)),
            storage,
        );
        let uniform = buffer(
            "params",
            bytemuck::bytes_of(&bytemuck::cast::<[u32; 8], ParamsGpu>(params)),
            wgpu::BufferUsages::UNIFORM,
        );
        let words = buffer(
            "words",
            &[0u8; 52 * 4],
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        );
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("layout_probe.wgsl"),
            source: wgpu::ShaderSource::Wgsl(crate::gpu::shader::layout_probe_source().into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("layout probe"),
            layout: None,
            module: &module,
            entry_point: Some("probe"),
            compilation_options: Default::default(),
            cache: None,
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[&states, &consts, &forces, &uniform, &words]
                .iter()
                .enumerate()
                .map(|(i, b)| wgpu::BindGroupEntry {
                    binding: i as u32,
                    resource: b.as_entire_binding(),
                })
                .collect::<Vec<_>>(),
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }
        ctx.queue.submit([encoder.finish()]);
        let got: Vec<u32> = read_buffer(&ctx, &words, 52).unwrap();
        let expected: Vec<u32> = [&state[..], &constants[..], &force[..], &params[..]].concat();
        assert_eq!(
            got, expected,
            "a WGSL field sits at a different offset than its Rust twin"
        );
    }
}
