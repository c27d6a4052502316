//! Force sources and the bodies they act on.

use glam::DVec3;

use crate::model::codes::Coded;
use crate::model::error::Result;
use crate::model::validate::{check_non_negative, check_number, check_vector};

/// What a force source does to a body (Baraff 2.8: forces and torques about the centre of mass).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum ForceKind {
    /// Uniform acceleration field: `F = M g`, no torque (Baraff 5.2).
    Gravity {
        /// Acceleration `g`.
        acceleration: DVec3,
    },
    /// Viscous drag: `F = -linear v`, `tau = -angular omega`.
    LinearDrag {
        /// Linear coefficient (N s / m).
        linear: f64,
        /// Angular coefficient (N m s).
        angular: f64,
    },
    /// A world-frame force applied at a body-space point: torque `(R p) x F`.
    PointForce {
        /// World-frame force.
        force: DVec3,
        /// Body-space point of application (relative to the centre of mass).
        point: DVec3,
    },
    /// A spring-damper from a fixed world anchor to a body-space attach point:
    /// `F = -stiffness (x + R p - anchor) - damping (v + omega x R p)`, applied at `R p`.
    Spring {
        /// World-frame anchor.
        anchor: DVec3,
        /// Body-space attach point.
        attach: DVec3,
        /// Stiffness (N/m).
        stiffness: f64,
        /// Damping on the attach point's velocity (N s / m).
        damping: f64,
    },
    /// Inverse-square attraction to a fixed point with Plummer softening:
    /// `F = -M mu r / (|r|^2 + eps^2)^(3/2)`, `r = x - centre`, no torque. Its potential
    /// energy is `-M mu / sqrt(|r|^2 + eps^2)`.
    Attractor {
        /// World-frame centre of attraction.
        centre: DVec3,
        /// Gravitational parameter `mu` (m^3 / s^2): `G` times the attracting mass.
        strength: f64,
        /// Softening length `eps >= 0`; keeps the force finite at the centre.
        softening: f64,
    },
    /// A constant force and torque fixed in the body frame: `F = R f_body`, `tau = R tau_body`
    /// (a rocket motor and a reaction wheel turning with the body).
    Thrust {
        /// Body-frame force `f_body`, acting through the centre of mass.
        force: DVec3,
        /// Body-frame torque `tau_body`.
        torque: DVec3,
    },
    /// A world-frame force and torque scaled by a sinusoid:
    /// `s(t) = offset + amplitude sin(2 pi frequency t + phase)`, `F = s(t) force`,
    /// `tau = s(t) torque`.
    Sinusoidal {
        /// World-frame force at `s = 1`.
        force: DVec3,
        /// World-frame torque at `s = 1`.
        torque: DVec3,
        /// Constant part of `s`.
        offset: f64,
        /// Amplitude of the oscillating part of `s`.
        amplitude: f64,
        /// Frequency (Hz).
        frequency: f64,
        /// Phase (radians).
        phase: f64,
    },
    /// A world-frame force and torque scaled by a piecewise-linear profile:
    /// `F = s(t) force`, `tau = s(t) torque`, `s` interpolated linearly between the keyframes
    /// `(t_i, s_i)` of `Crowd::keyframes[table]` and held constant before the first and
    /// after the last.
    Keyframed {
        /// World-frame force at `s = 1`.
        force: DVec3,
        /// World-frame torque at `s = 1`.
        torque: DVec3,
        /// Index of the keyframe table in `Crowd::keyframes`.
        table: usize,
    },
    /// Quadratic (turbulent) drag in the world frame: `F = -linear |v| v`,
    /// `tau = -angular |omega| omega`.
    QuadraticDrag {
        /// Linear coefficient (N s^2 / m^2).
        linear: f64,
        /// Angular coefficient (N m s^2).
        angular: f64,
    },
    /// The crowd's [`CustomForce`](crate::physics::custom_force::CustomForce): a WGSL function on the GPU, its Rust
    /// closure on the CPU backends. It returns a world force and the torque about the centre
    /// of mass.
    Custom,
}

/// A force source and the body it targets (`None`: every body).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Force {
    /// What the force does.
    pub kind: ForceKind,
    /// Index of the one body it acts on, or `None` for every body.
    pub body: Option<usize>,
}

impl Force {
    /// A force acting on every body.
    pub fn on_all(kind: ForceKind) -> Self {
        Self { kind, body: None }
    }

    /// A force acting on body `index` only.
    pub fn on_body(index: usize, kind: ForceKind) -> Self {
        Self {
            kind,
            body: Some(index),
        }
    }

    /// The scene-file name of the force type.
    pub fn type_name(&self) -> &'static str {
        self.kind.force_type().name()
    }
}

/// The type of a force without its parameters: what the scene format's `type` names, what
/// the GPU record's `kind` and the checkpoint's tag number (its position in
/// [`ForceType::ALL`]), and what the kernel's generated `FORCE_*` constants stand for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ForceType {
    Gravity,
    LinearDrag,
    PointForce,
    Spring,
    Attractor,
    Thrust,
    Sinusoidal,
    Keyframed,
    Custom,
    QuadraticDrag,
}

impl Coded for ForceType {
    const ALL: &'static [Self] = &[
        ForceType::Gravity,
        ForceType::LinearDrag,
        ForceType::PointForce,
        ForceType::Spring,
        ForceType::Attractor,
        ForceType::Thrust,
        ForceType::Sinusoidal,
        ForceType::Keyframed,
        ForceType::Custom,
        // New kinds go last: a kind's position is its code in kernels and checkpoints.
        ForceType::QuadraticDrag,
    ];
    const WGSL_PREFIX: &'static str = "FORCE";

    fn name(self) -> &'static str {
        match self {
            ForceType::Gravity => "gravity",
            ForceType::LinearDrag => "linear_drag",
            ForceType::PointForce => "point_force",
            ForceType::Spring => "spring",
            ForceType::Attractor => "attractor",
            ForceType::Thrust => "thrust",
            ForceType::Sinusoidal => "sinusoidal",
            ForceType::Keyframed => "keyframed",
            ForceType::Custom => "custom",
            ForceType::QuadraticDrag => "quadratic_drag",
        }
    }
}

/// A force's parameters in the order every encoding stores them: world or body vectors,
/// then scalars, then a keyframe table. The GPU record puts the vectors in lanes `a`, `b`
/// and the scalars in `c`; the checkpoint writes them in this order.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ForceParameters {
    pub vectors: [DVec3; 2],
    pub scalars: [f64; 4],
    pub table: Option<usize>,
}

impl ForceType {
    /// Every kind in the order the docs' table and the scene format's messages list them.
    pub const LISTED: [ForceType; 10] = [
        ForceType::Gravity,
        ForceType::LinearDrag,
        ForceType::QuadraticDrag,
        ForceType::PointForce,
        ForceType::Spring,
        ForceType::Attractor,
        ForceType::Thrust,
        ForceType::Sinusoidal,
        ForceType::Keyframed,
        ForceType::Custom,
    ];

    /// The type's bit in a body's GPU `own_kinds` mask: which kinds its own forces are.
    pub fn bit(self) -> u32 {
        const { assert!(ForceType::ALL.len() <= 32, "own_kinds is a u32") };
        1 << (self.code() - Self::FIRST_CODE)
    }

    /// How many vectors and scalars, and whether a keyframe table, the type's parameters
    /// hold (in [`ForceParameters`]): what it declares ([`ForceType::declared_parameters`]),
    /// and a table for the keyframed kind.
    pub fn arity(self) -> (usize, usize, bool) {
        let declared = self.declared_parameters();
        let vectors = (declared.iter())
            .filter(|p| p.shape == ParameterShape::Vector)
            .count();
        let table = self == ForceType::Keyframed;
        (vectors, declared.len() - vectors, table)
    }

    /// The kind's numeric parameters, declared once: each one's name in the scene format
    /// (and in `--sensitivity forces[i].<name>`), shape, unit, range and whether a scene must
    /// give it. Vectors come first, in [`ForceParameters`]' vector lanes in this order, then
    /// numbers, in its scalar lanes. A keyframed force's table and the custom force's WGSL
    /// are not numbers: the scene format reads them apart.
    pub fn declared_parameters(self) -> &'static [ParameterDeclaration] {
        use ParameterDeclaration as P;
        match self {
            ForceType::Gravity => const { &[P::vector("acceleration", "m/s^2").required()] },
            ForceType::LinearDrag => {
                const {
                    &[
                        P::number("linear", "N s/m").non_negative(),
                        P::number("angular", "N m s").non_negative(),
                    ]
                }
            }
            ForceType::PointForce => {
                const { &[P::vector("force", "N").required(), P::vector("point", "m")] }
            }
            ForceType::Spring => {
                const {
                    &[
                        P::vector("anchor", "m").required(),
                        P::vector("attach", "m"),
                        P::number("stiffness", "N/m").non_negative().required(),
                        P::number("damping", "N s/m").non_negative(),
                    ]
                }
            }
            ForceType::Attractor => {
                const {
                    &[
                        P::vector("centre", "m").required(),
                        P::number("strength", "m^3/s^2").required(),
                        P::number("softening", "m").non_negative(),
                    ]
                }
            }
            ForceType::Thrust | ForceType::Keyframed => {
                const { &[P::vector("force", "N"), P::vector("torque", "N m")] }
            }
            ForceType::Sinusoidal => {
                const {
                    &[
                        P::vector("force", "N"),
                        P::vector("torque", "N m"),
                        P::number("offset", "1"),
                        P::number("amplitude", "1").required(),
                        P::number("frequency", "Hz").non_negative().required(),
                        P::number("phase", "rad"),
                    ]
                }
            }
            ForceType::Custom => &[],
            ForceType::QuadraticDrag => {
                const {
                    &[
                        P::number("linear", "N s^2/m^2").non_negative(),
                        P::number("angular", "N m s^2").non_negative(),
                    ]
                }
            }
        }
    }
}

/// How a force parameter is written: three numbers or one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParameterShape {
    Vector,
    Number,
}

/// One numeric parameter of a force kind, as the kind declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParameterDeclaration {
    /// Its name in the scene format, `--sensitivity` and the docs (`stiffness`).
    pub name: &'static str,
    pub shape: ParameterShape,
    /// Its unit, as the docs write it (`N/m`; `1` for a pure number).
    pub unit: &'static str,
    /// Whether it must be `>= 0` (every number must be finite).
    pub non_negative: bool,
    /// Whether a scene must give it; if not, it is zero where left out.
    pub required: bool,
}

impl ParameterDeclaration {
    const fn vector(name: &'static str, unit: &'static str) -> Self {
        Self {
            name,
            shape: ParameterShape::Vector,
            unit,
            non_negative: false,
            required: false,
        }
    }

    const fn number(name: &'static str, unit: &'static str) -> Self {
        Self {
            shape: ParameterShape::Number,
            ..Self::vector(name, unit)
        }
    }

    const fn non_negative(self) -> Self {
        Self {
            non_negative: true,
            ..self
        }
    }

    const fn required(self) -> Self {
        Self {
            required: true,
            ..self
        }
    }
}

impl ForceKind {
    /// The type of this force.
    pub fn force_type(&self) -> ForceType {
        match self {
            ForceKind::Gravity { .. } => ForceType::Gravity,
            ForceKind::LinearDrag { .. } => ForceType::LinearDrag,
            ForceKind::PointForce { .. } => ForceType::PointForce,
            ForceKind::Spring { .. } => ForceType::Spring,
            ForceKind::Attractor { .. } => ForceType::Attractor,
            ForceKind::Thrust { .. } => ForceType::Thrust,
            ForceKind::Sinusoidal { .. } => ForceType::Sinusoidal,
            ForceKind::Keyframed { .. } => ForceType::Keyframed,
            ForceKind::Custom => ForceType::Custom,
            ForceKind::QuadraticDrag { .. } => ForceType::QuadraticDrag,
        }
    }

    /// The parameters, in the order of [`ForceParameters`]: what the GPU record and the
    /// checkpoint hold.
    pub fn parameters(&self) -> ForceParameters {
        let z = DVec3::ZERO;
        let (vectors, scalars, table) = match *self {
            ForceKind::Gravity { acceleration } => ([acceleration, z], [0.0; 4], None),
            ForceKind::LinearDrag { linear, angular } => {
                ([z, z], [linear, angular, 0.0, 0.0], None)
            }
            ForceKind::PointForce { force, point } => ([force, point], [0.0; 4], None),
            ForceKind::Spring {
                anchor,
                attach,
                stiffness,
                damping,
            } => ([anchor, attach], [stiffness, damping, 0.0, 0.0], None),
            ForceKind::Attractor {
                centre,
                strength,
                softening,
            } => ([centre, z], [strength, softening, 0.0, 0.0], None),
            ForceKind::Thrust { force, torque } => ([force, torque], [0.0; 4], None),
            ForceKind::Sinusoidal {
                force,
                torque,
                offset,
                amplitude,
                frequency,
                phase,
            } => ([force, torque], [offset, amplitude, frequency, phase], None),
            ForceKind::Keyframed {
                force,
                torque,
                table,
            } => ([force, torque], [0.0; 4], Some(table)),
            ForceKind::Custom => ([z, z], [0.0; 4], None),
            ForceKind::QuadraticDrag { linear, angular } => {
                ([z, z], [linear, angular, 0.0, 0.0], None)
            }
        };
        ForceParameters {
            vectors,
            scalars,
            table,
        }
    }

    /// The force of type `kind` with parameters `p` (the inverse of [`ForceKind::parameters`]).
    pub fn from_parameters(kind: ForceType, p: &ForceParameters) -> Self {
        let [u, w] = p.vectors;
        let [s0, s1, s2, s3] = p.scalars;
        match kind {
            ForceType::Gravity => ForceKind::Gravity { acceleration: u },
            ForceType::LinearDrag => ForceKind::LinearDrag {
                linear: s0,
                angular: s1,
            },
            ForceType::PointForce => ForceKind::PointForce { force: u, point: w },
            ForceType::Spring => ForceKind::Spring {
                anchor: u,
                attach: w,
                stiffness: s0,
                damping: s1,
            },
            ForceType::Attractor => ForceKind::Attractor {
                centre: u,
                strength: s0,
                softening: s1,
            },
            ForceType::Thrust => ForceKind::Thrust {
                force: u,
                torque: w,
            },
            ForceType::Sinusoidal => ForceKind::Sinusoidal {
                force: u,
                torque: w,
                offset: s0,
                amplitude: s1,
                frequency: s2,
                phase: s3,
            },
            ForceType::Keyframed => ForceKind::Keyframed {
                force: u,
                torque: w,
                table: p.table.unwrap_or(0),
            },
            ForceType::Custom => ForceKind::Custom,
            ForceType::QuadraticDrag => ForceKind::QuadraticDrag {
                linear: s0,
                angular: s1,
            },
        }
    }

    /// The kind's numeric parameters, each with the name the scene format gives it and the
    /// range it must lie in, in the order of the kind's declaration
    /// ([`ForceType::declared_parameters`]). The keyframe table's index is not one: it names
    /// a table, and is checked against the crowd.
    pub(crate) fn numeric_fields(&self) -> Vec<NumericField> {
        let p = self.parameters();
        let (mut vectors, mut scalars) = (p.vectors.into_iter(), p.scalars.into_iter());
        let declared = self.force_type().declared_parameters();
        (declared.iter())
            .map(|declared| NumericField {
                name: declared.name,
                value: match declared.shape {
                    ParameterShape::Vector => FieldValue::Vector(vectors.next().expect("a lane")),
                    ParameterShape::Number => FieldValue::Number(scalars.next().expect("a lane")),
                },
                non_negative: declared.non_negative,
            })
            .collect()
    }

    /// Checks every numeric parameter against its range; errors name `field.param`. A
    /// keyframed force's table and the custom force are checked against the crowd by
    /// `Crowd::validate`.
    pub(crate) fn validate_parameters(&self, field: &str) -> Result<()> {
        for parameter in self.numeric_fields() {
            let name = format!("{field}.{}", parameter.name);
            match parameter.value {
                FieldValue::Vector(v) => check_vector(&name, v.to_array())?,
                FieldValue::Number(x) if parameter.non_negative => check_non_negative(&name, x)?,
                FieldValue::Number(x) => check_number(&name, x)?,
            }
        }
        Ok(())
    }
}

/// One numeric parameter of a force kind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct NumericField {
    /// Its name in the scene format (`stiffness`, `acceleration`).
    pub name: &'static str,
    pub value: FieldValue,
    /// Whether it must be `>= 0` (every number must be finite).
    pub non_negative: bool,
}

/// A parameter's value: three numbers or one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum FieldValue {
    Vector(DVec3),
    Number(f64),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distinct values in every lane the type's arity says it uses, zeros elsewhere.
    fn filled(kind: ForceType) -> ForceParameters {
        let (vectors, scalars, table) = kind.arity();
        let mut p = ForceParameters::default();
        for (i, v) in p.vectors.iter_mut().take(vectors).enumerate() {
            *v = DVec3::new(1.0, 2.0, 3.0) * (i + 1) as f64;
        }
        for (i, s) in p.scalars.iter_mut().take(scalars).enumerate() {
            *s = 0.25 * (i + 1) as f64;
        }
        p.table = table.then_some(7);
        p
    }

    /// `arity`, `from_parameters` and `parameters` describe the same lanes for every type:
    /// read from all lanes filled, a force keeps exactly the lanes its arity names, so a lane
    /// dropped or added in one of the three breaks the round trip.
    #[test]
    fn every_force_type_round_trips_through_its_parameters() {
        let mut every_lane = ForceParameters {
            table: Some(7),
            ..Default::default()
        };
        for (i, v) in every_lane.vectors.iter_mut().enumerate() {
            *v = DVec3::new(1.0, 2.0, 3.0) * (i + 1) as f64;
        }
        for (i, s) in every_lane.scalars.iter_mut().enumerate() {
            *s = 0.25 * (i + 1) as f64;
        }
        for &kind in ForceType::ALL {
            let force = ForceKind::from_parameters(kind, &every_lane);
            assert_eq!(force.force_type(), kind);
            assert_eq!(force.parameters(), filled(kind), "{}", kind.name());
        }
    }

    /// Every force type is documented in docs/forces.md's table, under its scene name.
    #[test]
    fn numeric_fields_are_the_scene_formats_names_and_ranges() {
        let scene = |kind: ForceType, fields: &[(&str, String)]| {
            let params: Vec<String> = fields
                .iter()
                .map(|(n, v)| format!(r#", "{n}": {v}"#))
                .collect();
            format!(
                r#"{{"dt": 0.01, "steps": 1, "bodies": [{{"mass": 1, "inertia": [1, 1, 1]}}],
                    "forces": [{{"type": "{}"{}}}]}}"#,
                kind.name(),
                params.concat()
            )
        };
        // A keyframed force needs a table, and the custom force a custom_force: their
        // fields are the thrust's and none.
        let kinds = ForceType::ALL
            .iter()
            .filter(|k| !matches!(k, ForceType::Keyframed | ForceType::Custom));
        for &kind in kinds {
            let fields = ForceKind::from_parameters(kind, &filled(kind)).numeric_fields();
            let text = |value: &FieldValue| match value {
                FieldValue::Vector(v) => format!("[{}, {}, {}]", v.x, v.y, v.z),
                FieldValue::Number(x) => format!("{x}"),
            };
            let given: Vec<(&str, String)> =
                fields.iter().map(|f| (f.name, text(&f.value))).collect();
            let read = crate::assembly::scene::Scene::from_json(&scene(kind, &given))
                .unwrap_or_else(|e| panic!("{}: {e}", kind.name()));
            assert_eq!(
                read.crowd.forces[0].kind.numeric_fields(),
                fields,
                "{}",
                kind.name()
            );
            // Each number made negative: refused, naming the field, exactly where the range
            // says it must be >= 0.
            for (k, field) in fields.iter().enumerate() {
                let FieldValue::Number(x) = field.value else {
                    continue;
                };
                let mut negative = given.clone();
                negative[k].1 = format!("{}", -x.abs() - 1.0);
                let outcome = crate::assembly::scene::Scene::from_json(&scene(kind, &negative));
                let name = format!("forces[0].{}", field.name);
                match outcome {
                    Err(crate::model::error::Error::Invalid { field: f, .. }) => {
                        assert!(field.non_negative && f == name, "{}: {f}", kind.name())
                    }
                    Err(e) => panic!("{name}: {e}"),
                    Ok(_) => assert!(!field.non_negative, "{name} accepted a negative value"),
                }
            }
        }
    }

    /// The listed order holds every kind once.
    #[test]
    fn every_kind_is_listed_once() {
        let mut listed = ForceType::LISTED.to_vec();
        listed.sort_by_key(|kind| kind.code());
        assert_eq!(listed, ForceType::ALL);
    }

    /// docs/forces.md's table of parameters is the kinds' declarations, in the listed order
    /// (`RIGID_CROWD_WRITE_DOCS=1` writes it).
    #[test]
    fn the_docs_parameter_table_is_the_declarations() {
        let mut table = String::from(
            "| scene `type` | parameter | given as | unit | range | left out |\n\
             |---|---|---|---|---|---|\n",
        );
        for kind in ForceType::LISTED {
            for p in kind.declared_parameters() {
                let shape = match p.shape {
                    ParameterShape::Vector => "3 numbers",
                    ParameterShape::Number => "number",
                };
                let range = if p.non_negative { ">= 0" } else { "any" };
                let left_out = if p.required { "required" } else { "0" };
                table += &format!(
                    "| `{}` | `{}` | {shape} | {} | {range} | {left_out} |\n",
                    kind.name(),
                    p.name,
                    p.unit
                );
            }
        }
        let (start, end) = ("<!-- parameters: -->\n", "<!-- :parameters -->\n");
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/forces.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let at = doc
            .find(start)
            .expect("docs/forces.md marks its parameter table")
            + start.len();
        let until = at + doc[at..].find(end).expect("the table's end");
        if std::env::var_os("RIGID_CROWD_WRITE_DOCS").is_some() {
            std::fs::write(path, format!("{}{table}{}", &doc[..at], &doc[until..])).unwrap();
        } else {
            assert_eq!(doc[at..until], table, "docs/forces.md's parameter table");
        }
    }

    #[test]
    fn every_force_type_is_documented() {
        let doc = include_str!("../../../docs/forces.md");
        for &kind in ForceType::ALL {
            let row = format!("| `{}` |", kind.name());
            assert!(doc.contains(&row), "docs/forces.md has no row {row}");
        }
    }

    /// The scene format knows every force type by its name: an entry with only `type` is
    /// read as that type (accepted, or refused for a missing parameter), never refused as
    /// an unknown type.
    #[test]
    fn the_scene_format_reads_every_force_type() {
        for &kind in ForceType::ALL {
            let scene = format!(
                r#"{{"dt": 0.01, "steps": 1, "bodies": [{{"mass": 1, "inertia": [1, 1, 1]}}],
                    "forces": [{{"type": "{}"}}]}}"#,
                kind.name()
            );
            match crate::assembly::scene::Scene::from_json(&scene) {
                Ok(scene) => assert_eq!(scene.crowd.forces[0].kind.force_type(), kind),
                Err(crate::model::error::Error::Invalid { field, message }) => assert!(
                    field != "forces[0].type" && message.contains("missing field"),
                    "{}: {field}: {message}",
                    kind.name()
                ),
                Err(e) => panic!("{}: {e}", kind.name()),
            }
        }
        let unknown = r#"{"dt": 0.01, "steps": 1, "forces": [{"type": "levitation"}]}"#;
        let Err(crate::model::error::Error::Invalid { field, .. }) =
            crate::assembly::scene::Scene::from_json(unknown)
        else {
            panic!("an unknown force type is refused");
        };
        assert_eq!(field, "forces[0].type");
    }

    /// The cross-check crowd exercises every force type, so `check` and the cross-check
    /// tests cover a new one as soon as it exists.
    #[test]
    fn the_check_crowd_has_every_force_type() {
        let crowd = crate::verify::check_crowd::cross_check_crowd(
            12,
            3,
            crate::model::integrator::Integrator::Rk4,
            1e-3,
        )
        .unwrap();
        for &kind in ForceType::ALL {
            assert!(
                crowd.forces.iter().any(|f| f.kind.force_type() == kind),
                "cross_check_crowd has no {} force",
                kind.name()
            );
        }
    }
}
