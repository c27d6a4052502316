// Contact of one body with static planes, resolved after each full step. Every formula
// (the shapes' contact points, the impulses) is generated from the Rust definition
// (core/src/physics/contact.rs): `dual_far_from_plane`, `dual_step_acceleration` and
// `dual_resolve_plane`, which picks the body's shape; `dual_near_a_plane` comes with the
// kernel's spec (src/backends/gpu/kernel/kernel_spec.rs). Reads the module-scope `params`
// and `planes` bindings.

/// Plane `i` (`normal`, `offset`, `restitution`, `friction`) over duals (`block_plane`).
fn dual_plane(i: u32) -> DualPlane {
    let p = planes[i];
    return block_plane(i, array<real, 6>(p.surface.x, p.surface.y, p.surface.z, p.surface.w,
        p.restitution, p.friction));
}

/// Resolves `next` (the state after a step that started at `start`) against every plane in
/// turn, as `physics::contact::resolve_contacts` does.
fn dual_resolve_contacts(start: DualMotion, next: DualMotion, c: DualConstants,
    plain: BodyConstants, h: real) -> DualMotion {
    // One test a plane for a body clear of them all, not each plane's set-up.
    if !dual_near_a_plane(next, plain) {
        return next;
    }
    let acceleration = dual_step_acceleration(start, next, c, h);
    var s = next;
    for (var i = 0u; i < params.plane_count; i++) {
        s = dual_resolve_plane(s, c, plain.shape_kind, plain.shape, dual_plane(i), acceleration, h);
    }
    return s;
}
