//! A colliding crowd on the reference: every body takes one step (planes included), then
//! the crowd's touching pairs are resolved together (`physics::collision`), step by step.

use rayon::prelude::*;

use crate::assembly::body_masses::BodyMasses;
use crate::model::body::BodyState;
use crate::model::error::{Error, Result};
use crate::model::mass::MassProperties;
use crate::physics::algebra::{Mat3, Vec3};
use crate::physics::collision::{
    Collider, CollisionConstants, PLANE_REACH, PairContact, SweptSphere, pair_contact, plane_holds,
    resolve_pairs, separate, swept_sphere,
};
use crate::physics::contact::{PlaneConstants, ShapeConstants, near_a_plane};
use crate::physics::motion::{MassConstants, State};
use crate::physics::neighbours::{NeighbourList, candidate_pairs};

/// Rounds of [`separate`] that part the bodies a crowd starts with overlapping.
pub const SEPARATION_ROUNDS: usize = 64;

/// The deepest overlap the parting may leave, as a fraction of the smaller radius: the first
/// steps' position moves part the rest.
pub const START_OVERLAP_LEFT: f64 = 1e-3;

/// The most bodies one body may start overlapping: more is a crowd piled on one spot.
pub const MOST_START_OVERLAPS: u32 = 64;

/// Each body's bounding radius (0 for one without a shape, which a colliding crowd refuses).
pub fn bounding_radii(masses: &BodyMasses) -> Vec<f64> {
    (0..masses.len())
        .into_par_iter()
        .map(|i| {
            masses
                .get(i)
                .shape()
                .map_or(0.0, |s| ShapeConstants::of(&s).bounding_radius)
        })
        .collect()
}

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

/// The touching pairs among `colliders` (bounding radii `radii`), sorted by `(a, b)`: the
/// order every body adds its impulses in.
pub fn touching_pairs(
    colliders: &[Collider<f64>],
    spheres: &[SweptSphere<f64>],
    radii: &[f64],
    coefficients: &CollisionConstants<f64>,
) -> Vec<PairContact<f64>> {
    let centres: Vec<[f64; 3]> = colliders
        .iter()
        .map(|c| [c.position.x, c.position.y, c.position.z])
        .collect();
    let pairs = candidate_pairs(&centres, radii, &vec![true; colliders.len()]);
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
    let radii = bounding_radii(masses);
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
        let contacts = touching_pairs(&colliders, &spheres, &radii, &parting);
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
        // Overlaps within a millionth of the smaller radius are left to the first steps, and
        // after the last round those within a thousandth.
        let last = round == SEPARATION_ROUNDS;
        let allowed = if last { START_OVERLAP_LEFT } else { 1e-6 };
        let deep = contacts.iter().find(|c| {
            let smaller = spheres[c.a].radius.min(spheres[c.b].radius);
            c.touch.depth > allowed * smaller
        });
        let Some(deep) = deep else {
            return Ok(());
        };
        if last {
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

/// Resolves the crowd's touching pairs and the points of its bodies near `planes` together
/// (`physics::collision`), over a step of length `h`: `states` are the bodies' states after
/// their own steps, changed in place; `neighbours` keeps the candidate pairs over steps.
/// Only bodies near another or near a plane take part;
/// a body with `moves[i]` false (frozen) is met but not moved.
pub fn resolve_crowd(
    states: &mut [State<f64>],
    (moves, accelerations, masses, radii): (&[bool], &[Vec3<f64>], &BodyMasses, &[f64]),
    planes: &[PlaneConstants<f64>],
    (coefficients, neighbours): (&CollisionConstants<f64>, &mut NeighbourList),
    h: f64,
) {
    let n = states.len();
    let centres: Vec<[f64; 3]> = (states.iter())
        .map(|s| [s.position.x, s.position.y, s.position.z])
        .collect();
    // The kept pairs whose bounding spheres meet now.
    let pairs: Vec<(usize, usize)> = (neighbours.pairs(&centres, radii).par_iter())
        .copied()
        .filter(|&(a, b)| {
            let reach = radii[a] + radii[b];
            (states[a].position - states[b].position).length_squared() <= reach * reach
        })
        .collect();
    // A superset of the bodies with a point within reach of a plane (`plane_holds`).
    let reach = 1.0 + 2.0 * PLANE_REACH;
    let near_plane: Vec<bool> = (0..n)
        .into_par_iter()
        .map(|i| moves[i] && near_a_plane(radii[i] * reach, planes, states[i].position))
        .collect();
    let mut involved = near_plane.clone();
    for &(a, b) in &pairs {
        (involved[a], involved[b]) = (true, true);
    }
    // The bodies taking part, in crowd order: numbering them keeps every order.
    let members: Vec<usize> = (0..n).filter(|&i| involved[i]).collect();
    let mut number = vec![usize::MAX; n];
    for (k, &i) in members.iter().enumerate() {
        number[i] = k;
    }
    let (mut colliders, spheres): (Vec<_>, Vec<_>) = (members.par_iter())
        .map(|&i| collider_of(&states[i], &masses.get(i), accelerations[i], moves[i]))
        .unzip();
    let mut contacts: Vec<PairContact<f64>> = (pairs.par_iter())
        .filter_map(|&(a, b)| {
            let (a, b) = (number[a], number[b]);
            let (first, second) = (
                (a, &colliders[a], &spheres[a]),
                (b, &colliders[b], &spheres[b]),
            );
            pair_contact(first, second, coefficients)
        })
        .collect();
    let world = colliders.len();
    let holds: Vec<Vec<PairContact<f64>>> = (members.par_iter().enumerate())
        .map(|(k, &i)| {
            if !near_plane[i] {
                return Vec::new();
            }
            let shape = masses
                .get(i)
                .shape()
                .expect("checked: every colliding body has a shape");
            let shape = ShapeConstants::of(&shape);
            let rotation = states[i].orientation.normalize().to_rotation();
            let body = (k, &colliders[k], &shape);
            (planes.iter())
                .flat_map(|plane| plane_holds(body, &rotation, plane, world))
                .collect()
        })
        .collect();
    contacts.extend(holds.into_iter().flatten());
    colliders.push(Collider::world());
    resolve_pairs(&mut colliders, &contacts, h);
    for (&i, collider) in members.iter().zip(&colliders) {
        if moves[i] {
            let state = &mut states[i];
            state.position = collider.position;
            state.linear_momentum = collider.linear_momentum;
            state.angular_momentum = collider.angular_momentum;
        }
    }
}
