// The state derivative's plumbing over duals: which force records a body sees. Every formula
// (auxiliaries, each force kind, dq/dt) is generated from the Rust definition of the physics
// (core/src/physics/). Calls `dual_accumulate_global_forces` and `dual_accumulate_own_forces`,
// generated for the crowd's force kinds (src/backends/gpu/kernel/kernel_spec.rs); the keyframed
// and custom kinds' plumbing (keyframes.wgsl, custom_force.wgsl) joins the kernel where its
// crowd has those kinds.

/// A state's values in registers, as the faults and the envelope judge them; twin of
/// `BodyState` in core/src/model/body.rs.
struct Motion {
    position: vec3<real>,
    orientation: vec4<real>,
    linear_momentum: vec3<real>,
    angular_momentum: vec3<real>,
}

/// The body's external load and constants, read once a dispatch (with its force records:
/// `dual_records`), not at every stage.
var<private> dispatch_load: ExternalLoad;
var<private> dispatch_constants: BodyConstants;

/// Force record `record`'s parameters over duals (`block_parameters`).
fn dual_parameters(record: u32) -> DualParameters {
    let f = forces[record];
    return block_parameters(record,
        array<real, 10>(f.a.x, f.a.y, f.a.z, f.b.x, f.b.y, f.b.z, f.c.x, f.c.y, f.c.z, f.c.w));
}

/// dY/dt of body `index` at time t: its external load, then the forces on every body, then
/// its own, in record order (as `derivative` in core/src/body_steps/derivative.rs sums them).
/// dq/dt multiplies the state's own q (not its normalized copy), as on the CPU.
fn dual_derivative(s: DualMotion, c: DualConstants, t: DualReal, index: u32) -> DualMotion {
    let aux = dual_auxiliaries(s, c);
    let body = params.first_body + index;
    let load = dispatch_load;
    var total = fixed_load(array<real, 6>(load.force.x, load.force.y, load.force.z,
        load.torque.x, load.torque.y, load.torque.z));
    total = dual_accumulate_global_forces(s, c, aux, t, dispatch_constants, body, total);
    total = dual_accumulate_own_forces(s, c, aux, t, dispatch_constants, body, total);
    return dual_state_derivative(s, aux, total);
}

/// The values of a dual state.
fn motion_value(s: DualMotion) -> Motion {
    return Motion(
        vec3<real>(s[0], s[DUAL_STRIDE], s[2u * DUAL_STRIDE]),
        vec4<real>(s[4u * DUAL_STRIDE], s[5u * DUAL_STRIDE], s[6u * DUAL_STRIDE], s[3u * DUAL_STRIDE]),
        vec3<real>(s[7u * DUAL_STRIDE], s[8u * DUAL_STRIDE], s[9u * DUAL_STRIDE]),
        vec3<real>(s[10u * DUAL_STRIDE], s[11u * DUAL_STRIDE], s[12u * DUAL_STRIDE]),
    );
}
