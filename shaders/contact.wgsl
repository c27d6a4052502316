// Contact of one body with static planes, resolved after each full step. Every formula
// (the shapes' contact points, the impulses) is generated from the Rust definition
// (core/src/physics/contact.rs): `step_acceleration` and `resolve_plane`, which picks the body's
// shape. Reads the module-scope `params` and `planes` bindings declared by the kernel.

/// Resolves `next` (the state after a step that started at `start`) against every plane in
/// turn, as `physics::contact::resolve_contacts` does.
fn resolve_contacts(start: Motion, next: Motion, c: BodyConstants, h: real) -> Motion {
    let acceleration = step_acceleration(start, next, c, h);
    var s = next;
    for (var i = 0u; i < params.plane_count; i++) {
        s = resolve_plane(s, c, planes[i], acceleration, h);
    }
    return s;
}
