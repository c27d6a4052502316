//! Force sources and the bodies they act on.

use glam::DVec3;

use crate::model::codes::Coded;
use crate::model::error::Result;
use crate::model::force_declaration::force_kinds;
pub use crate::model::force_declaration::{LawDeclaration, ParameterDeclaration, ParameterShape};
use crate::model::validate::{check_non_negative, check_number, check_vector};

/// Every force kind, each written once, in the order of their codes: a new kind goes last.
/// Each entry is the kind's docs, scene name, numbers and law (`=> |body, total| ..`: what it
/// adds to `total`, the body's `Load`, from `body`, the `physics::forces::Body` it acts on,
/// and its numbers by their names), then its force in `check`'s crowd: on every body
/// (`@check_all { numbers }`) or on every `k`-th (`@check_every k |s| { numbers }`, from the
/// body's `verify::check_crowd::CheckSample`). The list is handed to the macro `$then`: here
/// `force_kinds!` makes the model's types of it; `physics::forces` makes `add_force` of the
/// laws, which only it compiles (they are written in the physics' number types), and
/// `verify::check_crowd` the cross-check's crowd of the samples.
macro_rules! every_force_kind {
    ($then:ident) => {
        $then! {
            /// Uniform acceleration field: `F = M g`, no torque (Baraff 5.2).
            Gravity "gravity" {
                /// Acceleration `g`.
                acceleration: vector "m/s^2" required,
            } => |body, total| {
                total.force = total.force + acceleration * body.mass.mass;
            }
            @check_all { acceleration: ::glam::DVec3::new(0.0, 0.0, -9.81) }
            /// Viscous drag: `F = -linear v`, `tau = -angular omega`.
            LinearDrag "linear_drag" {
                /// Linear coefficient (N s / m).
                linear: number "N s/m" non_negative,
                /// Angular coefficient (N m s).
                angular: number "N m s" non_negative,
            } => |body, total| {
                total.force = total.force - body.aux.velocity * linear;
                total.torque = total.torque - body.aux.angular_velocity * angular;
            }
            @check_all { linear: 0.3, angular: 0.05 }
            /// A world-frame force applied at a body-space point: torque `(R p) x F`.
            PointForce "point_force" {
                /// World-frame force.
                force: vector "N" required,
                /// Body-space point of application (relative to the centre of mass).
                point: vector "m",
            } => |body, total| {
                let arm = body.aux.rotation.mul_vec(point);
                total.force = total.force + force;
                total.torque = total.torque + arm.cross(force);
            }
            @check_every 3 |s| { force: s.dir * (2.0 * s.mass), point: s.arm }
            /// A spring-damper from a fixed world anchor to a body-space attach point:
            /// `F = -stiffness (x + R p - anchor) - damping (v + omega x R p)`, applied at `R p`.
            Spring "spring" {
                /// World-frame anchor.
                anchor: vector "m" required,
                /// Body-space attach point.
                attach: vector "m",
                /// Stiffness (N/m).
                stiffness: number "N/m" non_negative required,
                /// Damping on the attach point's velocity (N s / m).
                damping: number "N s/m" non_negative,
            } => |body, total| {
                let arm = body.aux.rotation.mul_vec(attach);
                let stretch = body.state.position + arm - anchor;
                let attach_velocity = body.aux.velocity + body.aux.angular_velocity.cross(arm);
                let applied = -(stretch * stiffness) - attach_velocity * damping;
                total.force = total.force + applied;
                total.torque = total.torque + arm.cross(applied);
            }
            @check_every 5 |s| {
                anchor: s.position + s.dir,
                attach: s.arm,
                stiffness: 4.0 * s.mass,
                damping: 0.5 * s.mass,
            }
            /// Inverse-square attraction to a fixed point with Plummer softening:
            /// `F = -M mu r / (|r|^2 + eps^2)^(3/2)`, `r = x - centre`, no torque. Its potential
            /// energy is `-M mu / sqrt(|r|^2 + eps^2)`.
            Attractor "attractor" {
                /// World-frame centre of attraction.
                centre: vector "m" required,
                /// Gravitational parameter `mu` (m^3 / s^2): `G` times the attracting mass.
                strength: number "m^3/s^2" required,
                /// Softening length `eps >= 0`; keeps the force finite at the centre.
                softening: number "m" non_negative,
            } => |body, total| {
                let r = body.state.position - centre;
                let d2 = r.length_squared() + softening * softening;
                total.force = total.force - r * (body.mass.mass * strength / (d2 * d2.sqrt()));
            }
            // 2 m/s^2 at the start, 2 m from the centre: mu / 2^2 = 2.
            @check_every 7 |s| { centre: s.position + s.dir * 2.0, strength: 8.0, softening: 0.5 }
            /// A constant force and torque fixed in the body frame: `F = R f_body`,
            /// `tau = R tau_body` (a rocket motor and a reaction wheel turning with the body).
            Thrust "thrust" {
                /// Body-frame force `f_body`, acting through the centre of mass.
                force: vector "N",
                /// Body-frame torque `tau_body`.
                torque: vector "N m",
            } => |body, total| {
                total.force = total.force + body.aux.rotation.mul_vec(force);
                total.torque = total.torque + body.aux.rotation.mul_vec(torque);
            }
            @check_every 4 |s| { force: s.dir * (2.0 * s.mass), torque: s.spin_up }
            /// A world-frame force and torque scaled by a sinusoid:
            /// `s(t) = offset + amplitude sin(2 pi frequency t + phase)`, `F = s(t) force`,
            /// `tau = s(t) torque`.
            Sinusoidal "sinusoidal" [reads_the_clock] {
                /// World-frame force at `s = 1`.
                force: vector "N",
                /// World-frame torque at `s = 1`.
                torque: vector "N m",
                /// Constant part of `s`.
                offset: number "1",
                /// Amplitude of the oscillating part of `s`.
                amplitude: number "1" required,
                /// Frequency (Hz).
                frequency: number "Hz" non_negative required,
                /// Phase (radians).
                phase: number "rad",
            } => |body, total| {
                let scale = sinusoid_scale(offset, amplitude, frequency, phase, body.time);
                add_scaled(force, torque, scale, total);
            }
            @check_every 6 |s| {
                force: s.dir * (2.0 * s.mass),
                torque: s.spin_up * 0.5,
                offset: 0.2,
                amplitude: 1.0,
                frequency: 2.0,
                phase: s.phase,
            }
            /// A world-frame force and torque scaled by a piecewise-linear profile:
            /// `F = s(t) force`, `tau = s(t) torque`, `s` interpolated linearly between the
            /// keyframes `(t_i, s_i)` of `Crowd::keyframes[table]` and held constant before the
            /// first and after the last. Its scale is found by its callers from the table.
            Keyframed "keyframed" [reads_the_clock] {
                /// World-frame force at `s = 1`.
                force: vector "N",
                /// World-frame torque at `s = 1`.
                torque: vector "N m";
                table
            }
            @check_every 8 |s| {
                force: s.dir * (2.0 * s.mass),
                torque: s.spin_up,
                table: s.keyframes,
            }
            /// The crowd's [`CustomForce`](crate::physics::custom_force::CustomForce): a WGSL
            /// function on the GPU, its Rust closure on the CPU backends. It returns a world
            /// force and the torque about the centre of mass.
            Custom "custom" [reads_the_clock] @check_all {}
            /// Quadratic (turbulent) drag in the world frame: `F = -linear |v| v`,
            /// `tau = -angular |omega| omega`.
            QuadraticDrag "quadratic_drag" {
                /// Linear coefficient (N s^2 / m^2).
                linear: number "N s^2/m^2" non_negative,
                /// Angular coefficient (N m s^2).
                angular: number "N m s^2" non_negative,
            } => |body, total| {
                let speed = body.aux.velocity.length();
                let spin = body.aux.angular_velocity.length();
                total.force = total.force - body.aux.velocity * (linear * speed);
                total.torque = total.torque - body.aux.angular_velocity * (angular * spin);
            }
            // About 1 m/s^2 at 3 m/s and 0.2 rad/s^2 at 3 rad/s.
            @check_every 9 |s| { linear: 0.1 * s.mass, angular: 0.02 * s.stiffest_inertia }
            ;
            /// A force of a law registered under a name (`ForceLaws::with`): the crowd's custom
            /// force, a [`ForceLaw`](crate::physics::force_law::ForceLaw) that declares its
            /// numbers, with this force's values of them.
            law Law "law"
        }
    };
}

pub(crate) use every_force_kind;

every_force_kind!(force_kinds);

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
        self.kind.type_name()
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
    /// Every built-in kind in the order the docs' table and the scene format's messages list
    /// them; `Law`, the type of a registered law's forces, is named by each law's own name.
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
    /// hold (in [`ForceParameters`]): what it declares ([`ForceType::declared_parameters`],
    /// [`ForceType::reads_a_table`]). A law's forces hold every lane: their law declares
    /// how many it reads.
    pub fn arity(self) -> (usize, usize, bool) {
        if self == ForceType::Law {
            return (2, 4, false);
        }
        let declared = self.declared_parameters();
        let vectors = (declared.iter())
            .filter(|p| p.shape == ParameterShape::Vector)
            .count();
        (vectors, declared.len() - vectors, self.reads_a_table())
    }
}

impl ForceKind {
    /// The numbers this force declares: its type's ([`ForceType::declared_parameters`]), or
    /// a law's force its law's.
    pub fn declared_parameters(&self) -> &'static [ParameterDeclaration] {
        match self {
            ForceKind::Law { law, .. } => law.parameters,
            _ => self.force_type().declared_parameters(),
        }
    }

    /// The name a scene gives this force's type: a law's force its law's name.
    pub fn type_name(&self) -> &'static str {
        match self {
            ForceKind::Law { law, .. } => law.name,
            _ => self.force_type().name(),
        }
    }

    /// The kind's numeric parameters, each with the name the scene format gives it and the
    /// range it must lie in, in the order of the kind's declaration
    /// ([`ForceType::declared_parameters`]). The keyframe table's index is not one: it names
    /// a table, and is checked against the crowd.
    pub(crate) fn numeric_fields(&self) -> Vec<NumericField> {
        let p = self.parameters();
        let (mut vectors, mut scalars) = (p.vectors.into_iter(), p.scalars.into_iter());
        let declared = self.declared_parameters();
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
        let kinds = ForceType::LISTED
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

    /// The listed order holds every built-in kind once; the law's type comes last.
    #[test]
    fn every_kind_is_listed_once() {
        let mut listed = ForceType::LISTED.to_vec();
        listed.sort_by_key(|kind| kind.code());
        listed.push(ForceType::Law);
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
        // The built-in kinds; a registered law's are tests/suite/force_laws.rs'.
        for kind in ForceType::LISTED {
            let row = format!("| `{}` |", kind.name());
            assert!(doc.contains(&row), "docs/forces.md has no row {row}");
        }
    }

    /// The scene format knows every force type by its name: an entry with only `type` is
    /// read as that type (accepted, or refused for a missing parameter), never refused as
    /// an unknown type.
    #[test]
    fn the_scene_format_reads_every_force_type() {
        // The built-in kinds; a registered law's are tests/suite/force_laws.rs'.
        for kind in ForceType::LISTED {
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
        // Every built-in kind; its custom force takes the slot a registered law would.
        for kind in ForceType::LISTED {
            assert!(
                crowd.forces.iter().any(|f| f.kind.force_type() == kind),
                "cross_check_crowd has no {} force",
                kind.name()
            );
        }
    }
}
