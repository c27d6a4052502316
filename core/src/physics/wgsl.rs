//! The WGSL of the physics, printed by tracing the definitions in this module: the kernel
//! (`shaders/`, `src/backends/gpu/kernel/kernel_spec.rs`) keeps the storage, the loops over bodies, steps
//! and force records, and calls these functions for every formula.

use super::algebra::{Mat3, Quat, SymMat3, Vec3};
use super::contact::{
    PlaneConstants, ShapeAmong, ShapeConstants, resolve_plane, resolve_plane_among,
    step_acceleration,
};
use super::envelope::envelope_breaches;
use super::forces::{Body, Parameters, add_force, add_scaled, keyframe_lerp};
use super::integrators::{renormalize, step};
use super::motion::{Auxiliaries, Derivative, Load, MassConstants, State, auxiliaries, derivative};
use super::scalar::Scalar;
use super::splitting::{SPLIT_AXES_NUMBERS, SplitAxes};
use super::trace::{Trace, Traced, TracedBool, Tracer, Wgsl, wgsl};
use super::trig::sin_cos;
use crate::model::codes::Coded;
use crate::model::force::ForceType;
use crate::model::integrator::Integrator;
use crate::model::shape::ShapeKind;
use crate::physics::force_law::{ForceInput, ForceLaw};

/// The parameters of every `force_<kind>` function, which the generated force visits call.
const FORCE_SIGNATURE: &str = "(f: Force, s: Motion, c: BodyConstants, aux: Auxiliaries, \
t: real, env: ForceEnv,\n    force: ptr<function, vec3<real>>, torque: ptr<function, vec3<real>>)";

/// The functions of the physics in precision `F` (`f32` or `f64`), as WGSL over `real`, that
/// a kernel of the force kinds `kinds` and the integrators `integrators` calls: the
/// auxiliaries, the derivative, `force_<kind>` of each kind with parameters, the keyframed
/// kind's interpolation, the principal axes where an integrator splits the rotation, each
/// integrator's `<name>_step`, `renormalize`, and the envelope's checks where `envelope` (a
/// kernel without one gets an `envelope_breaches` that breaks no rule, behind its constant
/// `KERNEL_ENVELOPE = false`). Nothing else is traced, so a kernel holds its crowd's physics.
pub fn physics_wgsl<F: Scalar + Into<f64>>(
    tracer: Tracer,
    kinds: &[ForceType],
    integrators: &[Integrator],
    envelope: bool,
) -> String {
    let mut out = String::from(
        "// Generated from the Rust definition of the physics (core/src/physics/) by tracing it:\n\
         // each `let` is one operation of the definition, in the definition's order.\n\n",
    );
    out += &format!(
        "/// A body's principal axes as the Lie–Poisson splittings read them (`SplitAxes`).\n\
         alias SplitAxes = array<real, {SPLIT_AXES_NUMBERS}>;\n\n"
    );
    out += &auxiliaries_wgsl::<F>(tracer);
    out += &derivative_wgsl::<F>(tracer);
    for &kind in kinds {
        if !matches!(kind, ForceType::Keyframed | ForceType::Custom) {
            out += &force_wgsl::<F>(tracer, kind);
        }
    }
    if kinds.contains(&ForceType::Keyframed) {
        out += &keyframed_wgsl::<F>(tracer);
    }
    if integrators.iter().any(|i| i.splits_the_rotation()) {
        out += &tracer.function(
            "/// The body's principal axes as the splittings read them, found once a dispatch.\n\
             fn split_axes(c: BodyConstants) -> SplitAxes",
            |t| {
                let axes = SplitAxes::of(&read_constants::<F>(t, "c").inv_inertia);
                wgsl!("    return {};\n", split_axes_array(&axes))
            },
        );
    }
    for &integrator in integrators {
        out += &step_wgsl::<F>(tracer, integrator);
    }
    out += &match envelope {
        true => envelope_wgsl::<F>(tracer),
        false => NO_ENVELOPE.to_string(),
    };
    if kinds.contains(&ForceType::Custom) {
        out += &tracer.function(
            "/// q / |q|, what a custom force sees.\nfn normalize_orientation(q: vec4<real>) -> vec4<real>",
            |t| wgsl!("    return {};\n", quat(read_quat::<F>(t, "q").normalize())),
        );
    }
    out += &tracer.function("fn renormalize(m: Motion) -> Motion", |t| {
        wgsl!(
            "    return {};\n",
            motion(&renormalize(read_motion::<F>(t, "m")))
        )
    });
    out
}

/// What a kernel without an envelope calls behind `KERNEL_ENVELOPE = false`.
const NO_ENVELOPE: &str = "fn envelope_breaches(s: Motion, c: BodyConstants, \
limits_squared: vec3<real>) -> vec3<bool> {
    return vec3<bool>(false);
}
";

type T<'t, F> = Traced<'t, F>;

fn read_vec3<'t, F: Scalar + Into<f64>>(t: &'t Trace, v: impl Into<Wgsl>) -> Vec3<T<'t, F>> {
    let v = v.into();
    Vec3::new(
        T::input(t, wgsl!("{}.x", v.clone())),
        T::input(t, wgsl!("{}.y", v.clone())),
        T::input(t, wgsl!("{}.z", v)),
    )
}

/// A quaternion stored `(x, y, z, w)` in a `vec4<real>`.
fn read_quat<'t, F: Scalar + Into<f64>>(t: &'t Trace, q: impl Into<Wgsl>) -> Quat<T<'t, F>> {
    let q = q.into();
    Quat::new(
        T::input(t, wgsl!("{}.w", q.clone())),
        T::input(t, wgsl!("{}.x", q.clone())),
        T::input(t, wgsl!("{}.y", q.clone())),
        T::input(t, wgsl!("{}.z", q)),
    )
}

fn read_motion<'t, F: Scalar + Into<f64>>(t: &'t Trace, s: &str) -> State<T<'t, F>> {
    State {
        position: read_vec3(t, format!("{s}.position")),
        orientation: read_quat(t, format!("{s}.orientation")),
        linear_momentum: read_vec3(t, format!("{s}.linear_momentum")),
        angular_momentum: read_vec3(t, format!("{s}.angular_momentum")),
    }
}

fn read_constants<'t, F: Scalar + Into<f64>>(t: &'t Trace, c: &str) -> MassConstants<T<'t, F>> {
    let entry = |name: &str| T::input(t, format!("{c}.inv_inertia_{name}"));
    MassConstants {
        mass: T::input(t, format!("{c}.mass")),
        inv_mass: T::input(t, format!("{c}.inv_mass")),
        inv_inertia: SymMat3 {
            xx: entry("xx"),
            yy: entry("yy"),
            zz: entry("zz"),
            xy: entry("xy"),
            xz: entry("xz"),
            yz: entry("yz"),
        },
    }
}

fn read_split_axes<'t, F: Scalar + Into<f64>>(t: &'t Trace, a: &str) -> SplitAxes<T<'t, F>> {
    SplitAxes::from_scalars(&mut (0..SPLIT_AXES_NUMBERS).map(|i| T::input(t, format!("{a}[{i}]"))))
}

fn split_axes_array<F>(axes: &SplitAxes<T<'_, F>>) -> Wgsl {
    let items = Wgsl::join(axes.to_scalars().into_iter().map(Wgsl::from), ", ");
    Wgsl::format(&format!("array<real, {SPLIT_AXES_NUMBERS}>({{}})"), [items])
}

fn read_auxiliaries<'t, F: Scalar + Into<f64>>(t: &'t Trace, aux: &str) -> Auxiliaries<T<'t, F>> {
    let row = |i: usize| {
        Vec3::new(
            T::input(t, format!("{aux}.rotation[0][{i}]")),
            T::input(t, format!("{aux}.rotation[1][{i}]")),
            T::input(t, format!("{aux}.rotation[2][{i}]")),
        )
    };
    Auxiliaries {
        velocity: read_vec3(t, format!("{aux}.velocity")),
        rotation: Mat3 {
            rows: [row(0), row(1), row(2)],
        },
        angular_velocity: read_vec3(t, format!("{aux}.angular_velocity")),
    }
}

fn read_derivative<'t, F: Scalar + Into<f64>>(t: &'t Trace, k: Wgsl) -> Derivative<T<'t, F>> {
    Derivative {
        velocity: read_vec3(t, wgsl!("{}.velocity", k.clone())),
        spin: read_quat(t, wgsl!("{}.spin", k.clone())),
        force: read_vec3(t, wgsl!("{}.force", k.clone())),
        torque: read_vec3(t, wgsl!("{}.torque", k)),
    }
}

fn vec3<F>(v: Vec3<T<'_, F>>) -> Wgsl {
    wgsl!("vec3<real>({}, {}, {})", v.x, v.y, v.z)
}

fn quat<F>(q: Quat<T<'_, F>>) -> Wgsl {
    wgsl!("vec4<real>({}, {}, {}, {})", q.x, q.y, q.z, q.w)
}

fn motion<F>(s: &State<T<'_, F>>) -> Wgsl {
    wgsl!(
        "Motion({}, {}, {}, {})",
        vec3(s.position),
        quat(s.orientation),
        vec3(s.linear_momentum),
        vec3(s.angular_momentum)
    )
}

/// WGSL's `mat3x3` is built from columns.
fn mat3<F>(m: &Mat3<T<'_, F>>) -> Wgsl {
    let [a, b, c] = m.rows;
    let column = |x: T<'_, F>, y: T<'_, F>, z: T<'_, F>| vec3(Vec3 { x, y, z });
    wgsl!(
        "mat3x3<real>({}, {}, {})",
        column(a.x, b.x, c.x),
        column(a.y, b.y, c.y),
        column(a.z, b.z, c.z)
    )
}

/// `sin_real` and `cos_real`, which the physics' own sinusoids use.
pub fn math_wgsl<F: Scalar + Into<f64>>(tracer: Tracer) -> String {
    let sin = tracer.function("fn sin_real(x: real) -> real", |t| {
        wgsl!("    return {};\n", sin_cos(T::<F>::input(t, "x")).0)
    });
    let cos = tracer.function("fn cos_real(x: real) -> real", |t| {
        wgsl!("    return {};\n", sin_cos(T::<F>::input(t, "x")).1)
    });
    sin + &cos
}

fn auxiliaries_wgsl<F: Scalar + Into<f64>>(tracer: Tracer) -> String {
    tracer.function(
        "/// v, R and omega of state s (Baraff 2-42).\n\
         fn auxiliaries(s: Motion, c: BodyConstants) -> Auxiliaries",
        |t| {
            let aux = auxiliaries(&read_motion::<F>(t, "s"), &read_constants(t, "c"));
            wgsl!(
                "    return Auxiliaries({}, {}, {});\n",
                vec3(aux.velocity),
                mat3(&aux.rotation),
                vec3(aux.angular_velocity)
            )
        },
    )
}

fn derivative_wgsl<F: Scalar + Into<f64>>(tracer: Tracer) -> String {
    tracer.function(
        "/// dY/dt of state s with auxiliaries aux, on which the forces sum to (force, torque).\n\
         fn state_derivative(s: Motion, aux: Auxiliaries, force: vec3<real>, \
         torque: vec3<real>) -> Derivative",
        |t| {
            let load = Load {
                force: read_vec3(t, "force"),
                torque: read_vec3(t, "torque"),
            };
            let k = derivative(&read_motion::<F>(t, "s"), &read_auxiliaries(t, "aux"), load);
            wgsl!(
                "    return Derivative({}, {}, {}, {});\n",
                vec3(k.velocity),
                quat(k.spin),
                vec3(k.force),
                vec3(k.torque)
            )
        },
    )
}

/// The totals behind the `force` and `torque` pointers.
fn read_totals<'t, F: Scalar + Into<f64>>(t: &'t Trace) -> Load<T<'t, F>> {
    Load {
        force: read_vec3(t, "(*force)"),
        torque: read_vec3(t, "(*torque)"),
    }
}

fn write_totals<F>(total: &Load<T<'_, F>>) -> Wgsl {
    wgsl!(
        "    *force = {};\n    *torque = {};\n",
        vec3(total.force),
        vec3(total.torque)
    )
}

fn force_wgsl<F: Scalar + Into<f64>>(tracer: Tracer, kind: ForceType) -> String {
    let signature = format!("fn force_{}{FORCE_SIGNATURE}", kind.name());
    tracer.function(&signature, |t| {
        let state = read_motion::<F>(t, "s");
        let mass = read_constants(t, "c");
        let aux = read_auxiliaries(t, "aux");
        let p = Parameters {
            vectors: [read_vec3(t, "f.a"), read_vec3(t, "f.b")],
            scalars: ["x", "y", "z", "w"].map(|lane| T::input(t, format!("f.c.{lane}"))),
        };
        let body = Body {
            state: &state,
            mass: &mass,
            aux: &aux,
            time: T::input(t, "t"),
        };
        let mut total = read_totals(t);
        add_force(kind, &p, &body, &mut total);
        write_totals(&total)
    })
}

fn keyframed_wgsl<F: Scalar + Into<f64>>(tracer: Tracer) -> String {
    let lerp = tracer.function(
        "/// The value at t on the segment from keyframe a to keyframe b (x = time, y = value).\n\
         fn keyframe_lerp(a: vec2<real>, b: vec2<real>, t: real) -> real",
        |t| {
            let point = |k: &str| {
                [
                    T::<F>::input(t, format!("{k}.x")),
                    T::input(t, format!("{k}.y")),
                ]
            };
            wgsl!(
                "    return {};\n",
                keyframe_lerp(point("a"), point("b"), T::input(t, "t"))
            )
        },
    );
    let add = tracer.function(
        "/// Keyframed record f's force and torque at `scale`, however the scale was found.\n\
         fn add_keyframed(f: Force, scale: real, \
         force: ptr<function, vec3<real>>, torque: ptr<function, vec3<real>>)",
        |t| {
            let mut total = read_totals::<F>(t);
            add_scaled(
                read_vec3(t, "f.a"),
                read_vec3(t, "f.b"),
                T::input(t, "scale"),
                &mut total,
            );
            write_totals(&total)
        },
    );
    lerp + &add
}

fn step_wgsl<F: Scalar + Into<f64>>(tracer: Tracer, integrator: Integrator) -> String {
    let signature = format!(
        "/// One {} step of state s from time t, before q is renormalized.\n\
         fn {}_step(s: Motion, c: BodyConstants, axes: SplitAxes, env: ForceEnv, t: real, \
         h: real) -> Motion",
        integrator.name(),
        integrator.name()
    );
    tracer.function(&signature, |t| {
        let y = read_motion::<F>(t, "s");
        let mass = read_constants(t, "c");
        let axes = read_split_axes(t, "axes");
        let mut f = |stage: &State<T<F>>, at: T<F>| {
            let k = t.bind_value(wgsl!("derivative({}, c, {}, env)", motion(stage), at));
            read_derivative(t, k)
        };
        let (t, h) = (T::input(t, "t"), T::input(t, "h"));
        let next = step(integrator, &y, &mass, &axes, t, h, &mut f);
        wgsl!("    return {};\n", motion(&next))
    })
}

/// `custom_force`, the kernel's call into a custom force, traced from `law` in precision `F`.
pub fn custom_force_wgsl<F: Scalar + Into<f64>, L: ForceLaw>(tracer: Tracer, law: &L) -> String {
    tracer.function(
        "/// Generated from the custom force's law (written in Rust, traced).\n\
         fn custom_force(position: vec3<real>, orientation: vec4<real>, velocity: vec3<real>,\n    \
         angular_velocity: vec3<real>, mass: real, time: real, body: u32) -> Load",
        |t| {
            let input = ForceInput {
                position: read_vec3::<F>(t, "position"),
                orientation: read_quat(t, "orientation"),
                velocity: read_vec3(t, "velocity"),
                angular_velocity: read_vec3(t, "angular_velocity"),
                mass: T::input(t, "mass"),
                time: T::input(t, "time"),
                body: T::input(t, "real(body)"),
            };
            let load = law.load(&input);
            wgsl!(
                "    return Load({}, {});\n",
                vec3(load.force),
                vec3(load.torque)
            )
        },
    )
}

/// `envelope_breaches`: the envelope's rules a state breaks (speed, angular speed, distance).
fn envelope_wgsl<F: Scalar + Into<f64>>(tracer: Tracer) -> String {
    tracer.function(
        "/// Which of the envelope's rules (speed, angular speed, distance) state s breaks.\n\
         fn envelope_breaches(s: Motion, c: BodyConstants, limits_squared: vec3<real>) -> vec3<bool>",
        |t| {
            let state = read_motion::<F>(t, "s");
            let aux = auxiliaries(&state, &read_constants(t, "c"));
            let limits = ["x", "y", "z"].map(|l| T::input(t, format!("limits_squared.{l}")));
            let [a, b, c] =
                envelope_breaches(state.position, aux.velocity, aux.angular_velocity, limits);
            wgsl!("    return vec3<bool>({}, {}, {});\n", a, b, c)
        },
    )
}

/// The contact resolution in precision `F`: `step_acceleration`, one `resolve_plane_<shape>`
/// per shape kind of `shapes` and `resolve_plane`, which picks the body's. The kernel's
/// `resolve_contacts` (shaders/contact.wgsl) calls them plane by plane.
pub fn contact_wgsl<F: Scalar + Into<f64>>(tracer: Tracer, shapes: &[ShapeKind]) -> String {
    let out = tracer.function(
        "/// The body's acceleration over the step from `start` to `next` from the forces alone.\n\
         fn step_acceleration(start: Motion, next: Motion, c: BodyConstants, h: real) -> vec3<real>",
        |t| {
            let a = step_acceleration(
                &read_motion::<F>(t, "start"),
                &read_motion(t, "next"),
                &read_constants(t, "c"),
                T::input(t, "h"),
            );
            wgsl!("    return {};\n", vec3(a))
        },
    );
    let signature = |name: &str| {
        format!(
            "fn resolve_plane{name}(s: Motion, c: BodyConstants, plane: Plane, \
             acceleration: vec3<real>, h: real) -> Motion"
        )
    };
    fn plane<'t, F: Scalar + Into<f64>>(t: &'t Trace) -> PlaneConstants<T<'t, F>> {
        PlaneConstants {
            normal: read_vec3(t, "plane.surface"),
            offset: T::input(t, "plane.surface.w"),
            restitution: T::input(t, "plane.restitution"),
            friction: T::input(t, "plane.friction"),
        }
    }
    let resolve = |header: String, kinds: &[ShapeKind]| {
        tracer.function(&header, |t| {
            trace_resolve_plane(
                kinds,
                |kind| TracedBool::input(t, format!("c.shape_kind == {}", kind.wgsl_constant())),
                || ContactReads {
                    dims: read_vec3(t, "c.shape"),
                    bounding_radius: T::input(t, "c.shape.w"),
                    plane: plane(t),
                    state: read_motion::<F>(t, "s"),
                    mass: read_constants(t, "c"),
                    acceleration: read_vec3(t, "acceleration"),
                    h: T::input(t, "h"),
                },
                |_, next| motion(next),
            )
        })
    };
    out + &resolve_plane_functions(
        shapes,
        signature,
        resolve,
        ("c.shape_kind", |name| {
            format!("resolve_plane_{name}(s, c, plane, acceleration, h)")
        }),
    )
}

/// The contact functions of a kernel's `shapes`, each traced by `resolve` from its header and
/// its kinds: one for a body of any of them where there are several; else the one kind's,
/// and `signature("")` switching on `selector` to the call `call(name)` of its function
/// (`signature("_<name>")`).
pub(crate) fn resolve_plane_functions(
    shapes: &[ShapeKind],
    signature: impl Fn(&str) -> String,
    resolve: impl Fn(String, &[ShapeKind]) -> String,
    (selector, call): (&str, impl Fn(&str) -> String),
) -> String {
    if shapes.len() > 1 {
        return resolve(among_header(&signature("")), shapes);
    }
    let mut out = String::new();
    for &kind in shapes {
        let header = one_kind_header(kind, &signature(&format!("_{}", kind.name())));
        out += &resolve(header, &[kind]);
    }
    out + &shape_switch(&signature(""), selector, shapes, call)
}

/// What a traced contact function reads of its arguments, each read where its printer
/// reads it (the order of the trace's inputs is its text's).
pub(crate) struct ContactReads<R: Scalar> {
    pub dims: Vec3<R>,
    pub bounding_radius: R,
    pub plane: PlaneConstants<R>,
    pub state: State<R>,
    pub mass: MassConstants<R>,
    pub acceleration: Vec3<R>,
    pub h: R,
}

/// The tail of the contact function for a body of one of `kinds`, traced in its trace: the
/// kind's own [`resolve_plane`] where there is one kind, [`resolve_plane_among`] where there
/// are several (`is_kind` reads whether the body is of a kind, before `read` reads the rest).
/// `write` gives the returned value's text from the state read and the state resolved.
pub(crate) fn trace_resolve_plane<R: Scalar>(
    kinds: &[ShapeKind],
    is_kind: impl Fn(ShapeKind) -> R::Bool,
    read: impl FnOnce() -> ContactReads<R>,
    write: impl FnOnce(&State<R>, &State<R>) -> Wgsl,
) -> Wgsl {
    let among: Vec<_> = match kinds {
        [_] => Vec::new(),
        _ => kinds.iter().map(|&kind| (kind, is_kind(kind))).collect(),
    };
    let ContactReads {
        dims,
        bounding_radius,
        plane,
        state,
        mass,
        acceleration,
        h,
    } = read();
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
            resolve_plane_among(state, &mass, &shape, &plane, acceleration, h)
        }
    };
    wgsl!("    return {};\n", write(&state, &next))
}

/// The doc line and `signature` of the contact function for a body of any of a kernel's shapes.
fn among_header(signature: &str) -> String {
    format!(
        "/// State s moved out of `plane` and its contact impulses applied, one code for the \
         body's shape among the kernel's.\n{signature}"
    )
}

/// The doc line and `signature` of the contact function for a body of shape `kind`.
fn one_kind_header(kind: ShapeKind, signature: &str) -> String {
    format!(
        "/// State s of a {} moved out of `plane`, the contact impulses applied.\n{signature}",
        kind.name()
    )
}

/// The function `signature` that moves state `s` out of a plane by the body's shape: on
/// `selector`, the call `call(name)` of each kind of `shapes` (its `resolve_plane_` function
/// on the arguments), and `s` unmoved for any other kind.
fn shape_switch(
    signature: &str,
    selector: &str,
    shapes: &[ShapeKind],
    call: impl Fn(&str) -> String,
) -> String {
    let cases: String = shapes
        .iter()
        .map(|kind| {
            format!(
                "        case {}: {{\n            return {};\n        }}\n",
                kind.wgsl_constant(),
                call(kind.name())
            )
        })
        .collect();
    format!(
        "/// State s moved out of `plane` and its contact impulses applied, by the body's shape.\n\
         {signature} {{\n    switch {selector} {{\n{cases}        default: {{\n            \
         return s;\n        }}\n    }}\n}}\n"
    )
}
