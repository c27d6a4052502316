//! Collisions between bodies, resolved after each full step (and after the planes).
//!
//! Each body is a swept sphere: a sphere is its centre with its radius, a capsule the segment
//! between its end-sphere centres with its radius. Two bodies touch where the closest points
//! of their segments are nearer than the sum of the radii. That is exact for both shapes
//! (Ericson, *Real-Time Collision Detection* 5.1.9). The contact's normal `n` points from
//! body `b` to body `a` along the line between the closest points, and its point lies
//! midway between the two surfaces on that line.
//!
//! The impulses are Hecker's (his Figure 4): the normal impulse that drives the approach
//! speed `v_ab . n` to `-e v_ab . n` divides by the pair's effective inverse mass,
//! `1/M_a + 1/M_b + [(I_a^-1 (r_a x n)) x r_a + (I_b^-1 (r_b x n)) x r_b] . n`. Then a Coulomb
//! friction impulse stops the contact's slip, capped at `mu` times the normal impulse. Both
//! accumulate and are clamped, as the plane contacts' are (`physics::contact`).
//!
//! Simultaneous contacts are solved by Jacobi iterations with mass splitting (Tonge,
//! Benevolenskiy and Schmitt, 2012): in each iteration every contact computes its impulse
//! from the velocities the iteration started with, as if each of its bodies had its mass
//! split evenly among its contacts (inverse mass and inertia times the body's contact count),
//! then every body adds its contacts' impulses in the contacts' order. No contact reads what
//! another wrote in the same iteration, so the result does not depend on which contact is
//! computed first, and each body's sum runs in one fixed order: the same bits wherever the
//! arithmetic is IEEE's. A lone contact is solved exactly in the first iteration.
//!
//! Overlap left after the impulses by a contact that did not bounce (a resting one, or any
//! with `e = 0`) is removed by moving positions only (never velocities, so no kinetic
//! energy is added): each such contact moves its two bodies apart along `n` by its depth,
//! shared in proportion to their inverse masses (the pair's centre of mass stays), and each
//! body takes the mean of its contacts' moves. Bodies that bounced part on their own.

use super::algebra::{Mat3, Vec3};
use super::contact::{
    ContactShape, PlaneConstants, RESTING_STEPS, ShapeConstants, inverse_mass_along, max,
};
use super::scalar::Scalar;
use crate::model::shape::ShapeKind;

/// Jacobi iterations over a step's contacts: a box of spheres resting four deep settles
/// with these (`tests/suite/collisions.rs`).
pub const COLLISION_ITERATIONS: u32 = 16;

/// The body shapes that collide with other bodies: the swept spheres.
pub const COLLIDING_SHAPES: [ShapeKind; 2] = [ShapeKind::Sphere, ShapeKind::Capsule];

/// Whether bodies of `kind` collide with other bodies.
pub fn collides(kind: ShapeKind) -> bool {
    COLLIDING_SHAPES.contains(&kind)
}

/// A body's core as collisions see it: the segment from `start` to `end` (one point for a
/// sphere) with every point within `radius` of it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweptSphere<R> {
    pub start: Vec3<R>,
    pub end: Vec3<R>,
    pub radius: R,
}

/// The swept sphere of a body of `shape` at `position` turned by `rotation`. A capsule's
/// segment lies along its body `z` axis, `start` at `+z` (as its contact candidates do). A
/// shape that does not collide ([`collides`]) is refused before any step; it would be taken
/// as its bounding sphere.
pub fn swept_sphere<R: Scalar>(
    shape: &ShapeConstants<R>,
    position: Vec3<R>,
    rotation: &Mat3<R>,
) -> SweptSphere<R> {
    let d = shape.dims;
    match shape.kind {
        ShapeKind::Capsule => {
            let axis = rotation.column(2) * d.y;
            SweptSphere {
                start: position + axis,
                end: position - axis,
                radius: d.x,
            }
        }
        ShapeKind::Sphere => SweptSphere {
            start: position,
            end: position,
            radius: d.x,
        },
        _ => SweptSphere {
            start: position,
            end: position,
            radius: shape.bounding_radius,
        },
    }
}

/// `value` clamped to `[0, 1]`.
fn unit_clamp<R: Scalar>(value: R) -> R {
    let (zero, one) = (R::constant(0.0), R::constant(1.0));
    let low = R::select(value.less(zero), zero, value);
    R::select(one.less(low), one, low)
}

/// The parameters `(s, t)` of the closest points `a.start + s (a.end - a.start)` and
/// `b.start + t (b.end - b.start)` of two segments, each in `[0, 1]` (Ericson 5.1.9, with
/// selects for its branches; a segment of zero length is its start, and parallel segments
/// take `s = 0`).
pub fn closest_parameters<R: Scalar>(a: &SweptSphere<R>, b: &SweptSphere<R>) -> (R, R) {
    let (zero, one) = (R::constant(0.0), R::constant(1.0));
    let d1 = a.end - a.start;
    let d2 = b.end - b.start;
    let r = a.start - b.start;
    let (len1, len2) = (d1.length_squared(), d2.length_squared());
    let f = d2.dot(r);
    let c = d1.dot(r);
    let b12 = d1.dot(d2);
    let (long1, long2) = (zero.less(len1), zero.less(len2));
    // Denominators that are never zero where their quotient is selected.
    let len1_safe = R::select(long1, len1, one);
    let len2_safe = R::select(long2, len2, one);
    let denominator = len1 * len2 - b12 * b12;
    let skew = zero.less(denominator);
    let denominator_safe = R::select(skew, denominator, one);
    // Both segments of non-zero length: the closest point of the lines, clamped to a, then
    // the point of b nearest it, clamped, and a's point found again where that clamped.
    let s_lines = R::select(
        skew,
        unit_clamp((b12 * f - c * len2) / denominator_safe),
        zero,
    );
    let t_lines = (b12 * s_lines + f) / len2_safe;
    let s_below = unit_clamp(-c / len1_safe);
    let s_above = unit_clamp((b12 - c) / len1_safe);
    let s_both = R::select(
        t_lines.less(zero),
        s_below,
        R::select(one.less(t_lines), s_above, s_lines),
    );
    let t_both = unit_clamp(t_lines);
    // One segment a point: the other's point nearest it.
    let s = R::select(long1, R::select(long2, s_both, s_below), zero);
    let t = R::select(
        long1,
        R::select(long2, t_both, zero),
        R::select(long2, unit_clamp(f / len2_safe), zero),
    );
    (s, t)
}

/// How two swept spheres meet: the normal from `b` to `a`, the point midway between their
/// surfaces, and the depth of their overlap (negative: the gap between them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Touch<R> {
    pub normal: Vec3<R>,
    pub point: Vec3<R>,
    pub depth: R,
}

/// Where swept spheres `a` and `b` touch, or how far apart they are. Segments that meet
/// take `+z` as the normal: any fixed direction parts them.
pub fn touch<R: Scalar>(a: &SweptSphere<R>, b: &SweptSphere<R>) -> Touch<R> {
    let (zero, one, half) = (R::constant(0.0), R::constant(1.0), R::constant(0.5));
    let (s, t) = closest_parameters(a, b);
    let on_a = a.start + (a.end - a.start) * s;
    let on_b = b.start + (b.end - b.start) * t;
    let between = on_a - on_b;
    let distance = between.length();
    let apart = zero.less(distance);
    let inverse = one / R::select(apart, distance, one);
    let normal = Vec3::new(
        R::select(apart, between.x * inverse, zero),
        R::select(apart, between.y * inverse, zero),
        R::select(apart, between.z * inverse, one),
    );
    let surface_a = on_a - normal * a.radius;
    let surface_b = on_b + normal * b.radius;
    Touch {
        normal,
        point: (surface_a + surface_b) * half,
        depth: a.radius + b.radius - distance,
    }
}

/// A colliding body as the solve reads and writes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Collider<R> {
    pub position: Vec3<R>,
    pub linear_momentum: Vec3<R>,
    pub angular_momentum: Vec3<R>,
    /// `1/M`; zero for a body that does not move (a frozen one).
    pub inv_mass: R,
    /// `I^-1 = R Ibody^-1 R^T` at the body's orientation; zero for a body that does not move.
    pub inv_inertia: Mat3<R>,
    /// The body's acceleration over the step from the forces alone
    /// (`contact::step_acceleration`): what tells a resting contact from a bounce.
    pub acceleration: Vec3<R>,
}

impl<R: Scalar> Collider<R> {
    /// The world the planes belong to: nothing moves it, and it stays at rest.
    pub fn world() -> Self {
        let zero = Vec3::splat(R::constant(0.0));
        Self {
            position: zero,
            linear_momentum: zero,
            angular_momentum: zero,
            inv_mass: R::constant(0.0),
            inv_inertia: Mat3 { rows: [zero; 3] },
            acceleration: zero,
        }
    }

    /// The velocity of the body's point at arm `r` from its centre of mass.
    fn point_velocity(&self, r: Vec3<R>) -> Vec3<R> {
        let angular_velocity = self.inv_inertia.mul_vec(self.angular_momentum);
        self.linear_momentum * self.inv_mass + angular_velocity.cross(r)
    }
}

/// A touching pair of bodies, `a < b` (indices into the colliders), with its arms from each
/// body's centre of mass to the contact point, and how its surfaces meet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairContact<R> {
    pub a: usize,
    pub b: usize,
    pub touch: Touch<R>,
    pub arm_a: Vec3<R>,
    pub arm_b: Vec3<R>,
    pub surfaces: Surfaces<R>,
}

/// How a contact's surfaces meet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Surfaces<R> {
    /// Coulomb's `mu`.
    pub friction: R,
    /// `Some(e)`: two bodies, which bounce with restitution `e`. `None`: a body's point
    /// near a plane (`b` the world, which nothing moves), already resolved against the plane
    /// in the body's own step; here it only holds: the point may close its gap to the
    /// plane in the step and no more.
    pub bounce: Option<R>,
}

/// Points of a body within this fraction of its size of a plane hold against it while the
/// crowd's pairs are resolved (the gap it may close in a step).
pub const PLANE_REACH: f64 = 0.01;

/// The contact of colliders `a` and `b` whose swept spheres are `sphere_a` and `sphere_b`,
/// if they overlap.
pub fn pair_contact<R: Scalar<Bool = bool>>(
    (a, collider_a, sphere_a): (usize, &Collider<R>, &SweptSphere<R>),
    (b, collider_b, sphere_b): (usize, &Collider<R>, &SweptSphere<R>),
    coefficients: &CollisionConstants<R>,
) -> Option<PairContact<R>> {
    let touch = touch(sphere_a, sphere_b);
    R::constant(0.0).less(touch.depth).then(|| PairContact {
        a,
        b,
        touch,
        arm_a: touch.point - collider_a.position,
        arm_b: touch.point - collider_b.position,
        surfaces: Surfaces {
            friction: coefficients.friction,
            bounce: Some(coefficients.restitution),
        },
    })
}

/// The points of body `a` (of `shape`, collider `collider`) within [`PLANE_REACH`] of its
/// size of `plane`, as contacts with the world, collider `world` (at the origin).
pub fn plane_holds<R: Scalar<Bool = bool>>(
    (a, collider, shape): (usize, &Collider<R>, &ShapeConstants<R>),
    rotation: &Mat3<R>,
    plane: &PlaneConstants<R>,
    world: usize,
) -> Vec<PairContact<R>> {
    let reach = R::constant(PLANE_REACH) * shape.dims.x;
    let count = shape.candidate_count();
    let (points, depths) = shape.candidates_and_depths(plane, collider.position, rotation);
    (0..count)
        .filter(|&k| (-reach).less(depths[k]))
        .map(|k| PairContact {
            a,
            b: world,
            touch: Touch {
                normal: plane.normal,
                point: points[k],
                depth: depths[k],
            },
            arm_a: points[k] - collider.position,
            arm_b: points[k],
            surfaces: Surfaces {
                friction: plane.friction,
                bounce: None,
            },
        })
        .collect()
}

/// What one contact keeps over the iterations: its normal mass and target normal speed
/// (found before the first), and its accumulated normal and friction impulses.
#[derive(Clone, Copy, Debug)]
struct ContactSolve<R> {
    /// The pair's effective inverse mass along `n`, each body's times its contact count.
    normal_mass: R,
    target: R,
    /// Each body's contact count, as a number.
    splits: (R, R),
    normal: R,
    friction: Vec3<R>,
}

/// The crowd's collision coefficients in precision `R`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CollisionConstants<R> {
    pub restitution: R,
    pub friction: R,
}

/// The velocity of `a`'s contact point relative to `b`'s.
fn relative_velocity<R: Scalar>(a: &Collider<R>, b: &Collider<R>, c: &PairContact<R>) -> Vec3<R> {
    a.point_velocity(c.arm_a) - b.point_velocity(c.arm_b)
}

/// The change of the relative velocity at contact `c` that impulse `j` on `a` (and `-j` on
/// `b`) makes, each body's mass split `splits` ways.
fn relative_change<R: Scalar>(
    (a, b): (&Collider<R>, &Collider<R>),
    c: &PairContact<R>,
    (split_a, split_b): (R, R),
    j: Vec3<R>,
) -> Vec3<R> {
    let change_a = j * (a.inv_mass * split_a)
        + (a.inv_inertia.mul_vec(c.arm_a.cross(j)) * split_a).cross(c.arm_a);
    let change_b = j * (b.inv_mass * split_b)
        + (b.inv_inertia.mul_vec(c.arm_b.cross(j)) * split_b).cross(c.arm_b);
    change_a + change_b
}

/// One Jacobi update of contact `c` from the bodies' momenta: its new accumulated impulses
/// and the impulse it adds on `a` this iteration (`b` takes its negation).
fn contact_update<R: Scalar>(
    (a, b): (&Collider<R>, &Collider<R>),
    c: &PairContact<R>,
    solve: &ContactSolve<R>,
    mu: R,
) -> (R, Vec3<R>, Vec3<R>) {
    let zero = R::constant(0.0);
    let n = c.touch.normal;
    let relative = relative_velocity(a, b, c);
    let normal_speed = relative.dot(n);
    let total = max(
        solve.normal + (solve.target - normal_speed) / solve.normal_mass,
        zero,
    );
    let push = n * (total - solve.normal);
    // The slip after the push, in this contact's share of the bodies.
    let relative = relative + relative_change((a, b), c, solve.splits, push);
    let slip = relative - n * relative.dot(n);
    let slip_speed = slip.length();
    let sliding = zero.less(slip_speed);
    let t = slip * (R::constant(1.0) / R::select(sliding, slip_speed, R::constant(1.0)));
    let (split_a, split_b) = solve.splits;
    let tangent_mass = inverse_mass_along(a.inv_mass, &a.inv_inertia, c.arm_a, t) * split_a
        + inverse_mass_along(b.inv_mass, &b.inv_inertia, c.arm_b, t) * split_b;
    let tangent_mass = R::select(zero.less(tangent_mass), tangent_mass, R::constant(1.0));
    let wanted = solve.friction - t * (slip_speed / tangent_mass);
    let limit = mu * total;
    let wanted_length = wanted.length();
    let scale = R::select(
        limit.less(wanted_length),
        limit / wanted_length,
        R::constant(1.0),
    );
    let clamped = wanted * scale;
    let friction = Vec3::new(
        R::select(sliding, clamped.x, solve.friction.x),
        R::select(sliding, clamped.y, solve.friction.y),
        R::select(sliding, clamped.z, solve.friction.z),
    );
    (total, friction, push + (friction - solve.friction))
}

/// Applies impulse `j` at arm `r` to `body`.
fn apply<R: Scalar>(body: &mut Collider<R>, r: Vec3<R>, j: Vec3<R>) {
    body.linear_momentum = body.linear_momentum + j;
    body.angular_momentum = body.angular_momentum + r.cross(j);
}

/// Resolves `contacts` (touching pairs and points near planes, in the order the bodies add
/// them, `a < b`) among `bodies`, over a step of length `h`: impulses, then positions
/// (module docs). A body whose `inv_mass` is zero is moved by nothing.
pub fn resolve_pairs<R: Scalar>(bodies: &mut [Collider<R>], contacts: &[PairContact<R>], h: R) {
    let zero = R::constant(0.0);
    let counts = contact_counts(bodies.len(), contacts);
    let count = |i: usize| R::constant(f64::from(counts[i]));
    let mut solves: Vec<ContactSolve<R>> = (contacts.iter())
        .map(|c| {
            let (a, b) = (&bodies[c.a], &bodies[c.b]);
            let n = c.touch.normal;
            let splits = (count(c.a), count(c.b));
            let normal_mass = inverse_mass_along(a.inv_mass, &a.inv_inertia, c.arm_a, n) * splits.0
                + inverse_mass_along(b.inv_mass, &b.inv_inertia, c.arm_b, n) * splits.1;
            // Two bodies that do not move: no impulse (the target is met at once).
            let normal_mass = R::select(zero.less(normal_mass), normal_mass, R::constant(1.0));
            let approach = -relative_velocity(a, b, c).dot(n);
            let target = match c.surfaces.bounce {
                Some(restitution) => {
                    // Any direction: in a pile under gravity, side by side bodies jostle
                    // at speeds gravity gives, although it pulls neither towards the other.
                    let pulled = a.acceleration.length() + b.acceleration.length();
                    let resting_speed = R::constant(RESTING_STEPS) * pulled * h;
                    R::select(resting_speed.less(approach), restitution * approach, zero)
                }
                // Towards the plane at most by the gap, over the step.
                None => -max(-c.touch.depth, zero) / h,
            };
            ContactSolve {
                normal_mass,
                target,
                splits,
                normal: zero,
                friction: Vec3::splat(zero),
            }
        })
        .collect();
    let mut impulses = vec![Vec3::splat(zero); contacts.len()];
    for _ in 0..COLLISION_ITERATIONS {
        for ((c, solve), impulse) in contacts.iter().zip(&mut solves).zip(&mut impulses) {
            let pair = (&bodies[c.a], &bodies[c.b]);
            let (normal, friction, j) = contact_update(pair, c, solve, c.surfaces.friction);
            (solve.normal, solve.friction, *impulse) = (normal, friction, j);
        }
        for (c, &j) in contacts.iter().zip(&impulses) {
            apply(&mut bodies[c.a], c.arm_a, j);
            apply(&mut bodies[c.b], c.arm_b, -j);
        }
    }
    // Bounced pairs part on their own, and a plane's points were lifted in their step.
    let kept = |k: usize| match contacts[k].surfaces.bounce {
        Some(_) => R::select(zero.less(solves[k].target), zero, R::constant(1.0)),
        None => zero,
    };
    separate(bodies, contacts, kept);
}

/// Moves the bodies of `contacts` apart by their depths times `share(k)` for contact `k`,
/// each body by the mean of its contacts' moves (module docs): positions only. A contact
/// that bounced takes share 0: its bodies part on their own, and a move would turn the
/// pair's momentum about the origin (a body moved across its own momentum).
pub fn separate<R: Scalar>(
    bodies: &mut [Collider<R>],
    contacts: &[PairContact<R>],
    share: impl Fn(usize) -> R,
) {
    let zero = R::constant(0.0);
    let counts = contact_counts(bodies.len(), contacts);
    let count = |i: usize| R::constant(f64::from(counts[i]));
    let moves: Vec<(Vec3<R>, Vec3<R>)> = (contacts.iter().enumerate())
        .map(|(k, c)| {
            let (a, b) = (&bodies[c.a], &bodies[c.b]);
            let shared = a.inv_mass + b.inv_mass;
            let part =
                c.touch.depth * share(k) / R::select(zero.less(shared), shared, R::constant(1.0));
            let n = c.touch.normal;
            (
                n * (part * a.inv_mass / count(c.a)),
                n * (part * b.inv_mass / count(c.b)),
            )
        })
        .collect();
    for (c, (move_a, move_b)) in contacts.iter().zip(moves) {
        bodies[c.a].position = bodies[c.a].position + move_a;
        bodies[c.b].position = bodies[c.b].position - move_b;
    }
}

/// Each collider's contact count in `contacts`.
pub fn contact_counts<R>(body_count: usize, contacts: &[PairContact<R>]) -> Vec<u32> {
    let mut counts = vec![0_u32; body_count];
    for c in contacts {
        counts[c.a] += 1;
        counts[c.b] += 1;
    }
    counts
}
