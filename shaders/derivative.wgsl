// The state derivative's plumbing: which force records a body sees and the keyframe search.
// Every formula (auxiliaries, each force kind, dq/dt, the keyframe interpolation) is
// generated from the Rust definition of the physics (src/physics/). Reads the module-scope
// `params`, `forces` and `keyframes` bindings declared by the kernel (and sets `faults` where
// a keyframe window falls short), and calls `accumulate_global_forces` and
// `accumulate_own_forces` (generated for the crowd's force kinds) and `custom_force`, which
// the crate appends (the user's, or one returning zero).

/// State of one body in registers; twin of `BodyState` in src/model/body.rs.
struct Motion {
    position: vec3<real>,
    orientation: vec4<real>,
    linear_momentum: vec3<real>,
    angular_momentum: vec3<real>,
}

/// dY/dt: (v, dq/dt, F, tau); twin of `Derivative` in src/body_steps/derivative.rs.
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
/// src/body_steps/derivative.rs.
struct ForceEnv {
    /// Crowd index of the body.
    body: u32,
    /// The external load held on the body.
    load: ExternalLoad,
    /// The force records the kernel calls one by one, read once per dispatch rather than at
    /// every stage of every step (`ForceRecords` is generated for the crowd).
    records: ForceRecords,
}

/// Piecewise-linear interpolation of `keyframes[first .. first + count]` (x = time,
/// y = value) at t, held constant before the first and after the last.
fn keyframe_scale(first: u32, count: u32, t: real) -> real {
    // Each keyframe is read once: the segment's end becomes the next one's start.
    var a = keyframes[first];
    if t <= a.x {
        return a.y;
    }
    for (var i = first + 1u; i < first + count; i++) {
        let b = keyframes[i];
        if t < b.x {
            return keyframe_lerp(a, b, t);
        }
        a = b;
    }
    return a.y;
}

/// Where a keyframe table's interpolation stands during one dispatch: the table's first
/// keyframe (held before it) and the three keyframes around the dispatch's times, so that
/// each stage interpolates without searching (a search is a loop, which every stage of a
/// SIMD lane group pays for whether it runs or not).
struct KeyframeWindow {
    first: vec2<real>,
    a: vec2<real>,
    b: vec2<real>,
    c: vec2<real>,
}

/// The window of keyframed record `f` for a dispatch whose forces are evaluated at times in
/// `times` (earliest, latest): `a` is the keyframe the search of `keyframe_scale` starts the
/// earliest time's segment from, `b` and `c` the next two; one past the table's end gets the
/// earliest time, so no stage selects it. It covers every time before `c`, which a
/// dispatch cannot reach where the kernel has windows: every keyframe segment is over twice
/// a dispatch, and the slack small beside it (src/backends/gpu/kernel/kernel_spec.rs). Should one reach it
/// all the same, that is an error naming the body once the host reads the faults, and the
/// states are not handed out.
fn keyframe_window(f: Force, times: vec2<real>, body: u32) -> KeyframeWindow {
    // A few ulps of slack, should the compiler round the step clock differently here.
    let slack = max(abs(times.x), abs(times.y)) * real(9.5367431640625e-7);
    let earliest = times.x - slack;
    let first = f.keyframe_first;
    let end = first + f.keyframe_count;
    var w: KeyframeWindow;
    w.first = keyframes[first];
    var next = first + 1u;
    if earliest > w.first.x {
        while next < end && earliest >= keyframes[next].x {
            next++;
        }
    }
    w.a = keyframes[next - 1u];
    w.b = vec2<real>(earliest, w.a.y);
    if next < end {
        w.b = keyframes[next];
    }
    w.c = vec2<real>(earliest, w.b.y);
    if next + 1u < end {
        w.c = keyframes[next + 1u];
        if times.y + slack >= w.c.x {
            atomicMin(&faults.first_keyframe_miss, body);
        }
    }
    return w;
}

/// `keyframe_scale` at a time t of the dispatch `w` was found for: the same comparisons and
/// the same `keyframe_lerp` on the same keyframes, so the same value bit for bit.
fn keyframe_window_scale(w: KeyframeWindow, t: real) -> real {
    if t <= w.first.x {
        return w.first.y;
    }
    if t < w.b.x {
        return keyframe_lerp(w.a, w.b, t);
    }
    if t < w.c.x {
        return keyframe_lerp(w.b, w.c, t);
    }
    return w.c.y;
}

// One function per force kind, `force_<scene name>`, each adding the force and torque (about
// the centre of mass) of force record `f` at time t to the totals; those of the kinds with
// parameters alone are generated from src/physics/forces.rs. The crate generates the code
// that calls them (src/backends/gpu/kernel/kernel_spec.rs): a kernel pays only for the kinds its crowd has,
// and the records it calls one by one are read once per dispatch.

fn force_keyframed(f: Force, s: Motion, c: BodyConstants, aux: Auxiliaries, t: real, env: ForceEnv,
                   force: ptr<function, vec3<real>>, torque: ptr<function, vec3<real>>) {
    add_keyframed(f, keyframe_scale(f.keyframe_first, f.keyframe_count, t), force, torque);
}

fn force_custom(f: Force, s: Motion, c: BodyConstants, aux: Auxiliaries, t: real, env: ForceEnv,
                force: ptr<function, vec3<real>>, torque: ptr<function, vec3<real>>) {
    let load = custom_force(
        s.position,
        normalize_orientation(s.orientation),
        aux.velocity,
        aux.angular_velocity,
        c.mass,
        t,
        env.body,
    );
    *force += load.force;
    *torque += load.torque;
}

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
