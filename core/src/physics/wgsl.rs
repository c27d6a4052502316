//! The WGSL that the kernels over duals keep over plain numbers: the envelope's checks and a
//! custom force's inputs, which read a state's values, the sinusoids a custom force written
//! in WGSL may call, and a law's custom force as such WGSL (what checkpoints store).

use super::algebra::{Quat, SymMat3, Vec3};
use super::envelope::envelope_breaches;
use super::motion::{MassConstants, State, auxiliaries};
use super::scalar::Scalar;
use super::trace::{Trace, Traced, Tracer, Wgsl, wgsl};
use super::trig::sin_cos;
use crate::physics::force_law::Parameters;
use crate::physics::force_law::{ForceInput, ForceLaw};

/// What a kernel over duals computes on plain numbers, in precision `F`: `envelope_breaches`,
/// the envelope's checks, where `envelope` (a kernel without one gets an
/// `envelope_breaches` that breaks no rule, behind its constant `KERNEL_ENVELOPE = false`),
/// and where the kernel calls a custom force written in WGSL (`custom_wgsl`), `sin_real` and
/// `cos_real`, which it may call, and `normalize_orientation`, what it sees.
pub fn plain_wgsl<F: Scalar + Into<f64>>(
    tracer: Tracer,
    envelope: bool,
    custom_wgsl: bool,
) -> String {
    let mut out = match envelope {
        true => envelope_wgsl::<F>(tracer),
        false => NO_ENVELOPE.to_string(),
    };
    if custom_wgsl {
        out += &math_wgsl::<F>(tracer);
        out += &tracer.function(
            "/// q / |q|, what a custom force sees.\nfn normalize_orientation(q: vec4<real>) -> vec4<real>",
            |t| wgsl!("    return {};\n", quat(read_quat::<F>(t, "q").normalize())),
        );
    }
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

fn quat<F>(q: Quat<T<'_, F>>) -> Wgsl {
    wgsl!("vec4<real>({}, {}, {}, {})", q.x, q.y, q.z, q.w)
}

/// `sin_real` and `cos_real`, the physics' sinusoids as a custom force written in WGSL calls them.
pub fn math_wgsl<F: Scalar + Into<f64>>(tracer: Tracer) -> String {
    let sin = tracer.function("fn sin_real(x: real) -> real", |t| {
        wgsl!("    return {};\n", sin_cos(T::<F>::input(t, "x")).0)
    });
    let cos = tracer.function("fn cos_real(x: real) -> real", |t| {
        wgsl!("    return {};\n", sin_cos(T::<F>::input(t, "x")).1)
    });
    sin + &cos
}

/// `custom_force`, a law's custom force as WGSL that takes the values, traced from `law` in
/// precision `F`: what a checkpoint stores of the law and a crowd resumed without its Rust
/// twin calls (a kernel with the law itself traces it over duals instead).
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
                parameters: Parameters::zero(),
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

fn vec3<F>(v: Vec3<T<'_, F>>) -> Wgsl {
    wgsl!("vec3<real>({}, {}, {})", v.x, v.y, v.z)
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
