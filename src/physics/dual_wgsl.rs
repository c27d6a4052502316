//! The WGSL of the physics over dual numbers of width `W`: the same definitions as
//! [`super::wgsl`] prints, traced over `Dual<Traced<F>, W>`, so the kernel that carries
//! tangents computes each value and each derivative with the operations the CPU's
//! `Dual<F, W>` takes, in the same order.
//!
//! A dual structure is one flat `array<real, n (W + 1)>`: number `i` is its value at
//! `i (W + 1)` followed by its `W` derivatives. The kernel's plumbing
//! (`shaders/integrate_tangents.wgsl`) reads and writes them in that layout.

use super::algebra::{Mat3, SymMat3, Vec3};
use super::contact::{PlaneConstants, ShapeConstants, resolve_plane, step_acceleration};
use super::dual::Dual;
use super::force_law::{ForceInput, ForceLaw};
use super::forces::{Body, Parameters, add_force, add_scaled};
use super::integrators::{renormalize, step};
use super::motion::{Auxiliaries, Derivative, Load, MassConstants, State, auxiliaries, derivative};
use super::scalar::{Carried, Scalar};
use super::splitting::{SPLIT_AXES_NUMBERS, SplitAxes};
use super::trace::{Traced, bind_value, trace_function, with_setting};
use super::traced_dual::TracedDual;
use super::wgsl::shape_switch;
use crate::model::codes::Coded;
use crate::model::force::ForceType;
use crate::model::integrator::Integrator;
use crate::model::precision::Precision;
use crate::model::shape::ShapeKind;

/// The numbers of each dual structure: the state (and its derivative), the mass constants
/// (`mass, inv_mass`, then `Ibody^-1` as `xx, yy, zz, xy, xz, yz`), the auxiliaries
/// (`v`, `R` by rows, `omega`), a load, a force record's parameters (`a`, `b`, `c`), a
/// vector and a plane (`normal`, `offset`, `restitution`, `friction`).
pub(crate) const MOTION_NUMBERS: usize = 13;
pub(crate) const CONSTANT_NUMBERS: usize = 8;
const AUXILIARY_NUMBERS: usize = 15;
const LOAD_NUMBERS: usize = 6;
pub(crate) const PARAMETER_NUMBERS: usize = 10;
const VECTOR_NUMBERS: usize = 3;
const PLANE_NUMBERS: usize = 6;

/// The widths the physics over duals is traced in: a GPU driver inlines it at every stage of
/// the step, and a block of 16 (17 numbers each) made lavapipe's compile of the cross-check
/// crowd's kernel run for minutes; blocks of 4 compile in seconds.
pub const TRACED_WIDTHS: [usize; 2] = [1, 4];

type D<F, const W: usize> = TracedDual<F, W>;

/// Which inputs of a tangent kernel its block's directions move, besides the state: the
/// body's mass constants (along the mass and the inertia), the force records' parameters
/// (along a force's number) and the planes (along a plane's number). An input that none of
/// them moves is traced with literal-zero derivatives, so its terms drop out of the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct MovingInputs {
    pub constants: bool,
    pub parameters: bool,
    pub planes: bool,
}

impl MovingInputs {
    /// Every input moves: the kernel for any block.
    pub const ALL: Self = Self {
        constants: true,
        parameters: true,
        planes: true,
    };
}

thread_local! {
    static MOVING: std::cell::Cell<MovingInputs> = const { std::cell::Cell::new(MovingInputs::ALL) };
}

/// Runs `generate` with the traces it prints reading only the inputs of `moving` as moving.
pub(crate) fn with_moving_inputs<T>(moving: MovingInputs, generate: impl FnOnce() -> T) -> T {
    with_setting(&MOVING, moving, generate)
}

/// Numbers `0..n` of the dual array `array`, their derivatives read if `moves`, else the
/// literal zero.
fn read_input<F: Scalar + Into<f64>, const W: usize>(
    array: &str,
    n: usize,
    moves: impl Fn(MovingInputs) -> bool,
) -> Vec<D<F, W>> {
    match moves(MOVING.with(std::cell::Cell::get)) {
        true => read_all(array, n),
        false => (0..n)
            .map(|i| TracedDual::fixed(&format!("{array}[{}]", i * (W + 1))))
            .collect(),
    }
}

/// Number `i` of the dual array `array`.
fn read<F: Scalar + Into<f64>, const W: usize>(array: &str, i: usize) -> D<F, W> {
    let at = i * (W + 1);
    TracedDual(Dual {
        value: Traced::input(&format!("{array}[{at}]")),
        tangent: std::array::from_fn(|k| Traced::input(&format!("{array}[{}]", at + 1 + k))),
    })
}

/// Numbers `0..n` of the dual array `array`.
fn read_all<F: Scalar + Into<f64>, const W: usize>(array: &str, n: usize) -> Vec<D<F, W>> {
    (0..n).map(|i| read(array, i)).collect()
}

/// The WGSL array of `numbers`, each value followed by its derivatives.
fn array_of<F, const W: usize>(numbers: &[D<F, W>]) -> String {
    let items: Vec<String> = numbers
        .iter()
        .flat_map(|d| std::iter::once(d.0.value).chain(d.0.tangent))
        .map(|x| x.to_string())
        .collect();
    format!("array<real, {}>({})", items.len(), items.join(", "))
}

fn motion_of<F: Scalar + Into<f64>, const W: usize>(array: &str) -> State<D<F, W>> {
    State::from_scalars(&mut read_all(array, MOTION_NUMBERS).into_iter())
}

fn constants_of<F: Scalar + Into<f64>, const W: usize>(array: &str) -> MassConstants<D<F, W>> {
    let n = read_input(array, CONSTANT_NUMBERS, |m| m.constants);
    MassConstants {
        mass: n[0],
        inv_mass: n[1],
        inv_inertia: SymMat3::from_entries([n[2], n[3], n[4], n[5], n[6], n[7]]),
    }
}

fn auxiliaries_of<F: Scalar + Into<f64>, const W: usize>(array: &str) -> Auxiliaries<D<F, W>> {
    let n = read_all(array, AUXILIARY_NUMBERS);
    let v = |i: usize| Vec3::new(n[i], n[i + 1], n[i + 2]);
    Auxiliaries {
        velocity: v(0),
        rotation: Mat3 {
            rows: [v(3), v(6), v(9)],
        },
        angular_velocity: v(12),
    }
}

fn auxiliary_numbers<R: Copy>(aux: &Auxiliaries<R>) -> Vec<R> {
    let [a, b, c] = aux.rotation.rows;
    [aux.velocity, a, b, c, aux.angular_velocity]
        .iter()
        .flat_map(|v| [v.x, v.y, v.z])
        .collect()
}

fn load_of<F: Scalar + Into<f64>, const W: usize>(array: &str) -> Load<D<F, W>> {
    let n = read_all(array, LOAD_NUMBERS);
    Load {
        force: Vec3::new(n[0], n[1], n[2]),
        torque: Vec3::new(n[3], n[4], n[5]),
    }
}

fn load_numbers<R: Copy>(load: &Load<R>) -> Vec<R> {
    let (f, t) = (load.force, load.torque);
    vec![f.x, f.y, f.z, t.x, t.y, t.z]
}

fn parameters_of<F: Scalar + Into<f64>, const W: usize>(array: &str) -> Parameters<D<F, W>> {
    let n = read_input(array, PARAMETER_NUMBERS, |m| m.parameters);
    Parameters {
        vectors: [Vec3::new(n[0], n[1], n[2]), Vec3::new(n[3], n[4], n[5])],
        scalars: [n[6], n[7], n[8], n[9]],
    }
}

fn vector_of<F: Scalar + Into<f64>, const W: usize>(array: &str) -> Vec3<D<F, W>> {
    let n = read_all(array, VECTOR_NUMBERS);
    Vec3::new(n[0], n[1], n[2])
}

fn plane_of<F: Scalar + Into<f64>, const W: usize>(array: &str) -> PlaneConstants<D<F, W>> {
    let n = read_input(array, PLANE_NUMBERS, |m| m.planes);
    PlaneConstants {
        normal: Vec3::new(n[0], n[1], n[2]),
        offset: n[3],
        restitution: n[4],
        friction: n[5],
    }
}

/// A derivative `(v, dq/dt, F, tau)` in the state's layout.
fn derivative_of<F: Scalar + Into<f64>, const W: usize>(array: &str) -> Derivative<D<F, W>> {
    let y = motion_of::<F, W>(array);
    Derivative {
        velocity: y.position,
        spin: y.orientation,
        force: y.linear_momentum,
        torque: y.angular_momentum,
    }
}

fn derivative_numbers<R: Scalar>(k: &Derivative<R>) -> Vec<R> {
    State {
        position: k.velocity,
        orientation: k.spin,
        linear_momentum: k.force,
        angular_momentum: k.torque,
    }
    .to_scalars()
}

/// Every dual function of the physics in precision `F` and width `W`, with the aliases of
/// the dual structures: `dual_auxiliaries`, `dual_state_derivative`, `dual_force_<kind>`,
/// `dual_add_keyframed`, `dual_<integrator>_step` (which call the plumbing's
/// `dual_derivative`) and `dual_renormalize`.
pub fn dual_physics_wgsl<F: Scalar + Into<f64>, const W: usize>() -> String {
    let stride = W + 1;
    let mut out = format!(
        "// Generated from the Rust definition of the physics traced over dual numbers of width {W}\n\
         // (src/physics/dual_wgsl.rs): number i of a dual array is its value at i * DUAL_STRIDE,\n\
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
         alias DualSplitAxes = array<real, {}>;\n\n",
        MOTION_NUMBERS * stride,
        CONSTANT_NUMBERS * stride,
        AUXILIARY_NUMBERS * stride,
        LOAD_NUMBERS * stride,
        PARAMETER_NUMBERS * stride,
        VECTOR_NUMBERS * stride,
        PLANE_NUMBERS * stride,
        SPLIT_AXES_NUMBERS * stride,
    );
    out += &trace_function(
        "fn dual_auxiliaries(s: DualMotion, c: DualConstants) -> DualAuxiliaries",
        || {
            let aux = auxiliaries(&motion_of::<F, W>("s"), &constants_of("c"));
            format!("    return {};\n", array_of(&auxiliary_numbers(&aux)))
        },
    );
    out += &trace_function(
        "fn dual_state_derivative(s: DualMotion, aux: DualAuxiliaries, total: DualLoad) \
         -> DualMotion",
        || {
            let k = derivative(
                &motion_of::<F, W>("s"),
                &auxiliaries_of("aux"),
                load_of("total"),
            );
            format!("    return {};\n", array_of(&derivative_numbers(&k)))
        },
    );
    for &kind in ForceType::ALL {
        if matches!(kind, ForceType::Keyframed | ForceType::Custom) {
            continue;
        }
        let signature = format!(
            "fn dual_force_{}(p: DualParameters, s: DualMotion, c: DualConstants, \
             aux: DualAuxiliaries, t: DualReal, total: DualLoad) -> DualLoad",
            kind.name()
        );
        out += &trace_function(&signature, || {
            let (state, mass, aux) = (
                motion_of::<F, W>("s"),
                constants_of("c"),
                auxiliaries_of("aux"),
            );
            let body = Body {
                state: &state,
                mass: &mass,
                aux: &aux,
                time: read("t", 0),
            };
            let mut total = load_of("total");
            add_force(kind, &parameters_of("p"), &body, &mut total);
            format!("    return {};\n", array_of(&load_numbers(&total)))
        });
    }
    out += &trace_function(
        "/// A keyframed record's load at `scale`, which no direction moves.\n\
         fn dual_add_keyframed(p: DualParameters, scale: real, total: DualLoad) -> DualLoad",
        || {
            let p = parameters_of::<F, W>("p");
            let mut total = load_of("total");
            let scale = TracedDual::fixed("scale");
            add_scaled(p.vectors[0], p.vectors[1], scale, &mut total);
            format!("    return {};\n", array_of(&load_numbers(&total)))
        },
    );
    out += &trace_function(
        "fn dual_split_axes(c: DualConstants) -> DualSplitAxes",
        || {
            let axes = SplitAxes::of(&constants_of::<F, W>("c").inv_inertia);
            format!("    return {};\n", array_of(&axes.to_scalars()))
        },
    );
    for &integrator in Integrator::ALL.iter() {
        out += &step_wgsl::<F, W>(integrator);
    }
    out += &trace_function("fn dual_renormalize(s: DualMotion) -> DualMotion", || {
        let y = renormalize(motion_of::<F, W>("s"));
        format!("    return {};\n", array_of(&y.to_scalars()))
    });
    out
}

/// The contact resolution over duals of width `W` (its aliases come with
/// [`dual_physics_wgsl`]): `dual_step_acceleration`, one `dual_resolve_plane_<shape>` per
/// shape kind of `shapes` and `dual_resolve_plane`, which picks the body's by its `shape_kind`. A body's
/// shape (`shape`, as `BodyConstants` holds it) is along no direction.
pub fn dual_contact_wgsl<F: Scalar + Into<f64>, const W: usize>(shapes: &[ShapeKind]) -> String {
    let mut out = trace_function(
        "/// The body's acceleration over the step from `start` to `next` from the forces alone.\n\
         fn dual_step_acceleration(start: DualMotion, next: DualMotion, c: DualConstants, \
         h: real) -> DualVec3",
        || {
            let a = step_acceleration(
                &motion_of::<F, W>("start"),
                &motion_of("next"),
                &constants_of("c"),
                TracedDual::fixed("h"),
            );
            format!("    return {};\n", array_of(&[a.x, a.y, a.z]))
        },
    );
    for &kind in shapes {
        let name = kind.name();
        out += &trace_function(
            &format!(
                "/// State s of a {name} moved out of `plane`, the contact impulses applied.\n\
                 fn dual_resolve_plane_{name}(s: DualMotion, c: DualConstants, \
                 shape: vec4<real>, plane: DualPlane, acceleration: DualVec3, h: real) \
                 -> DualMotion"
            ),
            || {
                let fixed = TracedDual::<F, W>::fixed;
                let shape = ShapeConstants {
                    kind,
                    dims: Vec3::new(fixed("shape.x"), fixed("shape.y"), fixed("shape.z")),
                    bounding_radius: fixed("shape.w"),
                };
                let next = resolve_plane(
                    motion_of::<F, W>("s"),
                    &constants_of("c"),
                    &shape,
                    &plane_of("plane"),
                    vector_of("acceleration"),
                    fixed("h"),
                );
                format!("    return {};\n", array_of(&next.to_scalars()))
            },
        );
    }
    out + &shape_switch(
        "fn dual_resolve_plane(s: DualMotion, c: DualConstants, shape_kind: u32, \
         shape: vec4<real>, plane: DualPlane, acceleration: DualVec3, h: real) -> DualMotion",
        "shape_kind",
        shapes,
        |name| format!("dual_resolve_plane_{name}(s, c, shape, plane, acceleration, h)"),
    )
}

/// `dual_custom_force`, the custom force's load over duals added to `total`, traced from `law`
/// in `precision` and width `width` (one of [`TRACED_WIDTHS`]): it sees what the CPU's
/// dual steps give it, the orientation normalized and the body's index along no direction.
pub fn dual_custom_force_wgsl<L: ForceLaw>(law: &L, precision: Precision, width: usize) -> String {
    match (precision, width) {
        (Precision::F32, 1) => custom_force_over::<f32, 1, L>(law),
        (Precision::F32, 4) => custom_force_over::<f32, 4, L>(law),
        (Precision::F64, 1) => custom_force_over::<f64, 1, L>(law),
        (Precision::F64, 4) => custom_force_over::<f64, 4, L>(law),
        _ => panic!("the dual WGSL is traced in widths {TRACED_WIDTHS:?}, not {width}"),
    }
}

fn custom_force_over<F: Scalar + Into<f64>, const W: usize, L: ForceLaw>(law: &L) -> String {
    trace_function(
        "/// Generated from the custom force's law (written in Rust, traced over duals).\n\
         fn dual_custom_force(s: DualMotion, c: DualConstants, aux: DualAuxiliaries, \
         t: DualReal, body: u32, total: DualLoad) -> DualLoad",
        || {
            let (state, mass, aux) = (
                motion_of::<F, W>("s"),
                constants_of("c"),
                auxiliaries_of("aux"),
            );
            let load = law.load(&ForceInput {
                position: state.position,
                orientation: state.orientation.normalize(),
                velocity: aux.velocity,
                angular_velocity: aux.angular_velocity,
                mass: mass.mass,
                time: read("t", 0),
                body: TracedDual::fixed("real(body)"),
            });
            let mut total = load_of("total");
            total.force = total.force + load.force;
            total.torque = total.torque + load.torque;
            format!("    return {};\n", array_of(&load_numbers(&total)))
        },
    )
}

/// `dual_<integrator>_step`: one step from time `t` before `q` is renormalized, its stages'
/// derivatives from the plumbing's `dual_derivative`.
fn step_wgsl<F: Scalar + Into<f64>, const W: usize>(integrator: Integrator) -> String {
    let signature = format!(
        "fn dual_{}_step(s: DualMotion, c: DualConstants, axes: DualSplitAxes, t: real, \
         h: real, index: u32) -> DualMotion",
        integrator.name()
    );
    trace_function(&signature, || {
        let y = motion_of::<F, W>("s");
        let mass = constants_of("c");
        let axes = SplitAxes::from_scalars(&mut read_all("axes", SPLIT_AXES_NUMBERS).into_iter());
        let mut f = |stage: &State<D<F, W>>, at: D<F, W>| {
            let k = bind_value(format!(
                "dual_derivative({}, c, {}, index)",
                array_of(&stage.to_scalars()),
                array_of(&[at])
            ));
            derivative_of::<F, W>(&k)
        };
        let (t, h) = (TracedDual::fixed("t"), TracedDual::fixed("h"));
        let next = step(integrator, &y, &mass, &axes, t, h, &mut f);
        format!("    return {};\n", array_of(&next.to_scalars()))
    })
}
