//! A colliding crowd on the reference: every body takes one step (planes included), then
//! the crowd's touching pairs are resolved together (`physics::collision`), step by step.

use rayon::prelude::*;

use crate::assembly::body_masses::BodyMasses;
use crate::model::body::BodyState;
use crate::model::error::{Error, Result};
use crate::model::mass::MassProperties;
use crate::physics::algebra::{Mat3, Vec3};
use crate::physics::collision::{
    Collider, CollisionConstants, PairContact, SweptSphere, pair_contact, plane_holds, separate,
    swept_sphere,
};
use crate::physics::contact::{PlaneConstants, ShapeConstants};
use crate::physics::motion::{MassConstants, State};
use crate::physics::neighbours::candidate_pairs;

/// Rounds of [`separate`] that part the bodies a crowd starts with overlapping.
pub const SEPARATION_ROUNDS: usize = 64;

/// The most bodies one body may start overlapping: more is a crowd piled on one spot.
pub const MOST_START_OVERLAPS: u32 = 64;

/// Body `i`'s collider and swept sphere at state `state`; `moves` is false for a frozen
/// body, which no impulse or push moves.
pub fn collider_of(
    state: &State<f64>,
    mass: &MassProperties,
    acceleration: Vec3<f64>,
    moves: bool,
) -> (Collider<f64>, SweptSphere<f64>) {
    let constants = MassConstants::from(mass);
    let rotation = state.orientation.normalize().to_rotation();
    let inv_inertia = rotation.product(
        &constants
            .inv_inertia
            .to_mat3()
            .product(&rotation.transpose()),
    );
    let zero = Mat3 {
        rows: [Vec3::splat(0.0); 3],
    };
    let shape = ShapeConstants::of(
        &mass
            .shape()
            .expect("checked: every colliding body has a shape"),
    );
    let collider = Collider {
        position: state.position,
        linear_momentum: state.linear_momentum,
        angular_momentum: state.angular_momentum,
        inv_mass: if moves { constants.inv_mass } else { 0.0 },
        inv_inertia: if moves { inv_inertia } else { zero },
        acceleration,
    };
    (collider, swept_sphere(&shape, state.position, &rotation))
}

/// The touching pairs among `colliders`, sorted by `(a, b)`: the order every body adds its
/// impulses in.
pub fn touching_pairs(
    colliders: &[Collider<f64>],
    spheres: &[SweptSphere<f64>],
    masses: &BodyMasses,
    coefficients: &CollisionConstants<f64>,
) -> Vec<PairContact<f64>> {
    let centres: Vec<[f64; 3]> = colliders
        .iter()
        .map(|c| [c.position.x, c.position.y, c.position.z])
        .collect();
    let radii: Vec<f64> = (0..colliders.len())
        .map(|i| {
            masses
                .get(i)
                .shape()
                .map_or(0.0, |s| ShapeConstants::of(&s).bounding_radius)
        })
        .collect();
    let pairs = candidate_pairs(&centres, &radii, &vec![true; colliders.len()]);
    pairs
        .into_par_iter()
        .filter_map(|(a, b)| {
            pair_contact(
                (a, &colliders[a], &spheres[a]),
                (b, &colliders[b], &spheres[b]),
                coefficients,
            )
        })
        .collect()
}

/// Parts the bodies of `states` that start overlapping, moving positions only (velocities
/// and spins are kept: no energy is added). Fails naming two bodies that overlap too deeply
/// to part, or a body that overlaps too many others.
pub fn separate_at_start(states: &mut [BodyState], masses: &BodyMasses) -> Result<()> {
    for round in 0..=SEPARATION_ROUNDS {
        let (mut colliders, spheres): (Vec<_>, Vec<_>) = (0..states.len())
            .map(|i| {
                collider_of(
                    &State::from(&states[i]),
                    &masses.get(i),
                    Vec3::splat(0.0),
                    true,
                )
            })
            .unzip();
        let parting = CollisionConstants {
            restitution: 0.0,
            friction: 0.0,
        };
        let contacts = touching_pairs(&colliders, &spheres, masses, &parting);
        let counts = crate::physics::collision::contact_counts(states.len(), &contacts);
        if let Some(i) = counts.iter().position(|&c| c > MOST_START_OVERLAPS) {
            return Err(Error::invalid(
                format!("bodies[{i}].position"),
                format!(
                    "overlaps {} other bodies at the start (at most {MOST_START_OVERLAPS}): with `collisions`, place the bodies apart",
                    counts[i]
                ),
            ));
        }
        // Overlaps within a millionth of the smaller radius are left to the first steps.
        let deep = contacts.iter().find(|c| {
            let smaller = spheres[c.a].radius.min(spheres[c.b].radius);
            c.touch.depth > 1e-6 * smaller
        });
        let Some(deep) = deep else {
            return Ok(());
        };
        if round == SEPARATION_ROUNDS {
            return Err(Error::invalid(
                format!("bodies[{}].position", deep.a),
                format!(
                    "overlaps bodies[{}] by {:e} m after {SEPARATION_ROUNDS} rounds of parting them: with `collisions`, place the bodies apart",
                    deep.b, deep.touch.depth
                ),
            ));
        }
        separate(&mut colliders, &contacts, |_| 1.0);
        for (state, collider) in states.iter_mut().zip(&colliders) {
            state.position = collider.position.into();
        }
    }
    Ok(())
}

/// The points of the moving bodies near `planes`, as contacts with the world, collider
/// `colliders.len()` (appended by the caller): body by body, plane by plane, point by point.
pub fn plane_contacts(
    states: &[State<f64>],
    moves: &[bool],
    colliders: &[Collider<f64>],
    masses: &BodyMasses,
    planes: &[PlaneConstants<f64>],
) -> Vec<PairContact<f64>> {
    let world = colliders.len();
    let per_body: Vec<Vec<PairContact<f64>>> = (0..colliders.len())
        .into_par_iter()
        .map(|i| {
            if !moves[i] || planes.is_empty() {
                return Vec::new();
            }
            let shape = masses
                .get(i)
                .shape()
                .expect("checked: every colliding body has a shape");
            let shape = ShapeConstants::of(&shape);
            let rotation = states[i].orientation.normalize().to_rotation();
            let body = (i, &colliders[i], &shape);
            (planes.iter())
                .flat_map(|plane| plane_holds(body, &rotation, plane, world))
                .collect()
        })
        .collect();
    per_body.into_iter().flatten().collect()
}
