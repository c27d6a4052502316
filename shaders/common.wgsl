// Shared by every kernel: the storage layouts and quaternion helpers, written once over the
// scalar `real`. src/backends/gpu/kernel/shader.rs prepends `alias real = f32;` (or f64) and the constants
// generated from the Rust definitions (FORCE_*, INTEGRATOR_*, SHAPE_*, STEPS_PER_OVERFLOW),
// so no numbering is kept by hand here.
// Every struct is the twin of a generic record in src/backends/gpu/kernel/layout.rs; the layout test there
// checks each field's offset in both precisions.

/// Momentum-form state of one body: 64 bytes in f32, 128 in f64.
/// The body's clock rides in two u32 fields: the step count is
/// `step_low + STEPS_PER_OVERFLOW * step_high`, so time advances inside fused dispatches
/// without a uniform write per step.
struct BodyState {
    /// Centre-of-mass position x.
    position: vec3<real>,
    /// Step count modulo STEPS_PER_OVERFLOW.
    step_low: u32,
    /// Unit quaternion stored as (x, y, z, w): vector part first, scalar last (as glam does).
    orientation: vec4<real>,
    /// Linear momentum P.
    linear_momentum: vec3<real>,
    /// Step count divided by STEPS_PER_OVERFLOW.
    step_high: u32,
    /// Angular momentum L about the centre of mass.
    angular_momentum: vec3<real>,
    /// HEALTHY_STATUS; RESTING_STATUS where the kernel found this state a fixed point of the
    /// body's step (at rest on a plane): later dispatches move its clock alone, until the host
    /// writes a new state or new external loads; or the FAULT_* code of the rule that froze the
    /// body at this state: the kernel leaves it alone until the host writes a new state.
    status: u32,
}

/// Per-body constants: 64 bytes in f32, 128 in f64.
struct BodyConstants {
    /// Sphere: x = radius. Box: xyz = half extents. Capsule: x = radius, y = half length.
    /// Cylinder: x = radius, y = half height. Ellipsoid: xyz = semi-axes.
    /// w: bounding radius about the centre of mass.
    shape: vec4<real>,
    mass: real,
    inv_mass: real,
    /// The symmetric Ibody^-1 as its six distinct entries.
    inv_inertia_xx: real,
    inv_inertia_yy: real,
    inv_inertia_zz: real,
    inv_inertia_xy: real,
    inv_inertia_xz: real,
    inv_inertia_yz: real,
    /// This body's own forces: `forces[force_first .. force_first + force_count]`.
    force_first: u32,
    force_count: u32,
    /// One of `SHAPE_*`: the solid whose points can touch a plane.
    shape_kind: u32,
    /// The kinds of this body's own forces: bit `1 << FORCE_*` for each.
    own_kinds: u32,
}

/// A static plane: 32 bytes in f32, 64 in f64.
struct Plane {
    /// xyz: unit outward normal n; w: offset, n . p of the points p on the surface.
    surface: vec4<real>,
    restitution: real,
    friction: real,
    _pad0: real,
    _pad1: real,
}

/// One force source: 64 bytes in f32, 128 in f64. Its parameters are laid out by
/// `ForceKind::gpu_parameters` in core/src/model/force.rs: vectors in `a` then `b` (xyz), scalars in
/// `c` (x, y, z, w in order), a keyframe table as its first record and count.
struct Force {
    a: vec4<real>,
    b: vec4<real>,
    c: vec4<real>,
    /// One of `FORCE_*`.
    kind: u32,
    keyframe_first: u32,
    keyframe_count: u32,
    _pad0: u32,
}

/// Per-dispatch parameters: 48 bytes in f32, 64 in f64.
struct Params {
    body_count: u32,
    /// Forces `forces[0 .. global_force_count]` act on every body.
    global_force_count: u32,
    /// One of `INTEGRATOR_*`.
    integrator: u32,
    /// Invocations per row of the 2D dispatch grid (workgroups in x times workgroup size).
    row_width: u32,
    /// Steps each invocation takes before writing its state back (fused steps).
    steps_per_dispatch: u32,
    /// Crowd index of this chunk's first body (a custom force sees crowd indices).
    first_body: u32,
    /// Planes `planes[0 .. plane_count]` every body bounces off.
    plane_count: u32,
    /// ON_FAULT_STOP or ON_FAULT_FREEZE: what a body that breaks a rule does to the run.
    on_fault: u32,
    dt: real,
    /// Squared speed, angular speed and distance limits of the envelope (infinite if unset).
    max_speed_squared: real,
    max_angular_speed_squared: real,
    max_distance_squared: real,
    /// The first PARAMS_PLANES planes' surfaces (normal, offset), as `planes` holds them:
    /// read once a dispatch for every body, a uniform read costs one load for all lanes.
    plane_surfaces: array<vec4<real>, PARAMS_PLANES>,
}

/// The force and torque set on one body from the host: 32 bytes in f32, 64 in f64.
struct ExternalLoad {
    /// xyz: world force; w unused.
    force: vec4<real>,
    /// xyz: world torque about the centre of mass; w unused.
    torque: vec4<real>,
}

/// What the kernel found wrong, shared by every chunk and read by the host after each
/// submission: under ON_FAULT_STOP the lowest crowd index of a body that broke a rule, and of
/// one that met a force or integrator code the kernel does not know (`HEALTHY` until then);
/// under ON_FAULT_FREEZE, how many bodies were frozen.
struct Faults {
    first_fault: atomic<u32>,
    first_unknown_code: atomic<u32>,
    frozen: atomic<u32>,
    /// The lowest crowd index of a body whose keyframe window missed a time (see
    /// `keyframe_window` in keyframes.wgsl).
    first_keyframe_miss: atomic<u32>,
}

/// What a custom force returns: a world force and the torque about the centre of mass.
struct Load {
    force: vec3<real>,
    torque: vec3<real>,
}
