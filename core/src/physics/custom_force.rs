//! A user's custom force as the backends hold it: a [`ForceLaw`] with its instances (f64, f32
//! lanes, the WGSL traced from it in either precision), or a WGSL function with its Rust twin.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::model::error::{Error, Result};
use crate::model::force::ForceType;
use crate::model::force_declaration::LawDeclaration;
use crate::model::precision::Precision;
use crate::physics::dual::{DUAL_WIDTHS, Dual, LANE_DUAL_WIDTHS};
use crate::physics::dual_wgsl::{DualTracer, dual_custom_force_wgsl};
use crate::physics::force_law::{CustomForceInput, ExternalLoad, ForceInput, ForceLaw};
use crate::physics::lanes::Lanes;
use crate::physics::motion::Load;
use crate::physics::trace::Tracer;
use crate::physics::wgsl::custom_force_wgsl;

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
/// Attach it with [`Crowd::with_custom_force`](crate::assembly::crowd::Crowd::with_custom_force) and apply it
/// with a [`ForceKind::Custom`](crate::model::force::ForceKind::Custom) force.
#[derive(Clone)]
pub struct CustomForce {
    wgsl: String,
    closure: Option<Arc<CustomForceFn>>,
    origin: String,
    /// A [`ForceLaw`]'s WGSL as a custom force written in WGSL takes the values (what a
    /// checkpoint stores; kernels trace the law over duals), traced in f32, in f64, and in
    /// f32 with its divisions and square roots in f64.
    traced: Option<Arc<[String; 3]>>,
    /// A [`ForceLaw`]'s instances on the CPU's number types besides f64: eight f32 lanes
    /// (the `cpu` backend), and for tangents dual numbers (f64 and f32, each width of
    /// [`DUAL_WIDTHS`]; over lanes, each of [`LANE_DUAL_WIDTHS`]): each an `Arc<LawOn<R>>`,
    /// keyed by the type `R`.
    instances: Option<Arc<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>>,
    /// A [`ForceLaw`]'s WGSL over duals, traced on demand in a precision and width.
    dual_wgsl: Option<Arc<DualWgsl>>,
    /// A law registered under a name: its name and declared numbers, which its forces
    /// ([`ForceKind::Law`](crate::model::force::ForceKind::Law)) carry.
    declaration: Option<&'static LawDeclaration>,
}

/// A force law traced over duals of a precision and a width, in a pass over duals, for the
/// records of the kinds given.
type DualWgsl = dyn Fn(&DualTracer, (Precision, usize), &[ForceType]) -> String + Send + Sync;

/// A force law's instance on the number `R`.
pub(crate) type LawOn<R> = dyn Fn(&ForceInput<R>) -> Load<R> + Send + Sync;

/// `law`'s instances on the `cpu` backend's lanes and on the dual numbers tangents run in.
fn instances<L: ForceLaw>(law: &Arc<L>) -> HashMap<TypeId, Arc<dyn Any + Send + Sync>> {
    let mut instances: HashMap<TypeId, Arc<dyn Any + Send + Sync>> = HashMap::new();
    macro_rules! instance {
        ($($r:ty),*) => {$(
            let on = Arc::clone(law);
            let instance: Arc<LawOn<$r>> = Arc::new(move |input: &ForceInput<$r>| on.load(input));
            instances.insert(TypeId::of::<$r>(), Arc::new(instance));
        )*};
    }
    const _: () = assert!(
        DUAL_WIDTHS.len() == 2 && DUAL_WIDTHS[0] == 1 && DUAL_WIDTHS[1] == 4,
        "an instance per width"
    );
    const _: () = assert!(
        LANE_DUAL_WIDTHS[0] == 1 && LANE_DUAL_WIDTHS[1] == 2 && LANE_DUAL_WIDTHS[2] == 4,
        "an instance per width over lanes"
    );
    instance!(f64, f32);
    instance!(Dual<f64, 1>, Dual<f64, 4>);
    instance!(Dual<f32, 1>, Dual<f32, 4>);
    instance!(Lanes, Dual<Lanes, 1>, Dual<Lanes, 2>, Dual<Lanes, 4>);
    instances
}

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
            instances: None,
            dual_wgsl: None,
            declaration: None,
        }
    }

    /// A law registered under `name`: a force kind of its own, whose forces set the numbers
    /// the law declares ([`ForceLaw::parameters`]). An error (one line) where the name or
    /// the declaration cannot be a force kind's.
    pub fn from_named_law(name: &'static str, law: impl ForceLaw) -> Result<Self> {
        let declaration = LawDeclaration::checked(name, law.parameters())
            .map_err(|message| Error::invalid("force law", message))?;
        Ok(Self {
            // One declaration per registration, for the life of the program: forces refer
            // to it.
            declaration: Some(Box::leak(Box::new(declaration))),
            ..Self::from_law(law)
        })
    }

    /// The same force, its origin (what errors name) `origin`.
    pub(crate) fn named_at(&self, origin: impl Into<String>) -> Self {
        Self {
            origin: origin.into(),
            ..self.clone()
        }
    }

    /// The name and numbers of a law registered under a name; `None` for any other custom
    /// force.
    pub fn law_declaration(&self) -> Option<&'static LawDeclaration> {
        self.declaration
    }

    /// A custom force from a law written once: its f64 instance for `cpu-ref`, its instance
    /// on f32 lanes for `cpu`, and its WGSL, traced in each precision, for the GPU.
    pub fn from_law(law: impl ForceLaw) -> Self {
        let law = Arc::new(law);
        let divisions_in_f64 = Tracer {
            f32_divisions_in_f64: true,
        };
        let traced = [
            custom_force_wgsl::<f32, _>(Tracer::NATIVE, &*law),
            custom_force_wgsl::<f64, _>(Tracer::NATIVE, &*law),
            custom_force_wgsl::<f32, _>(divisions_in_f64, &*law),
        ];
        let instances = instances(&law);
        let traced_law = Arc::clone(&law);
        let dual_wgsl = move |pass: &DualTracer, block, kinds: &[ForceType]| {
            dual_custom_force_wgsl(&*traced_law, pass, block, kinds)
        };
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
            instances: Some(Arc::new(instances)),
            dual_wgsl: Some(Arc::new(dual_wgsl)),
            declaration: None,
        }
    }

    /// A [`ForceLaw`]'s instance on `R`: f64, f32, [`Lanes`], or a dual number of a width in
    /// [`DUAL_WIDTHS`] (over lanes, in [`LANE_DUAL_WIDTHS`]); `None` for a WGSL string and
    /// its Rust twin, which the `cpu` backend calls lane by lane and which have no
    /// derivatives.
    pub(crate) fn law_on<R: 'static>(&self) -> Option<&LawOn<R>> {
        let instance = self.instances.as_ref()?.get(&TypeId::of::<R>())?;
        instance.downcast_ref::<Arc<LawOn<R>>>().map(|law| &**law)
    }

    /// A [`ForceLaw`]'s `dual_custom_force`, traced in `pass`, in a precision and a width (one of
    /// [`TRACED_WIDTHS`](crate::physics::dual_wgsl::TRACED_WIDTHS)); `None` for a WGSL
    /// string and its Rust twin.
    pub fn dual_wgsl(
        &self,
        pass: &DualTracer,
        block: (Precision, usize),
        kinds: &[ForceType],
    ) -> Option<String> {
        self.dual_wgsl
            .as_ref()
            .map(|trace| trace(pass, block, kinds))
    }

    /// Whether it is a [`ForceLaw`]: its WGSL is generated, not the user's.
    pub fn is_law(&self) -> bool {
        self.traced.is_some()
    }

    /// The WGSL the kernel of `precision` compiles, its f32 divisions and square roots in f64
    /// if `divisions_in_f64` (a law's; the user's own WGSL is taken as written).
    pub fn wgsl_for(&self, precision: Precision, divisions_in_f64: bool) -> &str {
        match (&self.traced, precision) {
            (Some(traced), Precision::F32) if divisions_in_f64 => &traced[2],
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
            instances: None,
            dual_wgsl: None,
            declaration: None,
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
            .field("declaration", &self.declaration)
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
        self.wgsl == other.wgsl
            && same_closure
            && self.origin == other.origin
            && self.declaration == other.declaration
    }
}
