// Draws the crowd straight from the integration kernel's state buffer: one instance per body,
// each a unit mesh scaled, rotated and moved by the body's state in the vertex stage. Also the
// floor. Lambert shading with a hemisphere ambient term. Appended to shaders/common.wgsl (in
// the precision of the simulation's states) by src/render/pipeline.rs.

/// Per-frame view settings, 112 bytes. Kept in sync with `ViewGpu` in src/render/pipeline.rs.
struct View {
    view_projection: mat4x4<f32>,
    /// xyz: eye position; w: edge of the floor's checker squares.
    eye: vec4<f32>,
    /// xyz: unit direction towards the light; w: ambient share of the lighting.
    light: vec4<f32>,
    /// xyz: the scene's unit up direction; w unused.
    up: vec4<f32>,
}

/// How one body is drawn, 64 bytes. Kept in sync with `RenderBodyGpu` in
/// src/render/instances.rs.
struct RenderBody {
    /// xyz: per-axis scale of the unit mesh; w: capsule half length (0 otherwise).
    scale: vec4<f32>,
    /// Rotation from mesh axes to body axes, (x, y, z, w).
    mesh_to_body: vec4<f32>,
    /// Linear RGB; a unused.
    color: vec4<f32>,
    /// Index of the body's state in this chunk's state buffer.
    body: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

/// One vertex of a unit mesh. Kept in sync with `MeshVertex` in src/render/mesh.rs.
struct MeshVertex {
    @location(0) position: vec3<f32>,
    /// Capsules: +1 on the upper cap, -1 on the lower one.
    @location(1) cap: f32,
    @location(2) normal: vec3<f32>,
}

struct Shaded {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) color: vec3<f32>,
}

@group(0) @binding(0) var<uniform> view: View;
@group(1) @binding(0) var<storage, read> states: array<BodyState>;
@group(1) @binding(1) var<storage, read> bodies: array<RenderBody>;

@vertex
fn body_vertex(vertex: MeshVertex, @builtin(instance_index) instance: u32) -> Shaded {
    let drawn = bodies[instance];
    let state = states[drawn.body];
    // Body axes to world: the state's orientation after the mesh's own turn into body axes,
    // in the states' precision, then f32 for drawing.
    let turn = quat_to_mat3(normalize(quat_mul(state.orientation, vec4<real>(drawn.mesh_to_body))));
    let rotation = mat3x3<f32>(vec3<f32>(turn[0]), vec3<f32>(turn[1]), vec3<f32>(turn[2]));
    let local = vertex.position * drawn.scale.xyz + vec3<f32>(0.0, 0.0, vertex.cap * drawn.scale.w);
    // Normals of a scaled solid transform by the inverse scale (the inverse transpose).
    let local_normal = normalize(vertex.normal / drawn.scale.xyz);
    let world = vec3<f32>(state.position) + rotation * local;
    var out: Shaded;
    out.clip = view.view_projection * vec4<f32>(world, 1.0);
    out.world = world;
    out.normal = rotation * local_normal;
    out.color = drawn.color.rgb;
    return out;
}

/// Lambert shading plus an ambient term that is brighter on surfaces facing up.
fn lit(color: vec3<f32>, normal: vec3<f32>) -> vec3<f32> {
    let n = normalize(normal);
    let ambient = view.light.w * (0.6 + 0.4 * dot(n, view.up.xyz));
    let diffuse = (1.0 - view.light.w) * max(dot(n, view.light.xyz), 0.0);
    return color * (ambient + diffuse);
}

@fragment
fn body_fragment(in: Shaded) -> @location(0) vec4<f32> {
    return vec4<f32>(lit(in.color, in.normal), 1.0);
}

@vertex
fn floor_vertex(vertex: MeshVertex) -> Shaded {
    var out: Shaded;
    out.clip = view.view_projection * vec4<f32>(vertex.position, 1.0);
    out.world = vertex.position;
    out.normal = vertex.normal;
    out.color = vec3<f32>(0.0);
    return out;
}

@fragment
fn floor_fragment(in: Shaded) -> @location(0) vec4<f32> {
    // Squares on the two world axes closest to the plane, so walls and floors alike are
    // checkered and the plane's own coordinate never decides a square.
    let n = abs(in.normal);
    let p = in.world / view.eye.w;
    var uv = p.xy;
    if n.x >= n.y && n.x >= n.z {
        uv = p.yz;
    } else if n.y >= n.z {
        uv = p.xz;
    }
    let cell = vec2<i32>(floor(uv));
    let parity = (cell.x + cell.y) & 1;
    let color = select(vec3<f32>(0.62, 0.64, 0.66), vec3<f32>(0.48, 0.50, 0.53), parity == 1);
    return vec4<f32>(lit(color, in.normal), 1.0);
}

// Drawing only: where the bodies are comes from the simulation, whose rotations are
// generated from the Rust definition (core/src/physics).

/// Hamilton product `a b` of quaternions stored as (x, y, z, w).
fn quat_mul(a: vec4<real>, b: vec4<real>) -> vec4<real> {
    return vec4<real>(
        a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz),
        a.w * b.w - dot(a.xyz, b.xyz),
    );
}

/// Rotation matrix of a unit quaternion (Baraff 4-3).
fn quat_to_mat3(q: vec4<real>) -> mat3x3<real> {
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
    let one = real(1.0);
    return mat3x3<real>(
        vec3<real>(one - (yy + zz), xy + wz, xz - wy),
        vec3<real>(xy - wz, one - (xx + zz), yz + wx),
        vec3<real>(xz + wy, yz - wx, one - (xx + yy)),
    );
}
