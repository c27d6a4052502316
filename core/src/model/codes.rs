//! The numbering of every kind the kernel switches on: force types, integrators and shape
//! kinds. Each is one Rust list ([`Coded::ALL`]); a value's code is its position there, and
//! the WGSL constants (`FORCE_GRAVITY`, ...), the GPU records and the checkpoint tags are
//! all derived from that list, so no numbering is written twice.

/// A kind with a code: its position in [`Coded::ALL`], counted from [`Coded::FIRST_CODE`].
pub trait Coded: Copy + PartialEq + 'static {
    /// Every value, in code order. Never reorder: checkpoints store the codes.
    const ALL: &'static [Self];
    /// Prefix of the generated WGSL constants: `FORCE` gives `FORCE_LINEAR_DRAG`.
    const WGSL_PREFIX: &'static str;
    /// The code of `ALL[0]` (shapes start at 1: 0 is a body without a shape).
    const FIRST_CODE: u32 = 0;

    /// The name scene files and the command line use.
    fn name(self) -> &'static str;

    /// The value's code.
    fn code(self) -> u32 {
        let position = Self::ALL
            .iter()
            .position(|&v| v == self)
            .expect("every value is listed in ALL");
        Self::FIRST_CODE + position as u32
    }

    /// The value of `code`, if it is one.
    fn from_code(code: u32) -> Option<Self> {
        let position = code.checked_sub(Self::FIRST_CODE)?;
        Self::ALL.get(position as usize).copied()
    }

    /// The name of the WGSL constant holding the code: `FORCE_LINEAR_DRAG`.
    fn wgsl_constant(self) -> String {
        format!("{}_{}", Self::WGSL_PREFIX, self.name().to_uppercase())
    }
}

/// `const NAME: u32 = CODEu;` for every value of `T`, one a line.
pub fn wgsl_constants<T: Coded>() -> String {
    T::ALL
        .iter()
        .map(|v| format!("const {}: u32 = {}u;\n", v.wgsl_constant(), v.code()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::force::ForceType;
    use crate::model::integrator::Integrator;
    use crate::model::shape::ShapeKind;

    fn codes_round_trip<T: Coded + std::fmt::Debug>() {
        for (i, &v) in T::ALL.iter().enumerate() {
            assert_eq!(v.code(), T::FIRST_CODE + i as u32);
            assert_eq!(T::from_code(v.code()), Some(v));
        }
        assert_eq!(T::from_code(T::FIRST_CODE + T::ALL.len() as u32), None);
        let names: std::collections::HashSet<_> = T::ALL.iter().map(|v| v.name()).collect();
        assert_eq!(names.len(), T::ALL.len(), "two values share a name");
    }

    #[test]
    fn every_code_round_trips_and_every_name_is_distinct() {
        codes_round_trip::<ForceType>();
        codes_round_trip::<Integrator>();
        codes_round_trip::<ShapeKind>();
    }

    #[test]
    fn the_wgsl_constants_are_generated_from_the_lists() {
        let forces = wgsl_constants::<ForceType>();
        assert!(
            forces.contains("const FORCE_GRAVITY: u32 = 0u;"),
            "{forces}"
        );
        assert!(
            forces.contains("const FORCE_LINEAR_DRAG: u32 = 1u;"),
            "{forces}"
        );
        assert_eq!(forces.lines().count(), ForceType::ALL.len());
        let shapes = wgsl_constants::<ShapeKind>();
        assert!(shapes.contains("const SHAPE_BOX: u32 = 1u;"), "{shapes}");
    }
}
