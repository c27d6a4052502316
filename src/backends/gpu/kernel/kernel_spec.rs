//! What an integration kernel is compiled for. The integrator, the force kinds and whether
//! contacts run are fixed when the pipeline is built, and the code that visits the forces is
//! generated for them, so the driver folds away everything else and a gravity-and-drag RK4
//! crowd runs straight-line code:
//! - the forces on every body are called one after another, each with its record's index a
//!   constant: no loop, and the same record for every invocation;
//! - a body's own forces, which the force table orders by kind, are visited kind by kind,
//!   each kind behind a bit of the body's `own_kinds` mask, and as a loop only where some body
//!   has more than one force of that kind. A switch per record would make an invocation group
//!   whose bodies differ run every case for every record;
//! - the records called one by one (not in a loop) are read once per dispatch into
//!   `dual_records`, not at every stage of every step: four reads a step under RK4, each a
//!   gather across the invocations for a body's own forces;
//! - where the crowd's keyframe segments are longer than a dispatch, a keyframed record called
//!   one by one has its table searched once per dispatch, for a window of three keyframes
//!   that every stage interpolates in without a loop.
//!
//! The general kernel (every kind, loops everywhere, the crowd's integrator) is kept for
//! comparison: the two sum the same records in the same order and give bit-identical
//! results, which `tests/suite/kernel_spec.rs` checks.
//!
//! The plain kernel is the kernel over dual numbers of width 0, and a tangent kernel the same
//! over a block's width: what summing a body's force records is, on the GPU, is written here
//! once.

use crate::assembly::crowd::Crowd;
use crate::assembly::force_table::ForceTable;
use crate::model::body::Body;
use crate::model::codes::Coded;
use crate::model::force::ForceType;
use crate::model::integrator::Integrator;
use crate::model::shape::ShapeKind;

use super::layout::PARAMS_PLANES;

/// The longest list of forces on every body that a kernel calls one by one; a longer list is
/// visited in loops, one per kind, so the kernel's size stays bounded.
const MAX_UNROLLED_GLOBAL_FORCES: usize = 16;

/// The margin `dual_plane_clearance` keeps, relative to the magnitudes its heights are
/// computed from (the largest plane offset, the position's components, the radius `m`): the
/// heights at the start and at a point as far as the body may go (`far_from`'s) and the
/// distance it went are each rounded by at most a few units of f32's rounding `u = 2^-24`
/// times `m`, about `25 u m` together; `4e-6 m` is 67 of them. A body the plain kernel finds
/// clear by the clearance is then clear by `far_from` too.
const NEAR_MARGIN: f64 = 4e-6;

/// The integrators, force kinds and contact handling one kernel is compiled for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct KernelSpec {
    /// Integrators with a case in `dual_scheme_step`, in [`Integrator::ALL`] order.
    integrators: Vec<Integrator>,
    /// How `dual_accumulate_global_forces` visits the forces on every body.
    global_forces: GlobalForces,
    /// The kinds `dual_accumulate_own_forces` visits, in [`ForceType::ALL`] order.
    own_forces: Vec<OwnForces>,
    /// The shape kinds the contact resolution is compiled for, in [`ShapeKind::ALL`] order;
    /// none when it is not compiled in.
    shapes: Vec<ShapeKind>,
    /// How many planes the crowd has, where the kernel is compiled for them: each step's
    /// test whether a body is near one reads each by a constant index, one after another
    /// (the driver reads them once, for every invocation). `None`: a loop over
    /// `params.plane_count`, which reads them per invocation at every step.
    planes: Option<usize>,
    /// Whether the envelope checks (speed, angular speed, distance) are compiled in.
    envelope: bool,
    /// Whether keyframed records called one by one interpolate in a window found once per
    /// dispatch rather than searching their table at every stage.
    keyframe_windows: bool,
}

/// How the kernel visits the forces acting on every body.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum GlobalForces {
    /// Exactly these records, in table order: one call each.
    Calls(Vec<ForceType>),
    /// Any records of these kinds (in [`ForceType::ALL`] order): one loop per kind.
    Loops(Vec<ForceType>),
}

/// One kind of a body's own forces, and whether one body can have several of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct OwnForces {
    kind: ForceType,
    repeated: bool,
}

impl KernelSpec {
    /// Whether the envelope checks are compiled in.
    pub fn envelope(&self) -> bool {
        self.envelope
    }

    /// Whether the contact resolution is compiled in.
    pub fn contacts(&self) -> bool {
        !self.shapes.is_empty()
    }

    /// Whether the kernel over duals of width `width` hands the bodies near a plane over to
    /// `integrate_near` rather than resolving contacts in `integrate`: the plain kernel
    /// (width 0) with contact code. Its pipelines bind the near list as group 1.
    pub fn hands_over_contacts(&self, width: usize) -> bool {
        width == 0 && self.contacts()
    }

    /// Whether the kernel over duals of width `width` ends a body's steps in the dispatch
    /// once one leaves it as it was (`physics::rest`): the plain kernel with contact code,
    /// none of whose force kinds reads the clock. (A tangent moves on at rest.)
    pub fn settles(&self, width: usize) -> bool {
        self.hands_over_contacts(width)
            && !self.force_kinds().iter().any(|kind| kind.reads_the_clock())
    }

    /// The shape kinds the contact resolution has a case for.
    pub fn shapes(&self) -> &[ShapeKind] {
        &self.shapes
    }

    /// The same kernel with contact cases only for the shape kinds of `bodies`: what the
    /// tangent kernel compiles, since a driver inlines each case and a box's over dual
    /// numbers is long. (The plain kernel keeps every kind: its bodies may come from a
    /// generator that is never run whole on the host.)
    pub fn for_shapes_of(&self, bodies: &[Body]) -> Self {
        if !self.contacts() {
            return self.clone();
        }
        let mut present = [false; ShapeKind::EVERY.len()];
        for body in bodies {
            if let Some(shape) = body.mass.shape() {
                present[(shape.kind().code() - ShapeKind::FIRST_CODE) as usize] = true;
            }
        }
        let shapes = (self.shapes.iter().copied())
            .filter(|kind| present[(kind.code() - ShapeKind::FIRST_CODE) as usize])
            .collect();
        Self {
            shapes,
            ..self.clone()
        }
    }

    /// The integrators the kernel has a case for.
    pub fn integrators(&self) -> &[Integrator] {
        &self.integrators
    }

    /// The force kinds the kernel has code for, in [`ForceType::ALL`] order.
    pub fn force_kinds(&self) -> Vec<ForceType> {
        let global = match &self.global_forces {
            GlobalForces::Calls(kinds) | GlobalForces::Loops(kinds) => kinds,
        };
        let own: Vec<ForceType> = self.own_forces.iter().map(|own| own.kind).collect();
        kinds_in(&[global.as_slice(), &own].concat())
    }

    /// Every integrator, force kind and contacts: a kernel for any crowd.
    pub fn general() -> Self {
        Self {
            integrators: Integrator::ALL.to_vec(),
            global_forces: GlobalForces::Loops(ForceType::ALL.to_vec()),
            own_forces: ForceType::ALL
                .iter()
                .map(|&kind| OwnForces {
                    kind,
                    repeated: true,
                })
                .collect(),
            shapes: ShapeKind::ALL.to_vec(),
            planes: None,
            envelope: true,
            keyframe_windows: false,
        }
    }

    /// Every force kind and contacts under `integrator`: a kernel for any crowd it
    /// integrates, which `GpuOptions::specialized: false` builds to check the specialized one
    /// against. One integrator, not all six: the cases side by side are most of the general
    /// kernel's compile (on lavapipe 100 s in f32 with six, 7 s with RK4 alone).
    pub fn general_for(integrator: Integrator) -> Self {
        Self {
            integrators: vec![integrator],
            ..Self::general()
        }
    }

    /// Exactly what `crowd`, whose forces `table` holds, uses: its integrator, its forces on
    /// every body, the kinds of its bodies' own forces, contacts if it has planes, and
    /// keyframe windows if its tables allow them when `steps_per_dispatch` steps are fused.
    /// A kernel built for it handles nothing else.
    pub fn of(crowd: &Crowd, table: &ForceTable, steps_per_dispatch: u32) -> Self {
        let globals: Vec<ForceType> = table.forces[..table.global_count]
            .iter()
            .map(|f| f.force_type())
            .collect();
        let global_forces = if globals.len() <= MAX_UNROLLED_GLOBAL_FORCES {
            GlobalForces::Calls(globals)
        } else {
            GlobalForces::Loops(kinds_in(&globals))
        };
        // Per kind (by code), the most forces of it that one body has. The table orders a
        // body's forces by kind, so each run of one kind is that kind's count.
        let slot = |kind: ForceType| (kind.code() - ForceType::FIRST_CODE) as usize;
        let mut most = vec![0; ForceType::ALL.len()];
        for &(first, count) in table.own_ranges() {
            let own = &table.forces[first as usize..][..count as usize];
            for run in own.chunk_by(|a, b| a.force_type() == b.force_type()) {
                let most = &mut most[slot(run[0].force_type())];
                *most = (*most).max(run.len());
            }
        }
        let mut spec = Self {
            integrators: vec![crowd.integrator],
            global_forces,
            own_forces: ForceType::ALL
                .iter()
                .map(|&kind| (kind, most[slot(kind)]))
                .filter(|&(_, most)| most > 0)
                .map(|(kind, most)| OwnForces {
                    kind,
                    repeated: most > 1,
                })
                .collect(),
            shapes: match crowd.planes.is_empty() {
                true => Vec::new(),
                false => ShapeKind::ALL.to_vec(),
            },
            planes: (!crowd.planes.is_empty()).then_some(crowd.planes.len()),
            envelope: crowd.fault_rules.envelope.is_set(),
            keyframe_windows: false,
        };
        spec.keyframe_windows = spec.calls_keyframed_records_one_by_one()
            && keyframe_segments_outlast_a_dispatch(crowd, steps_per_dispatch);
        spec
    }

    /// The kernel for `crowd` fusing `steps_per_dispatch` steps: [`KernelSpec::of`] when
    /// `specialized`, else the general one for its integrator.
    pub fn for_crowd(
        crowd: &Crowd,
        table: &ForceTable,
        specialized: bool,
        steps_per_dispatch: u32,
    ) -> Self {
        if specialized {
            Self::of(crowd, table, steps_per_dispatch)
        } else {
            Self::general_for(crowd.integrator)
        }
    }

    /// Whether some keyframed record is called one by one rather than in a loop.
    fn calls_keyframed_records_one_by_one(&self) -> bool {
        let global = matches!(&self.global_forces,
            GlobalForces::Calls(records) if records.contains(&ForceType::Keyframed));
        let own = self
            .own_forces
            .iter()
            .any(|own| own.kind == ForceType::Keyframed && !own.repeated);
        global || own
    }

    /// The generated WGSL of a kernel over duals of width `width` (0: the plain kernel):
    /// `KERNEL_CONTACTS`, `KERNEL_SETTLES`, `KERNEL_ENVELOPE`, the visits of the force records
    /// (`DualForceRecords`, `dual_load_force_records` into the private `dual_records` once a
    /// dispatch, `dual_accumulate_global_forces` and `dual_accumulate_own_forces`, which add
    /// each record's load to `total` and return it), `dual_kernel_split_axes` and
    /// `dual_scheme_step`. Keyframe windows only at width 0: a search over duals seeds each
    /// keyframe it reads. The custom kind has a case where the kernel has a
    /// `dual_custom_force` (`custom_code`), the law kind where it has a `dual_force_law`
    /// for `laws` laws (more than one: it chooses by the record's law number). A record or
    /// integrator the kernel has no code for
    /// (a kind the crowd does not use cannot appear in its records) sets
    /// `faults.first_unknown_code`: never a silent fallback.
    pub fn wgsl(&self, width: usize, custom_code: bool, laws: usize) -> String {
        let n = Visits {
            windows: self.keyframe_windows && width == 0,
            custom_code,
            laws,
        };
        format!(
            "// Generated by src/backends/gpu/kernel/kernel_spec.rs for this kernel's crowd.
const KERNEL_CONTACTS: bool = {contacts};
const KERNEL_HANDS_OVER_CONTACTS: bool = {hands_over};
const KERNEL_SETTLES: bool = {settles};
const KERNEL_ENVELOPE: bool = {envelope};

{near}{records}var<private> dual_records: DualForceRecords;

/// The forces acting on all bodies, added to `total`.
fn dual_accumulate_global_forces({FORCE_PARAMETERS}) -> DualLoad {{
    var out = total;
{global}    return out;
}}

/// The body's own forces, added to `total`.
fn dual_accumulate_own_forces({FORCE_PARAMETERS}) -> DualLoad {{
    var out = total;
{own}    return out;
}}

{scheme}",
            contacts = self.contacts(),
            hands_over = self.hands_over_contacts(width),
            settles = self.settles(width),
            near = self.near_a_plane_wgsl(),
            envelope = self.envelope,
            records = self.records_wgsl(n),
            global = self.global_forces.wgsl(n),
            own = own_forces_wgsl(&self.own_forces, n),
            scheme = self.scheme_wgsl(),
        )
    }

    /// `dual_near_a_plane`, where the kernel has contact code: whether a body may touch a
    /// plane, `dual_far_from_plane` (traced from the definition) of each plane in turn;
    /// `dual_plane_clearance`, how far a body may move and stay clear of them all; and
    /// `dual_load_planes`, once a dispatch, which reads the planes it tests where the kernel
    /// knows how many there are.
    fn near_a_plane_wgsl(&self) -> String {
        if !self.contacts() {
            return String::new();
        }
        let test =
            |surface: &str| format!("!dual_far_from_plane(position, plain.shape.w, {surface})");
        let least = |surface: &str| {
            format!(
                "    least = min(least, plane_height({surface}, position));\n    \
                 offsets = max(offsets, abs({surface}.w));\n"
            )
        };
        let first = "    var least = plane_height(SURFACE, position);\n    \
                     var offsets = abs(SURFACE.w);\n";
        let (load, body, clearance) = match self.planes {
            // `|`, not `||`: every plane tested, no branch.
            Some(count) => (
                format!(
                    "var<private> plane_surfaces: array<vec4<real>, {count}>;\n\n\
                     /// The planes' surfaces, read once a dispatch (from the parameters where\n\
                     /// they hold them all).\n\
                     fn dual_load_planes() {{\n{}}}\n\n",
                    (0..count)
                        .map(|i| match count <= PARAMS_PLANES {
                            true =>
                                format!("    plane_surfaces[{i}] = params.plane_surfaces[{i}];\n"),
                            false => format!("    plane_surfaces[{i}] = planes[{i}u].surface;\n"),
                        })
                        .collect::<String>()
                ),
                format!(
                    "    return {};\n",
                    (0..count)
                        .map(|i| test(&format!("plane_surfaces[{i}]")))
                        .collect::<Vec<_>>()
                        .join("\n        | ")
                ),
                first.replace("SURFACE", "plane_surfaces[0]")
                    + &(1..count)
                        .map(|i| least(&format!("plane_surfaces[{i}]")))
                        .collect::<String>(),
            ),
            None => (
                "fn dual_load_planes() {}\n\n".to_string(),
                format!(
                    "    var near = false;\n    for (var i = 0u; i < params.plane_count; i++) {{\n        \
                     near = near | {};\n    }}\n    return near;\n",
                    test("planes[i].surface")
                ),
                first.replace("SURFACE", "planes[0].surface")
                    + "    for (var i = 1u; i < params.plane_count; i++) {\n"
                    + &least("planes[i].surface").replace("\n    ", "\n        ")
                    + "    }\n",
            ),
        };
        format!(
            "{load}/// Whether state s of a body with constants `plain` may touch a plane: near one, as
/// `physics::contact::resolve_contacts` decides it. A body clear of every plane is left as it
/// is by each plane's resolution.
fn dual_near_a_plane(s: DualMotion, plain: BodyConstants) -> bool {{
    let position = motion_value(s).position;
{body}}}

/// How far above the plane `surface` (normal, offset) `position` lies.
fn plane_height(surface: vec4<real>, position: vec3<real>) -> real {{
    return dot(surface.xyz, position) - surface.w;
}}

/// How far a body with bounding radius `radius` at `position` may move and stay clear of
/// every plane (at least one plane): its least height above them less its radius, less
/// NEAR_MARGIN times the magnitudes they are computed from, which covers the rounding of
/// this figure and of `dual_far_from_plane` at any point as close. Zero or less, or not a
/// number (as a position that is not a number gives), where it may be near one.
fn dual_plane_clearance(position: vec3<real>, radius: real) -> real {{
{clearance}    let magnitude = offsets + abs(position.x) + abs(position.y) + abs(position.z) + radius;
    return least - radius - real({margin:e}) * magnitude;
}}

/// Whether `position` is not within the square root of `reach` of `origin` (or is not a
/// number): a body there may have left the ball its clearance gave it.
fn beyond_clearance(position: vec3<real>, origin: vec3<real>, reach: real) -> bool {{
    let travelled = position - origin;
    return !(dot(travelled, travelled) < reach);
}}

",
            margin = NEAR_MARGIN,
        )
    }

    /// `dual_kernel_split_axes` (the principal axes where an integrator splits, else zeros,
    /// so other kernels pay nothing for them) and `dual_scheme_step`: the step of the crowd's
    /// integrator (`params.integrator`), before q is renormalized; an unknown code is a fault.
    fn scheme_wgsl(&self) -> String {
        let cases: String = (self.integrators.iter())
            .map(|integrator| {
                format!(
                    "        case {}: {{\n            next = dual_{}_step(s, c, axes, t, h, index);\n        }}\n",
                    integrator.wgsl_constant(),
                    integrator.name()
                )
            })
            .collect();
        let split_axes = match self.integrators.iter().any(|i| i.splits_the_rotation()) {
            true => "    return dual_split_axes(c);\n",
            false => "    var unread: DualSplitAxes;\n    return unread;\n",
        };
        format!(
            "/// The body's principal axes when a splitting integrator can run here, else never read.
fn dual_kernel_split_axes(c: DualConstants) -> DualSplitAxes {{
{split_axes}}}

/// One step of the crowd's integrator, before q is renormalized.
fn dual_scheme_step(s: DualMotion, c: DualConstants, axes: DualSplitAxes, t: real, h: real,
    index: u32) -> DualMotion {{
    var next = s;
    switch params.integrator {{
{cases}        default: {{
            atomicMin(&faults.first_unknown_code, params.first_body + index);
        }}
    }}
    return next;
}}
"
        )
    }

    /// `DualForceRecords`, the records called one by one (the forces on every body, each
    /// kind of a body's own forces it has at most one of) with the keyframe windows of those
    /// that have them, and `dual_load_force_records`, which reads them once per dispatch,
    /// walking a body's own forces as `dual_accumulate_own_forces` does.
    fn records_wgsl(&self, n: Visits) -> String {
        let mut fields = String::new();
        let mut loads = String::new();
        if let GlobalForces::Calls(records) = &self.global_forces {
            for (index, &kind) in records.iter().enumerate() {
                let name = format!("global_{index}");
                let (field, load) = record_wgsl(n, &name, kind, &format!("{index}u"), "    ");
                fields += &field;
                loads += &load;
            }
        }
        // The walk goes up to the last kind called once. Without loops that is every own
        // record, so the check for one without code runs here, once per dispatch, instead
        // of at every stage.
        let loops = loops_over_own_forces(&self.own_forces);
        let walked = match self.own_forces.iter().rposition(|own| !own.repeated) {
            Some(last) => &self.own_forces[..=last],
            None => &[],
        };
        if !walked.is_empty() || !loops {
            loads += "    let end = c.force_first + c.force_count;\n    var i = c.force_first;\n";
        }
        for own in walked {
            let walk = if own.repeated {
                format!(
                    "        while i < end && forces[i].kind == {} {{\n            i++;\n        }}\n",
                    own.kind.wgsl_constant()
                )
            } else {
                let name = format!("own_{}", own.kind.name());
                let (field, load) = record_wgsl(n, &name, own.kind, "i", "        ");
                fields += &field;
                load + "        i++;\n"
            };
            loads += &format!(
                "    if (c.own_kinds & {bit}u) != 0u {{\n{walk}    }}\n",
                bit = own.kind.bit()
            );
        }
        if !loops {
            loads += &left_over_is_a_fault("body");
        }
        format!(
            "/// The force records this kernel calls one by one, read once per dispatch.
struct DualForceRecords {{
{fields}    /// A member even when every record is visited in a loop.
    none: u32,
}}

fn dual_load_force_records(c: BodyConstants, body: u32, low: u32, high: u32) -> DualForceRecords {{
    var r: DualForceRecords;
{times}{loads}    return r;
}}
",
            times = match n.windows {
                true => "    let times = dispatch_times(low, high);\n",
                false => "",
            },
        )
    }
}

/// The `DualForceRecords` field(s) of the record of kind `kind` called one by one as `name`,
/// and the statements of `dual_load_force_records`, indented by `indent`, that fill them from
/// record `index`: its parameters, and a keyframed record's window where the visits have
/// windows, else its index, which its table's search reads.
fn record_wgsl(
    n: Visits,
    name: &str,
    kind: ForceType,
    index: &str,
    indent: &str,
) -> (String, String) {
    let mut field = format!("    {name}: DualParameters,\n");
    let mut load = format!("{indent}r.{name} = dual_parameters({index});\n");
    if kind == ForceType::Keyframed {
        if n.windows {
            field += &format!("    {name}_window: KeyframeWindow,\n");
            load += &format!(
                "{indent}r.{name}_window = keyframe_window(forces[{index}], times, body);\n"
            );
        } else {
            field += &format!("    {name}_index: u32,\n");
            load += &format!("{indent}r.{name}_index = {index};\n");
        }
    }
    if kind == ForceType::Law && n.laws > 1 {
        // A law's record holds its law's number where a keyframed one starts its table.
        field += &format!("    {name}_law: u32,\n");
        load += &format!("{indent}r.{name}_law = forces[{index}].keyframe_first;\n");
    }
    (field, load)
}

/// The parameters of the generated force functions, which pass them on to
/// `dual_force_<kind>`: `plain` holds the body's record range and kinds, `body` its index.
const FORCE_PARAMETERS: &str = "s: DualMotion, c: DualConstants, aux: DualAuxiliaries, \
    t: DualReal,\n        plain: BodyConstants, body: u32, total: DualLoad";

/// How a kernel's visits call the force functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Visits {
    /// Whether keyframed records called one by one interpolate in a window found once a
    /// dispatch (the plain kernel's, where its spec has them).
    windows: bool,
    /// Whether the kernel has a `dual_custom_force`: the plain kernel's, whatever the custom
    /// force (its WGSL, a stub or a law); a tangent kernel's only for a law (the host refuses
    /// others first).
    custom_code: bool,
    /// How many laws the kernel's `dual_force_law` runs: where its crowd's custom force is
    /// registered laws and it has the law kind (0: no `dual_force_law`). With several, it
    /// takes the record's law number.
    laws: usize,
}

impl Visits {
    /// The statement that adds the load of a record of kind `kind`, given as `record` (its
    /// parameters) whose index is `index` and (a law's record) whose law's number is `law`,
    /// to `out`.
    fn call(self, kind: ForceType, record: &str, index: &str, law: &str) -> String {
        match kind {
            ForceType::Custom if self.custom_code => {
                "out = dual_custom_force(s, c, aux, t, body, out);".into()
            }
            ForceType::Custom => "atomicMin(&faults.first_unknown_code, body);".into(),
            ForceType::Law if self.laws > 1 => {
                format!("out = dual_force_law({record}, {law}, s, c, aux, t, body, out);")
            }
            ForceType::Law if self.laws == 1 => {
                format!("out = dual_force_law({record}, s, c, aux, t, body, out);")
            }
            ForceType::Law => "atomicMin(&faults.first_unknown_code, body);".into(),
            ForceType::Keyframed => {
                format!("out = dual_add_keyframed({record}, dual_keyframe_scale({index}, t), out);")
            }
            _ => format!(
                "out = dual_force_{}({record}, s, c, aux, t, out);",
                kind.name()
            ),
        }
    }
}

/// The call of record `name` of `dual_records`, of kind `kind`: a keyframed one with a window
/// interpolates in it.
fn call_one(n: Visits, kind: ForceType, name: &str) -> String {
    let record = format!("dual_records.{name}");
    if n.windows && kind == ForceType::Keyframed {
        format!(
            "out = dual_add_keyframed({record}, dual_keyframe_window_scale({record}_window, t), out);"
        )
    } else {
        n.call(
            kind,
            &record,
            &format!("{record}_index"),
            &format!("{record}_law"),
        )
    }
}

/// Whether the segments of every keyframe table of `crowd` are long enough for windows when
/// `steps_per_dispatch` steps are fused. A window covers the segment of a dispatch's earliest
/// time and the next one, so a dispatch (its steps and one more for the last stages) always
/// fits if every segment is twice as long: room for `keyframe_window`'s widening of the
/// dispatch's times by 2^-20 of their size on each side, kept below half a dispatch at the
/// table's times (before them and after them a window holds a value and cannot miss).
fn keyframe_segments_outlast_a_dispatch(crowd: &Crowd, steps_per_dispatch: u32) -> bool {
    let dispatch = (steps_per_dispatch as f64 + 1.0) * crowd.dt;
    crowd.keyframes.iter().all(|table| {
        let (first, last) = (table[0][0], table[table.len() - 1][0]);
        let widening = 2.0 * (first.abs().max(last.abs()) + dispatch) * 2f64.powi(-20);
        widening <= 0.5 * dispatch
            && table
                .windows(2)
                .all(|pair| pair[1][0] - pair[0][0] >= 2.0 * dispatch)
    })
}

/// The kinds among `forces`, in [`ForceType::ALL`] order.
fn kinds_in(forces: &[ForceType]) -> Vec<ForceType> {
    ForceType::ALL
        .iter()
        .copied()
        .filter(|kind| forces.contains(kind))
        .collect()
}

/// A loop over the records of kind `kind` from `i` on, which stops at `end` or at a record of
/// another kind.
fn kind_loop(n: Visits, kind: ForceType, indent: &str) -> String {
    format!(
        "{indent}while i < end && forces[i].kind == {code} {{
{indent}    {call}
{indent}    i++;
{indent}}}
",
        code = kind.wgsl_constant(),
        call = n.call(kind, "dual_parameters(i)", "i", "forces[i].keyframe_first"),
    )
}

/// A record left over after the kinds were visited is of a kind without code: a fault of
/// the body whose crowd index is `body`.
fn left_over_is_a_fault(body: &str) -> String {
    format!(
        "    if i < end {{
        atomicMin(&faults.first_unknown_code, {body});
    }}
"
    )
}

impl GlobalForces {
    /// The body of `dual_accumulate_global_forces`.
    fn wgsl(&self, n: Visits) -> String {
        match self {
            GlobalForces::Calls(records) => records
                .iter()
                .enumerate()
                .map(|(index, &kind)| {
                    format!("    {}\n", call_one(n, kind, &format!("global_{index}")))
                })
                .collect(),
            GlobalForces::Loops(kinds) => {
                let loops: String = kinds
                    .iter()
                    .map(|&kind| kind_loop(n, kind, "    "))
                    .collect();
                format!(
                    "    let end = params.global_force_count;\n    var i = 0u;\n{loops}{}",
                    left_over_is_a_fault("body")
                )
            }
        }
    }
}

/// Whether some body has several own forces of one kind, so that
/// `dual_accumulate_own_forces` walks its records with an index and checks what is left
/// over; otherwise `dual_load_force_records` walks and checks them, once per dispatch.
fn loops_over_own_forces(kinds: &[OwnForces]) -> bool {
    kinds.iter().any(|own| own.repeated)
}

/// The body of `dual_accumulate_own_forces`: per kind, nothing unless the body's
/// `own_kinds` (in its plain constants) has its bit, then one call, or a loop where a body
/// can have several. Without loops the records need no index here:
/// `dual_load_force_records` walked and checked them.
fn own_forces_wgsl(kinds: &[OwnForces], n: Visits) -> String {
    let loops = loops_over_own_forces(kinds);
    let (c, body) = ("plain", "body");
    let visits: String = kinds
        .iter()
        .map(|own| {
            let visit = if own.repeated {
                kind_loop(n, own.kind, "        ")
            } else {
                let name = format!("own_{}", own.kind.name());
                let next = if loops { "        i++;\n" } else { "" };
                format!("        {}\n{next}", call_one(n, own.kind, &name))
            };
            format!(
                "    if ({c}.own_kinds & {bit}u) != 0u {{\n{visit}    }}\n",
                bit = own.kind.bit()
            )
        })
        .collect();
    if !loops {
        return visits;
    }
    format!(
        "    let end = {c}.force_first + {c}.force_count;\n    var i = {c}.force_first;\n{visits}{}",
        left_over_is_a_fault(body)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::force::{Force, ForceKind};
    use glam::DVec3;

    #[test]
    fn the_general_kernel_has_every_case_and_a_crowds_only_its_own() {
        let general = KernelSpec::general().wgsl(0, true, 0);
        for &kind in ForceType::ALL {
            let call = match kind {
                ForceType::Keyframed => "dual_add_keyframed(".to_string(),
                ForceType::Custom => "dual_custom_force(".to_string(),
                // Without a law attached, its records are faults.
                ForceType::Law => "atomicMin(&faults.first_unknown_code, body);".to_string(),
                _ => format!("dual_force_{}(", kind.name()),
            };
            assert!(general.contains(&call));
        }
        for integrator in Integrator::ALL {
            assert!(general.contains(&format!("dual_{}_step(", integrator.name())));
        }
        assert!(general.contains("const KERNEL_CONTACTS: bool = true;"));
        assert!(general.contains("return dual_split_axes(c);"));

        let bodies = crate::CrowdSpec::new(4, 1).generate().unwrap();
        let crowd = Crowd::new(bodies, 1e-3)
            .with_integrator(Integrator::LieRk4)
            .with_force(Force::on_all(ForceKind::Gravity {
                acceleration: DVec3::NEG_Z,
            }));
        let own = KernelSpec::of(&crowd, &ForceTable::new(&crowd, crowd.bodies.len()), 8)
            .wgsl(0, true, 0);
        assert!(own.contains("dual_force_gravity("));
        assert!(own.contains("dual_lie_rk4_step("));
        assert!(own.contains("const KERNEL_CONTACTS: bool = false;"));
        for &kind in &ForceType::ALL[1..] {
            assert!(!own.contains(&format!("force_{}(", kind.name())));
        }
        for integrator in Integrator::ALL {
            if integrator != Integrator::LieRk4 {
                assert!(!own.contains(&format!(" dual_{}_step(", integrator.name())));
            }
        }
        // No principal axes where no integrator turns the body about them.
        assert!(!own.contains("dual_split_axes(c)"));
        let splitting = crowd.with_integrator(Integrator::LiePoisson);
        let own = KernelSpec::of(&splitting, &ForceTable::new(&splitting, 4), 8).wgsl(0, true, 0);
        assert!(own.contains("return dual_split_axes(c);"));
    }

    #[test]
    fn keyframed_records_get_windows_only_where_every_segment_outlasts_a_dispatch() {
        let bodies = crate::CrowdSpec::new(3, 1).generate().unwrap();
        let crowd_with = |table: Vec<[f64; 2]>, per_body: usize| {
            let mut crowd = Crowd::new(bodies.clone(), 1e-3);
            let table = crowd.add_keyframes(table);
            let keyframed = ForceKind::Keyframed {
                force: DVec3::X,
                torque: DVec3::ZERO,
                table,
            };
            crowd.forces.push(Force::on_all(keyframed));
            crowd
                .forces
                .extend(vec![Force::on_body(0, keyframed); per_body]);
            crowd
        };
        let windowed = |crowd: &Crowd, fuse| {
            let wgsl = KernelSpec::of(crowd, &ForceTable::new(crowd, 3), fuse).wgsl(0, true, 0);
            let (records, own) = split_at_own_forces(&wgsl);
            (
                records.contains("r.global_0_window = keyframe_window(forces[0u], times, body);")
                    && !records.contains("r.global_0_index"),
                own.contains("dual_keyframe_window_scale(dual_records.own_keyframed_window, t)"),
            )
        };
        // Segments of 20 steps: a dispatch of 8 (9 with its last stages, twice over) fits.
        let long = crowd_with(vec![[0.0, 1.0], [0.02, 2.0], [0.04, 0.0]], 1);
        assert_eq!(windowed(&long, 8), (true, true));
        assert_eq!(windowed(&long, 10), (false, false), "20 steps < 2 x 11");
        // A body with two keyframed forces loops over them: each searches its table.
        assert_eq!(
            windowed(&crowd_with(vec![[0.0, 1.0], [0.02, 2.0]], 2), 8),
            (true, false)
        );
        assert_eq!(
            windowed(&crowd_with(vec![[0.0, 1.0], [0.01, 2.0]], 1), 8),
            (false, false)
        );
        // Long segments 1e4 s in, where 2^-20 of the time is more than half a dispatch.
        let late = crowd_with(vec![[1e4, 1.0], [1e4 + 1.0, 2.0]], 1);
        assert_eq!(windowed(&late, 8), (false, false));
        let sooner = crowd_with(vec![[1e3, 1.0], [1e3 + 1.0, 2.0]], 1);
        assert_eq!(windowed(&sooner, 8), (true, true));
        // The general kernel searches everywhere.
        assert!(
            !KernelSpec::general()
                .wgsl(0, true, 0)
                .contains("keyframe_window")
        );
        // Nor does a tangent kernel: its search seeds each keyframe it reads.
        let tangent = KernelSpec::of(&long, &ForceTable::new(&long, 3), 8).wgsl(1, true, 0);
        assert!(!tangent.contains("keyframe_window"));
    }

    /// The generated source before `dual_accumulate_own_forces`, and that function.
    fn split_at_own_forces(wgsl: &str) -> (&str, &str) {
        let (records, rest) = wgsl.split_at(wgsl.find("fn dual_accumulate_own_forces").unwrap());
        (
            records,
            &rest[..rest.find("fn dual_kernel_split_axes").unwrap()],
        )
    }

    #[test]
    fn forces_on_every_body_are_called_one_by_one_up_to_a_limit_and_repeats_loop() {
        let bodies = crate::CrowdSpec::new(3, 1).generate().unwrap();
        let gravity = Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::NEG_Z,
        });
        let thrust = ForceKind::Thrust {
            force: DVec3::X,
            torque: DVec3::ZERO,
        };
        let mut crowd = Crowd::new(bodies, 1e-3)
            .with_force(gravity)
            .with_force(Force::on_body(0, thrust))
            .with_force(Force::on_body(1, thrust));
        let spec = KernelSpec::of(&crowd, &ForceTable::new(&crowd, crowd.bodies.len()), 8);
        assert_eq!(
            spec.global_forces,
            GlobalForces::Calls(vec![ForceType::Gravity])
        );
        let wgsl = spec.wgsl(0, true, 0);
        assert!(wgsl.contains("dual_force_gravity(dual_records.global_0,"));
        assert!(wgsl.contains("r.global_0 = dual_parameters(0u);"));
        assert!(wgsl.contains("dual_force_thrust(dual_records.own_thrust,"));
        let once = OwnForces {
            kind: ForceType::Thrust,
            repeated: false,
        };
        assert_eq!(spec.own_forces, [once]);
        assert!(!wgsl.contains("forces[i].kind == FORCE_THRUST"));

        // Single calls only: the records are walked and checked once per dispatch, in
        // `dual_load_force_records`, and the stages keep no index.
        let (records, own) = split_at_own_forces(&wgsl);
        assert!(records.contains("atomicMin(&faults.first_unknown_code, body);"));
        assert!(!own.contains("first_unknown_code") && !own.contains("i++"));

        crowd.forces.push(Force::on_body(1, thrust));
        let spec = KernelSpec::of(&crowd, &ForceTable::new(&crowd, crowd.bodies.len()), 8);
        assert!(spec.own_forces[0].repeated, "body 1 has two thrusts");
        let wgsl = spec.wgsl(0, true, 0);
        assert!(wgsl.contains("forces[i].kind == FORCE_THRUST"));
        let (records, own) = split_at_own_forces(&wgsl);
        assert!(!records.contains("first_unknown_code"));
        assert!(own.contains("atomicMin(&faults.first_unknown_code, body);"));

        crowd
            .forces
            .extend(vec![gravity; MAX_UNROLLED_GLOBAL_FORCES]);
        let spec = KernelSpec::of(&crowd, &ForceTable::new(&crowd, crowd.bodies.len()), 8);
        assert_eq!(
            spec.global_forces,
            GlobalForces::Loops(vec![ForceType::Gravity])
        );
        assert!(
            spec.wgsl(0, true, 0)
                .contains("forces[i].kind == FORCE_GRAVITY")
        );
    }
}
