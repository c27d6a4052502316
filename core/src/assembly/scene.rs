//! The scene file (JSON, version 1): parsing and validation with field-path errors.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use glam::{DMat3, DQuat, DVec3};
use serde::Deserialize;

use crate::assembly::crowd::Crowd;
use crate::assembly::force_laws::ForceLaws;
use crate::assembly::generate::CrowdSpec;
use crate::model::body::Body;
use crate::model::codes::Coded;
use crate::model::collisions::Collisions;
use crate::model::error::{Error, Result};
use crate::model::fault_rules::{Envelope, FaultRules, OnFault};
use crate::model::force::{Force, ForceKind, ForceParameters, ForceType, ParameterShape};
use crate::model::integrator::Integrator;
use crate::model::mass::{MassProperties, mass_from_density};
use crate::model::mesh::{MeshIntegrals, TriangleMesh};
use crate::model::plane::Plane;
use crate::model::shape::Shape;
use crate::model::validate::check_vector;
use crate::physics::custom_force::CustomForce;

/// The scene format version this crate reads and writes.
pub const SCENE_VERSION: u32 = 1;

/// A crowd plus how long to run it, as read from a scene file.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    /// Bodies, forces, integrator and time step.
    pub crowd: Crowd,
    /// Number of steps to run.
    pub steps: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SceneFile {
    #[serde(default)]
    version: Option<u32>,
    dt: f64,
    steps: u64,
    #[serde(default)]
    integrator: Option<String>,
    /// Each read by [`parse_force`], which names the field inside a force that is wrong.
    #[serde(default)]
    forces: Vec<serde_json::Value>,
    #[serde(default)]
    bodies: Vec<BodySpec>,
    #[serde(default)]
    crowd: Option<CrowdSpec>,
    #[serde(default)]
    planes: Vec<PlaneSpec>,
    #[serde(default)]
    collisions: Option<CollisionsSpec>,
    #[serde(default)]
    start_step: u64,
    #[serde(default)]
    fault_rules: Option<FaultRulesSpec>,
}

/// `"fault_rules": {"on_fault": "freeze", "max_speed": 50}`: every key optional.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultRulesSpec {
    #[serde(default)]
    on_fault: Option<String>,
    #[serde(default)]
    max_speed: Option<f64>,
    #[serde(default)]
    max_angular_speed: Option<f64>,
    #[serde(default)]
    max_distance: Option<f64>,
}

impl FaultRulesSpec {
    /// The rules (checked with the crowd's other settings).
    fn to_rules(&self) -> Result<FaultRules> {
        let on_fault = match &self.on_fault {
            Some(name) => OnFault::parse(name, "fault_rules.on_fault")?,
            None => OnFault::default(),
        };
        Ok(FaultRules {
            on_fault,
            envelope: Envelope {
                max_speed: self.max_speed,
                max_angular_speed: self.max_angular_speed,
                max_distance: self.max_distance,
            },
        })
    }
}

/// `"collisions": {"restitution": 0.3, "friction": 0.5}`: every body collides with every
/// other; both keys optional (0 each).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CollisionsSpec {
    #[serde(default)]
    restitution: f64,
    #[serde(default)]
    friction: f64,
}

/// A static plane: the surface through `point` with outward `normal`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlaneSpec {
    #[serde(default)]
    point: [f64; 3],
    normal: [f64; 3],
    #[serde(default)]
    restitution: f64,
    #[serde(default)]
    friction: f64,
}

impl PlaneSpec {
    /// The plane; `field` names it (`planes[1]`). The point and normal are checked here, as
    /// written: the plane keeps only the normalized normal and its offset `normal . point`.
    fn to_plane(&self, field: &str) -> Result<Plane> {
        check_vector(&format!("{field}.point"), self.point)?;
        check_vector(&format!("{field}.normal"), self.normal)?;
        let plane = Plane::through(
            DVec3::from(self.point),
            DVec3::from(self.normal),
            self.restitution,
            self.friction,
        );
        if plane.offset.abs() > crate::model::validate::MAX_MAGNITUDE {
            return Err(Error::invalid(
                format!("{field}.point"),
                format!(
                    "lies too far from the origin: its distance along the normal, {}, exceeds {:e}",
                    plane.offset,
                    crate::model::validate::MAX_MAGNITUDE
                ),
            ));
        }
        Ok(plane)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BodySpec {
    #[serde(default)]
    mass: Option<f64>,
    #[serde(default)]
    density: Option<f64>,
    #[serde(default)]
    inertia: Option<serde_json::Value>,
    #[serde(default)]
    shape: Option<ShapeSpec>,
    #[serde(default)]
    position: Option<[f64; 3]>,
    #[serde(default)]
    orientation: Option<[f64; 4]>,
    #[serde(default)]
    velocity: Option<[f64; 3]>,
    #[serde(default)]
    angular_velocity: Option<[f64; 3]>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum ShapeSpec {
    /// Full edge lengths.
    Box([f64; 3]),
    /// Radius.
    Sphere(f64),
    /// Axis along body z.
    Cylinder { radius: f64, height: f64 },
    /// Straight length along body z between two hemispherical caps.
    Capsule { radius: f64, length: f64 },
    /// Semi-axes.
    Ellipsoid([f64; 3]),
    /// OBJ file relative to the scene file's directory: `"file.obj"` or
    /// `{"file": "file.obj", "scale": s}`.
    Mesh(serde_json::Value),
}

impl Scene {
    /// Parses and validates a scene from JSON text; mesh files and a custom force's
    /// `wgsl_file` are looked up relative to the current directory (see [`Scene::from_json_in`]).
    pub fn from_json(text: &str) -> Result<Self> {
        Self::from_json_in(text, Path::new(""))
    }

    /// Parses and validates a scene from JSON text whose relative file paths (meshes, custom
    /// WGSL) are relative to `base_dir` (the scene file's directory, for [`Scene::load`]).
    pub fn from_json_in(text: &str, base_dir: &Path) -> Result<Self> {
        Self::parse(text, base_dir, Vec::new(), &ForceLaws::new())
    }

    /// Parses and validates a scene whose forces may name the laws `laws` registers, each
    /// read, checked and differentiated as a built-in kind is; relative file paths are
    /// relative to `base_dir`. A crowd runs up to 16 force laws, or one custom force.
    pub fn from_json_with_laws(text: &str, base_dir: &Path, laws: &ForceLaws) -> Result<Self> {
        Self::parse(text, base_dir, Vec::new(), laws)
    }

    /// Reads a scene file as [`Scene::load`] does, its forces possibly naming the laws
    /// `laws` registers ([`Scene::from_json_with_laws`]).
    pub fn load_with_laws(path: impl AsRef<Path>, laws: &ForceLaws) -> Result<Self> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Self::from_json_with_laws(&text, path.parent().unwrap_or(Path::new("")), laws)
    }

    /// A scene of `bodies` (built from arrays, say) whose settings come from JSON text in the
    /// scene format: `dt`, `steps`, the integrator, forces, planes, `start_step`, and any
    /// further `bodies` or `crowd`, which come after the given ones (a force's `body` index
    /// counts the given bodies first). Relative file paths are relative to the current
    /// directory.
    pub fn from_json_with_bodies(text: &str, bodies: Vec<Body>) -> Result<Self> {
        Self::parse(text, Path::new(""), bodies, &ForceLaws::new())
    }

    /// Reads a scene file as [`Scene::load_with_laws`] does, but leaves a `crowd` recipe
    /// unexpanded: the scene holds the bodies listed in the file, and the recipe's bodies
    /// (checked, to be generated by whoever builds the simulation) follow them.
    pub fn load_with_recipe(path: &Path, laws: &ForceLaws) -> Result<(Self, Option<CrowdSpec>)> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let file = Self::parse_file(&text)?;
        let recipe = file.crowd.clone();
        let base_dir = path.parent().unwrap_or(Path::new(""));
        let scene = file.into_scene((base_dir, laws), Vec::new(), false)?;
        Ok((scene, recipe))
    }

    fn parse(text: &str, base_dir: &Path, given: Vec<Body>, laws: &ForceLaws) -> Result<Self> {
        Self::parse_file(text)?.into_scene((base_dir, laws), given, true)
    }

    fn parse_file(text: &str) -> Result<SceneFile> {
        let mut de = serde_json::Deserializer::from_str(text);
        let file: SceneFile = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = field_path(String::new(), e.path().iter());
            let field = if path.is_empty() {
                "scene".to_string()
            } else {
                path
            };
            Error::invalid(field, e.into_inner().to_string())
        })?;
        de.end()
            .map_err(|e| Error::invalid("scene", e.to_string()))?;
        Ok(file)
    }

    /// Reads, parses and validates a scene file; the files it names (meshes, custom WGSL) are
    /// relative to its directory.
    pub fn load(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Self::from_json_in(&text, path.parent().unwrap_or(Path::new("")))
    }
}

impl SceneFile {
    /// The scene, after `bodies`, with the recipe's bodies generated if `expand` (else the
    /// recipe is only checked, and the crowd checked as if its bodies followed).
    fn into_scene(
        self,
        (base_dir, laws): (&Path, &ForceLaws),
        mut bodies: Vec<Body>,
        expand: bool,
    ) -> Result<Scene> {
        if let Some(version) = self.version {
            if version != SCENE_VERSION {
                return Err(Error::invalid(
                    "version",
                    format!(
                        "unsupported scene version {version} (this build reads version {SCENE_VERSION})"
                    ),
                ));
            }
        }
        let integrator = match &self.integrator {
            None => Integrator::default(),
            Some(name) => name
                .parse()
                .map_err(|m: String| Error::invalid("integrator", m))?,
        };
        // Bodies that share a mesh file read and integrate it once.
        let mut meshes = MeshCache {
            base_dir,
            loaded: HashMap::new(),
        };
        for (i, spec) in self.bodies.iter().enumerate() {
            bodies.push(spec.to_body(&format!("bodies[{i}]"), &mut meshes)?);
        }
        let mut recipe_count = 0;
        if let Some(spec) = &self.crowd {
            spec.validate("crowd")?;
            if expand {
                bodies.extend(spec.generate()?);
            } else {
                recipe_count = spec.count;
            }
        }
        let mut crowd = Crowd::new(bodies, self.dt).with_integrator(integrator);
        crowd.start_step = self.start_step;
        if let Some(rules) = &self.fault_rules {
            crowd.fault_rules = rules.to_rules()?;
        }
        crowd.planes = self
            .planes
            .iter()
            .enumerate()
            .map(|(i, spec)| spec.to_plane(&format!("planes[{i}]")))
            .collect::<Result<_>>()?;
        crowd.collisions =
            (self.collisions.as_ref()).map(|spec| Collisions::new(spec.restitution, spec.friction));
        for (i, entry) in self.forces.into_iter().enumerate() {
            let field = format!("forces[{i}]");
            let force =
                parse_force(entry, &field, laws)?.into_force(&mut crowd, &field, base_dir)?;
            crowd.forces.push(force);
        }
        crowd.validate_settings(crowd.bodies.len() + recipe_count)?;
        crowd.validate_bodies(0, &crowd.bodies)?;
        Ok(Scene {
            crowd,
            steps: self.steps,
        })
    }
}

impl ForceEntry {
    /// The force, its keyframes and custom force added to `crowd`; `field` is its path.
    fn into_force(self, crowd: &mut Crowd, field: &str, base: &Path) -> Result<Force> {
        let mut parameters = self.parameters;
        if let Some(keyframes) = self.keyframes {
            // Checked here, so the error names the scene's field and not the table.
            crate::assembly::crowd::validate_keyframes(&keyframes, &format!("{field}.keyframes"))?;
            parameters.table = Some(crowd.add_keyframes(keyframes));
        }
        if let Some(wgsl_file) = self.wgsl_file {
            let field = format!("{field}.wgsl_file");
            let path = base.join(wgsl_file);
            let wgsl = crate::model::input_file::read_regular_file(&path).map_err(|e| {
                Error::invalid(&field, format!("cannot read {}: {e}", path.display()))
            })?;
            match &crowd.custom_force {
                Some(custom) if custom.wgsl() != wgsl => {
                    return Err(Error::invalid(
                        field,
                        format!(
                            "a crowd has one custom force, and {} already names another WGSL file",
                            custom.origin()
                        ),
                    ));
                }
                Some(_) => {}
                None => crowd.custom_force = Some(CustomForce::gpu_only(wgsl, field)),
            }
        }
        let kind = match self.law {
            None => ForceKind::from_parameters(self.kind, &parameters),
            Some(law) => {
                let declaration = law.law_declaration().expect("a registered law");
                let law = law.named_at(format!("{field}.type"));
                crowd.custom_force = Some(match crowd.custom_force.take() {
                    Some(custom) => custom.with_law(law)?,
                    None => law,
                });
                ForceKind::Law {
                    law: declaration,
                    vectors: parameters.vectors,
                    scalars: parameters.scalars,
                }
            }
        };
        Ok(Force {
            kind,
            body: self.body,
        })
    }
}

impl BodySpec {
    fn to_body(&self, field: &str, meshes: &mut MeshCache) -> Result<Body> {
        let amount = match (self.mass, self.density) {
            (Some(_), Some(_)) => {
                return Err(Error::invalid(
                    field,
                    "give either `mass` or `density`, not both",
                ));
            }
            (None, None) => return Err(Error::invalid(field, "needs `mass` or `density`")),
            (Some(mass), None) => Amount::Mass(mass),
            (None, Some(density)) => Amount::Density(density),
        };
        let mass = match (&self.inertia, &self.shape) {
            (Some(_), Some(_)) => {
                return Err(Error::invalid(
                    field,
                    "give either `inertia` or `shape`, not both",
                ));
            }
            (None, None) => return Err(Error::invalid(field, "needs `inertia` or `shape`")),
            (Some(inertia), None) => {
                let Amount::Mass(mass) = amount else {
                    return Err(Error::invalid(
                        format!("{field}.density"),
                        "needs a `shape` to give a volume; with `inertia` give `mass`",
                    ));
                };
                MassProperties::new(
                    mass,
                    parse_inertia(inertia, &format!("{field}.inertia"))?,
                    field,
                )?
            }
            (None, Some(ShapeSpec::Mesh(spec))) => {
                let mesh_field = format!("{field}.shape.mesh");
                let (path, scale) = parse_mesh(spec, &mesh_field)?;
                let integrals = meshes.integrals(&path, scale, &mesh_field)?;
                let mass = match amount {
                    Amount::Mass(mass) => mass,
                    Amount::Density(density) => {
                        mass_from_density(density, integrals.volume, field)?
                    }
                };
                MassProperties::from_mesh_integrals(mass, &integrals, field)?
            }
            (None, Some(shape)) => {
                let shape = match *shape {
                    ShapeSpec::Box(size) => Shape::Box {
                        size: DVec3::from(size),
                    },
                    ShapeSpec::Sphere(radius) => Shape::Sphere { radius },
                    ShapeSpec::Cylinder { radius, height } => Shape::Cylinder { radius, height },
                    ShapeSpec::Capsule { radius, length } => Shape::Capsule { radius, length },
                    ShapeSpec::Ellipsoid(semi_axes) => Shape::Ellipsoid {
                        semi_axes: DVec3::from(semi_axes),
                    },
                    ShapeSpec::Mesh(_) => unreachable!("meshes are handled above"),
                };
                match amount {
                    Amount::Mass(mass) => MassProperties::from_shape(mass, shape, field)?,
                    Amount::Density(density) => {
                        MassProperties::from_shape_density(density, shape, field)?
                    }
                }
            }
        };
        let vector = |name: &str, value: Option<[f64; 3]>| -> Result<DVec3> {
            let value = value.unwrap_or_default();
            check_vector(&format!("{field}.{name}"), value)?;
            Ok(DVec3::from(value))
        };
        let position = vector("position", self.position)?;
        let velocity = vector("velocity", self.velocity)?;
        let angular_velocity = vector("angular_velocity", self.angular_velocity)?;
        let [w, x, y, z] = self.orientation.unwrap_or([1.0, 0.0, 0.0, 0.0]);
        let orientation_field = format!("{field}.orientation");
        check_vector(&orientation_field, [w, x, y, z])?;
        let orientation = DQuat::from_xyzw(x, y, z, w);
        if orientation.length() < 1e-12 {
            return Err(Error::invalid(
                orientation_field,
                "must not be zero-length ([w, x, y, z])",
            ));
        }
        // Position and orientation place the model frame (a mesh as written in its file);
        // the velocity is the centre of mass's.
        let body =
            Body::from_model_kinematics(mass, position, orientation, velocity, angular_velocity);
        // The state holds M v and I omega, which can leave the f32 range when v and omega
        // are in it: name what the scene wrote.
        let state = body.state;
        for (name, value, what) in [
            ("position", state.position, "centre of mass at"),
            ("velocity", state.linear_momentum, "linear momentum M v of"),
            (
                "angular_velocity",
                state.angular_momentum,
                "angular momentum I omega of",
            ),
        ] {
            if check_vector("", value.to_array()).is_err() {
                return Err(Error::invalid(
                    format!("{field}.{name}"),
                    format!(
                        "gives a {what} ({:e}, {:e}, {:e}), out of range (magnitude at most {:e})",
                        value.x,
                        value.y,
                        value.z,
                        crate::model::validate::MAX_MAGNITUDE
                    ),
                ));
            }
        }
        Ok(body)
    }
}

/// How a body's mass is given.
enum Amount {
    Mass(f64),
    Density(f64),
}

/// Mesh files of one scene, each read and integrated once.
struct MeshCache<'a> {
    base_dir: &'a Path,
    /// Keyed by path and the bits of the scale.
    loaded: HashMap<(PathBuf, u64), MeshIntegrals>,
}

impl MeshCache<'_> {
    fn integrals(&mut self, path: &Path, scale: f64, field: &str) -> Result<MeshIntegrals> {
        let key = (self.base_dir.join(path), scale.to_bits());
        if let Some(integrals) = self.loaded.get(&key) {
            return Ok(*integrals);
        }
        let integrals = TriangleMesh::load_obj(&key.0, field)?
            .scaled(scale)
            .integrals(field)?;
        self.loaded.insert(key, integrals);
        Ok(integrals)
    }
}

/// A force entry as read: its kind, its body, its numbers in the lanes of
/// [`ForceParameters`], and what the keyframed and custom kinds read besides.
struct ForceEntry {
    kind: ForceType,
    body: Option<usize>,
    parameters: ForceParameters,
    keyframes: Option<Vec<[f64; 2]>>,
    wgsl_file: Option<PathBuf>,
    /// The registered law a law's force names.
    law: Option<CustomForce>,
}

/// The field a force entry of `kind` reads besides `body` and its numbers: the keyframed
/// kind's `keyframes` (its table), the custom kind's `wgsl_file`. Each is required.
fn further_field(kind: ForceType) -> Option<&'static str> {
    match kind {
        ForceType::Keyframed => Some("keyframes"),
        ForceType::Custom => Some("wgsl_file"),
        _ => None,
    }
}

/// The fields of a force entry of `kind`, in the order it declares them: `body`, its numbers
/// ([`ForceType::declared_parameters`]), then its [`further_field`].
fn entry_fields(kind: ForceType) -> &'static [&'static str] {
    static FIELDS: LazyLock<Vec<Vec<&'static str>>> = LazyLock::new(|| {
        (ForceType::ALL.iter())
            .map(|&kind| {
                let numbers = kind.declared_parameters().iter().map(|p| p.name);
                let further = further_field(kind);
                std::iter::once("body")
                    .chain(numbers)
                    .chain(further)
                    .collect()
            })
            .collect()
    });
    &FIELDS[(kind.code() - ForceType::FIRST_CODE) as usize]
}

/// One entry of `forces`, `{"type": KIND, ...fields}`; `field` is its path (`forces[2]`). The
/// kind's declaration says which fields it has and which it needs; each field's value is read
/// with serde, so its errors name the field inside the entry (`forces[2].stiffness`). The
/// messages are serde's own, as a derived reader of the same fields gives them: an unknown
/// kind or field lists the known ones, a missing field is reported after the others are read.
/// A kind `laws` registers is read by its law's declaration, as a built-in kind by its own.
fn parse_force(entry: serde_json::Value, field: &str, laws: &ForceLaws) -> Result<ForceEntry> {
    use serde::de::Error as _;
    let serde_json::Value::Object(mut fields) = entry else {
        return Err(Error::invalid(
            field,
            r#"expected a force object {"type": "gravity", ...}"#,
        ));
    };
    let name = match fields.remove("type") {
        Some(serde_json::Value::String(name)) => name,
        Some(_) => {
            return Err(Error::invalid(
                format!("{field}.type"),
                "must be a string naming the kind of force, e.g. \"gravity\"",
            ));
        }
        None => {
            return Err(Error::invalid(
                format!("{field}.type"),
                "missing: name the kind of force, e.g. \"gravity\"",
            ));
        }
    };
    let built_in = ForceType::LISTED.iter().find(|kind| kind.name() == name);
    let (kind, law) = match (built_in, laws.entry(&name)) {
        (Some(&kind), _) => (kind, None),
        (None, Some(law)) => (ForceType::Law, Some(law)),
        (None, None) => {
            let message = serde_json::Error::unknown_variant(&name, laws.names());
            return Err(Error::invalid(format!("{field}.type"), message.to_string()));
        }
    };
    let (names, declared) = match law {
        None => (entry_fields(kind), kind.declared_parameters()),
        Some((law, fields)) => (fields, law.law_declaration().expect("a law").parameters),
    };
    let mut entry = ForceEntry {
        kind,
        body: None,
        parameters: ForceParameters::default(),
        keyframes: None,
        wgsl_file: None,
        law: law.map(|(law, _)| law.clone()),
    };
    let mut given = vec![false; names.len()];
    for (key, value) in fields {
        let path = format!("{field}.{}", key_in_path(&key));
        let Some(at) = names.iter().position(|name| *name == key) else {
            let message = serde_json::Error::unknown_field(&key, names);
            return Err(Error::invalid(path, message.to_string()));
        };
        given[at] = true;
        match at
            .checked_sub(1)
            .and_then(|number| declared.get(number).map(|d| (number, d)))
        {
            None if at == 0 => entry.body = read_field(value, path)?,
            None if kind == ForceType::Keyframed => {
                entry.keyframes = Some(read_field(value, path)?)
            }
            None => entry.wgsl_file = Some(read_field(value, path)?),
            Some((number, declared_here)) => {
                let lane = (declared[..number].iter())
                    .filter(|d| d.shape == declared_here.shape)
                    .count();
                match declared_here.shape {
                    ParameterShape::Vector => {
                        let vector: [f64; 3] = read_field(value, path)?;
                        entry.parameters.vectors[lane] = DVec3::from(vector);
                    }
                    ParameterShape::Number => {
                        entry.parameters.scalars[lane] = read_field(value, path)?
                    }
                }
            }
        }
    }
    let required = |at: usize| match at.checked_sub(1) {
        None => false,
        Some(number) => declared.get(number).is_none_or(|d| d.required),
    };
    match (0..names.len()).find(|&at| !given[at] && required(at)) {
        Some(at) => {
            let message = serde_json::Error::missing_field(names[at]);
            Err(Error::invalid(field, message.to_string()))
        }
        None => Ok(entry),
    }
}

/// The value of the field at `path`, read as a `T` with serde; an error names the field and
/// where inside it the value is wrong.
fn read_field<T: serde::de::DeserializeOwned>(value: serde_json::Value, path: String) -> Result<T> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = field_path(path, e.path().iter());
        Error::invalid(path, e.into_inner().to_string())
    })
}

/// `base` followed by a serde path: `.key` and `[index]` (see [`key_in_path`]); the unknown
/// segment recorded for a key that could not be read at all is left out.
fn field_path<'a>(
    mut path: String,
    segments: impl Iterator<Item = &'a serde_path_to_error::Segment>,
) -> String {
    use serde_path_to_error::Segment;
    for segment in segments {
        match segment {
            Segment::Seq { index } => path.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&key_in_path(key));
            }
            Segment::Unknown => {}
        }
    }
    path
}

/// A key as a path segment: as written when it is a plain word (`mass`), else quoted as a
/// JSON string (`""`, `" "`, `"a.b"`), so that every path is readable and unambiguous.
fn key_in_path(key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_alphanumeric() || c == '_') {
        key.to_string()
    } else {
        serde_json::Value::from(key).to_string()
    }
}

/// `"file.obj"` or `{"file": "file.obj", "scale": s}`: the path and the scale (default 1).
fn parse_mesh(value: &serde_json::Value, field: &str) -> Result<(PathBuf, f64)> {
    let wrong = || {
        Error::invalid(
            field,
            r#"expected a path "file.obj" or {"file": "file.obj", "scale": s}"#,
        )
    };
    if let Some(path) = value.as_str() {
        return Ok((PathBuf::from(path), 1.0));
    }
    let object = value.as_object().ok_or_else(wrong)?;
    if let Some(key) = object.keys().find(|k| *k != "file" && *k != "scale") {
        return Err(Error::invalid(
            format!("{field}.{}", key_in_path(key)),
            "unknown field, expected `file` or `scale`",
        ));
    }
    let file = object
        .get("file")
        .ok_or_else(|| {
            Error::invalid(format!("{field}.file"), "missing: give the OBJ file's path")
        })?
        .as_str()
        .ok_or_else(|| Error::invalid(format!("{field}.file"), "must be a path (a string)"))?;
    let scale = match object.get("scale") {
        None => 1.0,
        Some(scale) => {
            let scale = scale
                .as_f64()
                .ok_or_else(|| Error::invalid(format!("{field}.scale"), "must be a number"))?;
            if !(scale.is_finite() && scale > 0.0) {
                return Err(Error::invalid(
                    format!("{field}.scale"),
                    format!("must be a finite number > 0 (got {scale})"),
                ));
            }
            scale
        }
    };
    Ok((PathBuf::from(file), scale))
}

/// `[A, B, C]` principal moments or a full 3x3 matrix (rows), body frame.
fn parse_inertia(value: &serde_json::Value, field: &str) -> Result<DMat3> {
    let wrong = || {
        Error::invalid(
            field,
            "expected 3 principal moments [A, B, C] or a 3x3 matrix [[..], [..], [..]]",
        )
    };
    let numbers = |v: &serde_json::Value| -> Option<[f64; 3]> {
        let a = v.as_array()?;
        if a.len() != 3 {
            return None;
        }
        Some([a[0].as_f64()?, a[1].as_f64()?, a[2].as_f64()?])
    };
    if let Some(moments) = numbers(value) {
        check_vector(field, moments)?;
        return Ok(DMat3::from_diagonal(DVec3::from(moments)));
    }
    let rows = value
        .as_array()
        .filter(|r| r.len() == 3)
        .ok_or_else(wrong)?;
    let mut m = [[0.0; 3]; 3];
    for (i, row) in rows.iter().enumerate() {
        m[i] = numbers(row).ok_or_else(wrong)?;
        check_vector(&format!("{field}[{i}]"), m[i])?;
    }
    // Rows in the file; glam takes columns. The matrix must be symmetric, and is checked so.
    Ok(DMat3::from_cols_array_2d(&m).transpose())
}
