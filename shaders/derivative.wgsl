// Auxiliary quantities, force and torque accumulation and the state derivative
// (Baraff 2-42, 2-43). Twin of src/cpu/derivative.rs: keep the two in step.
// Reads the module-scope `params` and `forces` bindings declared by the kernel.

/// State of one body in registers; twin of `BodyState` in src/body.rs.
struct Motion {
    position: vec3<f32>,
    orientation: vec4<f32>,
    linear_momentum: vec3<f32>,
    angular_momentum: vec3<f32>,
}

/// dY/dt: (v, dq/dt, F, tau); twin of `Derivative` in src/cpu/derivative.rs.
struct Derivative {
    velocity: vec3<f32>,
    spin: vec4<f32>,
    force: vec3<f32>,
    torque: vec3<f32>,
}

struct Auxiliaries {
    velocity: vec3<f32>,
    rotation: mat3x3<f32>,
    angular_velocity: vec3<f32>,
}

fn inv_inertia_body(c: BodyConstants) -> mat3x3<f32> {
    return mat3x3<f32>(
        vec3<f32>(c.inv_inertia_xx, c.inv_inertia_xy, c.inv_inertia_xz),
        vec3<f32>(c.inv_inertia_xy, c.inv_inertia_yy, c.inv_inertia_yz),
        vec3<f32>(c.inv_inertia_xz, c.inv_inertia_yz, c.inv_inertia_zz),
    );
}

/// v = P / M, R = R(normalize(q)), omega = R (Ibody^-1 (R^T L)).
fn auxiliaries(s: Motion, c: BodyConstants) -> Auxiliaries {
    let rotation = quat_to_mat3(normalize(s.orientation));
    let body_momentum = transpose(rotation) * s.angular_momentum;
    return Auxiliaries(
        s.linear_momentum * c.inv_mass,
        rotation,
        rotation * (inv_inertia_body(c) * body_momentum),
    );
}

/// Adds one force source's force and torque (about the centre of mass) to the totals.
fn accumulate_force(
    f: Force,
    s: Motion,
    c: BodyConstants,
    aux: Auxiliaries,
    force: ptr<function, vec3<f32>>,
    torque: ptr<function, vec3<f32>>,
) {
    switch f.kind {
        case FORCE_GRAVITY: {
            *force += f.a.xyz * c.mass;
        }
        case FORCE_LINEAR_DRAG: {
            *force -= aux.velocity * f.a.x;
            *torque -= aux.angular_velocity * f.a.y;
        }
        case FORCE_POINT: {
            let arm = aux.rotation * f.b.xyz;
            *force += f.a.xyz;
            *torque += cross(arm, f.a.xyz);
        }
        case FORCE_SPRING: {
            let arm = aux.rotation * f.b.xyz;
            let stretch = s.position + arm - f.a.xyz;
            let attach_velocity = aux.velocity + cross(aux.angular_velocity, arm);
            let applied = -stretch * f.c.x - attach_velocity * f.c.y;
            *force += applied;
            *torque += cross(arm, applied);
        }
        default: {}
    }
}

/// dY/dt of one body under the forces acting on every body plus its own.
/// dq/dt multiplies the state's own q (not its normalized copy), as on the CPU.
fn derivative(s: Motion, c: BodyConstants) -> Derivative {
    let aux = auxiliaries(s, c);
    var force = vec3<f32>(0.0);
    var torque = vec3<f32>(0.0);
    for (var i = 0u; i < params.global_force_count; i++) {
        accumulate_force(forces[i], s, c, aux, &force, &torque);
    }
    for (var i = c.force_first; i < c.force_first + c.force_count; i++) {
        accumulate_force(forces[i], s, c, aux, &force, &torque);
    }
    let omega = aux.angular_velocity;
    return Derivative(
        aux.velocity,
        quat_mul(vec4<f32>(omega, 0.0), s.orientation) * 0.5,
        force,
        torque,
    );
}
