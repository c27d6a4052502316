//! A force law written once in Rust over the number type, and what it sees of a body: the
//! definition side of a custom force, which every backend instantiates.

use glam::{DQuat, DVec3};

use crate::model::force_declaration::ParameterDeclaration;
use crate::physics::algebra::{Quat, Vec3};
use crate::physics::motion::Load;
use crate::physics::scalar::{Scalar, carried_struct};

/// A world-frame force and the torque about the centre of mass: what
/// `Simulation::set_external_loads` applies to one
/// body, and what a [`CustomForce`](crate::physics::custom_force::CustomForce) returns.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ExternalLoad {
    /// World-frame force through the centre of mass (N).
    pub force: DVec3,
    /// World-frame torque about the centre of mass (N m).
    pub torque: DVec3,
}

/// What a custom force sees of one body at one derivative evaluation (the twin of the WGSL
/// function's parameters, in f64).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CustomForceInput {
    /// Centre-of-mass position `x` (world).
    pub position: DVec3,
    /// Unit quaternion `q` (body to world).
    pub orientation: DQuat,
    /// Linear velocity `v = P / M`.
    pub velocity: DVec3,
    /// Angular velocity `omega` (world).
    pub angular_velocity: DVec3,
    /// Mass `M`.
    pub mass: f64,
    /// Simulated time of this evaluation (an RK4 stage time inside a step).
    pub time: f64,
    /// Index of the body in the crowd.
    pub body: usize,
}

/// What a [`ForceLaw`] sees of one body at one derivative evaluation, in the number type `R`:
/// the fields of [`CustomForceInput`], the body's index as a number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ForceInput<R> {
    /// Centre-of-mass position `x` (world).
    pub position: Vec3<R>,
    /// Unit quaternion `q` (body to world).
    pub orientation: Quat<R>,
    /// Linear velocity `v = P / M`.
    pub velocity: Vec3<R>,
    /// Angular velocity `omega` (world).
    pub angular_velocity: Vec3<R>,
    /// Mass `M`.
    pub mass: R,
    /// Simulated time of this evaluation (an RK4 stage time inside a step).
    pub time: R,
    /// Index of the body in the crowd, as a number.
    pub body: R,
    /// The force's values of the numbers its law declares ([`ForceLaw::parameters`]):
    /// vectors in `parameters.vectors`, numbers in `parameters.scalars`, each in the order
    /// declared, as a built-in kind reads its own; zeros for a law that declares none. Its
    /// derivatives are the directions `--sensitivity forces[i].<name>` takes.
    pub parameters: Parameters<R>,
}

/// A force written once, in Rust, over the number type the physics is written over
/// ([`Real`](crate::physics::scalar::Scalar)): `cpu-ref` runs it in f64, `cpu` on eight f32 lanes, and the GPU
/// kernels run the WGSL traced from it in f32 and f64, so on an adapter with IEEE arithmetic
/// `gpu-f64` gives `cpu-ref`'s bits and `gpu` gives `cpu`'s. Tangents run it over dual
/// numbers, so its derivatives come from the same definition. Write it with the operations of [`Real`](crate::physics::scalar::Scalar) (`+ - * /`, `sqrt`,
/// comparisons and `select`, [`sin_cos`](crate::physics::trig::sin_cos)); parameters are fields of `self`,
/// brought in with [`Real::constant`](crate::physics::scalar::Scalar::constant). Make one with
/// [`CustomForce::from_law`](crate::physics::custom_force::CustomForce::from_law).
pub trait ForceLaw: Send + Sync + 'static {
    /// The world force and the torque about the centre of mass on one body.
    fn load<R: Scalar>(&self, body: &ForceInput<R>) -> Load<R>;

    /// The numbers each force of this law sets, declared as a built-in kind declares its own
    /// (vectors first, at most two, then at most four numbers): a scene names them, they are
    /// checked against their ranges, and `load` reads them in `body.parameters`. Registered
    /// under a name ([`ForceLaws`](crate::assembly::force_laws::ForceLaws)), the law is a
    /// force kind of its own. None by default: the law's numbers are its own fields.
    fn parameters(&self) -> &'static [ParameterDeclaration] {
        &[]
    }
}

impl<R: Copy> ForceInput<R> {
    /// Every number as `f` makes it.
    #[inline(always)]
    pub fn map<S>(&self, f: impl Fn(R) -> S) -> ForceInput<S> {
        ForceInput {
            position: self.position.map(&f),
            orientation: self.orientation.map(&f),
            velocity: self.velocity.map(&f),
            angular_velocity: self.angular_velocity.map(&f),
            mass: f(self.mass),
            time: f(self.time),
            body: f(self.body),
            parameters: Parameters {
                vectors: self.parameters.vectors.map(|v| v.map(&f)),
                scalars: self.parameters.scalars.map(&f),
            },
        }
    }
}

impl ForceInput<f64> {
    /// What a custom force's Rust twin sees: these numbers, of body `body` of the crowd.
    pub fn for_twin(&self, body: usize) -> CustomForceInput {
        CustomForceInput {
            position: self.position.into(),
            orientation: self.orientation.into(),
            velocity: self.velocity.into(),
            angular_velocity: self.angular_velocity.into(),
            mass: self.mass,
            time: self.time,
            body,
        }
    }
}

impl From<&CustomForceInput> for ForceInput<f64> {
    fn from(input: &CustomForceInput) -> Self {
        Self {
            position: input.position.into(),
            orientation: input.orientation.into(),
            velocity: input.velocity.into(),
            angular_velocity: input.angular_velocity.into(),
            mass: input.mass,
            time: input.time,
            body: input.body as f64,
            parameters: Parameters::zero(),
        }
    }
}

/// A force's parameters: `vectors` then `scalars`, as `ForceParameters` orders them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Parameters<R> {
    pub vectors: [Vec3<R>; 2],
    pub scalars: [R; 4],
}

carried_struct!(Parameters { vectors, scalars });

impl<R: Scalar> Parameters<R> {
    /// Every number zero: what a law that declares none sees.
    pub fn zero() -> Self {
        let zero = Vec3::new(R::constant(0.0), R::constant(0.0), R::constant(0.0));
        Self {
            vectors: [zero; 2],
            scalars: [R::constant(0.0); 4],
        }
    }
}
