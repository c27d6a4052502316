// The keyframed force's plumbing: the search of a record's keyframe table, and the window a
// dispatch interpolates in where the kernel has windows (src/backends/gpu/kernel/kernel_spec.rs).
// The interpolation (`keyframe_lerp`) and the load at a scale (`add_keyframed`) are generated
// from core/src/physics/forces.rs. Part of a kernel only where its crowd has keyframed forces.

/// Where `t` falls among the times of `keyframes[first .. first + count]` (x = time, y =
/// value): (i, i) where keyframe i's value holds (at or before the first, past the last),
/// (i - 1, i) on the segment between them. The one search of a table on the GPU, which the
/// interpolation, the dispatch's window and the search over duals read; twin of
/// `keyframe_segment` in core/src/physics/profile.rs.
fn keyframe_segment(first: u32, count: u32, t: real) -> vec2<u32> {
    if t <= keyframes[first].x {
        return vec2<u32>(0u);
    }
    for (var i = 1u; i < count; i++) {
        if t < keyframes[first + i].x {
            return vec2<u32>(i - 1u, i);
        }
    }
    return vec2<u32>(count - 1u);
}

/// Piecewise-linear interpolation of `keyframes[first .. first + count]` at t, held
/// constant before the first and after the last.
fn keyframe_scale(first: u32, count: u32, t: real) -> real {
    let segment = keyframe_segment(first, count, t);
    let a = keyframes[first + segment.x];
    if segment.x == segment.y {
        return a.y;
    }
    return keyframe_lerp(a, keyframes[first + segment.y], t);
}

/// The earliest and the latest time at which a dispatch from step `low + STEPS_PER_OVERFLOW
/// high` evaluates forces: its first step's time and its last step's time plus h, between
/// which every integrator's stages lie. The step time grows with `low`; where `low` wraps
/// within the dispatch rounding may step back, so both sides of the wrap are compared.
fn dispatch_times(low: u32, high: u32) -> vec2<real> {
    let dt = params.dt;
    let last = low + params.steps_per_dispatch - 1u;
    let earliest = step_time(low, high, dt);
    if last < STEPS_PER_OVERFLOW {
        return vec2<real>(earliest, step_time(last, high, dt) + dt);
    }
    let wrapped = last - STEPS_PER_OVERFLOW;
    return vec2<real>(
        min(earliest, step_time(0u, high + 1u, dt)),
        max(step_time(STEPS_PER_OVERFLOW - 1u, high, dt), step_time(wrapped, high + 1u, dt)) + dt,
    );
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
    // The keyframe after the one the earliest time's segment starts from (`end` past the
    // last); the second keyframe where that time is not past the first (or not a number).
    var next = first + 1u;
    if earliest > w.first.x {
        next = first + keyframe_segment(first, f.keyframe_count, earliest).x + 1u;
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

fn force_keyframed(f: Force, s: Motion, c: BodyConstants, aux: Auxiliaries, t: real, env: ForceEnv,
                   force: ptr<function, vec3<real>>, torque: ptr<function, vec3<real>>) {
    add_keyframed(f, keyframe_scale(f.keyframe_first, f.keyframe_count, t), force, torque);
}
