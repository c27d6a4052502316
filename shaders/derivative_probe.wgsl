// Stage-level twin test of `dual_derivative` (src/backends/gpu/derivative_probe.rs): one evaluation per
// body, at the state the kernel would read and the time of its step clock, written out term
// by term for comparison with `derivative` in core/src/body_steps/derivative.rs.
// Appended after the integrate module (and the custom force), so it calls the kernel's own
// functions and reads its bindings exactly as `integrate` does.

/// Five records per body: velocity (xyz), spin dq/dt (xyzw), force (xyz), torque (xyz) and
/// the angular velocity of `dual_auxiliaries` (xyz); unused lanes zero.
@group(0) @binding(8) var<storage, read_write> probe_out: array<vec4<real>>;

@compute @workgroup_size(workgroup_size)
fn derivative_probe(@builtin(global_invocation_id) id: vec3<u32>) {
    let index = id.y * params.row_width + id.x;
    if index >= params.body_count {
        return;
    }
    let stored = states[index];
    let body = start_body(index, stored, constants[index]);
    let t = step_time(stored.step_low, stored.step_high, params.dt);
    var at: DualReal;
    at[0] = t;
    let k = dual_derivative(body.s, body.c, at, index);
    let aux = dual_auxiliaries(body.s, body.c);
    let zero = real(0.0);
    let base = 5u * index;
    let d = DUAL_STRIDE;
    probe_out[base] = vec4<real>(k[0], k[d], k[2u * d], zero);
    probe_out[base + 1u] = vec4<real>(k[4u * d], k[5u * d], k[6u * d], k[3u * d]);
    probe_out[base + 2u] = vec4<real>(k[7u * d], k[8u * d], k[9u * d], zero);
    probe_out[base + 3u] = vec4<real>(k[10u * d], k[11u * d], k[12u * d], zero);
    probe_out[base + 4u] = vec4<real>(aux[12u * d], aux[13u * d], aux[14u * d], zero);
}
