//! The state derivative of one body, in the number type [`Reference`] names: the definition
//! in `core/src/physics` with the crowd's force records, keyframe tables and custom force
//! (Baraff 2-42, 2-43).

use glam::{DQuat, DVec3};

use crate::model::body::BodyState;
use crate::model::force::{ForceKind, LawDeclaration};
use crate::model::mass::MassProperties;
use crate::physics::algebra::Vec3;
use crate::physics::custom_force::CustomForce;
use crate::physics::dual::Dual;
use crate::physics::force_law::ExternalLoad;
use crate::physics::force_law::Parameters;
use crate::physics::forces::{Body, add_force, add_scaled};
use crate::physics::motion::{self, Load, MassConstants, State};
use crate::physics::profile::{KeyframeSeeds, record_scale};
use crate::physics::scalar::Scalar;

/// What the forces on one body see besides its state and the time: which body it is, the
/// load set on it from outside, and the crowd's keyframe tables (in the precision `P` the
/// steps run in) and custom force.
#[derive(Clone, Copy, Debug, Default)]
pub struct ForceEnv<'a, P = f64> {
    /// Index of the body in the crowd (passed to a custom force).
    pub body: usize,
    /// The external load held on the body (`Simulation::set_external_loads`).
    pub load: ExternalLoad,
    /// The crowd's keyframe tables, rounded to `P`.
    pub keyframes: &'a [Vec<[P; 2]>],
    /// The crowd's custom force.
    pub custom_force: Option<&'a CustomForce>,
}

/// `dY/dt` for one body: `(v, dq/dt, F, tau)`.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Derivative {
    /// `dx/dt = v`.
    pub velocity: DVec3,
    /// `dq/dt = 1/2 [0, omega] q`.
    pub spin: DQuat,
    /// `dP/dt = F`, the total force.
    pub force: DVec3,
    /// `dL/dt = tau`, the total torque about the centre of mass.
    pub torque: DVec3,
}

/// The auxiliary velocities of a state (Baraff 2-42), for the fault and contact checks.
#[derive(Clone, Copy, Debug)]
pub struct Auxiliaries {
    pub velocity: DVec3,
    pub angular_velocity: DVec3,
}

/// `v` and `omega` of `state` (`physics::motion::auxiliaries`).
pub fn auxiliaries(state: &BodyState, mass: &MassProperties) -> Auxiliaries {
    let aux = motion::auxiliaries(&State::from(state), &MassConstants::from(mass));
    Auxiliaries {
        velocity: aux.velocity.into(),
        angular_velocity: aux.angular_velocity.into(),
    }
}

/// A machine precision the per-body steps run in: f64 (`cpu-ref`) or f32 (the tangents of
/// `cpu`, which must give the bits of its f32 lanes and of the f32 kernel).
pub trait Primal:
    Reference<Primal = Self>
    + Scalar<Bool = bool>
    + PartialOrd
    + Into<f64>
    + Default
    + Send
    + Sync
    + 'static
{
    /// The time of clock step `step` of `dt`, as this precision's backends compute it: a
    /// product in f64; in f32 the step count split in two exact f32 integers
    /// (`physics::clock::step_time`).
    fn step_time(step: u64, dt: f64) -> f64;
}

impl Primal for f64 {
    #[inline(always)]
    fn step_time(step: u64, dt: f64) -> f64 {
        // A product, not a running sum: the clock does not drift over long runs.
        step as f64 * dt
    }
}

impl Primal for f32 {
    #[inline(always)]
    fn step_time(step: u64, dt: f64) -> f64 {
        crate::physics::clock::step_time(step, dt as f32).into()
    }
}

/// The numbers the per-body steps run over: a machine precision ([`Primal`]), or one with
/// tangents ([`Dual`]).
pub trait Reference: Scalar + 'static {
    /// The precision of the values.
    type Primal: Primal;
    /// Whether the number carries tangents.
    const TANGENTS: bool;
    /// The value without its tangents.
    fn primal(self) -> Self::Primal;
    /// `value` moving along the columns `columns` (a bit each) with derivative 1.
    fn seeded(value: Self::Primal, columns: u8) -> Self;
}

macro_rules! machine_reference {
    ($t:ty) => {
        impl Reference for $t {
            type Primal = $t;
            const TANGENTS: bool = false;
            #[inline(always)]
            fn primal(self) -> $t {
                self
            }
            #[inline(always)]
            fn seeded(value: $t, _: u8) -> $t {
                value
            }
        }
    };
}
machine_reference!(f64);
machine_reference!(f32);

impl<P: Primal, const N: usize> Reference for Dual<P, N> {
    type Primal = P;
    const TANGENTS: bool = true;
    #[inline(always)]
    fn primal(self) -> P {
        self.value
    }
    #[inline(always)]
    fn seeded(value: P, columns: u8) -> Self {
        Dual::seeded_along(value, columns)
    }
}

/// `v` as fixed numbers of `R` (constants: no tangent).
pub(crate) fn fixed_vector<R: Reference>(v: DVec3) -> Vec3<R> {
    Vec3::new(R::constant(v.x), R::constant(v.y), R::constant(v.z))
}

/// One force on a body as the derivative reads it: its kind and its numeric parameters in
/// `R` (where tangents are seeded).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ForceTerm<'a, R> {
    pub kind: &'a ForceKind,
    pub parameters: Parameters<R>,
    /// The columns taken along numbers of a keyframed force's table.
    pub keyframe_seeds: KeyframeSeeds,
}

impl<'a, R: Reference> ForceTerm<'a, R> {
    /// `kind` with its parameters as fixed numbers.
    pub(crate) fn of(kind: &'a ForceKind) -> Self {
        let p = kind.parameters();
        Self {
            kind,
            parameters: Parameters {
                vectors: p.vectors.map(fixed_vector),
                scalars: p.scalars.map(R::constant),
            },
            keyframe_seeds: KeyframeSeeds::default(),
        }
    }
}

/// Adds one force source's force and torque at time `t` to `total`.
fn accumulate_force<R: Reference>(
    term: &ForceTerm<R>,
    body: &Body<R>,
    env: &ForceEnv<R::Primal>,
    total: &mut Load<R>,
) {
    let [u, w] = term.parameters.vectors;
    match *term.kind {
        ForceKind::Keyframed { table, .. } => {
            // Time moves along no direction; the table's numbers move where seeded.
            let table = (env.keyframes[table].as_slice(), body.time.primal());
            let fixed = |scale: R::Primal| R::constant(scale.into());
            let seeds = Some(&term.keyframe_seeds);
            add_scaled(
                u,
                w,
                record_scale(table, body.time, seeds, fixed, R::seeded),
                total,
            );
        }
        ForceKind::Custom => add_custom(env, body, total),
        ForceKind::Law { law, .. } => add_law(env, law, body, term.parameters, total),
        _ => add_force(term.kind.force_type(), &term.parameters, body, total),
    }
}

/// The crowd's custom force on `body` added to `total`: its law's, over `R`, or the user's
/// Rust twin's on the values in f64.
fn add_custom<R: Reference>(env: &ForceEnv<R::Primal>, body: &Body<R>, total: &mut Load<R>) {
    let Some(custom) = env.custom_force else {
        return;
    };
    if R::TANGENTS {
        // Only a force law has derivatives: `Simulation::carry_tangents` refuses others.
        let law = custom
            .law_on::<R>()
            .expect("tangents through a custom force that is a ForceLaw");
        let index = R::constant(env.body as f64);
        let load = law(&body.law_input(index, Parameters::zero()));
        total.force = total.force + load.force;
        total.torque = total.torque + load.torque;
    } else {
        // The user's code sees the values in f64.
        let index = R::constant(env.body as f64);
        let input =
            (body.law_input(index, Parameters::zero())).map(|x| -> f64 { x.primal().into() });
        let load = custom.evaluate(&input.for_twin(env.body));
        total.force = total.force + fixed_vector(load.force);
        total.torque = total.torque + fixed_vector(load.torque);
    }
}

/// A force of the law `law` on `body` with the numbers `parameters` added to `total`: that
/// law of the crowd's, over `R` (`Crowd::validate` has checked the crowd runs it).
fn add_law<R: Reference>(
    env: &ForceEnv<R::Primal>,
    law: &LawDeclaration,
    body: &Body<R>,
    parameters: Parameters<R>,
    total: &mut Load<R>,
) {
    let law = (env.custom_force)
        .and_then(|custom| custom.law(custom.law_number(law)?).law_on::<R>())
        .expect("a law's force runs in a crowd that runs its law");
    let load = law(&body.law_input(R::constant(env.body as f64), parameters));
    total.force = total.force + load.force;
    total.torque = total.torque + load.torque;
}

/// The state derivative of `state` under `forces` and the external load at time `t`: the
/// load first, then the forces in order.
pub(crate) fn derivative_of<R: Reference>(
    state: &State<R>,
    mass: &MassConstants<R>,
    forces: &[ForceTerm<R>],
    t: R,
    env: &ForceEnv<R::Primal>,
) -> motion::Derivative<R> {
    let aux = motion::auxiliaries(state, mass);
    let body = Body {
        state,
        mass,
        aux: &aux,
        time: t,
    };
    let mut total = Load {
        force: fixed_vector(env.load.force),
        torque: fixed_vector(env.load.torque),
    };
    for term in forces {
        accumulate_force(term, &body, env, &mut total);
    }
    motion::derivative(state, &aux, total)
}

/// The state derivative `dY/dt` of one body under `forces` and its external load at time `t`.
///
/// `dq/dt` multiplies the state's own `q` (not its normalized copy), so it stays linear in `q`
/// inside the RK4 stages; only `R` uses the normalized quaternion.
#[doc(hidden)]
pub fn derivative<'a>(
    state: &BodyState,
    mass: &MassProperties,
    forces: impl IntoIterator<Item = &'a ForceKind>,
    t: f64,
    env: &ForceEnv,
) -> Derivative {
    let forces: Vec<ForceTerm<f64>> = forces.into_iter().map(ForceTerm::of).collect();
    let k = derivative_of(&state.into(), &mass.into(), &forces, t, env);
    Derivative {
        velocity: k.velocity.into(),
        spin: k.spin.into(),
        force: k.force.into(),
        torque: k.torque.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::body::Body;
    use crate::model::shape::Shape;

    /// Baraff 5-4 and 5-6: equal and opposite forces at opposite corners of the 6 x 1 x 4
    /// block give no net force and the torque (0, 6f, 0). tests/suite/analytic.rs integrates the
    /// swing that follows.
    #[test]
    fn baraff_5_4_opposite_forces_sum_to_torque_0_6f_0() {
        let f = 2.0;
        let size = DVec3::new(6.0, 1.0, 4.0);
        let mass = MassProperties::from_shape(24.0, Shape::Box { size }, "block").unwrap();
        let forces = [
            ForceKind::PointForce {
                force: DVec3::new(0.0, 0.0, f),
                point: DVec3::new(-3.0, 0.0, -2.0),
            },
            ForceKind::PointForce {
                force: DVec3::new(0.0, 0.0, -f),
                point: DVec3::new(3.0, 0.0, 2.0),
            },
        ];
        let at_rest = Body::at_rest(mass).state;
        let env = ForceEnv {
            body: 0,
            load: ExternalLoad::default(),
            keyframes: &[],
            custom_force: None,
        };
        let k = derivative(&at_rest, &mass, &forces, 0.0, &env);
        assert_eq!(k.force, DVec3::ZERO);
        assert_eq!(k.torque, DVec3::new(0.0, 6.0 * f, 0.0));
    }
}
