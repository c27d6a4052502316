// The custom force's plumbing: what the crowd's `custom_force` (appended by the crate) is
// called with. Part of a kernel only where its crowd has custom force records.

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
