//! The GPU storage layouts, byte for byte the structs in `shaders/common.wgsl`.

use bytemuck::{Pod, Zeroable};

use crate::body::{Body, BodyState};
use crate::cpu::contact::bounding_radius;
use crate::custom_force::ExternalLoad;
use crate::fast_cpu::{STEPS_PER_OVERFLOW, flatten_keyframes};
use crate::force::ForceKind;
use crate::force_table::ForceTable;
use crate::integrator::Integrator;
use crate::plane::Plane;
use crate::shape::Shape;

/// Momentum-form state of one body; kept in sync with `BodyState` in shaders/common.wgsl.
/// One 64-byte record per body: each step reads and writes exactly one record.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct BodyStateGpu {
    /// xyz = x, w = step count modulo 2^24 (an exact f32 integer).
    pub position: [f32; 4],
    /// Quaternion as (x, y, z, w).
    pub orientation: [f32; 4],
    /// xyz = P, w = step count divided by 2^24 (an exact f32 integer).
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
    pub shape_kind: u32,
    pub _pad: u32,
    pub shape: [f32; 4],
}

/// A static plane; kept in sync with `Plane` in shaders/common.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct PlaneGpu {
    /// xyz = unit normal, w = offset.
    pub surface: [f32; 4],
    pub restitution: f32,
    pub friction: f32,
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
    pub first_body: u32,
    pub plane_count: u32,
}

/// The load set on one body from the host; kept in sync with `ExternalLoad` in
/// shaders/common.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct ExternalLoadGpu {
    /// xyz = world force, w unused.
    pub force: [f32; 4],
    /// xyz = world torque, w unused.
    pub torque: [f32; 4],
}

impl From<&ExternalLoad> for ExternalLoadGpu {
    fn from(load: &ExternalLoad) -> Self {
        Self {
            force: vec4(load.force, 0.0),
            torque: vec4(load.torque, 0.0),
        }
    }
}

/// Matches `FORCE_*` in shaders/common.wgsl.
const FORCE_GRAVITY: u32 = 0;
const FORCE_LINEAR_DRAG: u32 = 1;
const FORCE_POINT: u32 = 2;
const FORCE_SPRING: u32 = 3;
const FORCE_ATTRACTOR: u32 = 4;
const FORCE_THRUST: u32 = 5;
const FORCE_SINUSOIDAL: u32 = 6;
const FORCE_KEYFRAMED: u32 = 7;
const FORCE_CUSTOM: u32 = 8;

/// Matches `SHAPE_*` in shaders/common.wgsl.
const SHAPE_NONE: u32 = 0;
const SHAPE_SPHERE: u32 = 1;
const SHAPE_BOX: u32 = 2;
const SHAPE_CAPSULE: u32 = 3;
const SHAPE_CYLINDER: u32 = 4;
const SHAPE_ELLIPSOID: u32 = 5;

/// The shape code and the dimensions the contact kernel reads, bounding radius in `w`.
fn shape_gpu(shape: Option<Shape>) -> (u32, [f32; 4]) {
    let Some(shape) = shape else {
        return (SHAPE_NONE, [0.0; 4]);
    };
    let (kind, [x, y, z]) = match shape {
        Shape::Sphere { radius } => (SHAPE_SPHERE, [radius, 0.0, 0.0]),
        Shape::Box { size } => (SHAPE_BOX, (size * 0.5).to_array()),
        Shape::Capsule { radius, length } => (SHAPE_CAPSULE, [radius, length * 0.5, 0.0]),
        Shape::Cylinder { radius, height } => (SHAPE_CYLINDER, [radius, height * 0.5, 0.0]),
        Shape::Ellipsoid { semi_axes } => (SHAPE_ELLIPSOID, semi_axes.to_array()),
    };
    let w = bounding_radius(&shape);
    (kind, [x as f32, y as f32, z as f32, w as f32])
}

impl From<&Plane> for PlaneGpu {
    fn from(plane: &Plane) -> Self {
        Self {
            surface: vec4(plane.normal, plane.offset),
            restitution: plane.restitution as f32,
            friction: plane.friction as f32,
            _pad: [0; 2],
        }
    }
}

/// The planes as GPU records; never empty, since a binding cannot be zero-sized.
pub(crate) fn planes_gpu(planes: &[Plane]) -> Vec<PlaneGpu> {
    let mut records: Vec<PlaneGpu> = planes.iter().map(PlaneGpu::from).collect();
    if records.is_empty() {
        records.push(PlaneGpu::default());
    }
    records
}

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

impl BodyStateGpu {
    /// The record of `s` with its clock at step `step` (< 2^48, checked by `Crowd::validate`).
    pub fn new(s: &BodyState, step: u64) -> Self {
        let q = s.orientation;
        let low = (step % STEPS_PER_OVERFLOW) as f64;
        let high = (step / STEPS_PER_OVERFLOW) as f64;
        Self {
            position: vec4(s.position, low),
            orientation: [q.x as f32, q.y as f32, q.z as f32, q.w as f32],
            linear_momentum: vec4(s.linear_momentum, high),
            angular_momentum: vec4(s.angular_momentum, 0.0),
        }
    }

    /// The clock step the record's state is at (the count kept in the `.w` lanes).
    pub fn step(&self) -> u64 {
        self.position[3] as u64 + self.linear_momentum[3] as u64 * STEPS_PER_OVERFLOW
    }

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
        let (shape_kind, shape) = shape_gpu(body.mass.shape());
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
            shape_kind,
            _pad: 0,
            shape,
        }
    }
}

impl ForceGpu {
    /// The record of `kind`; `spans` (from `flatten_keyframes`) locates keyframe tables.
    pub fn new(kind: &ForceKind, spans: &[(u32, u32)]) -> Self {
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
            ForceKind::Attractor {
                centre,
                strength,
                softening,
            } => (
                FORCE_ATTRACTOR,
                vec4(centre, 0.0),
                zero,
                [strength as f32, softening as f32, 0.0, 0.0],
            ),
            ForceKind::Thrust { force, torque } => {
                (FORCE_THRUST, vec4(force, 0.0), vec4(torque, 0.0), zero)
            }
            ForceKind::Sinusoidal {
                force,
                torque,
                offset,
                amplitude,
                frequency,
                phase,
            } => (
                FORCE_SINUSOIDAL,
                vec4(force, 0.0),
                vec4(torque, 0.0),
                [
                    offset as f32,
                    amplitude as f32,
                    frequency as f32,
                    phase as f32,
                ],
            ),
            ForceKind::Keyframed {
                force,
                torque,
                table,
            } => {
                let (first, count) = spans[table];
                (
                    FORCE_KEYFRAMED,
                    vec4(force, 0.0),
                    vec4(torque, 0.0),
                    [f32::from_bits(first), f32::from_bits(count), 0.0, 0.0],
                )
            }
            ForceKind::Custom => (FORCE_CUSTOM, zero, zero, zero),
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
pub(crate) fn forces_gpu(table: &ForceTable, spans: &[(u32, u32)]) -> Vec<ForceGpu> {
    let mut forces: Vec<ForceGpu> = table
        .forces
        .iter()
        .map(|kind| ForceGpu::new(kind, spans))
        .collect();
    if forces.is_empty() {
        forces.push(ForceGpu::default());
    }
    forces
}

/// Every keyframe table as one GPU array and where each table starts; never empty.
pub(crate) fn keyframes_gpu(tables: &[Vec<[f64; 2]>]) -> (Vec<[f32; 2]>, Vec<(u32, u32)>) {
    let (mut flat, spans) = flatten_keyframes(tables);
    if flat.is_empty() {
        flat.push([0.0; 2]);
    }
    (flat, spans)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::GpuContext;

    #[test]
    fn the_step_count_survives_the_two_f32_lanes_exactly() {
        let state = BodyState::default();
        for step in [
            0,
            1,
            (1 << 24) - 1,
            1 << 24,
            (1 << 24) + 1,
            123_456_789_012,
            (1 << 48) - 1,
        ] {
            assert_eq!(BodyStateGpu::new(&state, step).step(), step);
        }
    }
    use crate::gpu::readback::read_buffer;
    use wgpu::util::DeviceExt;

    #[test]
    fn struct_sizes_match_the_wgsl_strides() {
        assert_eq!(size_of::<BodyStateGpu>(), 64);
        assert_eq!(size_of::<BodyConstantsGpu>(), 64);
        assert_eq!(size_of::<ForceGpu>(), 64);
        assert_eq!(size_of::<ParamsGpu>(), 32);
        assert_eq!(size_of::<PlaneGpu>(), 32);
        assert_eq!(size_of::<ExternalLoadGpu>(), 32);
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
        let constants: [u32; 16] = distinct_words(16);
        let force: [u32; 16] = distinct_words(32);
        let params: [u32; 8] = distinct_words(48);
        let plane: [u32; 8] = distinct_words(56);
        let load: [u32; 8] = distinct_words(64);
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
            bytemuck::cast_slice(&pair::<BodyConstantsGpu, 16>(constants)),
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
        let planes = buffer(
            "planes",
            bytemuck::cast_slice(&pair::<PlaneGpu, 8>(plane)),
            storage,
        );
        let loads = buffer(
            "loads",
            bytemuck::cast_slice(&pair::<ExternalLoadGpu, 8>(load)),
            storage,
        );
        let words = buffer(
            "words",
            &[0u8; 72 * 4],
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
            entries: &[&states, &consts, &forces, &uniform, &words, &planes, &loads]
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
        let got: Vec<u32> = read_buffer(&ctx, &words, 72).unwrap();
        let expected: Vec<u32> = [
            &state[..],
            &constants[..],
            &force[..],
            &params[..],
            &plane[..],
            &load[..],
        ]
        .concat();
        assert_eq!(
            got, expected,
            "a WGSL field sits at a different offset than its Rust twin"
        );
    }
}
