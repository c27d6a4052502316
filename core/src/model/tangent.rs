//! What a derivative is taken along. Users name groups of directions: `state` (the 13
//! components of the initial state `y = (x, q, P, L)`, `q` as `w, x, y, z`), `mass`,
//! `inertia` (the body inertia's `xx, yy, zz, xy, xz, yz`), one number of a force in the
//! scene's own path syntax (`forces[1].stiffness`, `forces[0].acceleration`: three
//! directions, one a component; `forces[2].keyframes`: a keyframed force's table, two
//! directions a keyframe) or of a plane (`planes[0].friction`, `planes[0].point`,
//! `planes[0].normal`).

use crate::model::error::{Error, Result};
use crate::model::force::{FieldValue, Force, ForceKind, NumericField};
use crate::model::plane::Plane;

/// Components of the state `y`.
pub const STATE_COMPONENTS: usize = 13;

/// The name of a keyframed force's table, as the scene spells it.
const KEYFRAMES: &str = "keyframes";

/// Entries of the body inertia a sensitivity moves.
pub const INERTIA_ENTRIES: usize = 6;

/// The numbers the steps hold of a plane: its unit normal's `x, y, z`, its offset, its
/// restitution and its friction.
pub const PLANE_NUMBERS: usize = 6;

/// Where one number of a force sits among its parameters (`ForceKind::parameters`): its
/// vector fields in the order [`numeric_fields`](crate::model::force::ForceKind) lists them,
/// then its number fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParameterSlot {
    /// Component `component` of vector parameter `vector`.
    Vector { vector: usize, component: usize },
    /// Scalar parameter `index`.
    Scalar(usize),
}

impl ParameterSlot {
    /// The slot's place among a force's ten parameter numbers: the two vectors' components,
    /// then the four scalars (as a GPU force record holds them).
    pub fn place(self) -> usize {
        match self {
            ParameterSlot::Vector { vector, component } => 3 * vector + component,
            ParameterSlot::Scalar(index) => 6 + index,
        }
    }
}

/// One input a derivative is taken along.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Component `0..13` of the initial state `y`.
    State(usize),
    /// The mass `M`, with the body inertia held.
    Mass,
    /// Entry `xx, yy, zz, xy, xz, yz` (`0..6`) of the body inertia; an off-diagonal entry
    /// moves both of its places in the symmetric tensor.
    Inertia(usize),
    /// One number of the body's `force`-th force (in the order its steps are given them).
    Force { force: usize, slot: ParameterSlot },
    /// Number `number` of the keyframe table of the body's `force`-th force, a keyframed
    /// one: `2 i` is keyframe `i`'s time, `2 i + 1` its value.
    Keyframe { force: usize, number: usize },
    /// One number of the crowd's plane `plane`.
    Plane { plane: usize, number: PlaneNumber },
}

/// A number of a plane that a derivative is taken along.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlaneNumber {
    /// Component `0..3` of the scene's `point` on the surface: it moves the plane's offset
    /// `n . point` by that component of the unit normal `n`.
    Point(usize),
    /// Component `0..3` of the normal as the simulation holds it (normalized on load): it
    /// turns the plane about its `point`.
    Normal(usize),
    /// The coefficient of restitution.
    Restitution,
    /// The friction coefficient.
    Friction,
}

impl PlaneNumber {
    /// The numbers of a plane a derivative is taken along, as the scene names them, with
    /// their directions.
    const FIELDS: [(&'static str, &'static [PlaneNumber]); 4] = [
        (
            "point",
            &[
                PlaneNumber::Point(0),
                PlaneNumber::Point(1),
                PlaneNumber::Point(2),
            ],
        ),
        (
            "normal",
            &[
                PlaneNumber::Normal(0),
                PlaneNumber::Normal(1),
                PlaneNumber::Normal(2),
            ],
        ),
        ("restitution", &[PlaneNumber::Restitution]),
        ("friction", &[PlaneNumber::Friction]),
    ];

    /// The derivatives of the numbers the steps hold of `plane` (its unit normal's `x, y,
    /// z`, its offset, restitution and friction, in [`PLANE_NUMBERS`] order) along this
    /// number, in f64; every backend rounds them to its precision.
    ///
    /// The offset is `n . point`: along `point_j` it moves by `n_j`. Along the normal's
    /// `n_j`, renormalized as on load, `n` moves by `e_j - n n_j` (orthogonal to `n`) and,
    /// the point held, the offset by that dotted with the point.
    pub fn seeds(self, plane: &Plane) -> [f64; PLANE_NUMBERS] {
        let n = plane.normal.to_array();
        let mut seeds = [0.0; PLANE_NUMBERS];
        match self {
            PlaneNumber::Point(j) => seeds[3] = n[j],
            PlaneNumber::Normal(j) => {
                for (i, seed) in seeds[..3].iter_mut().enumerate() {
                    let unit = if i == j { 1.0 } else { 0.0 };
                    *seed = unit - n[i] * n[j];
                }
                seeds[3] = plane.point.dot(glam::DVec3::from_slice(&seeds[..3]));
            }
            PlaneNumber::Restitution => seeds[4] = 1.0,
            PlaneNumber::Friction => seeds[5] = 1.0,
        }
        seeds
    }

    /// The directions of the field `field` (a name [`Tangent::parse`] accepted).
    pub(crate) fn of_field(field: &str) -> &'static [PlaneNumber] {
        let (_, numbers) = Self::FIELDS
            .iter()
            .find(|(name, _)| *name == field)
            .expect("a parsed plane field");
        numbers
    }
}

/// A named group of directions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tangent {
    /// The 13 components of the initial state: the columns of the Jacobian.
    State,
    /// The mass.
    Mass,
    /// The six entries of the body inertia.
    Inertia,
    /// Field `field` of the scene's force `force`: three directions for a vector, one for a
    /// number.
    Force {
        /// The force's index in the crowd's list.
        force: usize,
        /// The field's name, as the scene spells it.
        field: &'static str,
        /// Whether the field is a 3-vector.
        vector: bool,
    },
    /// The keyframe table of the scene's force `force`, a keyframed one: two directions a
    /// keyframe, its time and its value, `t0, v0, t1, v1, ...` as the scene writes them.
    Keyframes {
        /// The force's index in the crowd's list.
        force: usize,
        /// How many keyframes its table holds.
        keyframes: usize,
    },
    /// Field `field` of the crowd's plane `plane`: `point` or `normal` (three directions
    /// each), `restitution` or `friction`.
    Plane {
        /// The plane's index in the crowd's list.
        plane: usize,
        /// The field's name, as the scene spells it.
        field: &'static str,
    },
}

impl Tangent {
    /// The tangent `name` names among a crowd's `forces`, `planes` and keyframe tables
    /// `keyframes`; `flag` is the option or argument it came from, named in the error.
    pub fn parse(
        name: &str,
        forces: &[Force],
        planes: &[Plane],
        keyframes: &[Vec<[f64; 2]>],
        flag: &str,
    ) -> Result<Self> {
        let invalid = |message: String| Error::invalid(flag, message);
        match name {
            "state" => return Ok(Tangent::State),
            "mass" => return Ok(Tangent::Mass),
            "inertia" => return Ok(Tangent::Inertia),
            _ => {}
        }
        let not_a_tangent = || {
            invalid(format!(
                "`{name}` names no tangent: use state, mass, inertia, forces[i].FIELD or planes[i].FIELD"
            ))
        };
        if let Some(rest) = name.strip_prefix("planes[") {
            let (index, field) = rest.split_once("].").ok_or_else(not_a_tangent)?;
            let plane: usize = index.parse().map_err(|_| not_a_tangent())?;
            if plane >= planes.len() {
                return Err(invalid(format!(
                    "`{name}`: there is no planes[{plane}] (the crowd has {} planes)",
                    planes.len()
                )));
            }
            let Some((field, _)) = PlaneNumber::FIELDS.iter().find(|(f, _)| *f == field) else {
                let names: Vec<&str> = PlaneNumber::FIELDS.iter().map(|(f, _)| *f).collect();
                return Err(invalid(format!(
                    "`{name}`: a plane has no such number; take them along {}",
                    names.join(", ")
                )));
            };
            return Ok(Tangent::Plane { plane, field });
        }
        let rest = name.strip_prefix("forces[").ok_or_else(not_a_tangent)?;
        let (index, field) = rest.split_once("].").ok_or_else(not_a_tangent)?;
        let force: usize = index.parse().map_err(|_| not_a_tangent())?;
        let Some(given) = forces.get(force) else {
            return Err(invalid(format!(
                "`{name}`: there is no forces[{force}] (the crowd has {} forces)",
                forces.len()
            )));
        };
        let fields = given.kind.numeric_fields();
        let table = keyframe_table(given, keyframes);
        if let (Some(table), KEYFRAMES) = (table, field) {
            return Ok(Tangent::Keyframes {
                force,
                keyframes: table.len(),
            });
        }
        let Some(found) = fields.iter().find(|f| f.name == field) else {
            let names = Tangent::force_numbers(given, keyframes);
            let known = match names.is_empty() {
                true => "it has none".to_string(),
                false => format!("its numbers are {}", names.join(", ")),
            };
            return Err(invalid(format!(
                "`{name}`: a {} force has no number `{field}`; {known}",
                given.type_name()
            )));
        };
        Ok(Tangent::Force {
            force,
            field: found.name,
            vector: matches!(found.value, FieldValue::Vector(_)),
        })
    }

    /// The numbers of `force` a tangent can follow (`forces[i].NAME`), in its kind's order:
    /// its numeric parameters, then `keyframes` for a keyframed force whose table is among
    /// `keyframes`.
    pub fn force_numbers(force: &Force, keyframes: &[Vec<[f64; 2]>]) -> Vec<&'static str> {
        let mut names: Vec<&str> = force.kind.numeric_fields().iter().map(|f| f.name).collect();
        names.extend(keyframe_table(force, keyframes).map(|_| KEYFRAMES));
        names
    }

    /// How many directions it holds: the `k` of its `(bodies, 13, k)` array.
    pub fn width(&self) -> usize {
        match self {
            Tangent::State => STATE_COMPONENTS,
            Tangent::Mass => 1,
            Tangent::Inertia => INERTIA_ENTRIES,
            Tangent::Force { vector: true, .. } => 3,
            Tangent::Force { vector: false, .. } => 1,
            Tangent::Keyframes { keyframes, .. } => 2 * keyframes,
            Tangent::Plane { field, .. } => PlaneNumber::of_field(field).len(),
        }
    }

    /// Its name, as [`parse`](Self::parse) reads it.
    pub fn name(&self) -> String {
        match self {
            Tangent::State => "state".to_string(),
            Tangent::Mass => "mass".to_string(),
            Tangent::Inertia => "inertia".to_string(),
            Tangent::Force { force, field, .. } => format!("forces[{force}].{field}"),
            Tangent::Keyframes { force, .. } => format!("forces[{force}].{KEYFRAMES}"),
            Tangent::Plane { plane, field } => format!("planes[{plane}].{field}"),
        }
    }
}

/// The tangents a simulation carries: named groups of directions, side by side as the
/// columns of each body's `13 x k` block (`k` their widths summed), in the order named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TangentPlan {
    tangents: Vec<Tangent>,
}

impl TangentPlan {
    /// The tangents `names` names among a crowd's `forces`, `planes` and keyframe tables
    /// `keyframes`; `flag` is the option or argument they came from, named in the error. A
    /// name given twice is an error.
    pub fn parse(
        names: &[impl AsRef<str>],
        forces: &[Force],
        planes: &[Plane],
        keyframes: &[Vec<[f64; 2]>],
        flag: &str,
    ) -> Result<Self> {
        let mut tangents: Vec<Tangent> = Vec::new();
        for name in names {
            let tangent = Tangent::parse(name.as_ref(), forces, planes, keyframes, flag)?;
            if tangents.contains(&tangent) {
                return Err(Error::invalid(
                    flag,
                    format!("`{}` is named twice", tangent.name()),
                ));
            }
            tangents.push(tangent);
        }
        Ok(Self { tangents })
    }

    /// The groups, in order.
    pub fn tangents(&self) -> &[Tangent] {
        &self.tangents
    }

    /// Columns per body: the widths summed.
    pub fn width(&self) -> usize {
        self.tangents.iter().map(Tangent::width).sum()
    }

    /// Numbers per body: 13 rows of [`width`](Self::width) columns.
    pub fn body_len(&self) -> usize {
        STATE_COMPONENTS * self.width()
    }

    /// The columns of the group `name` names (as [`Tangent::parse`] reads it), if carried.
    pub fn columns(&self, name: &str) -> Option<std::ops::Range<usize>> {
        let mut first = 0;
        for tangent in &self.tangents {
            if tangent.name() == name {
                return Some(first..first + tangent.width());
            }
            first += tangent.width();
        }
        None
    }

    /// One body's block at the start, for a body whose orientation is the unit quaternion
    /// `q` (`w, x, y, z`): row `r`, column `c` at `r * width + c`. A parameter's column is
    /// zero. The state's columns are the identity, except that the orientation block is
    /// `I - q q^T`: the simulation normalizes an orientation on load, so moving `q` along
    /// itself moves nothing, and the Jacobian's orientation columns are those of the
    /// normalized input.
    pub fn initial_block(&self, q: [f64; 4], out: &mut [f64]) {
        let k = self.width();
        out.fill(0.0);
        let mut first = 0;
        for tangent in &self.tangents {
            if *tangent == Tangent::State {
                for c in 0..STATE_COMPONENTS {
                    out[c * k + first + c] = 1.0;
                }
                for r in 0..4 {
                    for c in 0..4 {
                        out[(3 + r) * k + first + 3 + c] -= q[r] * q[c];
                    }
                }
            }
            first += tangent.width();
        }
    }

    /// For each column, the rows its start can make nonzero (bit `r` for row `r`): those of
    /// [`initial_block`](Self::initial_block) from an orientation with no zero component.
    pub fn seeded_rows(&self) -> Vec<u16> {
        let k = self.width();
        let mut block = vec![0.0; self.body_len()];
        self.initial_block([0.5; 4], &mut block);
        (0..k)
            .map(|c| {
                (0..STATE_COMPONENTS)
                    .filter(|r| block[r * k + c] != 0.0)
                    .fold(0, |rows, r| rows | 1 << r)
            })
            .collect()
    }
}

/// The parameter slots of a force's numeric fields, in their order: the `k`-th vector field
/// is vector parameter `k`, the `j`-th number field scalar parameter `j`.
pub(crate) fn parameter_slots(fields: &[NumericField]) -> Vec<(&'static str, Vec<ParameterSlot>)> {
    let (mut vectors, mut scalars) = (0, 0);
    fields
        .iter()
        .map(|f| {
            let slots = match f.value {
                FieldValue::Vector(_) => {
                    vectors += 1;
                    (0..3)
                        .map(|component| ParameterSlot::Vector {
                            vector: vectors - 1,
                            component,
                        })
                        .collect()
                }
                FieldValue::Number(_) => {
                    scalars += 1;
                    vec![ParameterSlot::Scalar(scalars - 1)]
                }
            };
            (f.name, slots)
        })
        .collect()
}

/// The keyframe table a keyframed `force` reads, where `keyframes` holds it.
fn keyframe_table<'a>(force: &Force, keyframes: &'a [Vec<[f64; 2]>]) -> Option<&'a Vec<[f64; 2]>> {
    match force.kind {
        ForceKind::Keyframed { table, .. } => keyframes.get(table),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use glam::DVec3;

    use super::*;
    use crate::model::force::ForceKind;

    fn forces() -> Vec<Force> {
        vec![
            Force::on_all(ForceKind::Gravity {
                acceleration: DVec3::new(0.0, 0.0, -9.81),
            }),
            Force::on_body(
                3,
                ForceKind::Spring {
                    anchor: DVec3::ZERO,
                    attach: DVec3::X,
                    stiffness: 4.0,
                    damping: 0.5,
                },
            ),
            Force::on_all(ForceKind::Custom),
        ]
    }

    fn planes() -> [Plane; 2] {
        [
            Plane::ground(0.5, 0.3),
            Plane::through(DVec3::X, DVec3::NEG_X, 0.2, 0.9),
        ]
    }

    #[test]
    fn names_parse_to_their_groups_and_widths() {
        let forces = forces();
        for (name, width) in [
            ("state", 13),
            ("mass", 1),
            ("inertia", 6),
            ("forces[0].acceleration", 3),
            ("forces[1].stiffness", 1),
            ("forces[1].attach", 3),
            ("planes[0].point", 3),
            ("planes[1].normal", 3),
            ("planes[1].restitution", 1),
            ("planes[1].friction", 1),
        ] {
            let tangent = Tangent::parse(name, &forces, &planes(), &[], "--sensitivity").unwrap();
            assert_eq!((tangent.width(), tangent.name()), (width, name.to_string()));
        }
    }

    #[test]
    fn a_name_that_is_not_a_number_of_the_crowd_is_one_line_naming_it() {
        let forces = forces();
        for (name, expected) in [
            (
                "speed",
                "--sensitivity: `speed` names no tangent: use state, mass, inertia, forces[i].FIELD or planes[i].FIELD",
            ),
            (
                "forces[x].stiffness",
                "--sensitivity: `forces[x].stiffness` names no tangent: use state, mass, inertia, forces[i].FIELD or planes[i].FIELD",
            ),
            (
                "forces[5].stiffness",
                "--sensitivity: `forces[5].stiffness`: there is no forces[5] (the crowd has 3 forces)",
            ),
            (
                "forces[1].stifness",
                "--sensitivity: `forces[1].stifness`: a spring force has no number `stifness`; its numbers are anchor, attach, stiffness, damping",
            ),
            (
                "forces[2].scale",
                "--sensitivity: `forces[2].scale`: a custom force has no number `scale`; it has none",
            ),
            (
                "planes[2].friction",
                "--sensitivity: `planes[2].friction`: there is no planes[2] (the crowd has 2 planes)",
            ),
            (
                "planes[1].bounce",
                "--sensitivity: `planes[1].bounce`: a plane has no such number; take them along point, normal, restitution, friction",
            ),
            (
                "planes[0]friction",
                "--sensitivity: `planes[0]friction` names no tangent: use state, mass, inertia, forces[i].FIELD or planes[i].FIELD",
            ),
        ] {
            let error = Tangent::parse(name, &forces, &planes(), &[], "--sensitivity").unwrap_err();
            assert_eq!(error.to_string(), expected);
        }
    }

    /// A keyframed force's table is two directions a keyframe, named by the field the scene
    /// writes it in; a force of another kind has no table.
    #[test]
    fn a_keyframe_table_is_two_directions_a_keyframe() {
        let keyframed = |table| {
            Force::on_all(ForceKind::Keyframed {
                force: DVec3::X,
                torque: DVec3::ZERO,
                table,
            })
        };
        let forces = [keyframed(1), forces().remove(1), keyframed(0)];
        let tables = [vec![[0.0, 1.0]], vec![[0.0, 1.0], [1.0, 2.0], [3.0, 0.5]]];
        let parse = |name| Tangent::parse(name, &forces, &[], &tables, "--sensitivity");
        let table = parse("forces[0].keyframes").unwrap();
        assert_eq!(
            (table.width(), table.name()),
            (6, "forces[0].keyframes".into())
        );
        assert_eq!(parse("forces[2].keyframes").unwrap().width(), 2);
        assert_eq!(
            parse("forces[0].keyframe").unwrap_err().to_string(),
            "--sensitivity: `forces[0].keyframe`: a keyframed force has no number `keyframe`; its numbers are force, torque, keyframes"
        );
        assert_eq!(
            parse("forces[1].keyframes").unwrap_err().to_string(),
            "--sensitivity: `forces[1].keyframes`: a spring force has no number `keyframes`; its numbers are anchor, attach, stiffness, damping"
        );
    }

    /// Every kind's fields, each given a different value, are found at their slots of
    /// `parameters()`, and every slot a kind reads belongs to one field.
    #[test]
    fn parameter_slots_are_where_the_parameters_hold_each_field() {
        let v = |a: f64| DVec3::new(a, a + 0.25, a + 0.5);
        let kinds = [
            ForceKind::Gravity {
                acceleration: v(1.0),
            },
            ForceKind::LinearDrag {
                linear: 2.0,
                angular: 3.0,
            },
            ForceKind::QuadraticDrag {
                linear: 2.0,
                angular: 3.0,
            },
            ForceKind::PointForce {
                force: v(1.0),
                point: v(2.0),
            },
            ForceKind::Spring {
                anchor: v(1.0),
                attach: v(2.0),
                stiffness: 3.0,
                damping: 4.0,
            },
            ForceKind::Attractor {
                centre: v(1.0),
                strength: 3.0,
                softening: 4.0,
            },
            ForceKind::Thrust {
                force: v(1.0),
                torque: v(2.0),
            },
            ForceKind::Sinusoidal {
                force: v(1.0),
                torque: v(2.0),
                offset: 3.0,
                amplitude: 4.0,
                frequency: 5.0,
                phase: 6.0,
            },
            ForceKind::Keyframed {
                force: v(1.0),
                torque: v(2.0),
                table: 0,
            },
        ];
        for kind in kinds {
            let p = kind.parameters();
            let mut read = [p.vectors[0].to_array(), p.vectors[1].to_array()].concat();
            read.extend(p.scalars);
            let mut claimed = vec![false; read.len()];
            let fields = kind.numeric_fields();
            for ((name, slots), field) in parameter_slots(&fields).into_iter().zip(&fields) {
                let values: Vec<f64> = match field.value {
                    FieldValue::Vector(value) => value.to_array().to_vec(),
                    FieldValue::Number(value) => vec![value],
                };
                for (slot, value) in slots.into_iter().zip(values) {
                    let at = slot.place();
                    assert_eq!(read[at], value, "{:?} {name}", kind.force_type());
                    claimed[at] = true;
                }
            }
            for (at, value) in read.iter().enumerate() {
                assert!(
                    claimed[at] || *value == 0.0,
                    "{:?}: parameter {at} = {value} belongs to no field",
                    kind.force_type()
                );
            }
        }
    }
}
