//! The GPU storage layouts: one generic record per struct of `shaders/common.wgsl`, in f32
//! or f64 (`R`), and the encoders that fill them from the crowd. The layout test below
//! checks every field's offset against the WGSL in both precisions.

use bytemuck::{Pod, Zeroable};
use glam::{DQuat, DVec3};

use crate::assembly::force_table::{ForceTable, flatten_keyframes};
use crate::model::body::{Body, BodyState};
use crate::model::codes::Coded;
use crate::model::fault::{HEALTHY_STATUS, RESTING_STATUS};
use crate::model::force::ForceKind;
use crate::model::plane::Plane;
use crate::model::precision::{Precision, Real, with_real};
use crate::model::shape::{NO_SHAPE_CODE, Shape};
use crate::physics::clock::STEPS_PER_OVERFLOW;
use crate::physics::contact::ShapeConstants;
use crate::physics::force_law::ExternalLoad;

/// Marks a generic record as plain bytes. Sound because every record is `repr(C)`, made of
/// `Pod` fields only, and laid out without implicit padding in both precisions (the sizes
/// are asserted below and by the layout test).
macro_rules! plain_record {
    ($name:ident) => {
        // SAFETY: see the macro's comment.
        unsafe impl<R: Real> Zeroable for $name<R> {}
        // SAFETY: see the macro's comment.
        unsafe impl<R: Real> Pod for $name<R> {}
    };
}

/// Momentum-form state of one body; twin of `BodyState` in shaders/common.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct BodyStateGpu<R: Real> {
    pub position: [R; 3],
    /// Step count modulo `STEPS_PER_OVERFLOW`.
    pub step_low: u32,
    pub pad0: R::Pad4,
    /// Quaternion as (x, y, z, w).
    pub orientation: [R; 4],
    pub linear_momentum: [R; 3],
    /// Step count divided by `STEPS_PER_OVERFLOW`.
    pub step_high: u32,
    pub pad1: R::Pad4,
    pub angular_momentum: [R; 3],
    /// `HEALTHY_STATUS`, `RESTING_STATUS` (healthy, found at rest by the kernel), or the
    /// code of the [`Fault`](crate::Fault) that froze the body.
    pub status: u32,
    pub pad3: R::Pad4,
}
plain_record!(BodyStateGpu);

/// Per-body constants; twin of `BodyConstants` in shaders/common.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct BodyConstantsGpu<R: Real> {
    pub shape: [R; 4],
    pub mass: R,
    pub inv_mass: R,
    /// Ibody^-1 as xx, yy, zz, xy, xz, yz.
    pub inv_inertia: [R; 6],
    pub force_first: u32,
    pub force_count: u32,
    pub shape_kind: u32,
    /// The kinds of the body's own forces: one `ForceType::bit` each.
    pub own_kinds: u32,
    pub pad1: R::Pad16,
}
plain_record!(BodyConstantsGpu);

/// A static plane; twin of `Plane` in shaders/common.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct PlaneGpu<R: Real> {
    /// xyz = unit normal, w = offset.
    pub surface: [R; 4],
    pub restitution: R,
    pub friction: R,
    pub pad: [R; 2],
}
plain_record!(PlaneGpu);

/// One force source; twin of `Force` in shaders/common.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ForceGpu<R: Real> {
    pub a: [R; 4],
    pub b: [R; 4],
    pub c: [R; 4],
    pub kind: u32,
    pub keyframe_first: u32,
    pub keyframe_count: u32,
    pub pad0: u32,
    pub pad1: R::Pad16,
}
plain_record!(ForceGpu);

/// Dispatch parameters; twin of `Params` in shaders/common.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ParamsGpu<R: Real> {
    pub body_count: u32,
    pub global_force_count: u32,
    pub integrator: u32,
    pub row_width: u32,
    pub steps_per_dispatch: u32,
    pub first_body: u32,
    pub plane_count: u32,
    /// The code of the run's [`OnFault`](crate::OnFault) policy.
    pub on_fault: u32,
    pub dt: R,
    /// Squared speed, angular speed and distance limits (infinite where unset).
    pub envelope_squared: [R; 3],
    /// The first [`PARAMS_PLANES`] planes' surfaces (normal, offset; zeros past the last).
    pub plane_surfaces: [[R; 4]; PARAMS_PLANES],
}
plain_record!(ParamsGpu);

/// How many planes' surfaces the dispatch parameters carry: a kernel compiled for a crowd
/// with at most this many reads them there, once a dispatch for every body's clearance. A
/// uniform read is one load for all of a SIMD group's lanes where a storage read may be one
/// a lane (lavapipe: 37 x86 instructions a body-step for five planes at 8 fused steps).
pub(crate) const PARAMS_PLANES: usize = 8;

/// The load set on one body from the host; twin of `ExternalLoad` in shaders/common.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ExternalLoadGpu<R: Real> {
    /// xyz = world force, w unused.
    pub force: [R; 4],
    /// xyz = world torque, w unused.
    pub torque: [R; 4],
}
plain_record!(ExternalLoadGpu);

/// The WGSL sizes, asserted at compile time: a wrong padding type fails the build.
const _: () = {
    assert!(size_of::<BodyStateGpu<f32>>() == 64 && size_of::<BodyStateGpu<f64>>() == 128);
    assert!(size_of::<BodyConstantsGpu<f32>>() == 64);
    assert!(size_of::<BodyConstantsGpu<f64>>() == 128);
    assert!(size_of::<ForceGpu<f32>>() == 64 && size_of::<ForceGpu<f64>>() == 128);
    assert!(size_of::<PlaneGpu<f32>>() == 32 && size_of::<PlaneGpu<f64>>() == 64);
    assert!(size_of::<ParamsGpu<f32>>() == 176 && size_of::<ParamsGpu<f64>>() == 320);
    assert!(size_of::<ExternalLoadGpu<f32>>() == 32);
    assert!(size_of::<ExternalLoadGpu<f64>>() == 64);
};

/// The sizes of one precision's records, for buffer sizes and chunk plans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RecordSizes {
    pub state: usize,
    pub constants: usize,
    pub force: usize,
    pub load: usize,
}

impl RecordSizes {
    pub fn of(precision: Precision) -> Self {
        with_real!(precision, R => Self {
            state: size_of::<BodyStateGpu<R>>(),
            constants: size_of::<BodyConstantsGpu<R>>(),
            force: size_of::<ForceGpu<R>>(),
            load: size_of::<ExternalLoadGpu<R>>(),
        })
    }

    /// The larger of the state and constants records: what bounds the bodies per binding.
    pub fn per_body_record(&self) -> usize {
        self.state.max(self.constants)
    }

    /// Device bytes per body: state and constants, an external load, and the body's share
    /// of the staging buffer `bodies()` reads the states through.
    pub fn device_bytes_per_body(&self) -> u64 {
        (2 * self.state + self.constants + self.load) as u64
    }
}

fn real3<R: Real>(v: DVec3) -> [R; 3] {
    v.to_array().map(R::from_f64)
}

fn real4<R: Real>(v: DVec3, w: f64) -> [R; 4] {
    [v.x, v.y, v.z, w].map(R::from_f64)
}

fn vec3_of<R: Real>(v: [R; 3]) -> DVec3 {
    DVec3::from_array(v.map(R::to_f64))
}

impl<R: Real> BodyStateGpu<R> {
    /// The record of `s` with its clock at step `step` (< 2^48, checked by `Crowd::validate`).
    pub fn new(s: &BodyState, step: u64) -> Self {
        let q = s.orientation;
        Self {
            position: real3(s.position),
            step_low: (step % STEPS_PER_OVERFLOW) as u32,
            orientation: [q.x, q.y, q.z, q.w].map(R::from_f64),
            linear_momentum: real3(s.linear_momentum),
            step_high: (step / STEPS_PER_OVERFLOW) as u32,
            angular_momentum: real3(s.angular_momentum),
            ..Self::default()
        }
    }

    /// The record of `s` frozen by `fault` with its clock at `step`, its last good step.
    pub fn quarantined(s: &BodyState, step: u64, fault: crate::model::fault::Fault) -> Self {
        Self {
            status: fault.code(),
            ..Self::new(s, step)
        }
    }

    /// The clock step the record's state is at.
    pub fn step(&self) -> u64 {
        self.step_low as u64 + self.step_high as u64 * STEPS_PER_OVERFLOW
    }

    /// Back to the f64 state (exact widening).
    pub fn to_state(self) -> BodyState {
        let [x, y, z, w] = self.orientation.map(R::to_f64);
        BodyState {
            position: vec3_of(self.position),
            orientation: DQuat::from_xyzw(x, y, z, w),
            linear_momentum: vec3_of(self.linear_momentum),
            angular_momentum: vec3_of(self.angular_momentum),
        }
    }
}

/// The shape code and the dimensions the contact kernel reads, bounding radius in `w`.
fn shape_gpu<R: Real>(shape: Option<Shape>) -> (u32, [R; 4]) {
    let Some(shape) = shape else {
        return (NO_SHAPE_CODE, [R::default(); 4]);
    };
    let c = ShapeConstants::of(&shape);
    (c.kind.code(), real4(c.dims.into(), c.bounding_radius))
}

impl<R: Real> BodyConstantsGpu<R> {
    /// Constants of `body`, whose own forces are `range = (first, count)` in the force table,
    /// of the kinds in `own_kinds`.
    pub fn new(body: &Body, range: (u32, u32), own_kinds: u32) -> Self {
        let (shape_kind, shape) = shape_gpu(body.mass.shape());
        Self {
            shape,
            mass: R::from_f64(body.mass.mass()),
            inv_mass: R::from_f64(body.mass.inv_mass()),
            inv_inertia: body.mass.inv_inertia_entries().map(R::from_f64),
            force_first: range.0,
            force_count: range.1,
            shape_kind,
            own_kinds,
            ..Self::default()
        }
    }
}

impl<R: Real> From<&Plane> for PlaneGpu<R> {
    fn from(plane: &Plane) -> Self {
        Self {
            surface: real4(plane.normal, plane.offset),
            restitution: R::from_f64(plane.restitution),
            friction: R::from_f64(plane.friction),
            ..Self::default()
        }
    }
}

impl<R: Real> ForceGpu<R> {
    /// The record of `kind`, laid out as `ForceKind::parameters` orders them; `spans` (from
    /// `flatten_keyframes`) locates keyframe tables. A law's record holds its law's number
    /// in the crowd (`law_number`) in `keyframe_first`, which `dual_force_law` reads where
    /// the crowd runs several.
    pub fn new(kind: &ForceKind, spans: &[(u32, u32)], law_number: u32) -> Self {
        let p = kind.parameters();
        let (keyframe_first, keyframe_count) = match kind {
            ForceKind::Law { .. } => (law_number, 0),
            _ => p.table.map_or((0, 0), |table| spans[table]),
        };
        Self {
            a: real4(p.vectors[0], 0.0),
            b: real4(p.vectors[1], 0.0),
            c: p.scalars.map(R::from_f64),
            kind: kind.force_type().code(),
            keyframe_first,
            keyframe_count,
            ..Self::default()
        }
    }
}

impl<R: Real> From<&ExternalLoad> for ExternalLoadGpu<R> {
    fn from(load: &ExternalLoad) -> Self {
        Self {
            force: real4(load.force, 0.0),
            torque: real4(load.torque, 0.0),
        }
    }
}

/// What a chunk's `Params` holds besides `dt`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DispatchParams<'a> {
    pub body_count: u32,
    pub global_force_count: u32,
    pub integrator: u32,
    pub row_width: u32,
    pub steps_per_dispatch: u32,
    pub first_body: u32,
    pub dt: f64,
    pub fault_rules: crate::model::fault_rules::FaultRules,
    /// The crowd's planes: their count, and the first [`PARAMS_PLANES`] surfaces.
    pub planes: &'a [Plane],
}

/// The encoders of every buffer, in one precision. Each returns the bytes to upload; a
/// binding cannot be zero-sized, so lists that may be empty hold one unused record then.
#[derive(Clone, Copy)]
pub(crate) struct Encode(pub Precision);

impl Encode {
    /// The record of a body frozen by `fault` at `state`, its clock at `step`.
    pub fn frozen_state(
        &self,
        state: &BodyState,
        step: u64,
        fault: crate::model::fault::Fault,
    ) -> Vec<u8> {
        with_real!(self.0, R => {
            bytemuck::bytes_of(&BodyStateGpu::<R>::quarantined(state, step, fault)).to_vec()
        })
    }

    pub fn states<'a>(&self, states: impl Iterator<Item = &'a BodyState>, step: u64) -> Vec<u8> {
        let states: Vec<&BodyState> = states.collect();
        let mut bytes = vec![0; states.len() * RecordSizes::of(self.0).state];
        self.states_into(states.into_iter(), step, &mut bytes);
        bytes
    }

    /// [`Self::states`] written into `out`, which holds exactly their records.
    pub fn states_into<'a>(
        &self,
        states: impl Iterator<Item = &'a BodyState>,
        step: u64,
        out: &mut [u8],
    ) {
        with_real!(self.0, R => {
            let size = size_of::<BodyStateGpu<R>>();
            for (record, state) in out.chunks_exact_mut(size).zip(states) {
                record.copy_from_slice(bytemuck::bytes_of(&BodyStateGpu::<R>::new(state, step)));
            }
        })
    }

    /// The constants of `bodies`, whose forces are `table`'s.
    #[cfg(test)]
    pub fn constants(&self, bodies: &[Body], table: &ForceTable) -> Vec<u8> {
        let mut bytes = vec![0; bodies.len() * RecordSizes::of(self.0).constants];
        self.constants_into(bodies, table, 0, &mut bytes);
        bytes
    }

    /// The constants of `bodies`, the bodies of `table` from index `first` on, written into
    /// `out`, which holds exactly their records.
    pub fn constants_into(
        &self,
        bodies: &[Body],
        table: &ForceTable,
        first: usize,
        out: &mut [u8],
    ) {
        with_real!(self.0, R => {
            let size = size_of::<BodyConstantsGpu<R>>();
            for ((record, body), i) in out.chunks_exact_mut(size).zip(bodies).zip(first..) {
                let constants = BodyConstantsGpu::<R>::new(body, table.range(i), table.own_kinds(i));
                record.copy_from_slice(bytemuck::bytes_of(&constants));
            }
        })
    }

    pub fn forces(&self, table: &ForceTable, spans: &[(u32, u32)]) -> Vec<u8> {
        with_real!(self.0, R => {
            let mut records: Vec<ForceGpu<R>> =
                (table.forces.iter())
                .map(|kind| ForceGpu::new(kind, spans, table.law_number(kind)))
                .collect();
            if records.is_empty() {
                records.push(ForceGpu::default());
            }
            bytemuck::cast_slice(&records).to_vec()
        })
    }

    pub fn planes(&self, planes: &[Plane]) -> Vec<u8> {
        with_real!(self.0, R => {
            let mut records: Vec<PlaneGpu<R>> = planes.iter().map(PlaneGpu::from).collect();
            if records.is_empty() {
                records.push(PlaneGpu::default());
            }
            bytemuck::cast_slice(&records).to_vec()
        })
    }

    pub fn loads(&self, loads: &[ExternalLoad]) -> Vec<u8> {
        with_real!(self.0, R => {
            let records: Vec<ExternalLoadGpu<R>> = loads.iter().map(ExternalLoadGpu::from).collect();
            bytemuck::cast_slice(&records).to_vec()
        })
    }

    /// One zero load: the loads binding of a crowd without external loads.
    pub fn no_loads(&self) -> Vec<u8> {
        self.loads(&[ExternalLoad::default()])
    }

    pub fn params(&self, p: &DispatchParams) -> Vec<u8> {
        with_real!(self.0, R => {
            let record = ParamsGpu::<R> {
                body_count: p.body_count,
                global_force_count: p.global_force_count,
                integrator: p.integrator,
                row_width: p.row_width,
                steps_per_dispatch: p.steps_per_dispatch,
                first_body: p.first_body,
                plane_count: p.planes.len() as u32,
                on_fault: p.fault_rules.on_fault.code(),
                dt: R::from_f64(p.dt),
                envelope_squared: p.fault_rules.envelope.squared_limits(R::from_f64),
                plane_surfaces: std::array::from_fn(|i| {
                    p.planes.get(i).map_or([R::default(); 4], |plane| PlaneGpu::<R>::from(plane).surface)
                }),

            };
            bytemuck::bytes_of(&record).to_vec()
        })
    }

    /// Every keyframe table as one array of `[t, value]`, and where each table starts;
    /// never empty.
    pub fn keyframes(&self, tables: &[Vec<[f64; 2]>]) -> (Vec<u8>, Vec<(u32, u32)>) {
        with_real!(self.0, R => {
            let (mut flat, spans) = flatten_keyframes(tables, R::from_f64);
            if flat.is_empty() {
                flat.push([R::default(); 2]);
            }
            (bytemuck::cast_slice(&flat).to_vec(), spans)
        })
    }
}

/// Decodes state records of `precision` back into f64 states and their clock steps.
pub(crate) fn decode_states(precision: Precision, bytes: &[u8]) -> Vec<(BodyState, u64)> {
    let mut states = Vec::with_capacity(bytes.len() / RecordSizes::of(precision).state);
    visit_states(precision, bytes, |state, step| states.push((state, step)));
    states
}

/// The status word of each state record of `precision` in `bytes`, with its clock step,
/// for the records whose status is neither `HEALTHY_STATUS` nor `RESTING_STATUS` (a healthy
/// body at rest): `(record index, step, status)`.
pub(crate) fn frozen_records(
    precision: Precision,
    bytes: &[u8],
) -> Vec<(usize, BodyState, u64, u32)> {
    with_real!(precision, R => {
        bytes
            .chunks_exact(size_of::<BodyStateGpu<R>>())
            .enumerate()
            .filter_map(|(i, record)| {
                let record: BodyStateGpu<R> = bytemuck::pod_read_unaligned(record);
                let healthy = [HEALTHY_STATUS, RESTING_STATUS].contains(&record.status);
                (!healthy).then(|| (i, record.to_state(), record.step(), record.status))
            })
            .collect()
    })
}

/// Hands each `BodyStateGpu` record of `bytes` to `visit` as its f64 state and clock step,
/// without copying the records (they need no alignment).
pub(crate) fn visit_states(
    precision: Precision,
    bytes: &[u8],
    mut visit: impl FnMut(BodyState, u64),
) {
    with_real!(precision, R => {
        for record in bytes.chunks_exact(size_of::<BodyStateGpu<R>>()) {
            let record: BodyStateGpu<R> = bytemuck::pod_read_unaligned(record);
            visit(record.to_state(), record.step());
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::gpu::GpuContext;

    #[test]
    fn the_step_count_survives_the_two_u32_fields_exactly() {
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
            assert_eq!(BodyStateGpu::<f32>::new(&state, step).step(), step);
            assert_eq!(BodyStateGpu::<f64>::new(&state, step).step(), step);
        }
    }

    /// Fills every field of a record with a distinct value, in declaration order, and
    /// returns the values as the probe writes them: reals and u32 words separately.
    struct Filler {
        next: f64,
        reals: Vec<f64>,
        words: Vec<u32>,
    }

    impl Filler {
        fn real<R: Real>(&mut self) -> R {
            self.next += 1.0;
            self.reals.push(self.next);
            R::from_f64(self.next)
        }
        fn reals<R: Real, const N: usize>(&mut self) -> [R; N] {
            std::array::from_fn(|_| self.real())
        }
        fn word(&mut self) -> u32 {
            self.next += 1.0;
            self.words.push(self.next as u32);
            self.next as u32
        }
    }

    /// Every record with distinct field values, and the reals and words the probe should
    /// read from them, in the order shaders/layout_probe.wgsl writes them.
    #[allow(clippy::type_complexity)]
    fn probe_records<R: Real>() -> (
        BodyStateGpu<R>,
        BodyConstantsGpu<R>,
        ForceGpu<R>,
        ParamsGpu<R>,
        PlaneGpu<R>,
        ExternalLoadGpu<R>,
        Vec<f64>,
        Vec<u32>,
    ) {
        let mut f = Filler {
            next: 0.0,
            reals: Vec::new(),
            words: Vec::new(),
        };
        let state = BodyStateGpu::<R> {
            position: f.reals(),
            step_low: f.word(),
            orientation: f.reals(),
            linear_momentum: f.reals(),
            step_high: f.word(),
            angular_momentum: f.reals(),
            status: f.word(),
            ..Default::default()
        };
        let constants = BodyConstantsGpu::<R> {
            shape: f.reals(),
            mass: f.real(),
            inv_mass: f.real(),
            inv_inertia: f.reals(),
            force_first: f.word(),
            force_count: f.word(),
            shape_kind: f.word(),
            own_kinds: f.word(),
            ..Default::default()
        };
        let force = ForceGpu::<R> {
            a: f.reals(),
            b: f.reals(),
            c: f.reals(),
            kind: f.word(),
            keyframe_first: f.word(),
            keyframe_count: f.word(),
            ..Default::default()
        };
        let params = ParamsGpu::<R> {
            body_count: f.word(),
            global_force_count: f.word(),
            integrator: f.word(),
            row_width: f.word(),
            steps_per_dispatch: f.word(),
            first_body: f.word(),
            plane_count: f.word(),
            on_fault: f.word(),
            dt: f.real(),
            envelope_squared: f.reals(),
            plane_surfaces: std::array::from_fn(|_| f.reals()),
        };
        let plane = PlaneGpu::<R> {
            surface: f.reals(),
            restitution: f.real(),
            friction: f.real(),
            ..Default::default()
        };
        let load = ExternalLoadGpu::<R> {
            force: f.reals(),
            torque: f.reals(),
        };
        (
            state, constants, force, params, plane, load, f.reals, f.words,
        )
    }

    fn layout_agrees<R: Real>(ctx: &GpuContext) {
        use crate::backends::gpu::device::readback::read_buffer;
        use wgpu::util::DeviceExt;
        let (state, constants, force, params, plane, load, reals, words) = probe_records::<R>();
        let device = &ctx.device;
        let buffer = |label, contents: &[u8], usage| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage,
            })
        };
        // Element 1 of two checks the array stride too.
        fn pair<T: Pod + Default>(record: T) -> Vec<u8> {
            bytemuck::cast_slice(&[T::default(), record]).to_vec()
        }
        let storage = wgpu::BufferUsages::STORAGE;
        let out = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        let bound = [
            buffer("states", &pair(state), storage),
            buffer("constants", &pair(constants), storage),
            buffer("forces", &pair(force), storage),
            buffer(
                "params",
                bytemuck::bytes_of(&params),
                wgpu::BufferUsages::UNIFORM,
            ),
            buffer("planes", &pair(plane), storage),
            buffer("loads", &pair(load), storage),
            buffer("reals", &vec![0u8; reals.len() * size_of::<R>()], out),
            buffer("words", &vec![0u8; words.len() * 4], out),
        ];
        let source = crate::backends::gpu::kernel::shader::layout_probe_source(R::PRECISION);
        let bindings: Vec<(u32, &wgpu::Buffer)> = (0..).zip(&bound).collect();
        let label = format!("layout probe, {:?}", R::PRECISION);
        crate::backends::gpu::device::probe::dispatch(
            ctx,
            &label,
            &source,
            "probe",
            &[],
            &bindings,
            (1, 1),
        );
        let got_reals: Vec<R> = read_buffer(ctx, &bound[6], reals.len()).unwrap();
        let got_words: Vec<u32> = read_buffer(ctx, &bound[7], words.len()).unwrap();
        let got_reals: Vec<f64> = got_reals.into_iter().map(R::to_f64).collect();
        assert_eq!(
            got_reals,
            reals,
            "{:?}: a WGSL real field sits at a different offset than its Rust twin",
            R::PRECISION
        );
        assert_eq!(
            got_words,
            words,
            "{:?}: a WGSL u32 field sits at a different offset than its Rust twin",
            R::PRECISION
        );
    }

    #[test]
    fn rust_and_wgsl_agree_on_every_field_offset_in_both_precisions() {
        let ctx = GpuContext::new().expect("the layout test needs a GPU adapter (see README)");
        layout_agrees::<f32>(&ctx);
        assert!(
            ctx.supports_f64(),
            "the layout test needs an adapter with SHADER_F64 (lavapipe has it)"
        );
        layout_agrees::<f64>(&ctx);
    }
}
