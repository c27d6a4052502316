// The state derivative's plumbing: which force records a body sees. Every formula
// (auxiliaries, each force kind, dq/dt) is generated from the Rust definition of the physics
// (core/src/physics/). Calls `accumulate_global_forces` and `accumulate_own_forces`, generated
// for the crowd's force kinds; the keyframed and custom kinds' plumbing (keyframes.wgsl,
// custom_force.wgsl) joins the kernel where its crowd has those kinds.

/// State of one body in registers; twin of `BodyState` in core/src/model/body.rs.
struct Motion {
    position: vec3<real>,
    orientation: vec4<real>,
    linear_momentum: vec3<real>,
    angular_momentum: vec3<real>,
}

/// dY/dt: (v, dq/dt, F, tau); twin of `Derivative` in core/src/body_steps/derivative.rs.
struct Derivative {
    velocity: vec3<real>,
    spin: vec4<real>,
    force: vec3<real>,
    torque: vec3<real>,
}

struct Auxiliaries {
    velocity: vec3<real>,
    rotation: mat3x3<real>,
    angular_velocity: vec3<real>,
}

/// What the forces on one body see besides its state and the time; twin of `ForceEnv` in
/// core/src/body_steps/derivative.rs.
struct ForceEnv {
    /// Crowd index of the body.
    body: u32,
    /// The external load held on the body.
    load: ExternalLoad,
    /// The force records the kernel calls one by one, read once per dispatch rather than at
    /// every stage of every step (`ForceRecords` is generated for the crowd).
    records: ForceRecords,
}

// One function per force kind, `force_<scene name>`, each adding the force and torque (about
// the centre of mass) of force record `f` at time t to the totals; those of the kinds with
// parameters alone are generated from core/src/physics/forces.rs. The crate generates the code
// that calls them (src/backends/gpu/kernel/kernel_spec.rs): a kernel pays only for the kinds its crowd has,
// and the records it calls one by one are read once per dispatch.

/// dY/dt of one body at time t under its external load, the forces acting on every body
/// and its own. dq/dt multiplies the state's own q (not its normalized copy), as on the CPU.
fn derivative(s: Motion, c: BodyConstants, t: real, env: ForceEnv) -> Derivative {
    let aux = auxiliaries(s, c);
    var force = env.load.force.xyz;
    var torque = env.load.torque.xyz;
    accumulate_global_forces(s, c, aux, t, env, &force, &torque);
    accumulate_own_forces(s, c, aux, t, env, &force, &torque);
    return state_derivative(s, aux, force, torque);
}
