//! The WGSL of the physics over dual numbers of width `W`, which every integration kernel
//! runs: the plain kernel at width 0 (numbers without derivatives), a tangent kernel at its
//! block's width. Traced over `Dual<Traced<F>, W>`, each value and each derivative is the
//! operation the CPU's `Dual<F, W>` takes, in the same order, and each value the plain
//! physics' own.
//!
//! A dual structure is one flat `array<real, n (W + 1)>`: number `i` is its value at
//! `i (W + 1)` followed by its `W` derivatives. The kernel's plumbing (`shaders/`) reads and
//! writes them in that layout.

use super::algebra::Vec3;
use super::contact::{
    PlaneConstants, ShapeAmong, ShapeConstants, far_from, resolve_plane, step_acceleration,
};
use super::dual::Dual;
use super::force_law::Parameters;
use super::force_law::{ForceInput, ForceLaw};
use super::forces::{Body, add_force, add_scaled, keyframe_lerp};
use super::integrators::{renormalize, step};
use super::motion::{Auxiliaries, Derivative, Load, MassConstants, State, auxiliaries, derivative};
use super::scalar::{Carried, Scalar};
use super::splitting::{SPLIT_AXES_NUMBERS, SplitAxes};
use super::trace::{Trace, TraceSize, Traced, TracedBool, Tracer, Wgsl, wgsl};
use super::traced_dual::TracedDual;
use crate::model::codes::Coded;
use crate::model::force::ForceType;
use crate::model::integrator::Integrator;
use crate::model::precision::Precision;
use crate::model::shape::ShapeKind;
use crate::model::tangent::PLANE_NUMBERS;

/// The numbers of each dual structure: the state (and its derivative), the mass constants
/// (`mass, inv_mass`, then `Ibody^-1` as `xx, yy, zz, xy, xz, yz`), the auxiliaries
/// (`v`, `R` by rows, `omega`), a load, a force record's parameters (`a`, `b`, `c`), a
/// vector and a plane (`normal`, `offset`, `restitution`, `friction`).
pub const MOTION_NUMBERS: usize = 13;
pub const CONSTANT_NUMBERS: usize = 8;
const AUXILIARY_NUMBERS: usize = 15;
const LOAD_NUMBERS: usize = 6;
pub const PARAMETER_NUMBERS: usize = 10;
const VECTOR_NUMBERS: usize = 3;

/// The widths a block of tangent columns is traced in: a GPU driver inlines the physics at
/// every stage of the step, and a block of 16 (17 numbers each) made lavapipe's compile of
/// the cross-check crowd's kernel run for minutes; blocks of 4 compile in seconds. The plain
/// kernel is the physics over duals of width 0 (numbers without derivatives).
pub const TRACED_WIDTHS: [usize; 2] = [1, 4];
const _: () = assert!(TRACED_WIDTHS[1] <= super::dual::WIDEST_DUAL);

type D<'t, F, const W: usize> = TracedDual<'t, F, W>;

/// The dual structures a tangent kernel's functions pass each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Structure {
    /// The state.
    Motion,
    /// A derivative of the state, in the state's layout: its own structure, since what moves
    /// the position need not move the velocity.
    Derivative,
    Constants,
    Auxiliaries,
    Load,
    Parameters,
    Vector,
    Plane,
    SplitAxes,
    /// A keyframe of a keyframed force's table: its time and its value.
    Keyframe,
    /// One number: a keyframed record's scale.
    Scale,
    /// One number: the time.
    Real,
}

const STRUCTURES: usize = Structure::Real as usize + 1;

/// Which numbers of each dual structure can move along a block's directions: the others'
/// derivatives are zero for every body at every step, so a kernel compiled for the block
/// reads them as literal zeros and their terms drop out of it. Its seed (what the block's
/// directions move at the start) is closed over the physics by tracing it
/// ([`close_block`]): whatever a traced function's outputs move, its readers read as moving.
/// Derivatives past the block's `directions` are literal zeros too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MovingNumbers {
    /// Bit `i` of entry `s`: number `i` of structure `s` moves.
    moving: [u16; STRUCTURES],
    /// Directions the block carries; a kernel of a wider width leaves the rest out.
    directions: usize,
}

impl MovingNumbers {
    /// Every number along every direction of the width: the kernel for any block.
    pub const ALL: Self = Self {
        moving: [u16::MAX; STRUCTURES],
        directions: usize::MAX,
    };

    /// No number moves, in a block of `directions` directions.
    pub const fn none(directions: usize) -> Self {
        Self {
            moving: [0; STRUCTURES],
            directions,
        }
    }

    /// These, and numbers `numbers` (a bit each) of `structure` too.
    pub fn and(mut self, structure: Structure, numbers: u16) -> Self {
        self.moving[structure as usize] |= numbers;
        self
    }

    /// The numbers of `structure` that move, a bit each.
    #[doc(hidden)]
    pub fn of(&self, structure: Structure) -> u16 {
        self.moving[structure as usize]
    }

    /// The directions the block carries ([`ALL`](Self::ALL): any count).
    pub fn directions(&self) -> usize {
        self.directions
    }

    /// Whether number `i` of `structure` moves along direction `direction` of the block.
    pub fn moves(&self, structure: Structure, i: usize, direction: usize) -> bool {
        direction < self.directions && self.moving[structure as usize] & (1 << i) != 0
    }

    /// What either moves, over the directions of both.
    pub fn union(mut self, other: &Self) -> Self {
        for (mine, theirs) in self.moving.iter_mut().zip(other.moving) {
            *mine |= theirs;
        }
        self.directions = self.directions.max(other.directions);
        self
    }

    fn holds(&self, other: &[u16; STRUCTURES]) -> bool {
        self.moving.iter().zip(other).all(|(m, o)| o & !m == 0)
    }
}

/// A traced function of the physics, as the kernel's plumbing calls it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TracedFunction {
    /// `dual_auxiliaries`.
    Auxiliaries,
    /// `dual_state_derivative`.
    StateDerivative,
    /// `dual_force_<kind>`, one record's load.
    Force(ForceType),
    /// `dual_keyframe_lerp`, a keyframed record's scale within its table.
    KeyframeLerp,
    /// `dual_keyframe_value`, its scale before the first keyframe or after the last.
    KeyframeValue,
    /// `dual_add_keyframed`, its load at that scale.
    AddKeyframed,
    /// `dual_custom_force`, the custom force's law.
    CustomForce,
    /// `dual_force_law`, the custom force's law with a law record's numbers.
    ForceLaw,
    /// `dual_split_axes`, once a dispatch.
    SplitAxes,
    /// `dual_<integrator>_step`, whose calls are the stages' derivatives.
    Step(Integrator),
    /// `dual_renormalize`.
    Renormalize,
    /// `dual_far_from_plane`, whether a body is clear of one plane, each step where there
    /// are planes.
    FarFromPlane,
    /// `dual_step_acceleration`, once a step where a body is near a plane.
    StepAcceleration,
    /// `dual_resolve_plane_<shape>` for a body of one shape kind, or (`None`) the one for a
    /// body of any of several.
    ResolvePlane(Option<ShapeKind>),
}

/// One pass of the physics over duals: how its traces print (or that they are only counted),
/// what they read as moving, and what its traced functions hand out. Every generator of the
/// pass takes it.
pub struct DualTracer {
    /// How the traces print; `None` where the pass counts statements alone.
    tracer: Option<Tracer>,
    moving: MovingNumbers,
    /// The statements the pass's traces recorded so far.
    statements: std::cell::Cell<usize>,
    /// Each traced function's size, in the order traced.
    sizes: std::cell::RefCell<Vec<(TracedFunction, TraceSize)>>,
    /// The numbers of each structure that the traced functions handed out moving.
    moved: std::cell::Cell<[u16; STRUCTURES]>,
    /// Whether a traced function handed out a state whose derivatives are not those it took.
    changed: std::cell::Cell<bool>,
}

impl DualTracer {
    /// A pass printing as `tracer` does, reading as moving what `moving` moves.
    pub fn new(tracer: Tracer, moving: MovingNumbers) -> Self {
        Self {
            tracer: Some(tracer),
            moving,
            statements: Default::default(),
            sizes: Default::default(),
            moved: Default::default(),
            changed: Default::default(),
        }
    }

    /// A pass that records its traces and counts their statements, printing nothing (its
    /// functions' text is empty): what closing a block over the physics reads.
    fn counting(moving: MovingNumbers) -> Self {
        Self {
            tracer: None,
            ..Self::new(Tracer::NATIVE, moving)
        }
    }

    /// The WGSL function `signature`, traced by `body` in a new trace of this pass (empty
    /// where the pass only counts); its size is kept as `function`'s.
    fn function(
        &self,
        function: TracedFunction,
        signature: &str,
        body: impl FnOnce(DualTrace<'_>) -> Wgsl,
    ) -> String {
        let body = |trace: &Trace| body(DualTrace { trace, pass: self });
        let (text, size) = match self.tracer {
            Some(tracer) => tracer.counted_function(signature, body),
            None => (String::new(), Tracer::NATIVE.size(body)),
        };
        self.statements.set(self.statements.get() + size.statements);
        self.sizes.borrow_mut().push((function, size));
        text
    }
}

/// The size of each function of the physics over duals in `precision` and `width` that
/// `physics` runs, traced for a block reading as moving what `moving` moves (closed over the
/// physics, as a tangent kernel's block is; any for width 0): recorded and measured on the
/// IR, not printed. What counting a kernel's operations reads.
pub fn physics_sizes(
    precision: Precision,
    physics: &TracedPhysics,
    (width, moving): (usize, MovingNumbers),
) -> Vec<(TracedFunction, TraceSize)> {
    let pass = DualTracer::counting(moving);
    trace_physics(&pass, precision, physics, width);
    pass.sizes.into_inner()
}

/// A function's trace within a pass over duals.
#[derive(Clone, Copy)]
pub(crate) struct DualTrace<'t> {
    trace: &'t Trace,
    pass: &'t DualTracer,
}

/// What a block's traced functions read as moving, closed over them ([`close_block`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Closed {
    pub moving: MovingNumbers,
    /// Whether a step (its integrator, the renormalization or a contact) can change the
    /// derivatives of the state: if not, a step leaves the block's columns as they are.
    pub changes_columns: bool,
}

/// The physics a crowd's steps run, as far as the traces over duals go: the force kinds, the
/// integrators, the shape kinds that meet planes (`None` without planes) and the custom force,
/// as its law traced over duals in a precision and a width (`CustomForce::dual_wgsl`: `None`
/// for one that is not a law).
pub struct TracedPhysics<'a> {
    pub kinds: Vec<ForceType>,
    pub integrators: Vec<Integrator>,
    pub contact_shapes: Option<Vec<ShapeKind>>,
    pub custom_force: Option<CustomTrace<'a>>,
}

/// A custom force's law traced over duals in a precision and a width, in a pass.
/// It traces the functions the kinds given call (`dual_custom_force`, `dual_force_law`).
pub type CustomTrace<'a> =
    Box<dyn Fn(Precision, usize, &DualTracer, &[ForceType]) -> Option<String> + 'a>;

/// What a block's physics prints: the dual functions, the contact code (`None` without
/// planes) and the custom force's law (`None` without one, or for one that is not a law).
pub(crate) type BlockSources = (String, Option<String>, Option<String>);

/// How many statements each part of a block's [`BlockSources`] traces, counted on its IR.
pub(crate) type BlockStatements = (usize, Option<usize>, Option<usize>);

/// The physics over duals in `precision` and `width` (one of [`TRACED_WIDTHS`]) that
/// `physics` runs, traced in `pass` (which reads as moving what it moves); and the
/// statements each part traced.
fn trace_physics(
    pass: &DualTracer,
    precision: Precision,
    physics: &TracedPhysics,
    width: usize,
) -> (BlockSources, BlockStatements) {
    type Physics = fn(&DualTracer, &[ForceType], &[Integrator]) -> String;
    type Contact = fn(&DualTracer, &[ShapeKind]) -> String;
    let (dual, contact): (Physics, Contact) = match (precision, width) {
        (Precision::F32, 0) => (dual_physics_wgsl::<f32, 0>, dual_contact_wgsl::<f32, 0>),
        (Precision::F64, 0) => (dual_physics_wgsl::<f64, 0>, dual_contact_wgsl::<f64, 0>),
        (Precision::F32, 1) => (dual_physics_wgsl::<f32, 1>, dual_contact_wgsl::<f32, 1>),
        (Precision::F32, 4) => (dual_physics_wgsl::<f32, 4>, dual_contact_wgsl::<f32, 4>),
        (Precision::F64, 1) => (dual_physics_wgsl::<f64, 1>, dual_contact_wgsl::<f64, 1>),
        (Precision::F64, 4) => (dual_physics_wgsl::<f64, 4>, dual_contact_wgsl::<f64, 4>),
        _ => panic!(
            "the physics over duals is traced in widths 0 and {TRACED_WIDTHS:?}, not {width}"
        ),
    };
    // Every traced function in one pass: what one hands out moving, the others read so.
    let counted = || pass.statements.get();
    let custom =
        (physics.custom_force.as_ref()).and_then(|law| law(precision, width, pass, &physics.kinds));
    let after_custom = counted();
    let contact = (physics.contact_shapes.as_deref()).map(|shapes| contact(pass, shapes));
    let after_contact = counted();
    let dual = dual(pass, &physics.kinds, &physics.integrators);
    let statements = (
        counted() - after_contact,
        contact.as_ref().map(|_| after_contact - after_custom),
        custom.as_ref().map(|_| after_custom),
    );
    ((dual, contact, custom), statements)
}

/// A block's physics closed over what it moves ([`close_block`]).
#[derive(Clone, Copy, Debug)]
pub struct BlockClosure {
    pub closed: Closed,
    /// The statements its trace at the closure records.
    pub statements: BlockStatements,
}

/// What one trace of a block's physics recorded, counted, and what it handed out moving.
#[derive(Clone, Copy, Debug)]
struct Pass {
    statements: BlockStatements,
    moved: [u16; STRUCTURES],
    changed: bool,
}

/// What one trace of a block's physics depends on besides the numbers it reads as moving.
/// Not the f32 divisions' setting ([`Tracer`]): it changes how a line
/// divides, not how many statements there are or what moves.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct PassKey {
    precision: Precision,
    width: usize,
    physics: PhysicsKey,
    moving: MovingNumbers,
}

/// What the physics over duals in `precision` and `width` that `physics` runs reads as
/// moving for a block whose columns move `seed` at the start: `seed` and every number that
/// a traced function hands out moving (a least fixed point: the physics is traced again
/// until what its functions hand out moving is read as moving).
///
/// Each trace's outcome is kept for the process (a few words, not its text): a crowd's
/// blocks are closed twice (grouped and consecutive, to pick the cheaper) and meet the same
/// sets of moving numbers on the way, and a crowd starting tangents again (the next row of
/// `bench`, another backend's cross-check, a resumed run) closes the same blocks. Each is
/// a whole trace of the physics, recorded and counted but not printed: the moving numbers
/// and the statements are queries on the traces' IR.
pub fn close_block(
    precision: Precision,
    physics: &TracedPhysics,
    (width, seed): (usize, MovingNumbers),
) -> BlockClosure {
    type Passes = std::collections::HashMap<PassKey, Pass>;
    static PASSES: std::sync::LazyLock<std::sync::Mutex<Passes>> =
        std::sync::LazyLock::new(Default::default);
    /// Past this many, the kept passes are dropped: no crowd's blocks come near it.
    const KEPT_PASSES: usize = 4096;
    let passes = || PASSES.lock().unwrap_or_else(|e| e.into_inner());
    let physics_key = PhysicsKey::of(physics, width);
    let mut moving = seed;
    loop {
        let key = PassKey {
            precision,
            width,
            physics: physics_key.clone(),
            moving,
        };
        let kept = passes().get(&key).copied();
        let pass = kept.unwrap_or_else(|| {
            let counting = DualTracer::counting(moving);
            let (_, statements) = trace_physics(&counting, precision, physics, width);
            let pass = Pass {
                statements,
                moved: counting.moved.get(),
                changed: counting.changed.get(),
            };
            let mut passes = passes();
            if passes.len() >= KEPT_PASSES {
                passes.clear();
            }
            passes.insert(key, pass);
            pass
        });
        if moving.holds(&pass.moved) {
            return BlockClosure {
                closed: Closed {
                    moving,
                    changes_columns: pass.changed,
                },
                statements: pass.statements,
            };
        }
        for (structure, numbers) in pass.moved.into_iter().enumerate() {
            moving.moving[structure] |= numbers;
        }
    }
}

/// The physics over duals in `precision` and `width` (one of [`TRACED_WIDTHS`]) that
/// `physics` runs, printed as `tracer` prints, traced for a block whose columns move `seed` at the start, reading as
/// moving what it moves closed over the physics ([`close_block`]); and that closure.
pub fn trace_block(
    (tracer, precision): (Tracer, Precision),
    physics: &TracedPhysics,
    (width, seed): (usize, MovingNumbers),
) -> (BlockSources, Closed) {
    // Without derivatives nothing moves and no step changes a column: no trace to close.
    let closed = match width {
        0 => Closed {
            moving: seed,
            changes_columns: false,
        },
        _ => close_block(precision, physics, (width, seed)).closed,
    };
    let pass = DualTracer::new(tracer, closed.moving);
    let (sources, _) = trace_physics(&pass, precision, physics, width);
    (sources, closed)
}

/// Whether a step of `physics` can change the derivatives of a block seeded `seed`: `true`
/// where the trace cannot tell (a custom force that is not a law, whose derivatives no trace
/// sees).
pub(crate) fn changes_columns(physics: &TracedPhysics, seed: MovingNumbers) -> bool {
    let width = TRACED_WIDTHS[TRACED_WIDTHS.len() - 1];
    let closure = close_block(Precision::F64, physics, (width, seed));
    let custom_traced = closure.statements.2.is_some();
    closure.closed.changes_columns || (physics.custom_force.is_some() && !custom_traced)
}

/// What a trace of [`TracedPhysics`] depends on: its kinds, integrators and shapes, and its
/// custom force as its law traces over duals of `width` with every number moving (the law's
/// computation, whatever it is called; `None` for one that is not a law).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct PhysicsKey {
    kinds: Vec<ForceType>,
    integrators: Vec<Integrator>,
    contact_shapes: Option<Vec<ShapeKind>>,
    custom_force: Option<Option<String>>,
}

impl PhysicsKey {
    fn of(physics: &TracedPhysics, width: usize) -> Self {
        Self {
            kinds: physics.kinds.clone(),
            integrators: physics.integrators.clone(),
            contact_shapes: physics.contact_shapes.clone(),
            custom_force: (physics.custom_force.as_ref()).map(|law| {
                let pass = DualTracer::new(Tracer::NATIVE, MovingNumbers::ALL);
                law(Precision::F64, width, &pass, &physics.kinds)
            }),
        }
    }
}

/// Number `i` of the dual array `array` of `structure`, its derivatives literal zeros where
/// it does not move.
fn read<'t, F: Scalar + Into<f64>, const W: usize>(
    d: DualTrace<'t>,
    structure: Structure,
    array: &Wgsl,
    i: usize,
) -> D<'t, F, W> {
    let at = i * (W + 1);
    TracedDual(Dual {
        value: Traced::input(d.trace, array.clone().then(&format!("[{at}]"))),
        tangent: std::array::from_fn(|k| match d.pass.moving.moves(structure, i, k) {
            true => Traced::input(d.trace, array.clone().then(&format!("[{}]", at + 1 + k))),
            false => Traced::constant(0.0),
        }),
    })
}

/// Numbers `0..n` of the dual array `array` of `structure`.
fn read_all<'t, F: Scalar + Into<f64>, const W: usize>(
    d: DualTrace<'t>,
    structure: Structure,
    array: impl Into<Wgsl>,
    n: usize,
) -> Vec<D<'t, F, W>> {
    let array = array.into();
    (0..n).map(|i| read(d, structure, &array, i)).collect()
}

/// The WGSL array of `numbers` of `structure`, each value followed by its derivatives: the
/// numbers that move are noted for [`close_block`].
fn array_of<F: Scalar + Into<f64>, const W: usize>(
    d: DualTrace<'_>,
    structure: Structure,
    numbers: &[D<'_, F, W>],
) -> Wgsl {
    let moved = numbers.iter().enumerate().fold(0u16, |bits, (i, d)| {
        match d.0.tangent.iter().all(|t| t.is_zero_by_construction()) {
            true => bits,
            false => bits | 1 << i,
        }
    });
    let mut all = d.pass.moved.get();
    all[structure as usize] |= moved;
    d.pass.moved.set(all);
    let items: Vec<Wgsl> = numbers
        .iter()
        .flat_map(|d| std::iter::once(d.0.value).chain(d.0.tangent))
        .map(Wgsl::from)
        .collect();
    let count = items.len();
    Wgsl::from(format!("array<real, {count}>("))
        .then_wgsl(Wgsl::join(items, ", "))
        .then(")")
}

/// The WGSL array of the state `to`, which a traced function computed from the state
/// `from`: whether its derivatives are other than `from`'s is noted for [`close_block`].
fn state_from<F: Scalar + Into<f64>, const W: usize>(
    d: DualTrace<'_>,
    from: &State<D<'_, F, W>>,
    to: &State<D<'_, F, W>>,
) -> Wgsl {
    let (from, to) = (from.to_scalars(), to.to_scalars());
    let kept = |(a, b): (&D<'_, F, W>, &D<'_, F, W>)| {
        a.0.tangent.iter().zip(&b.0.tangent).all(|(x, y)| x.is(*y))
    };
    if !from.iter().zip(&to).all(kept) {
        d.pass.changed.set(true);
    }
    array_of(d, Structure::Motion, &to)
}

/// Structure `structure` from the dual array `array`, as a value of its Rust type `T`: as
/// many numbers as `T` carries, in `T`'s order (`Carried`), which is the array's layout.
fn structure_of<'t, T, F, const W: usize>(
    d: DualTrace<'t>,
    structure: Structure,
    array: impl Into<Wgsl>,
) -> T
where
    T: Carried<D<'t, F, W>>,
    F: Scalar + Into<f64>,
{
    let array = array.into();
    T::from_scalars(&mut (0..).map(|i| read(d, structure, &array, i)))
}

/// The dual functions of the physics in precision `F` and width `W` that a kernel of the
/// force kinds `kinds` and the integrators `integrators` calls, with the aliases of the dual
/// structures: `dual_auxiliaries`, `dual_state_derivative`, `dual_force_<kind>`,
/// `dual_add_keyframed`, `dual_split_axes`, `dual_<integrator>_step` (which call the
/// plumbing's `dual_derivative`) and `dual_renormalize`. Only what the kernel calls is
/// traced, so what [`close_block`] finds moving is what its own code moves.
pub fn dual_physics_wgsl<F: Scalar + Into<f64>, const W: usize>(
    pass: &DualTracer,
    kinds: &[ForceType],
    integrators: &[Integrator],
) -> String {
    let stride = W + 1;
    let mut out = format!(
        "// Generated from the Rust definition of the physics traced over dual numbers of width {W}\n\
         // (core/src/physics/dual_wgsl.rs): number i of a dual array is its value at i * DUAL_STRIDE,\n\
         // then its DUAL_WIDTH derivatives.\n\
         const DUAL_WIDTH: u32 = {W}u;\n\
         const DUAL_STRIDE: u32 = {stride}u;\n\
         alias DualReal = array<real, {stride}>;\n\
         alias DualMotion = array<real, {}>;\n\
         alias DualConstants = array<real, {}>;\n\
         alias DualAuxiliaries = array<real, {}>;\n\
         alias DualLoad = array<real, {}>;\n\
         alias DualParameters = array<real, {}>;\n\
         alias DualVec3 = array<real, {}>;\n\
         alias DualPlane = array<real, {}>;\n\
         alias DualSplitAxes = array<real, {}>;\n\
         alias DualKeyframe = array<real, {}>;\n\n",
        MOTION_NUMBERS * stride,
        CONSTANT_NUMBERS * stride,
        AUXILIARY_NUMBERS * stride,
        LOAD_NUMBERS * stride,
        PARAMETER_NUMBERS * stride,
        VECTOR_NUMBERS * stride,
        PLANE_NUMBERS * stride,
        SPLIT_AXES_NUMBERS * stride,
        2 * stride,
    );
    out += &pass.function(
        TracedFunction::Auxiliaries,
        "fn dual_auxiliaries(s: DualMotion, c: DualConstants) -> DualAuxiliaries",
        |d| {
            let aux = auxiliaries(
                &structure_of::<State<_>, F, W>(d, Structure::Motion, "s"),
                &structure_of(d, Structure::Constants, "c"),
            );
            wgsl!(
                "    return {};\n",
                array_of(d, Structure::Auxiliaries, &aux.to_scalars())
            )
        },
    );
    out += &pass.function(
        TracedFunction::StateDerivative,
        "fn dual_state_derivative(s: DualMotion, aux: DualAuxiliaries, total: DualLoad) \
         -> DualMotion",
        |d| {
            let k = derivative(
                &structure_of::<State<_>, F, W>(d, Structure::Motion, "s"),
                &structure_of(d, Structure::Auxiliaries, "aux"),
                structure_of(d, Structure::Load, "total"),
            );
            wgsl!(
                "    return {};\n",
                array_of(d, Structure::Derivative, &k.to_scalars())
            )
        },
    );
    for &kind in kinds {
        if matches!(
            kind,
            ForceType::Keyframed | ForceType::Custom | ForceType::Law
        ) {
            continue;
        }
        let signature = format!(
            "fn dual_force_{}(p: DualParameters, s: DualMotion, c: DualConstants, \
             aux: DualAuxiliaries, t: DualReal, total: DualLoad) -> DualLoad",
            kind.name()
        );
        out += &pass.function(TracedFunction::Force(kind), &signature, |d| {
            let (state, mass, aux) = (
                structure_of::<State<_>, F, W>(d, Structure::Motion, "s"),
                structure_of(d, Structure::Constants, "c"),
                structure_of(d, Structure::Auxiliaries, "aux"),
            );
            let body = Body {
                state: &state,
                mass: &mass,
                aux: &aux,
                time: read(d, Structure::Real, &"t".into(), 0),
            };
            let mut total = structure_of(d, Structure::Load, "total");
            add_force(
                kind,
                &structure_of(d, Structure::Parameters, "p"),
                &body,
                &mut total,
            );
            wgsl!(
                "    return {};\n",
                array_of(d, Structure::Load, &total.to_scalars())
            )
        });
    }
    if kinds.contains(&ForceType::Keyframed) {
        out += &keyframed_wgsl::<F, W>(pass);
    }
    if integrators.iter().any(|i| i.splits_the_rotation()) {
        out += &split_axes_wgsl::<F, W>(pass);
    }
    for &integrator in integrators {
        out += &step_wgsl::<F, W>(pass, integrator);
    }
    let renormalize_signature = "fn dual_renormalize(s: DualMotion) -> DualMotion";
    out += &pass.function(TracedFunction::Renormalize, renormalize_signature, |d| {
        let s = structure_of::<State<_>, F, W>(d, Structure::Motion, "s");
        wgsl!("    return {};\n", state_from(d, &s, &renormalize(s)))
    });
    out
}

/// `dual_keyframe_lerp` and `dual_keyframe_value`, a keyframed record's scale from its
/// table's keyframes (each `(time, value)`), and `dual_add_keyframed`, its load at that
/// scale. The plumbing searches the table on the values, as `keyframe_scale` does.
fn keyframed_wgsl<F: Scalar + Into<f64>, const W: usize>(pass: &DualTracer) -> String {
    fn keyframe<'t, F: Scalar + Into<f64>, const W: usize>(
        d: DualTrace<'t>,
        array: &str,
    ) -> [D<'t, F, W>; 2] {
        let array = Wgsl::from(array);
        [0, 1].map(|i| read::<F, W>(d, Structure::Keyframe, &array, i))
    }
    let mut out = pass.function(
        TracedFunction::KeyframeLerp,
        "/// The scale at `t` on the segment from keyframe `a` to keyframe `b`.\n\
         fn dual_keyframe_lerp(a: DualKeyframe, b: DualKeyframe, t: DualReal) -> DualReal",
        |d| {
            let (a, b) = (keyframe::<F, W>(d, "a"), keyframe(d, "b"));
            let scale = keyframe_lerp(a, b, read(d, Structure::Real, &"t".into(), 0));
            wgsl!("    return {};\n", array_of(d, Structure::Scale, &[scale]))
        },
    );
    out += &pass.function(
        TracedFunction::KeyframeValue,
        "/// The scale held before the first keyframe or after the last: keyframe `k`'s value.\n\
         fn dual_keyframe_value(k: DualKeyframe) -> DualReal",
        |d| {
            let [_, value] = keyframe::<F, W>(d, "k");
            wgsl!("    return {};\n", array_of(d, Structure::Scale, &[value]))
        },
    );
    out += &pass.function(
        TracedFunction::AddKeyframed,
        "/// A keyframed record's load at `scale`.\n\
         fn dual_add_keyframed(p: DualParameters, scale: DualReal, total: DualLoad) -> DualLoad",
        |d| {
            let p = structure_of::<Parameters<_>, F, W>(d, Structure::Parameters, "p");
            let mut total = structure_of(d, Structure::Load, "total");
            let scale = read(d, Structure::Scale, &"scale".into(), 0);
            add_scaled(p.vectors[0], p.vectors[1], scale, &mut total);
            wgsl!(
                "    return {};\n",
                array_of(d, Structure::Load, &total.to_scalars())
            )
        },
    );
    out
}

fn split_axes_wgsl<F: Scalar + Into<f64>, const W: usize>(pass: &DualTracer) -> String {
    pass.function(
        TracedFunction::SplitAxes,
        "fn dual_split_axes(c: DualConstants) -> DualSplitAxes",
        |d| {
            let axes = SplitAxes::of(
                &structure_of::<MassConstants<_>, F, W>(d, Structure::Constants, "c").inv_inertia,
            );
            wgsl!(
                "    return {};\n",
                array_of(d, Structure::SplitAxes, &axes.to_scalars())
            )
        },
    )
}

/// The contact resolution over duals of width `W` (its aliases come with
/// [`dual_physics_wgsl`]): `dual_step_acceleration`, one `dual_resolve_plane_<shape>` per
/// shape kind of `shapes` and `dual_resolve_plane`, which picks the body's by its `shape_kind`. A body's
/// shape (`shape`, as `BodyConstants` holds it) is along no direction.
pub fn dual_contact_wgsl<F: Scalar + Into<f64>, const W: usize>(
    pass: &DualTracer,
    shapes: &[ShapeKind],
) -> String {
    let far = pass.function(
        TracedFunction::FarFromPlane,
        "/// Whether a body at `position` whose bounding radius is `radius` is too far from the \
         plane `surface` (normal, offset) to touch it: then `dual_resolve_plane` leaves it as \
         it is. Values alone, read where they lie.\n\
         fn dual_far_from_plane(position: vec3<real>, radius: real, surface: vec4<real>) -> bool",
        |d| {
            let fixed = |expression| TracedDual::<F, W>::fixed(d.trace, expression);
            let position = Vec3::new(
                fixed("position.x"),
                fixed("position.y"),
                fixed("position.z"),
            );
            let zero = TracedDual::<F, W>::constant(0.0);
            let plane = PlaneConstants {
                normal: Vec3::new(fixed("surface.x"), fixed("surface.y"), fixed("surface.z")),
                offset: fixed("surface.w"),
                restitution: zero,
                friction: zero,
            };
            wgsl!(
                "    return {};\n",
                far_from(fixed("radius"), &plane, position)
            )
        },
    );
    let out = far + &pass.function(
        TracedFunction::StepAcceleration,
        "/// The body's acceleration over the step from `start` to `next` from the forces alone.\n\
         fn dual_step_acceleration(start: DualMotion, next: DualMotion, c: DualConstants, \
         h: real) -> DualVec3",
        |d| {
            let a = step_acceleration(
                &structure_of::<State<_>, F, W>(d, Structure::Motion, "start"),
                &structure_of(d, Structure::Motion, "next"),
                &structure_of(d, Structure::Constants, "c"),
                TracedDual::fixed(d.trace, "h"),
            );
            wgsl!(
                "    return {};\n",
                array_of(d, Structure::Vector, &[a.x, a.y, a.z])
            )
        },
    );
    let signature = |name: &str| {
        format!(
            "fn dual_resolve_plane{name}(s: DualMotion, c: DualConstants, {}shape: vec4<real>, \
             plane: DualPlane, acceleration: DualVec3, h: real) -> DualMotion",
            if name.is_empty() {
                "shape_kind: u32, "
            } else {
                ""
            }
        )
    };
    // One function for a body of any of the shapes where there are several; else the one
    // kind's, and `dual_resolve_plane` calling it for a body of that kind.
    if shapes.len() > 1 {
        let header = format!(
            "/// State s moved out of `plane` and its contact impulses applied, one code for the \
             body's shape among the kernel's.\n{}",
            signature("")
        );
        return out + &resolve_plane_wgsl::<F, W>(pass, &header, shapes);
    }
    let mut out = out;
    let mut cases = String::new();
    for &kind in shapes {
        let name = kind.name();
        let header = format!(
            "/// State s of a {name} moved out of `plane`, the contact impulses applied.\n{}",
            signature(&format!("_{name}"))
        );
        out += &resolve_plane_wgsl::<F, W>(pass, &header, &[kind]);
        cases += &format!(
            "        case {}: {{\n            return dual_resolve_plane_{name}(s, c, shape, \
             plane, acceleration, h);\n        }}\n",
            kind.wgsl_constant()
        );
    }
    out + &format!(
        "/// State s moved out of `plane` and its contact impulses applied, by the body's shape.\n\
         {} {{\n    switch shape_kind {{\n{cases}        default: {{\n            \
         return s;\n        }}\n    }}\n}}\n",
        signature("")
    )
}

/// The contact function `header` for a body of one of `kinds`: [`resolve_plane`] of the
/// kind's [`ShapeConstants`] where there is one kind, of a [`ShapeAmong`] them where there
/// are several (whether the body is of each kind read first).
fn resolve_plane_wgsl<F: Scalar + Into<f64>, const W: usize>(
    pass: &DualTracer,
    header: &str,
    kinds: &[ShapeKind],
) -> String {
    let function = TracedFunction::ResolvePlane(match *kinds {
        [kind] => Some(kind),
        _ => None,
    });
    pass.function(function, header, |d| {
        let among: Vec<_> = match kinds {
            [_] => Vec::new(),
            _ => (kinds.iter())
                .map(|&kind| {
                    let is = format!("shape_kind == {}", kind.wgsl_constant());
                    (kind, TracedBool::input(d.trace, is))
                })
                .collect(),
        };
        let fixed = |expression| TracedDual::<F, W>::fixed(d.trace, expression);
        let dims = Vec3::new(fixed("shape.x"), fixed("shape.y"), fixed("shape.z"));
        let bounding_radius = fixed("shape.w");
        let state = structure_of::<State<_>, F, W>(d, Structure::Motion, "s");
        let mass = structure_of(d, Structure::Constants, "c");
        let plane = structure_of(d, Structure::Plane, "plane");
        let acceleration = structure_of(d, Structure::Vector, "acceleration");
        let h = fixed("h");
        let next = match *kinds {
            [kind] => {
                let shape = ShapeConstants {
                    kind,
                    dims,
                    bounding_radius,
                };
                resolve_plane(state, &mass, &shape, &plane, acceleration, h)
            }
            _ => {
                let shape = ShapeAmong {
                    kinds: &among,
                    dims,
                    bounding_radius,
                };
                resolve_plane(state, &mass, &shape, &plane, acceleration, h)
            }
        };
        wgsl!("    return {};\n", state_from(d, &state, &next))
    })
}

/// `dual_custom_force`, the custom force's load over duals added to `total`, traced from `law`
/// in `precision` and width `width` (one of [`TRACED_WIDTHS`]): it sees what the CPU's
/// dual steps give it, the orientation normalized and the body's index along no direction.
/// Its law kind's function is `dual_force_law`, or for the crowd's law number `n` of several
/// `dual_force_law_<n>`.
pub(crate) fn dual_custom_force_wgsl<L: ForceLaw>(
    law: &L,
    pass: &DualTracer,
    (precision, width): (Precision, usize),
    kinds: &[ForceType],
    number: Option<usize>,
) -> String {
    let n = number;
    match (precision, width) {
        (Precision::F32, 0) => custom_force_over::<f32, 0, L>(law, pass, kinds, n),
        (Precision::F64, 0) => custom_force_over::<f64, 0, L>(law, pass, kinds, n),
        (Precision::F32, 1) => custom_force_over::<f32, 1, L>(law, pass, kinds, n),
        (Precision::F32, 4) => custom_force_over::<f32, 4, L>(law, pass, kinds, n),
        (Precision::F64, 1) => custom_force_over::<f64, 1, L>(law, pass, kinds, n),
        (Precision::F64, 4) => custom_force_over::<f64, 4, L>(law, pass, kinds, n),
        _ => panic!("the dual WGSL is traced in widths 0 and {TRACED_WIDTHS:?}, not {width}"),
    }
}

/// The law's functions the records of `kinds` call: `dual_custom_force` for the custom
/// kind's (and wherever no law record calls the law), `dual_force_law`, which takes a
/// record's numbers, for the law kind's.
fn custom_force_over<F: Scalar + Into<f64>, const W: usize, L: ForceLaw>(
    law: &L,
    pass: &DualTracer,
    kinds: &[ForceType],
    number: Option<usize>,
) -> String {
    let with_records = kinds.contains(&ForceType::Law);
    let mut out = String::new();
    if kinds.contains(&ForceType::Custom) || !with_records {
        out += &law_function::<F, W, L>(law, pass, None);
    }
    if with_records {
        out += &law_function::<F, W, L>(law, pass, Some(number));
    }
    out
}

/// `dual_custom_force`, or with a record (`Some(number)`) `dual_force_law` (of the crowd's
/// law `n` of several: `dual_force_law_<n>`), the law's load over duals added to `total`; the
/// former sees zeros for the law's numbers, the latter its record's.
fn law_function<F: Scalar + Into<f64>, const W: usize, L: ForceLaw>(
    law: &L,
    pass: &DualTracer,
    record: Option<Option<usize>>,
) -> String {
    let with_record = record.is_some();
    let (function, signature) = match record {
        None => (
            TracedFunction::CustomForce,
            "/// Generated from the custom force's law (written in Rust, traced over duals).\n\
             fn dual_custom_force(s: DualMotion, c: DualConstants, aux: DualAuxiliaries, \
             t: DualReal, body: u32, total: DualLoad) -> DualLoad"
                .to_string(),
        ),
        Some(number) => (
            TracedFunction::ForceLaw,
            format!(
                "/// Generated from the registered force law (written in Rust, traced over duals), \
                 with a record's numbers.\n\
                 fn dual_force_law{}(p: DualParameters, s: DualMotion, c: DualConstants, \
                 aux: DualAuxiliaries, t: DualReal, body: u32, total: DualLoad) -> DualLoad",
                number.map_or(String::new(), |n| format!("_{n}"))
            ),
        ),
    };
    pass.function(function, &signature, |d| {
        let (state, mass, aux): (State<_>, MassConstants<_>, Auxiliaries<_>) = (
            structure_of::<_, F, W>(d, Structure::Motion, "s"),
            structure_of(d, Structure::Constants, "c"),
            structure_of(d, Structure::Auxiliaries, "aux"),
        );
        let parameters = match with_record {
            true => structure_of(d, Structure::Parameters, "p"),
            false => Parameters::zero(),
        };
        let load = law.load(&ForceInput {
            position: state.position,
            orientation: state.orientation.normalize(),
            velocity: aux.velocity,
            angular_velocity: aux.angular_velocity,
            mass: mass.mass,
            time: read(d, Structure::Real, &"t".into(), 0),
            body: TracedDual::fixed(d.trace, "real(body)"),
            parameters,
        });
        let mut total: Load<_> = structure_of(d, Structure::Load, "total");
        total.force = total.force + load.force;
        total.torque = total.torque + load.torque;
        wgsl!(
            "    return {};\n",
            array_of(d, Structure::Load, &total.to_scalars())
        )
    })
}

/// `dual_<integrator>_step`: one step from time `t` before `q` is renormalized, its stages'
/// derivatives from the plumbing's `dual_derivative`.
fn step_wgsl<F: Scalar + Into<f64>, const W: usize>(
    pass: &DualTracer,
    integrator: Integrator,
) -> String {
    let signature = format!(
        "fn dual_{}_step(s: DualMotion, c: DualConstants, axes: DualSplitAxes, t: real, \
         h: real, index: u32) -> DualMotion",
        integrator.name()
    );
    pass.function(TracedFunction::Step(integrator), &signature, |d| {
        let y = structure_of::<State<_>, F, W>(d, Structure::Motion, "s");
        let mass = structure_of(d, Structure::Constants, "c");
        let axes = SplitAxes::from_scalars(
            &mut read_all(d, Structure::SplitAxes, "axes", SPLIT_AXES_NUMBERS).into_iter(),
        );
        let mut f = |stage: &State<D<'_, F, W>>, at: D<'_, F, W>| {
            let k = d.trace.bind_value(wgsl!(
                "dual_derivative({}, c, {}, index)",
                array_of(d, Structure::Motion, &stage.to_scalars()),
                array_of(d, Structure::Real, &[at])
            ));
            structure_of::<Derivative<_>, F, W>(d, Structure::Derivative, k)
        };
        let (t, h) = (
            TracedDual::fixed(d.trace, "t"),
            TracedDual::fixed(d.trace, "h"),
        );
        let next = step(integrator, &y, &mass, &axes, t, h, &mut f);
        wgsl!("    return {};\n", state_from(d, &y, &next))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each integrator's traced step calls the plumbing's derivative as often as the CPU's
    /// step calls its derivative (counted here on f64, the scheme run in Rust): the count a
    /// kernel's operations multiply the derivative's by. And each function the kernel calls
    /// is measured once, under its name.
    #[test]
    fn a_traced_step_calls_the_derivative_as_often_as_the_cpus_step() {
        use super::super::algebra::SymMat3;
        let mass = MassConstants {
            mass: 2.0,
            inv_mass: 0.5,
            inv_inertia: SymMat3::from_entries([1.0, 0.5, 0.25, 0.0, 0.0, 0.0]),
        };
        let numbers = [
            0.1, 0.2, 0.3, 1.0, 0.0, 0.0, 0.0, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9,
        ];
        let state = State::<f64>::from_scalars(&mut numbers.into_iter());
        for integrator in Integrator::ALL {
            let mut calls = 0;
            let mut f = |y: &State<f64>, _t: f64| {
                calls += 1;
                let zero = Vec3::new(0.0, 0.0, 0.0);
                let load = Load {
                    force: zero,
                    torque: zero,
                };
                derivative(y, &auxiliaries(y, &mass), load)
            };
            let axes = SplitAxes::for_integrator(integrator, &mass.inv_inertia);
            step(integrator, &state, &mass, &axes, 0.0, 0.01, &mut f);
            let physics = TracedPhysics {
                kinds: vec![ForceType::Gravity],
                integrators: vec![integrator],
                contact_shapes: None,
                custom_force: None,
            };
            for width in [0, 4] {
                let moving = MovingNumbers::ALL;
                let sizes = physics_sizes(Precision::F64, &physics, (width, moving));
                let named = |function| sizes.iter().filter(|(f, _)| *f == function).count();
                assert_eq!(named(TracedFunction::Step(integrator)), 1, "{integrator:?}");
                let calls_traced = sizes
                    .iter()
                    .find(|(f, _)| *f == TracedFunction::Step(integrator))
                    .map(|(_, size)| size.calls);
                assert_eq!(calls_traced, Some(calls), "{integrator:?}, width {width}");
                for function in [
                    TracedFunction::Auxiliaries,
                    TracedFunction::StateDerivative,
                    TracedFunction::Force(ForceType::Gravity),
                    TracedFunction::Renormalize,
                ] {
                    assert_eq!(named(function), 1, "{function:?}");
                }
                let splits = usize::from(integrator.splits_the_rotation());
                assert_eq!(named(TracedFunction::SplitAxes), splits);
            }
        }
    }

    /// A pass that only counts prints no function and records what a printing pass prints,
    /// statement for statement:
    /// every indented line of the printed dual functions but their `return`s (and the header's
    /// indented alias), and the same
    /// numbers handed out moving and the same answer on whether the state's derivatives change.
    #[test]
    fn a_counting_pass_records_what_a_printing_pass_prints() {
        let physics = TracedPhysics {
            kinds: ForceType::ALL.to_vec(),
            integrators: Integrator::ALL.to_vec(),
            contact_shapes: None,
            custom_force: None,
        };
        let seeds = [
            MovingNumbers::none(4).and(Structure::Motion, 1 << 7),
            MovingNumbers::none(4).and(Structure::Constants, 0b11),
            MovingNumbers::ALL,
        ];
        for moving in seeds {
            for (precision, width) in [(Precision::F64, 4), (Precision::F32, 1)] {
                let counting = DualTracer::counting(moving);
                let (sources, counted) = trace_physics(&counting, precision, &physics, width);
                assert!(!sources.0.contains("fn "), "{}", sources.0);
                let printing = DualTracer::new(Tracer::NATIVE, moving);
                let ((dual, ..), printed) = trace_physics(&printing, precision, &physics, width);
                assert_eq!(counted, printed);
                let statement = |line: &&str| {
                    let text = line.trim_start();
                    line.starts_with("    ")
                        && !text.starts_with("return ")
                        && !text.starts_with("alias ")
                };
                assert_eq!(dual.lines().filter(statement).count(), counted.0);
                assert!(counted.0 > 1000, "{counted:?}");
                assert_eq!(counting.moved.get(), printing.moved.get());
                assert_eq!(counting.changed.get(), printing.changed.get());
            }
        }
    }
}
