//! Contact with static planes in f64: the definition (`src/physics/contact.rs`) on one body.

use crate::model::body::BodyState;
use crate::model::mass::MassProperties;
use crate::physics::contact::{PlaneConstants, ShapeConstants, resolve_contacts as resolve};
use crate::physics::motion::{MassConstants, State};

/// Resolves `next` (the state after a step that started at `start`) against every plane.
pub(crate) fn resolve_contacts(
    start: &BodyState,
    next: &mut BodyState,
    mass: &MassProperties,
    shape: &ShapeConstants<f64>,
    planes: &[PlaneConstants<f64>],
    h: f64,
) {
    let constants = MassConstants::from(mass);
    *next = resolve(
        &start.into(),
        State::from(&*next),
        &constants,
        shape,
        planes,
        h,
    )
    .into();
}
