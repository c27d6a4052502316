//! A user's custom force as the backends hold it: a [`ForceLaw`] with its instances (f64, f32
//! lanes, the WGSL traced from it in either precision), or a WGSL function with its Rust twin.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::model::error::{Error, Result};
use crate::model::force::ForceType;
use crate::model::force_declaration::{LawDeclaration, MAX_CROWD_LAWS};
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
    /// The registered laws the crowd runs besides this one ([`CustomForce::with_law`]), in
    /// the order they were added: with this one, [`CustomForce::laws`].
    more_laws: Vec<CustomForce>,
}

/// A force law traced over duals of a precision and a width, in a pass over duals, for the
/// records of the kinds given, its law kind's function numbered as the crowd's law of that
/// number (`None`: the crowd's one law).
type DualWgsl =
    dyn Fn(&DualTracer, (Precision, usize), &[ForceType], Option<usize>) -> String + Send + Sync;

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
            more_laws: Vec::new(),
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
    /// force. (Of several laws, the first's: [`CustomForce::laws`] lists them all.)
    pub fn law_declaration(&self) -> Option<&'static LawDeclaration> {
        self.declaration
    }

    /// These laws and the registered law `law` (itself possibly several): one custom force
    /// that runs each law's forces with that law. An error (one line) where either is not a
    /// law registered under a name, two laws share a name, or the crowd would run more than
    /// [`MAX_CROWD_LAWS`] laws. A law already among these adds nothing.
    pub fn with_law(mut self, law: CustomForce) -> Result<Self> {
        let origin = law.origin.clone();
        if self.declaration.is_none() || law.declaration.is_none() {
            return Err(Error::invalid(
                origin,
                format!(
                    "a crowd has one custom force or force law, and {} already names another",
                    self.origin
                ),
            ));
        }
        let added: Vec<CustomForce> = law.laws().map(CustomForce::one_law).collect();
        for law in added {
            let declaration = law.declaration.expect("a registered law");
            let named =
                |have: &CustomForce| have.declaration.map(|d| d.name) == Some(declaration.name);
            let same = (self.laws().find(|have| named(have)))
                .map(|have| have.declaration == Some(declaration) && have.same_law(&law));
            match same {
                Some(true) => {}
                Some(false) => {
                    return Err(Error::invalid(
                        origin,
                        format!("another force law is already named {:?}", declaration.name),
                    ));
                }
                None if self.laws().count() == MAX_CROWD_LAWS => {
                    return Err(Error::invalid(
                        origin,
                        format!("a crowd runs at most {MAX_CROWD_LAWS} force laws"),
                    ));
                }
                None => self.more_laws.push(law),
            }
        }
        Ok(self)
    }

    /// Every registered law this custom force runs, in the order the crowd numbers them
    /// (a law force's record holds its law's number): none for a custom force that is no
    /// registered law, one for a registered law, more after [`CustomForce::with_law`].
    pub fn laws(&self) -> impl Iterator<Item = &CustomForce> {
        (self.declaration.is_some().then_some(self).into_iter()).chain(&self.more_laws)
    }

    /// The crowd's number of the registered law `law` ([`CustomForce::laws`]); `None` where
    /// this custom force does not run it.
    pub fn law_number(&self, law: &LawDeclaration) -> Option<usize> {
        // The same registration first: the reference asks per force and stage.
        let same = |have: &CustomForce| {
            have.declaration
                .is_some_and(|d| std::ptr::eq(d, law) || d == law)
        };
        self.laws().position(same)
    }

    /// The crowd's law number `number` ([`CustomForce::laws`]).
    /// (Laws are added to a registered law alone, so it is number 0.)
    pub(crate) fn law(&self, number: usize) -> &CustomForce {
        match number {
            0 => self,
            _ => &self.more_laws[number - 1],
        }
    }

    /// This law alone, without the laws run beside it.
    fn one_law(&self) -> CustomForce {
        Self {
            more_laws: Vec::new(),
            ..self.clone()
        }
    }

    /// Whether `other` is this law alone: the same code, traced and compiled once.
    fn same_law(&self, other: &CustomForce) -> bool {
        match (&self.dual_wgsl, &other.dual_wgsl) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
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
        let dual_wgsl = move |pass: &DualTracer, block, kinds: &[ForceType], number| {
            dual_custom_force_wgsl(&*traced_law, pass, block, kinds, number)
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
            more_laws: Vec::new(),
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
        let trace = self.dual_wgsl.as_ref()?;
        if self.more_laws.is_empty() {
            return Some(trace(pass, block, kinds, None));
        }
        // Several laws: each law's `dual_force_law_<number>`, the first law's
        // `dual_custom_force` where the kinds call it, and `dual_force_law` choosing by the
        // record's law number.
        let mut out = String::new();
        let record_kinds: &[ForceType] = &[ForceType::Law];
        for (number, law) in self.laws().enumerate() {
            let law_trace = law.dual_wgsl.as_ref().expect("a registered law is traced");
            let kinds = if number == 0 { kinds } else { record_kinds };
            out += &law_trace(pass, block, kinds, Some(number));
        }
        if kinds.contains(&ForceType::Law) {
            out += &choose_law_wgsl(self.laws().count());
        }
        Some(out)
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
            more_laws: Vec::new(),
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

/// `dual_force_law` of a crowd of `laws` laws: the record's law, by its number (the record's
/// `keyframe_first` lane, which a law's record does not use for a table).
fn choose_law_wgsl(laws: usize) -> String {
    let cases: String = (0..laws)
        .map(|number| {
            format!(
                "        case {number}u: {{ return dual_force_law_{number}(p, s, c, aux, t, body, total); }}\n"
            )
        })
        .collect();
    format!(
        "/// A law record's load: its law's, chosen by the law's number in the crowd.\n\
         fn dual_force_law(p: DualParameters, law: u32, s: DualMotion, c: DualConstants, \
         aux: DualAuxiliaries, t: DualReal, body: u32, total: DualLoad) -> DualLoad {{\n\
         \x20   switch law {{\n{cases}        default: {{ return total; }}\n    }}\n}}\n"
    )
}

impl fmt::Debug for CustomForce {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CustomForce")
            .field("wgsl", &self.wgsl)
            .field("has_closure", &self.closure.is_some())
            .field("origin", &self.origin)
            .field("declaration", &self.declaration)
            .field("more_laws", &self.more_laws)
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
            && self.more_laws == other.more_laws
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::test_crowds::Tether;

    const NAMES: [&str; MAX_CROWD_LAWS + 1] = [
        "l0", "l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10", "l11", "l12", "l13",
        "l14", "l15", "l16",
    ];

    /// Laws join in order, once each; a name is one law's; a crowd runs at most
    /// `MAX_CROWD_LAWS`; a custom force written in WGSL takes no law beside it.
    #[test]
    fn laws_join_in_order_once_each_up_to_the_most_a_crowd_runs() {
        let law = |name| CustomForce::from_named_law(name, Tether).unwrap();
        let (first, second) = (law("l0"), law("l1"));
        let joined = (first.clone().with_law(second.clone()))
            .and_then(|joined| joined.with_law(second.clone()))
            .and_then(|joined| joined.with_law(first.clone()))
            .unwrap();
        let names: Vec<&str> = (joined.laws())
            .map(|law| law.law_declaration().unwrap().name)
            .collect();
        assert_eq!(names, ["l0", "l1"]);
        let declaration = second.law_declaration().unwrap();
        assert_eq!(joined.law_number(declaration), Some(1));
        assert_eq!(joined.law(1), &second);

        let error = |result: Result<CustomForce>| result.unwrap_err().to_string();
        let another = CustomForce::from_named_law("l1", Tether).unwrap();
        assert_eq!(
            error(joined.with_law(another)),
            "custom_force: another force law is already named \"l1\""
        );
        let mut all = law(NAMES[0]);
        for name in &NAMES[1..MAX_CROWD_LAWS] {
            all = all.with_law(law(name)).unwrap();
        }
        assert_eq!(all.laws().count(), MAX_CROWD_LAWS);
        assert_eq!(
            error(all.with_law(law(NAMES[MAX_CROWD_LAWS]))),
            "custom_force: a crowd runs at most 16 force laws"
        );
        let written = CustomForce::gpu_only("fn custom_force() {}", "forces[0].wgsl_file");
        assert_eq!(written.laws().count(), 0);
        assert_eq!(
            error(written.with_law(first)),
            "custom_force: a crowd has one custom force or force law, and forces[0].wgsl_file \
             already names another"
        );
    }
}
