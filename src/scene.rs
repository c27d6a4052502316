//! The scene file (JSON, version 1): parsing and validation with field-path errors.

use std::path::{Path, PathBuf};

use glam::{DMat3, DQuat, DVec3};
use serde::Deserialize;

use crate::body::Body;
use crate::crowd::{Crowd, check_vector};
use crate::custom_force::CustomForce;
use crate::error::{Error, Result};
use crate::force::{Force, ForceKind};
use crate::generate::CrowdSpec;
use crate::integrator::Integrator;
use crate::mass::MassProperties;
use crate::shape::Shape;

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
    #[serde(default)]
    forces: Vec<ForceSpec>,
    #[serde(default)]
    bodies: Vec<BodySpec>,
    #[serde(default)]
    crowd: Option<CrowdSpec>,
    #[serde(default)]
    start_step: u64,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum ForceSpec {
    Gravity {
        #[serde(default)]
        body: Option<usize>,
        acceleration: [f64; 3],
    },
    LinearDrag {
        #[serde(default)]
        body: Option<usize>,
        #[serde(default)]
        linear: f64,
        #[serde(default)]
        angular: f64,
    },
    PointForce {
        #[serde(default)]
        body: Option<usize>,
        force: [f64; 3],
        #[serde(default)]
        point: [f64; 3],
    },
    Spring {
        #[serde(default)]
        body: Option<usize>,
        anchor: [f64; 3],
        #[serde(default)]
        attach: [f64; 3],
        stiffness: f64,
        #[serde(default)]
        damping: f64,
    },
    Attractor {
        #[serde(default)]
        body: Option<usize>,
        centre: [f64; 3],
        strength: f64,
        #[serde(default)]
        softening: f64,
    },
    Thrust {
        #[serde(default)]
        body: Option<usize>,
        #[serde(default)]
        force: [f64; 3],
        #[serde(default)]
        torque: [f64; 3],
    },
    Sinusoidal {
        #[serde(default)]
        body: Option<usize>,
        #[serde(default)]
        force: [f64; 3],
        #[serde(default)]
        torque: [f64; 3],
        #[serde(default)]
        offset: f64,
        amplitude: f64,
        frequency: f64,
        #[serde(default)]
        phase: f64,
    },
    Keyframed {
        #[serde(default)]
        body: Option<usize>,
        #[serde(default)]
        force: [f64; 3],
        #[serde(default)]
        torque: [f64; 3],
        keyframes: Vec<[f64; 2]>,
    },
    Custom {
        #[serde(default)]
        body: Option<usize>,
        wgsl_file: PathBuf,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BodySpec {
    mass: f64,
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
}

impl Scene {
    /// Parses and validates a scene from JSON text; a custom force's `wgsl_file` is read
    /// relative to the current directory.
    pub fn from_json(text: &str) -> Result<Self> {
        Self::from_json_in(text, Path::new("."))
    }

    /// Parses and validates a scene, reading files it names relative to `base`.
    fn from_json_in(text: &str, base: &Path) -> Result<Self> {
        let mut de = serde_json::Deserializer::from_str(text);
        let file: SceneFile = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            let field = if path == "." {
                "scene".to_string()
            } else {
                path
            };
            Error::invalid(field, e.into_inner().to_string())
        })?;
        de.end()
            .map_err(|e| Error::invalid("scene", e.to_string()))?;
        file.into_scene(base)
    }

    /// Reads, parses and validates a scene file; a custom force's `wgsl_file` is read
    /// relative to the scene file's directory.
    pub fn load(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Self::from_json_in(&text, path.parent().unwrap_or(Path::new(".")))
    }
}

impl SceneFile {
    fn into_scene(self, base: &Path) -> Result<Scene> {
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
        let mut bodies = self
            .bodies
            .iter()
            .enumerate()
            .map(|(i, spec)| spec.to_body(&format!("bodies[{i}]")))
            .collect::<Result<Vec<_>>>()?;
        if let Some(spec) = &self.crowd {
            spec.validate("crowd")?;
            bodies.extend(spec.generate()?);
        }
        let mut crowd = Crowd::new(bodies, self.dt).with_integrator(integrator);
        crowd.start_step = self.start_step;
        for (i, spec) in self.forces.iter().enumerate() {
            let force = spec.to_force(&mut crowd, &format!("forces[{i}]"), base)?;
            crowd.forces.push(force);
        }
        crowd.validate()?;
        Ok(Scene {
            crowd,
            steps: self.steps,
        })
    }
}

impl ForceSpec {
    /// The force, its keyframes and custom force added to `crowd`; `field` is its path.
    fn to_force(&self, crowd: &mut Crowd, field: &str, base: &Path) -> Result<Force> {
        let v = DVec3::from;
        let (body, kind) = match *self {
            ForceSpec::Gravity { body, acceleration } => (
                body,
                ForceKind::Gravity {
                    acceleration: v(acceleration),
                },
            ),
            ForceSpec::LinearDrag {
                body,
                linear,
                angular,
            } => (body, ForceKind::LinearDrag { linear, angular }),
            ForceSpec::PointForce { body, force, point } => (
                body,
                ForceKind::PointForce {
                    force: v(force),
                    point: v(point),
                },
            ),
            ForceSpec::Spring {
                body,
                anchor,
                attach,
                stiffness,
                damping,
            } => (
                body,
                ForceKind::Spring {
                    anchor: v(anchor),
                    attach: v(attach),
                    stiffness,
                    damping,
                },
            ),
            ForceSpec::Attractor {
                body,
                centre,
                strength,
                softening,
            } => (
                body,
                ForceKind::Attractor {
                    centre: v(centre),
                    strength,
                    softening,
                },
            ),
            ForceSpec::Thrust {
                body,
                force,
                torque,
            } => (
                body,
                ForceKind::Thrust {
                    force: v(force),
                    torque: v(torque),
                },
            ),
            ForceSpec::Sinusoidal {
                body,
                force,
                torque,
                offset,
                amplitude,
                frequency,
                phase,
            } => (
                body,
                ForceKind::Sinusoidal {
                    force: v(force),
                    torque: v(torque),
                    offset,
                    amplitude,
                    frequency,
                    phase,
                },
            ),
            ForceSpec::Keyframed {
                body,
                force,
                torque,
                ref keyframes,
            } => {
                // Checked here, so the error names the scene's field and not the table.
                crate::crowd::validate_keyframes(keyframes, &format!("{field}.keyframes"))?;
                let table = crowd.add_keyframes(keyframes.clone());
                (
                    body,
                    ForceKind::Keyframed {
                        force: v(force),
                        torque: v(torque),
                        table,
                    },
                )
            }
            ForceSpec::Custom {
                body,
                ref wgsl_file,
            } => {
                let field = format!("{field}.wgsl_file");
                let path = base.join(wgsl_file);
                let wgsl = std::fs::read_to_string(&path).map_err(|e| {
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
                (body, ForceKind::Custom)
            }
        };
        Ok(Force { kind, body })
    }
}

impl BodySpec {
    fn to_body(&self, field: &str) -> Result<Body> {
        let mass = match (&self.inertia, &self.shape) {
            (Some(_), Some(_)) => {
                return Err(Error::invalid(
                    field,
                    "give either `inertia` or `shape`, not both",
                ));
            }
            (None, None) => return Err(Error::invalid(field, "needs `inertia` or `shape`")),
            (Some(inertia), None) => MassProperties::new(
                self.mass,
                parse_inertia(inertia, &format!("{field}.inertia"))?,
                field,
            )?,
            (None, Some(shape)) => {
                let shape = match *shape {
                    ShapeSpec::Box(size) => Shape::Box {
                        size: DVec3::from(size),
                    },
                    ShapeSpec::Sphere(radius) => Shape::Sphere { radius },
                };
                MassProperties::from_shape(self.mass, shape, field)?
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
        Ok(Body::from_kinematics(
            mass,
            position,
            orientation,
            velocity,
            angular_velocity,
        ))
    }
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
