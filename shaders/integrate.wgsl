// One body per invocation, one or several (fused) time steps per dispatch.
// Twin of src/cpu/integrate.rs. All RK4 stages live in registers: each body's state is read
// once and written once per dispatch.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> states: array<BodyState>;
@group(0) @binding(2) var<storage, read> constants: array<BodyConstants>;
@group(0) @binding(3) var<storage, read> forces: array<Force>;
/// Every keyframe table, one after another: x = time, y = value.
@group(0) @binding(4) var<storage, read> keyframes: array<vec2<f32>>;
/// One record per body once the host has set external loads; a single zero record before.
@group(0) @binding(5) var<storage, read> loads: array<ExternalLoad>;
/// The static planes every body bounces off (one unused record when there are none).
@group(0) @binding(6) var<storage, read> planes: array<Plane>;

/// Steps one f32 counts exactly before the count carries into the next lane (2^24).
const STEPS_PER_OVERFLOW: u32 = 16777216u;

/// The time of step `low + 2^24 high`; twin of `step_time` in src/fast_cpu/integrate.rs.
fn step_time(low: u32, high: u32, dt: f32) -> f32 {
    return f32(low) * dt + f32(high) * (16777216.0 * dt);
}

override workgroup_size: u32 = 64u;

/// Y + h k.
fn advance(s: Motion, k: Derivative, h: f32) -> Motion {
    return Motion(
        s.position + k.velocity * h,
        s.orientation + k.spin * h,
        s.linear_momentum + k.force * h,
        s.angular_momentum + k.torque * h,
    );
}

/// Explicit Euler: Y(t + h) = Y + h f(t, Y).
fn euler_step(s: Motion, c: BodyConstants, env: ForceEnv, t: f32, h: f32) -> Motion {
    return advance(s, derivative(s, c, t, env), h);
}

/// Classic RK4: Y(t + h) = Y + h/6 (k1 + 2 k2 + 2 k3 + k4), the stages evaluated at
/// t, t + h/2, t + h/2 and t + h.
fn rk4_step(s: Motion, c: BodyConstants, env: ForceEnv, t: f32, h: f32) -> Motion {
    let k1 = derivative(s, c, t, env);
    let k2 = derivative(advance(s, k1, 0.5 * h), c, t + 0.5 * h, env);
    let k3 = derivative(advance(s, k2, 0.5 * h), c, t + 0.5 * h, env);
    let k4 = derivative(advance(s, k3, h), c, t + h, env);
    let sum = Derivative(
        k1.velocity + (k2.velocity + k3.velocity) * 2.0 + k4.velocity,
        k1.spin + (k2.spin + k3.spin) * 2.0 + k4.spin,
        k1.force + (k2.force + k3.force) * 2.0 + k4.force,
        k1.torque + (k2.torque + k3.torque) * 2.0 + k4.torque,
    );
    return advance(s, sum, h / 6.0);
}

/// One full step of one body from time t, then q renormalized (Baraff 4).
fn integrate_step(s: Motion, c: BodyConstants, env: ForceEnv, t: f32, h: f32) -> Motion {
    var next: Motion;
    if params.integrator == INTEGRATOR_EULER {
        next = euler_step(s, c, env, t, h);
    } else {
        next = rk4_step(s, c, env, t, h);
    }
    next.orientation = normalize(next.orientation);
    return next;
}

/// `params.steps_per_dispatch` steps of one body. Every force depends only on the body's
/// own state, so K steps can run back to back in registers: the state is read once and
/// written once per K steps instead of per step.
/// A 2D grid covers crowds beyond 65,535 workgroups in one dimension.
@compute @workgroup_size(workgroup_size)
fn integrate(@builtin(global_invocation_id) id: vec3<u32>) {
    let index = id.y * params.row_width + id.x;
    if index >= params.body_count {
        return;
    }
    let stored = states[index];
    let c = constants[index];
    // Until loads are set, the buffer holds one zero record and no body reads it (a crowd
    // without loads moves no load bytes); a one-body chunk reads that zero record.
    var load = ExternalLoad(vec4<f32>(0.0), vec4<f32>(0.0));
    if index < arrayLength(&loads) {
        load = loads[index];
    }
    let env = ForceEnv(params.first_body + index, load);
    var s = Motion(
        stored.position.xyz,
        stored.orientation,
        stored.linear_momentum.xyz,
        stored.angular_momentum.xyz,
    );
    var low = u32(stored.position.w);
    var high = u32(stored.linear_momentum.w);
    for (var k = 0u; k < params.steps_per_dispatch; k++) {
        let next = integrate_step(s, c, env, step_time(low, high, params.dt), params.dt);
        if params.plane_count > 0u {
            s = resolve_contacts(s, next, c, params.dt);
        } else {
            s = next;
        }
        low += 1u;
        if low == STEPS_PER_OVERFLOW {
            low = 0u;
            high += 1u;
        }
    }
    states[index] = BodyState(
        vec4<f32>(s.position, f32(low)),
        s.orientation,
        vec4<f32>(s.linear_momentum, f32(high)),
        vec4<f32>(s.angular_momentum, 0.0),
    );
}
