// One body per invocation, one or several (fused) time steps per dispatch. Each integrator's
// step, `<name>_step`, is generated from core/src/physics/integrators.rs; the stages live in
// registers: each body's state is read once and written once per dispatch.

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> states: array<BodyState>;
@group(0) @binding(2) var<storage, read> constants: array<BodyConstants>;
@group(0) @binding(3) var<storage, read> forces: array<Force>;
/// Every keyframe table, one after another: x = time, y = value.
@group(0) @binding(4) var<storage, read> keyframes: array<vec2<real>>;
/// One record per body once the host has set external loads; a single zero record before.
@group(0) @binding(5) var<storage, read> loads: array<ExternalLoad>;
/// The static planes every body bounces off (one unused record when there are none).
@group(0) @binding(6) var<storage, read> planes: array<Plane>;
/// What went wrong, if anything (see `Faults` in common.wgsl).
@group(0) @binding(7) var<storage, read_write> faults: Faults;

/// The time of step `low + STEPS_PER_OVERFLOW high`; twin of `step_time` in
/// core/src/physics/clock.rs (the split keeps f32 times as they were when the count lived in
/// f32 lanes; in f64 both products are exact).
fn step_time(low: u32, high: u32, dt: real) -> real {
    return real(low) * dt + real(high) * (real(STEPS_PER_OVERFLOW) * dt);
}

override workgroup_size: u32 = 64u;

/// One full step of one body from time t, then q renormalized (Baraff 4). `scheme_step`,
/// generated with a case for the crowd's integrator (src/backends/gpu/kernel/kernel_spec.rs), calls
/// `<integrator name>_step` and reports an unknown code.
fn integrate_step(s: Motion, c: BodyConstants, axes: SplitAxes, env: ForceEnv, t: real,
    h: real) -> Motion {
    return renormalize(scheme_step(s, c, axes, env, t, h));
}

/// Whether every component is finite (`all_finite` comes with the precision's math, see
/// src/backends/gpu/kernel/shader.rs).
fn motion_is_finite(m: Motion) -> bool {
    return all_finite(vec4<real>(m.position, m.linear_momentum.x))
        && all_finite(m.orientation)
        && all_finite(vec4<real>(m.linear_momentum.yz, m.angular_momentum.xy))
        && all_finite(vec4<real>(m.angular_momentum.z, real(0.0), real(0.0), real(0.0)));
}

/// The FAULT_* code of the first rule a body's new state `next` breaks, or HEALTHY_STATUS;
/// twin of `state_fault` in core/src/backends/cpu_ref/faults.rs. KERNEL_ENVELOPE is generated: false (no limit
/// set) folds the envelope away.
fn state_fault(next: Motion, c: BodyConstants) -> u32 {
    if !motion_is_finite(next) {
        if !all_finite(vec4<real>(next.position, real(0.0))) {
            return FAULT_NON_FINITE_POSITION;
        }
        if !all_finite(next.orientation) {
            return FAULT_NON_FINITE_ORIENTATION;
        }
        if !all_finite(vec4<real>(next.linear_momentum, real(0.0))) {
            return FAULT_NON_FINITE_LINEAR_MOMENTUM;
        }
        return FAULT_NON_FINITE_ANGULAR_MOMENTUM;
    }
    if KERNEL_ENVELOPE {
        let limits = vec3<real>(
            params.max_speed_squared,
            params.max_angular_speed_squared,
            params.max_distance_squared,
        );
        let breaches = envelope_breaches(next, c, limits);
        if breaches.x {
            return FAULT_SPEED;
        }
        if breaches.y {
            return FAULT_ANGULAR_SPEED;
        }
        if breaches.z {
            return FAULT_DISTANCE;
        }
    }
    return HEALTHY_STATUS;
}

/// Reports that body `index` of this chunk broke a rule: under ON_FAULT_FREEZE it is counted
/// as frozen, else the crowd stops at the first such body.
fn report_fault(index: u32) {
    if params.on_fault == ON_FAULT_FREEZE {
        atomicAdd(&faults.frozen, 1u);
    } else {
        atomicMin(&faults.first_fault, params.first_body + index);
    }
}

/// Moves the clock `low + STEPS_PER_OVERFLOW high` on by one step.
fn advance_clock(low: ptr<function, u32>, high: ptr<function, u32>) {
    *low += 1u;
    if *low == STEPS_PER_OVERFLOW {
        *low = 0u;
        *high += 1u;
    }
}

/// What the forces on body `index` of this chunk, whose constants are `c` and whose clock
/// stands at step `low + STEPS_PER_OVERFLOW high`, see besides its state and the time.
fn force_env(index: u32, c: BodyConstants, low: u32, high: u32) -> ForceEnv {
    let body = params.first_body + index;
    return ForceEnv(body, external_load(index), load_force_records(c, body, low, high));
}

/// The external load on body `index` of this chunk.
fn external_load(index: u32) -> ExternalLoad {
    // Until loads are set, the buffer holds one zero record and no body reads it (a crowd
    // without loads moves no load bytes); a one-body chunk reads that zero record.
    var load = ExternalLoad(vec4<real>(real(0.0)), vec4<real>(real(0.0)));
    if index < arrayLength(&loads) {
        load = loads[index];
    }
    return load;
}

/// The state of a stored record, without its clock.
fn motion_of(stored: BodyState) -> Motion {
    return Motion(
        stored.position,
        stored.orientation,
        stored.linear_momentum,
        stored.angular_momentum,
    );
}

/// `params.steps_per_dispatch` steps of one body. Every force depends only on the body's
/// own state, so K steps can run back to back in registers: the state is read once and
/// written once per K steps instead of per step.
/// A 2D grid covers crowds beyond 65,535 workgroups in one dimension.
@compute @workgroup_size(workgroup_size)
fn integrate(@builtin(global_invocation_id) id: vec3<u32>) {
    let index = id.y * params.row_width + id.x;
    // Under ON_FAULT_STOP, after a fault every dispatch is a no-op: the crowd stops within
    // one dispatch of it, and the offending body keeps its last good state.
    if index >= params.body_count || atomicLoad(&faults.first_fault) != HEALTHY
        || atomicLoad(&faults.first_unknown_code) != HEALTHY {
        return;
    }
    let stored = states[index];
    // A frozen body keeps its last good state (and its clock) until the host resets it.
    if stored.status != HEALTHY_STATUS {
        return;
    }
    let c = constants[index];
    let env = force_env(index, c, stored.step_low, stored.step_high);
    // The principal axes are fixed per body: found once a dispatch, by kernels that split.
    let axes = kernel_split_axes(c);
    var s = motion_of(stored);
    var low = stored.step_low;
    var high = stored.step_high;
    var status = HEALTHY_STATUS;
    for (var k = 0u; k < params.steps_per_dispatch; k++) {
        let stepped = integrate_step(s, c, axes, env, step_time(low, high, params.dt),
            params.dt);
        var next = stepped;
        // KERNEL_CONTACTS is generated: false folds the contact code away.
        if KERNEL_CONTACTS && params.plane_count > 0u {
            next = resolve_contacts(s, stepped, c, params.dt);
        }
        status = state_fault(next, c);
        if status != HEALTHY_STATUS {
            report_fault(index);
            break;
        }
        s = next;
        advance_clock(&low, &high);
    }
    states[index] = BodyState(
        s.position,
        low,
        s.orientation,
        s.linear_momentum,
        high,
        s.angular_momentum,
        status,
    );
}
