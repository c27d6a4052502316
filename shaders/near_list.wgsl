// The list of bodies the plain kernel hands over near a plane: `integrate` appends them,
// `size_near` (near_size.wgsl) sizes the indirect dispatch of `integrate_near` and empties
// the list for the next dispatch, and `integrate_near` takes their remaining steps.

/// The bodies handed over: how many in this dispatch so far, how many `size_near` handed
/// `integrate_near` and the invocations it dispatched that over, and each body's chunk
/// index and the step of the dispatch it stopped before.
struct NearList {
    count: atomic<u32>,
    taken: u32,
    stride: u32,
    _pad: u32,
    bodies: array<vec2<u32>>,
}

/// Workgroups `integrate_near` is dispatched over at most (the least every device allows in
/// one dimension); each invocation takes every so many entries of the list.
const MAX_NEAR_GROUPS: u32 = 65535u;
