// Stage-level twin test of `derivative` (src/backends/gpu/derivative_probe.rs): one evaluation per
// body, at the state the kernel would read and the time of its step clock, written out term
// by term for comparison with `derivative` in core/src/body_steps/derivative.rs.
// Appended after the integrate module (and the custom force), so it calls the kernel's own
// functions and reads its bindings exactly as `integrate` does.

/// Five records per body: velocity (xyz), spin dq/dt (xyzw), force (xyz), torque (xyz) and
/// the angular velocity of `auxiliaries` (xyz); unused lanes zero.
@group(0) @binding(8) var<storage, read_write> probe_out: array<vec4<real>>;

@compute @workgroup_size(workgroup_size)
fn derivative_probe(@builtin(global_invocation_id) id: vec3<u32>) {
    let index = id.y * params.row_width + id.x;
    if index >= params.body_count {
        return;
    }
    let stored = states[index];
    let c = constants[index];
    let env = force_env(index, c, stored.step_low, stored.step_high);
    let s = motion_of(stored);
    let t = step_time(stored.step_low, stored.step_high, params.dt);
    let k = derivative(s, c, t, env);
    let omega = auxiliaries(s, c).angular_velocity;
    let zero = real(0.0);
    let base = 5u * index;
    probe_out[base] = vec4<real>(k.velocity, zero);
    probe_out[base + 1u] = k.spin;
    probe_out[base + 2u] = vec4<real>(k.force, zero);
    probe_out[base + 3u] = vec4<real>(k.torque, zero);
    probe_out[base + 4u] = vec4<real>(omega, zero);
}
