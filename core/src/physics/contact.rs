//! Contact of one body with static planes, resolved after each full step.
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

use glam::DVec3;

use super::algebra::{Mat3, Vec3};
use super::motion::{MassConstants, State};
use super::scalar::{Scalar, carried_struct};
use crate::model::plane::Plane;
use crate::model::shape::{Shape, ShapeKind};

/// Approach speeds below this many steps' worth of the acceleration towards the plane get no
/// bounce: a body resting on several points would otherwise rock on the speed each step of
/// gravity gives it, bounced back by restitution.
pub const RESTING_STEPS: f64 = 2.0;

/// Gauss–Seidel sweeps over a plane's contact points per step: enough for a box's four
/// corners to share its weight (measured: the resting tests settle with 8).
pub const CONTACT_ITERATIONS: u32 = 8;

/// The most candidate points a shape has.
pub const MAX_CONTACT_POINTS: usize = 8;

/// A body's shape as contact reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeConstants<R> {
    pub kind: ShapeKind,
    /// Box: half edge lengths; sphere: `(radius, 0, 0)`; capsule and cylinder:
    /// `(radius, half length or height, 0)`; ellipsoid: semi-axes.
    pub dims: Vec3<R>,
    /// The radius of the smallest sphere about the centre of mass that holds the shape: a
    /// plane farther than this cannot touch the body.
    pub bounding_radius: R,
}

/// A static plane: the points `p` with `normal . p = offset`, `normal` pointing out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlaneConstants<R> {
    pub normal: Vec3<R>,
    pub offset: R,
    pub restitution: R,
    pub friction: R,
}

carried_struct!(PlaneConstants {
    normal,
    offset,
    restitution,
    friction
});

impl ShapeConstants<f64> {
    /// The constants of `shape`, as every backend reads them.
    pub fn of(shape: &Shape) -> Self {
        let dims = match *shape {
            Shape::Sphere { radius } => DVec3::new(radius, 0.0, 0.0),
            Shape::Box { size } => size * 0.5,
            Shape::Capsule { radius, length } => DVec3::new(radius, length * 0.5, 0.0),
            Shape::Cylinder { radius, height } => DVec3::new(radius, height * 0.5, 0.0),
            Shape::Ellipsoid { semi_axes } => semi_axes,
        };
        Self {
            kind: shape.kind(),
            dims: dims.into(),
            bounding_radius: bounding_radius(shape),
        }
    }

    /// The constants rounded to precision `R`.
    pub fn to<R: Scalar>(&self) -> ShapeConstants<R> {
        let c = R::constant;
        ShapeConstants {
            kind: self.kind,
            dims: Vec3::new(c(self.dims.x), c(self.dims.y), c(self.dims.z)),
            bounding_radius: c(self.bounding_radius),
        }
    }
}

impl<R: Scalar> PlaneConstants<R> {
    /// `plane` rounded to precision `R`.
    pub fn of(plane: &Plane) -> Self {
        let c = R::constant;
        let n = plane.normal;
        Self {
            normal: Vec3::new(c(n.x), c(n.y), c(n.z)),
            offset: c(plane.offset),
            restitution: c(plane.restitution),
            friction: c(plane.friction),
        }
    }

    /// How far `point` lies below the surface (negative above it).
    pub fn depth(&self, point: Vec3<R>) -> R {
        self.offset - self.normal.dot(point)
    }
}

/// Radius of the smallest sphere about the centre of mass that holds `shape` (computed once
/// per body on the host, in f64).
pub fn bounding_radius(shape: &Shape) -> f64 {
    match *shape {
        Shape::Sphere { radius } => radius,
        Shape::Box { size } => 0.5 * size.length(),
        Shape::Capsule { radius, length } => radius + 0.5 * length,
        Shape::Cylinder { radius, height } => radius.hypot(0.5 * height),
        Shape::Ellipsoid { semi_axes } => semi_axes.max_element(),
    }
}

/// How many candidate points a shape of kind `kind` has.
pub fn candidate_count(kind: ShapeKind) -> usize {
    match kind {
        ShapeKind::Sphere | ShapeKind::Ellipsoid => 1,
        ShapeKind::Capsule => 2,
        ShapeKind::Box | ShapeKind::Cylinder => 8,
    }
}

/// The world points of the shape, at `position` turned by `rotation`, that can touch a plane
/// with normal `n`: the first [`candidate_count`] entries (the rest repeat `position`).
pub fn contact_candidates<R: Scalar>(
    shape: &ShapeConstants<R>,
    position: Vec3<R>,
    rotation: &Mat3<R>,
    n: Vec3<R>,
) -> [Vec3<R>; MAX_CONTACT_POINTS] {
    let mut points = [position; MAX_CONTACT_POINTS];
    let d = shape.dims;
    match shape.kind {
        ShapeKind::Sphere => points[0] = position - n * d.x,
        ShapeKind::Ellipsoid => {
            // The support point of x^T A^-2 x = 1 along -m is -A^2 m / |A m|.
            let m = rotation.transpose_mul_vec(n);
            let am = Vec3::new(d.x * m.x, d.y * m.y, d.z * m.z);
            let a2m = Vec3::new(d.x * am.x, d.y * am.y, d.z * am.z);
            let inv_length = R::constant(1.0) / am.length();
            points[0] = position - rotation.mul_vec(a2m * inv_length);
        }
        ShapeKind::Box => {
            for (k, point) in points.iter_mut().enumerate() {
                let signed = |half: R, bit: usize| if k & bit == 0 { -half } else { half };
                let corner = Vec3::new(signed(d.x, 1), signed(d.y, 2), signed(d.z, 4));
                *point = position + rotation.mul_vec(corner);
            }
        }
        ShapeKind::Capsule => {
            let axis = rotation.column(2) * d.y;
            points[0] = position + axis - n * d.x;
            points[1] = position - axis - n * d.x;
        }
        ShapeKind::Cylinder => {
            // Four rim points per cap, the first the rim's lowest; an upright cylinder gets a
            // square of equally low points to stand on (the body's x axis).
            let axis = rotation.column(2);
            let across = n - axis * n.dot(axis);
            let across_squared = across.length_squared();
            let tilted = R::constant(1e-18).less(across_squared);
            let lowest = -(across * (R::constant(1.0) / across_squared.sqrt()));
            let x_axis = rotation.column(0);
            let u = Vec3::new(
                R::select(tilted, lowest.x, x_axis.x),
                R::select(tilted, lowest.y, x_axis.y),
                R::select(tilted, lowest.z, x_axis.z),
            );
            let w = axis.cross(u);
            let rim = [u, w, -u, -w];
            let cap = axis * d.y;
            for (k, point) in points.iter_mut().enumerate() {
                let centre = if k < 4 {
                    position + cap
                } else {
                    position - cap
                };
                *point = centre + rim[k % 4] * d.x;
            }
        }
    }
    points
}

/// The larger of `a` and `b` (`a` where they compare unordered).
pub(crate) fn max<R: Scalar>(a: R, b: R) -> R {
    R::select(a.less(b), b, a)
}

/// Effective inverse mass of the body at arm `r` along direction `d`:
/// `1/M + d . ((Iinv (r x d)) x r)`, the impulse's denominator.
pub(crate) fn inverse_mass_along<R: Scalar>(
    inv_mass: R,
    inv_inertia: &Mat3<R>,
    r: Vec3<R>,
    d: Vec3<R>,
) -> R {
    inv_mass + d.dot(inv_inertia.mul_vec(r.cross(d)).cross(r))
}

/// The body's acceleration over a step from `start` to `next` from the forces alone, before
/// any plane pushed back: what the bounce targets of [`resolve_plane`] are measured against.
pub fn step_acceleration<R: Scalar>(
    start: &State<R>,
    next: &State<R>,
    mass: &MassConstants<R>,
    h: R,
) -> Vec3<R> {
    (next.linear_momentum - start.linear_momentum) * (mass.inv_mass / h)
}

/// What the sweeps over the points carry from one point to the next: `P` and `L` (`v = P / M`
/// and `omega = Iinv L` are recomputed where needed: fewer values to carry through the GPU's
/// loop, the same bits).
type Momenta<R> = (Vec3<R>, Vec3<R>);

/// A contact point as the sweeps read it: its arm from the centre of mass and its depth below
/// the surface (it takes impulses where that is positive).
type PointConstants<R> = (Vec3<R>, R);

/// What a contact point holds over the sweeps: its normal and friction impulses, and its
/// target normal speed and effective inverse mass along the normal (found in the first sweep).
type PointImpulses<R> = (R, Vec3<R>, R, R);

/// What the contact code reads of a body's shape: its bounding radius, how many candidate
/// points it has at most, and its candidates at a position and rotation with their depths
/// below a plane (the first [`ContactShape::candidate_count`] of each; the rest at the
/// position with depth zero, not touching).
pub trait ContactShape<R: Scalar> {
    fn bounding_radius(&self) -> R;
    fn candidate_count(&self) -> usize;
    fn candidates_and_depths(
        &self,
        plane: &PlaneConstants<R>,
        position: Vec3<R>,
        rotation: &Mat3<R>,
    ) -> ([Vec3<R>; MAX_CONTACT_POINTS], [R; MAX_CONTACT_POINTS]);
}

impl<R: Scalar> ContactShape<R> for ShapeConstants<R> {
    fn bounding_radius(&self) -> R {
        self.bounding_radius
    }
    fn candidate_count(&self) -> usize {
        candidate_count(self.kind)
    }
    fn candidates_and_depths(
        &self,
        plane: &PlaneConstants<R>,
        position: Vec3<R>,
        rotation: &Mat3<R>,
    ) -> ([Vec3<R>; MAX_CONTACT_POINTS], [R; MAX_CONTACT_POINTS]) {
        let points = contact_candidates(self, position, rotation, plane.normal);
        let mut depths = [R::constant(0.0); MAX_CONTACT_POINTS];
        for k in 0..candidate_count(self.kind) {
            depths[k] = plane.depth(points[k]);
        }
        (points, depths)
    }
}

/// A body's shape as one contact code for several kinds reads it: one of `kinds`, each with
/// the condition that the body is of that kind (at most one holds; a body of none is moved
/// by no plane), and the dimensions and bounding radius [`ShapeConstants`] holds. Each kind's
/// candidates and depths are found in a branch of its own, then one impulse code runs over
/// as many points as the kind with the most has, the points a body's kind lacks not
/// touching. A body's points take the same operations as for its kind's [`ShapeConstants`],
/// in the same order, and a point that does not touch takes none: the same bits. A kernel
/// for a crowd of several shapes then holds one copy of the impulses instead of one per
/// shape.
pub struct ShapeAmong<'a, R: Scalar> {
    pub kinds: &'a [(ShapeKind, R::Bool)],
    pub dims: Vec3<R>,
    pub bounding_radius: R,
}

impl<R: Scalar> ContactShape<R> for ShapeAmong<'_, R> {
    fn bounding_radius(&self) -> R {
        self.bounding_radius
    }
    fn candidate_count(&self) -> usize {
        let counts = self.kinds.iter().map(|&(kind, _)| candidate_count(kind));
        counts.max().expect("at least one kind")
    }
    fn candidates_and_depths(
        &self,
        plane: &PlaneConstants<R>,
        position: Vec3<R>,
        rotation: &Mat3<R>,
    ) -> ([Vec3<R>; MAX_CONTACT_POINTS], [R; MAX_CONTACT_POINTS]) {
        let none = (
            [position; MAX_CONTACT_POINTS],
            [R::constant(0.0); MAX_CONTACT_POINTS],
        );
        self.kinds.iter().fold(none, |found, &(kind, is_kind)| {
            R::if_then(is_kind, found, |_| {
                let one = ShapeConstants {
                    kind,
                    dims: self.dims,
                    bounding_radius: self.bounding_radius,
                };
                one.candidates_and_depths(plane, position, rotation)
            })
        })
    }
}

/// Moves a body in state `state` out of `plane` and applies the contact impulses;
/// `acceleration` is [`step_acceleration`] of the step that ended in `state`.
pub fn resolve_plane<R: Scalar>(
    state: State<R>,
    mass: &MassConstants<R>,
    shape: &impl ContactShape<R>,
    plane: &PlaneConstants<R>,
    acceleration: Vec3<R>,
    h: R,
) -> State<R> {
    let zero = R::constant(0.0);
    let count = shape.candidate_count();
    let far = far_from(shape.bounding_radius(), plane, state.position);
    R::if_then(R::not(far), state, |state| {
        let rotation = state.orientation.normalize().to_rotation();
        let (points, depths) = shape.candidates_and_depths(plane, state.position, &rotation);
        let deepest = depths[..count].iter().fold(zero, |d, &depth| max(d, depth));
        R::if_then(zero.less(deepest), state, |state| {
            impulses(
                state,
                mass,
                plane,
                &rotation,
                &points[..count],
                &depths,
                deepest,
                acceleration,
                h,
            )
        })
    })
}

/// [`resolve_plane`] for a body that touches the plane: `points` are its candidates, `depths`
/// theirs below the surface, `deepest` the largest (positive).
#[allow(clippy::too_many_arguments)]
fn impulses<R: Scalar>(
    mut state: State<R>,
    mass: &MassConstants<R>,
    plane: &PlaneConstants<R>,
    rotation: &Mat3<R>,
    points: &[Vec3<R>],
    depths: &[R; MAX_CONTACT_POINTS],
    deepest: R,
    acceleration: Vec3<R>,
    h: R,
) -> State<R> {
    let zero = R::constant(0.0);
    let n = plane.normal;
    let inv_mass = mass.inv_mass;
    let count = points.len();
    // Per point, in fixed arrays (the first `count` slots used): no allocation per contact.
    let mut arms = [Vec3::splat(zero); MAX_CONTACT_POINTS];
    for k in 0..count {
        arms[k] = points[k] - state.position;
    }
    state.position = state.position + n * deepest;

    // Iinv = R Ibody^-1 R^T.
    let inv_inertia = rotation.product(&mass.inv_inertia.to_mat3().product(&rotation.transpose()));
    let velocity = state.linear_momentum * inv_mass;
    let angular_velocity = inv_inertia.mul_vec(state.angular_momentum);
    let towards_plane = max(-acceleration.dot(n), zero);
    let resting_speed = R::constant(RESTING_STEPS) * towards_plane * h;
    // Each contact's target normal speed: restitution times its speed when it crossed the
    // surface, where that beats the resting speed; zero for a point moving away. From the
    // velocities before any impulse, so the first sweep finds them, point by point, and the
    // later sweeps read them (in a kernel, one point's code in the sweeps' loop).
    let target_speed = |r: Vec3<R>, depth: R| {
        let normal_speed = (velocity + angular_velocity.cross(r)).dot(n);
        let squared = normal_speed * normal_speed - R::constant(2.0) * towards_plane * depth;
        let at_surface = max(squared, zero).sqrt();
        let bounce = R::select(
            resting_speed.less(at_surface),
            plane.restitution * at_surface,
            zero,
        );
        R::select(normal_speed.less(zero), bounce, zero)
    };
    let mut constants: [PointConstants<R>; MAX_CONTACT_POINTS] =
        [(Vec3::splat(zero), zero); MAX_CONTACT_POINTS];
    for k in 0..count {
        constants[k] = (arms[k], depths[k]);
    }

    let mut accumulated: [PointImpulses<R>; MAX_CONTACT_POINTS] =
        [(zero, Vec3::splat(zero), zero, zero); MAX_CONTACT_POINTS];
    let start: Momenta<R> = (state.linear_momentum, state.angular_momentum);
    let (linear_momentum, angular_momentum) = R::sweep_points(
        CONTACT_ITERATIONS,
        start,
        &constants[..count],
        &mut accumulated[..count],
        |(p, l), &(arm, depth), (normal, friction, target, normal_mass), first| {
            let (target, normal_mass) = first.then((target, normal_mass), |_| {
                let normal_mass = inverse_mass_along(inv_mass, &inv_inertia, arm, n);
                (target_speed(arm, depth), normal_mass)
            });
            let touching = zero.less(depth);
            let (p, l, normal, friction) = R::if_then(touching, (p, l, normal, friction), |c| {
                contact_impulse(c, inv_mass, &inv_inertia, plane, arm, target, normal_mass)
            });
            ((p, l), (normal, friction, target, normal_mass))
        },
    );
    State {
        linear_momentum,
        angular_momentum,
        ..state
    }
}

/// One contact's impulses: `P`, `L` and its accumulated normal and friction impulses.
type Contact<R> = (Vec3<R>, Vec3<R>, R, Vec3<R>);

/// One Gauss–Seidel update of the contact at arm `r`: the normal impulse that drives its
/// normal speed to `target` (the accumulated impulse kept non-negative), then the friction
/// impulse that stops its slip (the accumulated impulse within Coulomb's cone).
fn contact_impulse<R: Scalar>(
    (p, l, normal, friction): Contact<R>,
    inv_mass: R,
    inv_inertia: &Mat3<R>,
    plane: &PlaneConstants<R>,
    r: Vec3<R>,
    target: R,
    normal_mass: R,
) -> Contact<R> {
    let zero = R::constant(0.0);
    let n = plane.normal;
    let (v, w) = (p * inv_mass, inv_inertia.mul_vec(l));
    let normal_speed = (v + w.cross(r)).dot(n);
    let total = max(normal + (target - normal_speed) / normal_mass, zero);
    let push = n * (total - normal);
    let p = p + push;
    let l = l + r.cross(push);
    let v = p * inv_mass;
    let w = inv_inertia.mul_vec(l);

    let point_velocity = v + w.cross(r);
    let slip = point_velocity - n * point_velocity.dot(n);
    let slip_speed = slip.length();
    let (p, l, friction) = R::if_then(
        zero.less(slip_speed),
        (p, l, friction),
        |(p, l, friction)| {
            let t = slip * (R::constant(1.0) / slip_speed);
            let tangent_mass = inverse_mass_along(inv_mass, inv_inertia, r, t);
            let wanted = friction - t * (slip_speed / tangent_mass);
            let limit = plane.friction * total;
            let wanted_length = wanted.length();
            let scale = R::select(
                limit.less(wanted_length),
                limit / wanted_length,
                R::constant(1.0),
            );
            let clamped = wanted * scale;
            let rub = clamped - friction;
            let p = p + rub;
            let l = l + r.cross(rub);
            (p, l, clamped)
        },
    );
    (p, l, total, friction)
}

/// Whether a body whose shape's bounding sphere has radius `bounding_radius`, at `position`,
/// is too far from `plane` to touch it: then [`resolve_plane`] leaves its state as it is.
#[inline(always)]
pub fn far_from<R: Scalar>(
    bounding_radius: R,
    plane: &PlaneConstants<R>,
    position: Vec3<R>,
) -> R::Bool {
    let height = -plane.depth(position);
    bounding_radius.less(height)
}

/// Whether a body whose bounding sphere has radius `radius`, at `position`, may touch one of
/// `planes` (is not [`far_from`] every one), in any number type: the planes are counted as a
/// number, so a position that is not a number counts as near, as `far_from` says.
#[inline(always)]
pub fn near_a_plane<R: Scalar>(
    radius: R,
    planes: &[PlaneConstants<R>],
    position: Vec3<R>,
) -> R::Bool {
    let (zero, one) = (R::constant(0.0), R::constant(1.0));
    let near = (planes.iter()).fold(zero, |near, plane| {
        near + R::select(far_from(radius, plane, position), zero, one)
    });
    zero.less(near)
}

/// Whether a body of `shape` at `position` is too far from every plane to touch one: then
/// [`resolve_contacts`] returns its state as it is (each plane in turn leaves it so).
pub fn clear_of_planes<R: Scalar<Bool = bool>>(
    shape: &ShapeConstants<R>,
    planes: &[PlaneConstants<R>],
    position: Vec3<R>,
) -> bool {
    planes
        .iter()
        .all(|plane| far_from(shape.bounding_radius, plane, position))
}

/// Resolves `next` (the state after a step that started at `start`) against every plane in
/// turn.
pub fn resolve_contacts<R: Scalar>(
    start: &State<R>,
    next: State<R>,
    mass: &MassConstants<R>,
    shape: &ShapeConstants<R>,
    planes: &[PlaneConstants<R>],
    h: R,
) -> State<R> {
    // A body clear of every plane is left as it is, as each plane's resolution would leave
    // it: one test a plane then, not the step's acceleration and each plane's set-up.
    let near = near_a_plane(shape.bounding_radius, planes, next.position);
    R::if_then(near, next, |next| {
        let acceleration = step_acceleration(start, &next, mass, h);
        planes.iter().fold(next, |s, plane| {
            resolve_plane(s, mass, shape, plane, acceleration, h)
        })
    })
}
