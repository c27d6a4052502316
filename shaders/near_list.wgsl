// The list of bodies the plain kernel hands over near a plane: `integrate` appends them and
// counts the workgroups `integrate_near` needs for them, and `integrate_near`, dispatched
// indirectly over those, takes their remaining steps. The list has two headers that take
// turns from one fused dispatch to the next (`NearParity`): each `integrate` empties the
// header the next one fills, whose last use (the dispatch before) is done. So no dispatch
// of its own sizes or empties the list, and a dispatch in which no body comes near a plane
// is followed by an `integrate_near` over no workgroups.

/// One dispatch's bodies handed over: `integrate_near`'s workgroups in x, y and z (the
/// indirect dispatch's arguments; y and z are 1, written when the buffer is made) and how
/// many bodies at the front of the list and at its back.
struct NearHeader {
    groups: atomic<u32>,
    groups_y: u32,
    groups_z: u32,
    front: atomic<u32>,
    back: atomic<u32>,
    unused_0: u32,
    unused_1: u32,
    unused_2: u32,
}

/// The list as `integrate` fills it: the two headers, then each body's chunk index and the
/// step of the dispatch it stopped before, filled from both ends.
struct NearList {
    headers: array<NearHeader, 2>,
    bodies: array<vec2<u32>>,
}

/// A header as `integrate_near` reads it (its list read-only, beside its use as that
/// dispatch's arguments).
struct TakenHeader {
    groups: u32,
    groups_y: u32,
    groups_z: u32,
    front: u32,
    back: u32,
    unused_0: u32,
    unused_1: u32,
    unused_2: u32,
}

/// The list as `integrate_near` reads it.
struct TakenList {
    headers: array<TakenHeader, 2>,
    bodies: array<vec2<u32>>,
}

/// Which of the two headers the dispatch fills (`integrate`) or takes (`integrate_near`).
struct NearParity {
    header: u32,
}

/// Workgroups `integrate_near` is dispatched over at most (the least every device allows in
/// one dimension); each invocation takes every so many entries of the list.
const MAX_NEAR_GROUPS: u32 = 65535u;
