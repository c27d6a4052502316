// The keyframed force's plumbing: the search of a record's keyframe table, and the window a
// dispatch interpolates in where the kernel has windows (src/backends/gpu/kernel/kernel_spec.rs).
// The interpolation (`dual_keyframe_lerp`) and the load at a scale (`dual_add_keyframed`) are
// generated from core/src/physics/forces.rs. Part of a kernel only where its crowd has
// keyframed forces.

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

/// Keyframe `i` of record `record`'s table over duals (`block_keyframe`).
fn dual_keyframe(record: u32, i: u32) -> DualKeyframe {
    let k = keyframes[forces[record].keyframe_first + i];
    return block_keyframe(record, i, array<real, 2>(k.x, k.y));
}

/// Keyframed record `record`'s scale at `t`: piecewise-linear between its keyframes, held
/// constant before the first and after the last; its table searched on the values.
fn dual_keyframe_scale(record: u32, t: DualReal) -> DualReal {
    let f = forces[record];
    let segment = keyframe_segment(f.keyframe_first, f.keyframe_count, t[0]);
    let a = dual_keyframe(record, segment.x);
    if segment.x == segment.y {
        return dual_keyframe_value(a);
    }
    return dual_keyframe_lerp(a, dual_keyframe(record, segment.y), t);
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
/// `times` (earliest, latest): `a` is the keyframe the search of `dual_keyframe_scale` starts the
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

/// A keyframe of a window along no direction: only the plain kernel (width 0) has windows.
fn dual_window_keyframe(k: vec2<real>) -> DualKeyframe {
    var d: DualKeyframe;
    d[0] = k.x;
    d[DUAL_STRIDE] = k.y;
    return d;
}

/// `dual_keyframe_scale` at a time t of the dispatch `w` was found for: the same comparisons
/// and the same `dual_keyframe_lerp` on the same keyframes, so the same value bit for bit.
fn dual_keyframe_window_scale(w: KeyframeWindow, t: DualReal) -> DualReal {
    if t[0] <= w.first.x {
        return dual_keyframe_value(dual_window_keyframe(w.first));
    }
    if t[0] < w.b.x {
        return dual_keyframe_lerp(dual_window_keyframe(w.a), dual_window_keyframe(w.b), t);
    }
    if t[0] < w.c.x {
        return dual_keyframe_lerp(dual_window_keyframe(w.b), dual_window_keyframe(w.c), t);
    }
    return dual_keyframe_value(dual_window_keyframe(w.c));
}
