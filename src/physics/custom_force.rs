//! User-written forces: a force law written once in Rust over the number type, which every
//! backend runs (the GPU kernels the WGSL traced from it); a WGSL function with its Rust twin;
//! and the per-body loads a library user sets between steps.

use std::fmt;
use std::sync::Arc;

use glam::{DQuat, DVec3};

use crate::backends::gpu::Precision;
use crate::model::error::{Error, Result};
use crate::physics::algebra::{Quat, Vec3};
use crate::physics::lanes::Lanes;
use crate::physics::motion::Load;
use crate::physics::scalar::Scalar;
use crate::physics::wgsl::custom_force_wgsl;

/// A world-frame force and the torque about the centre of mass: what
/// [`Simulation::set_external_loads`](crate::Simulation::set_external_loads) applies to one
/// body, and what a [`CustomForce`] returns.
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
}

/// A force written once, in Rust, over the number type the physics is written over
/// ([`Real`](crate::Real)): `cpu-ref` runs it in f64, `cpu` on eight f32 lanes, and the GPU
/// kernels run the WGSL traced from it in f32 and f64, so on an adapter with IEEE arithmetic
/// `gpu-f64` gives `cpu-ref`'s bits and `gpu` gives `cpu`'s. Write it with the operations of [`Real`](crate::Real) (`+ - * /`, `sqrt`,
/// comparisons and `select`, [`sin_cos`](crate::sin_cos)); parameters are fields of `self`,
/// brought in with [`Real::constant`](crate::Real::constant). Make one with
/// [`CustomForce::from_law`].
pub trait ForceLaw: Send + Sync + 'static {
    /// The world force and the torque about the centre of mass on one body.
    fn load<R: Scalar>(&self, body: &ForceInput<R>) -> Load<R>;
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
        }
    }
}

/// The Rust twin of a custom force.
pub type CustomForceFn = dyn Fn(&CustomForceInput) -> ExternalLoad + Send + Sync;

/// A force written once in WGSL for the GPU and once in Rust for the CPU backends.
///
/// The WGSL source must define
///
/// ```text
/// fn custom_force(position: vec3<real>, orientation: vec4<real>, velocity: vec3<real>,
///                 angular_velocity: vec3<real>, mass: real, time: real, body: u32) -> Load
/// ```
///
/// where `real` is the kernel's scalar (`f32` on `gpu`, `f64` on `gpu-f64`), `orientation` is
/// stored `(x, y, z, w)` (scalar last), `body` is the body's index in the crowd, and `Load` is
/// the kernel's `struct Load { force: vec3<real>, torque: vec3<real> }` (world force, torque
/// about the centre of mass). Written against `real`, with typed literals (`real(0.5)`) and
/// the kernel's `sin_real` and `cos_real` in place of `sin` and `cos`, it runs in both
/// precisions; one written with `f32` runs on `gpu` only, and `gpu-f64` refuses it with a
/// clear error, as it refuses one that calls a built-in defined only for 32-bit floats
/// (`sin`, `exp`, `pow`, ...). Helpers it defines should start with `custom_` so they cannot
/// clash with the kernel's own names. The closure takes the same
/// inputs in f64 ([`CustomForceInput`]) and must compute the same thing: the fast CPU path
/// calls it per body, the reference in f64, and the cross-checks compare them with the GPU.
///
/// Attach it with [`Crowd::with_custom_force`](crate::Crowd::with_custom_force) and apply it
/// with a [`ForceKind::Custom`](crate::ForceKind::Custom) force.
#[derive(Clone)]
pub struct CustomForce {
    wgsl: String,
    closure: Option<Arc<CustomForceFn>>,
    origin: String,
    /// A [`ForceLaw`]'s WGSL, traced in f32 and in f64.
    traced: Option<Arc<[String; 2]>>,
    /// A [`ForceLaw`] on eight f32 lanes, for the `cpu` backend.
    lanes: Option<Arc<LanesLaw>>,
}

/// A force law's instance on the `cpu` backend's lanes.
pub(crate) type LanesLaw = dyn Fn(&ForceInput<Lanes>) -> Load<Lanes> + Send + Sync;

impl CustomForce {
    /// A custom force from its WGSL source and its Rust twin.
    pub fn new(
        wgsl: impl Into<String>,
        closure: impl Fn(&CustomForceInput) -> ExternalLoad + Send + Sync + 'static,
    ) -> Self {
        Self {
            wgsl: wgsl.into(),
            closure: Some(Arc::new(closure)),
            origin: "custom_force".to_string(),
            traced: None,
            lanes: None,
        }
    }

    /// A custom force from a law written once: its f64 instance for `cpu-ref`, its instance
    /// on f32 lanes for `cpu`, and its WGSL, traced in each precision, for the GPU.
    pub fn from_law(law: impl ForceLaw) -> Self {
        let law = Arc::new(law);
        let traced = [
            custom_force_wgsl::<f32, _>(&*law),
            custom_force_wgsl::<f64, _>(&*law),
        ];
        let on_lanes = Arc::clone(&law);
        let lanes = move |input: &ForceInput<Lanes>| on_lanes.load(input);
        let closure = move |input: &CustomForceInput| {
            let load = law.load(&ForceInput::from(input));
            ExternalLoad {
                force: load.force.into(),
                torque: load.torque.into(),
            }
        };
        Self {
            wgsl: traced[1].clone(),
            closure: Some(Arc::new(closure)),
            origin: "custom_force".to_string(),
            traced: Some(Arc::new(traced)),
            lanes: Some(Arc::new(lanes)),
        }
    }

    /// A [`ForceLaw`]'s instance on lanes; `None` for a WGSL string and its Rust twin.
    pub(crate) fn lanes_law(&self) -> Option<&LanesLaw> {
        self.lanes.as_deref()
    }

    /// Whether it is a [`ForceLaw`]: its WGSL is generated, not the user's.
    pub(crate) fn is_law(&self) -> bool {
        self.traced.is_some()
    }

    /// The WGSL the kernel of `precision` compiles.
    pub(crate) fn wgsl_in(&self, precision: Precision) -> &str {
        match (&self.traced, precision) {
            (Some(traced), Precision::F32) => &traced[0],
            (Some(traced), Precision::F64) => &traced[1],
            (None, _) => &self.wgsl,
        }
    }

    /// A custom force with no Rust twin (read from a scene file): it runs on the GPU only;
    /// the CPU backends refuse it with an error naming `origin` (a field path).
    pub fn gpu_only(wgsl: impl Into<String>, origin: impl Into<String>) -> Self {
        Self {
            wgsl: wgsl.into(),
            closure: None,
            origin: origin.into(),
            traced: None,
            lanes: None,
        }
    }

    /// The WGSL source (a [`ForceLaw`]'s, traced in f64).
    pub fn wgsl(&self) -> &str {
        &self.wgsl
    }

    /// Where the force came from, as errors name it (`custom_force` or a scene field path).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The force and torque on one body, from the Rust twin; an error naming the origin where
    /// there is none.
    pub(crate) fn closure(&self) -> Result<&Arc<CustomForceFn>> {
        self.closure.as_ref().ok_or_else(|| {
            Error::invalid(
                self.origin.clone(),
                "a custom force from a scene file has only its WGSL, so it runs on the gpu backend only",
            )
        })
    }

    /// Calls the Rust twin (which [`CustomForce::closure`] has checked is there).
    pub(crate) fn evaluate(&self, input: &CustomForceInput) -> ExternalLoad {
        match &self.closure {
            Some(f) => f(input),
            None => ExternalLoad::default(),
        }
    }
}

impl fmt::Debug for CustomForce {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CustomForce")
            .field("wgsl", &self.wgsl)
            .field("has_closure", &self.closure.is_some())
            .field("origin", &self.origin)
            .finish()
    }
}

impl PartialEq for CustomForce {
    /// The same source and the same closure object.
    fn eq(&self, other: &Self) -> bool {
        let same_closure = match (&self.closure, &other.closure) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        self.wgsl == other.wgsl && same_closure && self.origin == other.origin
    }
}
