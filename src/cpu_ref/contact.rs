//! Contact of one body with static planes, resolved after each full step. Twin of
//! `shaders/contact.wgsl`: keep the two in step.
//!
//! For each plane: the body's candidate points that ended the step below the surface are the
//! contacts. The body is moved out along the normal by the deepest one's depth, then impulses
//! at the contacts (Gauss–Seidel over the points, accumulated and clamped as in sequential
//! impulse solvers) drive each point's normal velocity to its target and cap friction by
//! Coulomb's law. The target is `e` times the approach speed the point had when it crossed the
//! surface, recovered from the speed at its depth and the body's acceleration towards the plane
//! over the step (`v_surface^2 = v^2 - 2 a depth`). That makes the bounce lose exactly the
//! energy restitution says it loses, although it was detected late: a ball rebounds to `e^2` of
//! its height, the lift out of the plane never adds energy, and a resting body (whose target
//! is zero) neither sinks nor jitters.

use glam::{DMat3, DVec3};

use crate::body::BodyState;
use crate::mass::MassProperties;
use crate::plane::Plane;
use crate::shape::Shape;

/// Approach speeds below this many steps' worth of the acceleration towards the plane get no
/// bounce: a body resting on several points would otherwise rock on the speed each step of
/// gravity gives it, bounced back by restitution.
pub(crate) const RESTING_STEPS: f64 = 2.0;

/// Gauss–Seidel sweeps over a plane's contact points per step: enough for a box's four
/// corners to share its weight (measured: the resting tests settle with 8).
pub(crate) const CONTACT_ITERATIONS: usize = 8;

/// Up to eight world points of `shape` that can touch a plane with normal `n`.
pub(crate) fn contact_candidates(
    shape: &Shape,
    position: DVec3,
    rotation: DMat3,
    n: DVec3,
) -> ([DVec3; 8], usize) {
    let mut points = [position; 8];
    let count = match *shape {
        Shape::Sphere { radius } => {
            points[0] = position - n * radius;
            1
        }
        Shape::Ellipsoid { semi_axes } => {
            // The support point of x^T A^-2 x = 1 along -m is -A^2 m / |A m|.
            let m = rotation.transpose() * n;
            let a2m = semi_axes * semi_axes * m;
            points[0] = position - rotation * (a2m / (semi_axes * m).length());
            1
        }
        Shape::Box { size } => {
            let half = size * 0.5;
            for (k, point) in points.iter_mut().enumerate() {
                let sign = DVec3::new(
                    if k & 1 == 0 { -1.0 } else { 1.0 },
                    if k & 2 == 0 { -1.0 } else { 1.0 },
                    if k & 4 == 0 { -1.0 } else { 1.0 },
                );
                *point = position + rotation * (half * sign);
            }
            8
        }
        Shape::Capsule { radius, length } => {
            let axis = rotation.z_axis * (0.5 * length);
            points[0] = position + axis - n * radius;
            points[1] = position - axis - n * radius;
            2
        }
        Shape::Cylinder { radius, height } => {
            // Four rim points per cap, the first the rim's lowest; an upright cylinder gets a
            // square of equally low points to stand on.
            let axis = rotation.z_axis;
            let across = n - axis * n.dot(axis);
            let u = if across.length_squared() > 1e-18 {
                -across.normalize()
            } else {
                rotation.x_axis
            };
            let w = axis.cross(u);
            let rim = [u, w, -u, -w];
            for (k, point) in points.iter_mut().enumerate() {
                let cap = if k < 4 { 0.5 } else { -0.5 };
                *point = position + axis * (cap * height) + rim[k % 4] * radius;
            }
            8
        }
    };
    (points, count)
}

/// Radius of the smallest sphere about the centre of mass that holds `shape`: a plane
/// farther than this cannot touch the body, so the candidates need not be formed.
pub(crate) fn bounding_radius(shape: &Shape) -> f64 {
    match *shape {
        Shape::Sphere { radius } => radius,
        Shape::Box { size } => 0.5 * size.length(),
        Shape::Capsule { radius, length } => radius + 0.5 * length,
        Shape::Cylinder { radius, height } => radius.hypot(0.5 * height),
        Shape::Ellipsoid { semi_axes } => semi_axes.max_element(),
    }
}

/// Effective inverse mass of the body at arm `r` along direction `d`:
/// `1/M + d . ((Iinv (r x d)) x r)` (the impulse's denominator; docs/contacts.md explains it).
fn inverse_mass_along(inv_mass: f64, inv_inertia: &DMat3, r: DVec3, d: DVec3) -> f64 {
    inv_mass + d.dot((*inv_inertia * r.cross(d)).cross(r))
}

/// Resolves `next` (the state after a step that started at `start`) against every plane.
pub(crate) fn resolve_contacts(
    start: &BodyState,
    next: &mut BodyState,
    mass: &MassProperties,
    shape: &Shape,
    planes: &[Plane],
    h: f64,
) {
    // Acceleration over the step from the forces alone, before any plane pushed back.
    let acceleration = (next.linear_momentum - start.linear_momentum) * (mass.inv_mass() / h);
    for plane in planes {
        resolve_plane(next, mass, shape, plane, acceleration, h);
    }
}

/// Moves the body out of one plane and applies the contact impulses.
pub(crate) fn resolve_plane(
    state: &mut BodyState,
    mass: &MassProperties,
    shape: &Shape,
    plane: &Plane,
    acceleration: DVec3,
    h: f64,
) {
    let n = plane.normal;
    if -plane.depth(state.position) > bounding_radius(shape) {
        return;
    }
    let rotation = DMat3::from_quat(state.orientation.normalize());
    let (points, count) = contact_candidates(shape, state.position, rotation, n);
    let mut arms = [DVec3::ZERO; 8];
    let mut depths = [0.0; 8];
    let mut contacts = 0;
    let mut deepest = 0.0f64;
    for &point in &points[..count] {
        let depth = plane.depth(point);
        if depth > 0.0 {
            arms[contacts] = point - state.position;
            depths[contacts] = depth;
            contacts += 1;
            deepest = deepest.max(depth);
        }
    }
    if contacts == 0 {
        return;
    }
    state.position += n * deepest;

    let inv_mass = mass.inv_mass();
    let inv_inertia = rotation * mass.inv_inertia_body() * rotation.transpose();
    let mut velocity = state.linear_momentum * inv_mass;
    let mut angular_velocity = inv_inertia * state.angular_momentum;
    let towards_plane = (-acceleration.dot(n)).max(0.0);
    let resting_speed = RESTING_STEPS * towards_plane * h;
    let mut targets = [0.0; 8];
    for k in 0..contacts {
        let normal_speed = (velocity + angular_velocity.cross(arms[k])).dot(n);
        if normal_speed < 0.0 {
            let at_surface = (normal_speed * normal_speed - 2.0 * towards_plane * depths[k])
                .max(0.0)
                .sqrt();
            if at_surface > resting_speed {
                targets[k] = plane.restitution * at_surface;
            }
        }
    }

    let mut normal_impulses = [0.0; 8];
    let mut friction_impulses = [DVec3::ZERO; 8];
    for _ in 0..CONTACT_ITERATIONS {
        for k in 0..contacts {
            let r = arms[k];
            let mut apply = |impulse: DVec3, velocity: &mut DVec3, angular: &mut DVec3| {
                state.linear_momentum += impulse;
                state.angular_momentum += r.cross(impulse);
                *velocity = state.linear_momentum * inv_mass;
                *angular = inv_inertia * state.angular_momentum;
            };

            let normal_speed = (velocity + angular_velocity.cross(r)).dot(n);
            let k_normal = inverse_mass_along(inv_mass, &inv_inertia, r, n);
            let total = (normal_impulses[k] + (targets[k] - normal_speed) / k_normal).max(0.0);
            let change = total - normal_impulses[k];
            normal_impulses[k] = total;
            apply(n * change, &mut velocity, &mut angular_velocity);

            let point_velocity = velocity + angular_velocity.cross(r);
            let slip = point_velocity - n * point_velocity.dot(n);
            let slip_speed = slip.length();
            if slip_speed > 0.0 {
                let t = slip / slip_speed;
                let k_tangent = inverse_mass_along(inv_mass, &inv_inertia, r, t);
                let wanted = friction_impulses[k] - t * (slip_speed / k_tangent);
                let limit = plane.friction * normal_impulses[k];
                let total = if wanted.length() > limit {
                    wanted * (limit / wanted.length())
                } else {
                    wanted
                };
                let change = total - friction_impulses[k];
                friction_impulses[k] = total;
                apply(change, &mut velocity, &mut angular_velocity);
            }
        }
    }
}
