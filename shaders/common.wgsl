// Shared by every kernel: the storage layouts and quaternion helpers. Prepended to each
// kernel's source by src/gpu/shader.rs.

/// Momentum-form state of one body, 64 bytes.
/// Kept in sync with `BodyStateGpu` in src/gpu/layout.rs.
/// The body's clock rides in two w lanes as exact f32 integers: the step count is
/// `position.w + 2^24 linear_momentum.w`, so time advances inside fused dispatches without
/// a uniform write per step.
struct BodyState {
    /// xyz: centre-of-mass position x; w: step count modulo 2^24.
    position: vec4<f32>,
    /// Unit quaternion stored as (x, y, z, w): vector part first, scalar last (as glam does).
    orientation: vec4<f32>,
    /// xyz: linear momentum P; w: step count divided by 2^24.
    linear_momentum: vec4<f32>,
    /// xyz: angular momentum L about the centre of mass; w unused.
    angular_momentum: vec4<f32>,
}

/// Per-body constants, 64 bytes. Kept in sync with `BodyConstantsGpu` in src/gpu/layout.rs.
struct BodyConstants {
    mass: f32,
    inv_mass: f32,
    /// The symmetric Ibody^-1 as its six distinct entries.
    inv_inertia_xx: f32,
    inv_inertia_yy: f32,
    inv_inertia_zz: f32,
    inv_inertia_xy: f32,
    inv_inertia_xz: f32,
    inv_inertia_yz: f32,
    /// This body's own forces: `forces[force_first .. force_first + force_count]`.
    force_first: u32,
    force_count: u32,
    /// One of `SHAPE_*`: the solid whose points can touch a plane.
    shape_kind: u32,
    _pad0: u32,
    /// Sphere: x = radius. Box: xyz = half extents. Capsule: x = radius, y = half length.
    /// Cylinder: x = radius, y = half height. Ellipsoid: xyz = semi-axes.
    /// w: bounding radius about the centre of mass.
    shape: vec4<f32>,
}

const SHAPE_NONE: u32 = 0u;
const SHAPE_SPHERE: u32 = 1u;
const SHAPE_BOX: u32 = 2u;
const SHAPE_CAPSULE: u32 = 3u;
const SHAPE_CYLINDER: u32 = 4u;
const SHAPE_ELLIPSOID: u32 = 5u;

/// A static plane, 32 bytes. Kept in sync with `PlaneGpu` in src/gpu/layout.rs.
struct Plane {
    /// xyz: unit outward normal n; w: offset, n . p of the points p on the surface.
    surface: vec4<f32>,
    restitution: f32,
    friction: f32,
    _pad0: u32,
    _pad1: u32,
}

const FORCE_GRAVITY: u32 = 0u;
const FORCE_LINEAR_DRAG: u32 = 1u;
const FORCE_POINT: u32 = 2u;
const FORCE_SPRING: u32 = 3u;
const FORCE_ATTRACTOR: u32 = 4u;
const FORCE_THRUST: u32 = 5u;
const FORCE_SINUSOIDAL: u32 = 6u;
const FORCE_KEYFRAMED: u32 = 7u;
const FORCE_CUSTOM: u32 = 8u;

/// One force source, 64 bytes. Kept in sync with `ForceGpu` in src/gpu/layout.rs.
/// gravity: a.xyz = acceleration. linear_drag: a.x = linear, a.y = angular.
/// point_force: a.xyz = force, b.xyz = body-space point.
/// spring: a.xyz = anchor, b.xyz = body-space attach point, c.x = stiffness, c.y = damping.
/// attractor: a.xyz = centre, c.x = strength mu, c.y = softening eps.
/// thrust: a.xyz = body-frame force, b.xyz = body-frame torque.
/// sinusoidal: a.xyz = force, b.xyz = torque, c = (offset, amplitude, frequency, phase).
/// keyframed: a.xyz = force, b.xyz = torque, c.x and c.y = bitcast first keyframe and count.
/// custom: no parameters.
struct Force {
    kind: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    a: vec4<f32>,
    b: vec4<f32>,
    c: vec4<f32>,
}

const INTEGRATOR_EULER: u32 = 0u;
const INTEGRATOR_RK4: u32 = 1u;
const INTEGRATOR_SYMPLECTIC_EULER: u32 = 2u;
const INTEGRATOR_LIE_RK4: u32 = 3u;

/// Per-dispatch parameters, 32 bytes. Kept in sync with `ParamsGpu` in src/gpu/layout.rs.
struct Params {
    body_count: u32,
    /// Forces `forces[0 .. global_force_count]` act on every body.
    global_force_count: u32,
    integrator: u32,
    /// Invocations per row of the 2D dispatch grid (workgroups in x times workgroup size).
    row_width: u32,
    dt: f32,
    /// Steps each invocation takes before writing its state back (fused steps).
    steps_per_dispatch: u32,
    /// Crowd index of this chunk's first body (a custom force sees crowd indices).
    first_body: u32,
    /// Planes `planes[0 .. plane_count]` every body bounces off.
    plane_count: u32,
}

/// The force and torque set on one body from the host, 32 bytes.
/// Kept in sync with `ExternalLoadGpu` in src/gpu/layout.rs.
struct ExternalLoad {
    /// xyz: world force; w unused.
    force: vec4<f32>,
    /// xyz: world torque about the centre of mass; w unused.
    torque: vec4<f32>,
}

/// What a custom force returns: a world force and the torque about the centre of mass.
struct Load {
    force: vec3<f32>,
    torque: vec3<f32>,
}

/// Hamilton product `a b` of quaternions stored as (x, y, z, w).
fn quat_mul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(
        a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz),
        a.w * b.w - dot(a.xyz, b.xyz),
    );
}

/// Rotation matrix of a unit quaternion (Baraff 4-3).
fn quat_to_mat3(q: vec4<f32>) -> mat3x3<f32> {
    let x2 = q.x + q.x;
    let y2 = q.y + q.y;
    let z2 = q.z + q.z;
    let xx = q.x * x2;
    let xy = q.x * y2;
    let xz = q.x * z2;
    let yy = q.y * y2;
    let yz = q.y * z2;
    let zz = q.z * z2;
    let wx = q.w * x2;
    let wy = q.w * y2;
    let wz = q.w * z2;
    return mat3x3<f32>(
        vec3<f32>(1.0 - (yy + zz), xy + wz, xz - wy),
        vec3<f32>(xy - wz, 1.0 - (xx + zz), yz + wx),
        vec3<f32>(xz + wy, yz - wx, 1.0 - (xx + yy)),
    );
}
