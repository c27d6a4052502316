// The plumbing of a custom force written in WGSL: what the crowd's `custom_force` (appended by
// the crate) is called with. Part of a kernel only where its crowd has custom force records
// and its custom force is not a law (a law's `dual_custom_force` is traced from it); such a
// force has no derivatives, so only the plain kernel (width 0) holds this.

fn dual_custom_force(s: DualMotion, c: DualConstants, aux: DualAuxiliaries, t: DualReal,
    body: u32, total: DualLoad) -> DualLoad {
    let load = custom_force(
        vec3<real>(s[0], s[1], s[2]),
        normalize_orientation(vec4<real>(s[4], s[5], s[6], s[3])),
        vec3<real>(aux[0], aux[1], aux[2]),
        vec3<real>(aux[12], aux[13], aux[14]),
        c[0],
        t[0],
        body,
    );
    let force = vec3<real>(total[0], total[1], total[2]) + load.force;
    let torque = vec3<real>(total[3], total[4], total[5]) + load.torque;
    return array<real, 6>(force.x, force.y, force.z, torque.x, torque.y, torque.z);
}
