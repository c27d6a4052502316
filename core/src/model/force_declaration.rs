//! How a force kind is declared: its numbers ([`ParameterDeclaration`]) and the macro that
//! turns the list of kinds (`model/force.rs`) into [`ForceKind`](super::force::ForceKind),
//! [`ForceType`](super::force::ForceType) and the conversions between a force and the lanes
//! of [`ForceParameters`](super::force::ForceParameters), so that a kind is written once.

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
    /// A parameter of `shape` named `name` in `unit`, of any value, zero where left out.
    pub const fn new(name: &'static str, shape: ParameterShape, unit: &'static str) -> Self {
        Self {
            name,
            shape,
            unit,
            non_negative: false,
            required: false,
        }
    }

    /// The same, which must be `>= 0`.
    pub const fn non_negative(self) -> Self {
        Self {
            non_negative: true,
            ..self
        }
    }

    /// The same, which a scene must give.
    pub const fn required(self) -> Self {
        Self {
            required: true,
            ..self
        }
    }
}

/// How many registered laws one crowd runs at most: the forces of a checkpoint's crowd name
/// theirs by number until they are attached again.
pub const MAX_CROWD_LAWS: usize = 16;

/// The names of [`LawDeclaration::unattached`]: `law` and a number, which a registered law's
/// name (letters, digits and `_`) cannot be.
const UNATTACHED_NAMES: [&str; MAX_CROWD_LAWS] = [
    "law", "law 1", "law 2", "law 3", "law 4", "law 5", "law 6", "law 7", "law 8", "law 9",
    "law 10", "law 11", "law 12", "law 13", "law 14", "law 15",
];

/// A force law a user registers under a name: its name in the scene format and its numbers,
/// declared as a built-in kind declares its own (vectors first, at most two, then at most
/// four numbers: the lanes of a force record).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LawDeclaration {
    /// The name a scene's `type` gives it.
    pub name: &'static str,
    pub parameters: &'static [ParameterDeclaration],
}

impl LawDeclaration {
    /// What a force of a law read back from a checkpoint holds until the law is attached
    /// again (`Checkpoint::with_laws`): a crowd does not run it as it is. It is the crowd's
    /// first law's ([`LawDeclaration::unattached`]`(0)`).
    pub const UNATTACHED: Self = Self {
        name: UNATTACHED_NAMES[0],
        parameters: &[],
    };

    /// What a force of the crowd's law number `number` (its position in the crowd's laws,
    /// `CustomForce::laws`) holds when read back from a checkpoint, until the law is attached
    /// again; `None` past [`MAX_CROWD_LAWS`].
    pub fn unattached(number: usize) -> Option<&'static LawDeclaration> {
        static UNATTACHED: [LawDeclaration; MAX_CROWD_LAWS] = {
            let mut all = [LawDeclaration::UNATTACHED; MAX_CROWD_LAWS];
            let mut i = 0;
            while i < MAX_CROWD_LAWS {
                all[i].name = UNATTACHED_NAMES[i];
                i += 1;
            }
            all
        };
        UNATTACHED.get(number)
    }

    /// The crowd's law number of a force read back from a checkpoint whose law is not attached
    /// again ([`LawDeclaration::unattached`]); `None` for a law's own declaration.
    pub fn unattached_number(&self) -> Option<usize> {
        (self.parameters.is_empty())
            .then(|| UNATTACHED_NAMES.iter().position(|&name| name == self.name))
            .flatten()
    }

    /// The declaration, checked: a name of letters, digits and `_`, parameters named so and
    /// each once, vectors before numbers, as many as a force record's lanes hold. An error
    /// is one line naming what is wrong.
    pub fn checked(
        name: &'static str,
        parameters: &'static [ParameterDeclaration],
    ) -> Result<Self, String> {
        let word =
            |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !word(name) {
            return Err(format!(
                "force law name {name:?}: use letters, digits and _"
            ));
        }
        let vectors = parameters
            .iter()
            .take_while(|p| p.shape == ParameterShape::Vector)
            .count();
        if parameters[vectors..]
            .iter()
            .any(|p| p.shape == ParameterShape::Vector)
        {
            return Err(format!(
                "force law {name:?}: declare its vectors before its numbers"
            ));
        }
        if vectors > 2 || parameters.len() - vectors > 4 {
            return Err(format!(
                "force law {name:?}: a force holds at most 2 vectors and 4 numbers, not {vectors} and {}",
                parameters.len() - vectors
            ));
        }
        for (i, p) in parameters.iter().enumerate() {
            if !word(p.name) || p.name == "body" || p.name == "type" {
                return Err(format!(
                    "force law {name:?}: parameter name {:?} cannot be a scene field",
                    p.name
                ));
            }
            if parameters[..i].iter().any(|q| q.name == p.name) {
                return Err(format!(
                    "force law {name:?}: parameter {:?} is declared twice",
                    p.name
                ));
            }
        }
        Ok(Self { name, parameters })
    }
}

/// The field type of a parameter of shape `vector` or `number`.
macro_rules! parameter_type {
    (vector) => {
        glam::DVec3
    };
    (number) => {
        f64
    };
}

/// The [`ParameterShape`] written `vector` or `number`.
macro_rules! parameter_shape {
    (vector) => {
        $crate::model::force_declaration::ParameterShape::Vector
    };
    (number) => {
        $crate::model::force_declaration::ParameterShape::Number
    };
}

/// Puts `value`, a parameter of shape `vector` or `number`, in the next lane of its shape of
/// the `ForceParameters` `p` (`vectors` and `scalars` count the lanes taken).
macro_rules! put_in_lane {
    ($p:ident, $vectors:ident, $scalars:ident, vector, $value:expr) => {{
        $p.vectors[$vectors] = $value;
        $vectors += 1;
    }};
    ($p:ident, $vectors:ident, $scalars:ident, number, $value:expr) => {{
        $p.scalars[$scalars] = $value;
        $scalars += 1;
    }};
}

/// The next lane of shape `vector` or `number` of the lanes `vectors` and `scalars`.
macro_rules! take_lane {
    ($vectors:ident, $scalars:ident, vector) => {
        $vectors.next().expect("a vector lane")
    };
    ($vectors:ident, $scalars:ident, number) => {
        $scalars.next().expect("a scalar lane")
    };
}

/// `true` for a kind declared `[reads_the_clock]`; any other word in the brackets is an error.
macro_rules! reads_the_clock {
    (reads_the_clock) => {
        true
    };
}

/// The list of force kinds, in the order of their codes (a kind's position is its code in
/// kernels and checkpoints: new kinds go last). Each entry is a kind's variant of `ForceKind`
/// (its docs, the Rust API), its scene name and its numbers, each `name: shape "unit"` with
/// `non_negative` and `required` where they hold, vectors before numbers (they take the
/// lanes of `ForceParameters` in order); `; table` for a kind that reads a keyframe table,
/// `[reads_the_clock]` after the name for one whose load reads the time, and no braces for
/// one without numbers, then `=> |body, total| { .. }`, its law, for a kind whose load the
/// physics finds alone (`physics::forces::add_force`; the model does not read it); last,
/// after `;`, `law` and the variant of a registered force law, whose forces carry their law's
/// declaration and numbers. It defines `ForceKind`, `ForceType` with its codes and names, and
/// `ForceType::declared_parameters`, `ForceType::reads_the_clock`, `ForceKind::force_type`,
/// `ForceKind::parameters` and `ForceKind::from_parameters`.
macro_rules! force_kinds {
    ($(
        $(#[$kind_meta:meta])*
        $kind:ident $name:literal $([$reads:ident])? $({
            $(
                $(#[$field_meta:meta])*
                $field:ident : $shape:ident $unit:literal $($flag:ident)*
            ),* $(,)?
            $(; $table:ident)?
        })?
        $(=> |$body:ident, $total:ident| $add:block)?
        $(@check_all $every_body:tt)?
        $(@check_every $every:literal |$sample:ident| $numbers:tt)?
    )*
    ;
    $(#[$law_meta:meta])*
    law $law:ident $law_name:literal
    ) => {
        /// What a force source does to a body (Baraff 2.8: forces and torques about the
        /// centre of mass).
        #[derive(Clone, Copy, Debug, PartialEq)]
        #[non_exhaustive]
        pub enum ForceKind {
            $(
                $(#[$kind_meta])*
                $kind $({
                    $(
                        $(#[$field_meta])*
                        $field: $crate::model::force_declaration::parameter_type!($shape),
                    )*
                    $(
                        /// Index of the keyframe table in `Crowd::keyframes`.
                        $table: usize,
                    )?
                })?,
            )*
            $(#[$law_meta])*
            $law {
                /// The law: its name and its declared numbers. A reference, so that a force
                /// of a law is no larger than the largest built-in one (the reference reads
                /// every force at every stage).
                law: &'static $crate::model::force_declaration::LawDeclaration,
                /// Its vectors, in the order its declaration gives them.
                vectors: [::glam::DVec3; 2],
                /// Its numbers, after its vectors.
                scalars: [f64; 4],
            },
        }

        /// The type of a force without its parameters: what the scene format's `type`
        /// names, what the GPU record's `kind` and the checkpoint's tag number (its position
        /// in [`ForceType::ALL`]), and what the kernel's generated `FORCE_*` constants stand
        /// for.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ForceType {
            $($kind,)*
            $law,
        }

        impl $crate::model::codes::Coded for ForceType {
            const ALL: &'static [Self] = &[$(ForceType::$kind,)* ForceType::$law];
            const WGSL_PREFIX: &'static str = "FORCE";

            fn name(self) -> &'static str {
                match self {
                    $(ForceType::$kind => $name,)*
                    ForceType::$law => $law_name,
                }
            }
        }

        impl ForceType {
            /// Whether the kind reads a keyframe table (`ForceParameters::table`).
            pub fn reads_a_table(self) -> bool {
                match self {
                    $(ForceType::$kind => false $($(|| stringify!($table) != "")?)?,)*
                    ForceType::$law => false,
                }
            }

            /// Whether the kind's load reads the clock (declared `[reads_the_clock]`): then a
            /// step of a body it acts on is not a function of the body's state alone. A law's
            /// forces may read it ([`ForceInput::time`](crate::physics::force_law::ForceInput)).
            pub fn reads_the_clock(self) -> bool {
                match self {
                    $(ForceType::$kind => false $(|| $crate::model::force_declaration::reads_the_clock!($reads))?,)*
                    ForceType::$law => true,
                }
            }

            /// The kind's numeric parameters, declared once: each one's name in the scene
            /// format (and in `--sensitivity forces[i].<name>`), shape, unit, range and
            /// whether a scene must give it. Vectors come first, in [`ForceParameters`]'
            /// vector lanes in this order, then numbers, in its scalar lanes. A keyframed
            /// force's table and the custom force's WGSL are not numbers: the scene format
            /// reads them apart. A law's numbers are its own declaration's, which its forces
            /// carry ([`ForceKind::declared_parameters`]): the type alone declares none.
            pub fn declared_parameters(self) -> &'static [ParameterDeclaration] {
                match self {
                    $(ForceType::$kind => const {
                        &[$($(
                            ParameterDeclaration::new(
                                stringify!($field),
                                $crate::model::force_declaration::parameter_shape!($shape),
                                $unit,
                            )$(.$flag())*,
                        )*)?]
                    },)*
                    ForceType::$law => &[],
                }
            }
        }

        impl ForceKind {
            /// The type of this force.
            pub fn force_type(&self) -> ForceType {
                match self {
                    $(ForceKind::$kind $({ $($field: _,)* $($table: _)? })? => ForceType::$kind,)*
                    ForceKind::$law { .. } => ForceType::$law,
                }
            }

            /// The parameters, in the order of [`ForceParameters`]: what the GPU record and
            /// the checkpoint hold.
            #[allow(unused_assignments, unused_mut, unused_variables)]
            pub fn parameters(&self) -> ForceParameters {
                let mut p = ForceParameters::default();
                let (mut vectors, mut scalars) = (0, 0);
                match *self {
                    $(ForceKind::$kind $({ $($field,)* $($table)? })? => {
                        $(
                            $($crate::model::force_declaration::put_in_lane!(
                                p, vectors, scalars, $shape, $field
                            );)*
                            $(p.table = Some($table);)?
                        )?
                    })*
                    ForceKind::$law { vectors, scalars, .. } => {
                        p.vectors = vectors;
                        p.scalars = scalars;
                    }
                }
                p
            }

            /// The force of type `kind` with parameters `p` (the inverse of
            /// [`ForceKind::parameters`]).
            #[allow(unused_mut, unused_variables)]
            pub fn from_parameters(kind: ForceType, p: &ForceParameters) -> Self {
                let mut vectors = p.vectors.into_iter();
                let mut scalars = p.scalars.into_iter();
                match kind {
                    $(ForceType::$kind => ForceKind::$kind $({
                        $($field: $crate::model::force_declaration::take_lane!(
                            vectors, scalars, $shape
                        ),)*
                        $($table: p.table.unwrap_or(0),)?
                    })?,)*
                    // A checkpoint's record of the crowd's law number `table`.
                    ForceType::$law => ForceKind::$law {
                        law: $crate::model::force_declaration::LawDeclaration::unattached(
                            p.table.unwrap_or(0),
                        )
                        .unwrap_or(&$crate::model::force_declaration::LawDeclaration::UNATTACHED),
                        vectors: p.vectors,
                        scalars: p.scalars,
                    },
                }
            }
        }
    };
}

pub(crate) use {
    force_kinds, parameter_shape, parameter_type, put_in_lane, reads_the_clock, take_lane,
};
