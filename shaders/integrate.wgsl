// One body per invocation, one or several (fused) time steps per dispatch, over dual numbers
// of the kernel's width: DUAL_WIDTH derivatives beside each number, none in the plain kernel
// (width 0), a block of a body's tangent columns in a tangent kernel. Every formula is
// generated from the Rust definition traced over `Dual` (core/src/physics/dual_wgsl.rs); the
// stages live in registers: each body's state is read once and written once per dispatch.
// What a block reads and writes besides the values (its bodies, its tangents, its seeds) comes
// from the kernel's block hooks: `block_body`, `block_writes_state`, `write_block_tangents`,
// and `block_state`, `block_constants`, `block_parameters`, `block_plane`, `block_keyframe`
// and `fixed_load`, which make a structure's values duals (the plain kernel's: the values
// themselves, src/backends/gpu/kernel/shader.rs; a tangent kernel's: tangent_block.wgsl).

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

/// What `block_body` gives an invocation past the bodies it covers.
const NO_BODY: u32 = 0xffffffffu;

/// The time of step `low + STEPS_PER_OVERFLOW high`; twin of `step_time` in
/// core/src/physics/clock.rs (the split keeps f32 times as they were when the count lived in
/// f32 lanes; in f64 both products are exact).
fn step_time(low: u32, high: u32, dt: real) -> real {
    return real(low) * dt + real(high) * (real(STEPS_PER_OVERFLOW) * dt);
}

override workgroup_size: u32 = 64u;

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

/// Whether a step from `s` to `next` left every bit of the state as it was.
fn left_as_it_was(s: DualMotion, next: DualMotion) -> bool {
    let a = motion_value(s);
    let b = motion_value(next);
    let p = a.linear_momentum;
    let l = a.angular_momentum;
    let q = b.linear_momentum;
    let m = b.angular_momentum;
    return same_bits(vec4<real>(a.position, p.x), vec4<real>(b.position, q.x))
        & same_bits(a.orientation, b.orientation)
        & same_bits(vec4<real>(p.yz, l.xy), vec4<real>(q.yz, m.xy))
        & same_bits(vec4<real>(l.z), vec4<real>(m.z));
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

/// Body `index`'s stored state and constants over duals (the derivatives its block carries
/// beside the values: `block_state`, `block_constants`), and what its forces read once a
/// dispatch: its external load, its constants and its records.
fn start_body(index: u32, stored: BodyState, plain: BodyConstants) -> DualBody {
    let s = block_state(index, array<real, 13>(
        stored.position.x, stored.position.y, stored.position.z,
        stored.orientation.w, stored.orientation.x, stored.orientation.y, stored.orientation.z,
        stored.linear_momentum.x, stored.linear_momentum.y, stored.linear_momentum.z,
        stored.angular_momentum.x, stored.angular_momentum.y, stored.angular_momentum.z,
    ));
    let c = block_constants(index, array<real, 8>(
        plain.mass, plain.inv_mass,
        plain.inv_inertia_xx, plain.inv_inertia_yy, plain.inv_inertia_zz,
        plain.inv_inertia_xy, plain.inv_inertia_xz, plain.inv_inertia_yz,
    ));
    dispatch_load = external_load(index);
    dispatch_constants = plain;
    dual_records = dual_load_force_records(plain, params.first_body + index, stored.step_low,
        stored.step_high);
    return DualBody(s, c);
}

/// A body's state and mass constants over duals.
struct DualBody {
    s: DualMotion,
    c: DualConstants,
}

/// `params.steps_per_dispatch` steps of one body (and one block of its tangents, in a
/// tangent kernel): each step its integrator's (`dual_scheme_step`, generated for the
/// crowd's), q renormalized (Baraff 4), the planes' contacts resolved, the faults judged on
/// the values. Every force depends only on the body's own state, so K steps run back to back
/// in registers. A 2D grid covers crowds beyond 65,535 workgroups in one dimension. Where
/// the kernel hands contacts over (KERNEL_HANDS_OVER_CONTACTS), a body that may come near a
/// plane in the dispatch is left as it was and `integrate_near` takes its steps: this kernel
/// holds no contact code, and a body far from every plane pays for the planes its clearance
/// once a dispatch and one distance a step.
@compute @workgroup_size(workgroup_size)
fn integrate(@builtin(global_invocation_id) id: vec3<u32>) {
    // First, whatever else this dispatch does: the next one fills that list.
    empty_next_list(id);
    let index = block_body(id);
    // Under ON_FAULT_STOP, after a fault every dispatch is a no-op: the crowd stops within
    // one dispatch of it, and the offending body keeps its last good state.
    if index == NO_BODY || atomicLoad(&faults.first_fault) != HEALTHY
        || atomicLoad(&faults.first_unknown_code) != HEALTHY {
        return;
    }
    if run_steps(index, 0u, !KERNEL_HANDS_OVER_CONTACTS) {
        hand_over(index, 0u);
    }
}

/// Body `index`'s steps of the dispatch from its step `first` on, its contacts resolved
/// where `resolves`; the body's state is written at the end, as far as it got. Where it
/// does not resolve them and the body may come near a plane in these steps, its state is
/// left untouched and true returned: the caller hands it over (`hand_over`) from step
/// `first`. (`integrate_near`, which runs this too, so never reaches the list's writes.)
fn run_steps(index: u32, first: u32, resolves: bool) -> bool {
    let stored = states[index];
    let resting = stored.status == RESTING_STATUS;
    // Found at rest by an earlier dispatch, and its state not written since (a write makes
    // it healthy): its steps would leave it as it is, so only its clock moves on. Not once
    // the host has set external loads (a record per body, which it may change between
    // dispatches; before, one record: a one-body chunk never counts on the mark), nor in a
    // kernel that does not settle (a tangent kernel): there it takes a healthy body's steps.
    let loads_set = arrayLength(&loads) >= params.body_count;
    if KERNEL_SETTLES && resting && !loads_set {
        var low = stored.step_low;
        var high = stored.step_high;
        for (var k = first; k < params.steps_per_dispatch; k++) {
            advance_clock(&low, &high);
        }
        states[index].step_low = low;
        states[index].step_high = high;
        return false;
    }
    // A frozen body keeps its last good state (and its clock) until the host resets it.
    if stored.status != HEALTHY_STATUS && !resting {
        return false;
    }
    let plain = constants[index];
    let body = start_body(index, stored, plain);
    var s = body.s;
    let c = body.c;
    // The principal axes are fixed per body: found once a dispatch, by kernels that split.
    let axes = dual_kernel_split_axes(c);
    dual_load_planes();
    var low = stored.step_low;
    var high = stored.step_high;
    var status = HEALTHY_STATUS;
    var at_rest = false;
    // KERNEL_CONTACTS is generated: false folds the contact code away.
    let planes_here = KERNEL_CONTACTS && params.plane_count > 0u;
    // Where contacts are handed over, a body is watched against the ball about where it
    // starts in which it is clear of every plane (`dual_plane_clearance`): one distance a
    // step, not one test a plane, and no branch. A body that starts outside the ball takes
    // no step here, and one that leaves it takes the dispatch's steps again in
    // `integrate_near` with contacts, from the state it started from (which is never later
    // than the first step that ends near a plane; earlier is the same bits, as the contact
    // code leaves a body clear of every plane as it is).
    let watched = planes_here && !resolves;
    var origin = vec3<real>(real(0.0));
    var reach = real(0.0);
    var outside = false;
    if watched {
        origin = motion_value(s).position;
        let clearance = dual_plane_clearance(origin, plain.shape.w);
        outside = !(clearance > real(0.0));
        reach = clearance * clearance;
    }
    let last = select(params.steps_per_dispatch, first, outside);
    for (var k = first; k < last; k++) {
        let t = step_time(low, high, params.dt);
        var next = dual_renormalize(dual_scheme_step(s, c, axes, t, params.dt, index));
        if planes_here && resolves {
            next = dual_resolve_contacts(s, next, c, plain, params.dt);
        }
        if watched {
            outside = outside | beyond_clearance(motion_value(next).position, origin, reach);
        }
        status = state_fault(motion_value(next), plain);
        if status != HEALTHY_STATUS {
            break;
        }
        // At rest (a step that left every bit as it was, `physics::rest`), the dispatch's
        // later steps would leave the body as it is: only its clock moves on, here and (its
        // status says so) in later dispatches.
        at_rest = KERNEL_SETTLES && planes_here && resolves && left_as_it_was(s, next);
        s = next;
        advance_clock(&low, &high);
        if at_rest {
            for (var later = k + 1u; later < last; later++) {
                advance_clock(&low, &high);
            }
            break;
        }
    }
    if outside {
        // Its state stays as stored (a fault it met on the way is not its own).
        return true;
    }
    if status != HEALTHY_STATUS && block_writes_state() {
        report_fault(index);
    }
    write_block_tangents(index, s);
    if block_writes_state() {
        let v = motion_value(s);
        states[index] = BodyState(
            v.position,
            low,
            v.orientation,
            v.linear_momentum,
            high,
            v.angular_momentum,
            select(status, RESTING_STATUS, at_rest),
        );
    }
    return false;
}
