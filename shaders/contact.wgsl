// Contact of one body with static planes, resolved after each full step. Twin of
// src/cpu_ref/contact.rs, which explains the method: keep the two in step.
// Reads the module-scope `params` and `planes` bindings declared by the kernel.

/// Approach speeds below this many steps' worth of the acceleration towards the plane get no
/// bounce, so a body resting on several points does not rock.
const RESTING_STEPS: real = 2.0;

/// Gauss–Seidel sweeps over a plane's contact points per step.
const CONTACT_ITERATIONS: u32 = 8u;

/// The symmetric Ibody^-1 from its six entries (the contact code is not yet generated from
/// src/physics; the integration is).
fn inv_inertia_body(c: BodyConstants) -> mat3x3<real> {
    return mat3x3<real>(
        vec3<real>(c.inv_inertia_xx, c.inv_inertia_xy, c.inv_inertia_xz),
        vec3<real>(c.inv_inertia_xy, c.inv_inertia_yy, c.inv_inertia_yz),
        vec3<real>(c.inv_inertia_xz, c.inv_inertia_yz, c.inv_inertia_zz),
    );
}


/// Up to eight world points of the body's shape that can touch a plane with normal n.
struct Candidates {
    points: array<vec3<real>, 8>,
    count: u32,
}

fn contact_candidates(
    c: BodyConstants,
    position: vec3<real>,
    rotation: mat3x3<real>,
    n: vec3<real>,
) -> Candidates {
    var out: Candidates;
    out.count = 0u;
    let dims = c.shape;
    switch c.shape_kind {
        case SHAPE_SPHERE: {
            out.points[0] = position - n * dims.x;
            out.count = 1u;
        }
        case SHAPE_ELLIPSOID: {
            // The support point of x^T A^-2 x = 1 along -m is -A^2 m / |A m|.
            let m = transpose(rotation) * n;
            out.points[0] = position - rotation * (dims.xyz * dims.xyz * m / length(dims.xyz * m));
            out.count = 1u;
        }
        case SHAPE_BOX: {
            for (var k = 0u; k < 8u; k++) {
                let sign = vec3<real>(
                    select(real(-1.0), real(1.0), (k & 1u) != 0u),
                    select(real(-1.0), real(1.0), (k & 2u) != 0u),
                    select(real(-1.0), real(1.0), (k & 4u) != 0u),
                );
                out.points[k] = position + rotation * (dims.xyz * sign);
            }
            out.count = 8u;
        }
        case SHAPE_CAPSULE: {
            let axis = rotation[2] * dims.y;
            out.points[0] = position + axis - n * dims.x;
            out.points[1] = position - axis - n * dims.x;
            out.count = 2u;
        }
        case SHAPE_CYLINDER: {
            // Four rim points per cap, the first the rim's lowest.
            let axis = rotation[2];
            let across = n - axis * dot(n, axis);
            var u = rotation[0];
            if dot(across, across) > real(1e-18) {
                u = -normalize(across);
            }
            let w = cross(axis, u);
            let rim = array<vec3<real>, 4>(u, w, -u, -w);
            for (var k = 0u; k < 8u; k++) {
                let cap = select(real(-0.5), real(0.5), k < 4u);
                out.points[k] = position + axis * (cap * real(2.0) * dims.y) + rim[k % 4u] * dims.x;
            }
            out.count = 8u;
        }
        default: {}
    }
    return out;
}

/// Effective inverse mass at arm r along d: 1/M + d . ((Iinv (r x d)) x r).
fn inverse_mass_along(inv_mass: real, inv_inertia: mat3x3<real>, r: vec3<real>, d: vec3<real>) -> real {
    return inv_mass + dot(d, cross(inv_inertia * cross(r, d), r));
}

/// Resolves `next` (the state after a step that started at `start`) against every plane.
fn resolve_contacts(start: Motion, next: Motion, c: BodyConstants, h: real) -> Motion {
    // Acceleration over the step from the forces alone, before any plane pushed back.
    let acceleration = (next.linear_momentum - start.linear_momentum) * (c.inv_mass / h);
    var s = next;
    for (var i = 0u; i < params.plane_count; i++) {
        s = resolve_plane(s, c, planes[i], acceleration, h);
    }
    return s;
}

/// Moves the body out of one plane and applies the contact impulses.
fn resolve_plane(
    state: Motion,
    c: BodyConstants,
    plane: Plane,
    acceleration: vec3<real>,
    h: real,
) -> Motion {
    var s = state;
    let n = plane.surface.xyz;
    // Farther than the bounding radius: no point of the body can touch the plane.
    if dot(n, s.position) - plane.surface.w > c.shape.w {
        return s;
    }
    let rotation = quat_to_mat3(normalize(s.orientation));
    let candidates = contact_candidates(c, s.position, rotation, n);
    var arms: array<vec3<real>, 8>;
    var depths: array<real, 8>;
    var contacts = 0u;
    var deepest = real(0.0);
    for (var k = 0u; k < candidates.count; k++) {
        let depth = plane.surface.w - dot(n, candidates.points[k]);
        if depth > real(0.0) {
            arms[contacts] = candidates.points[k] - s.position;
            depths[contacts] = depth;
            contacts++;
            deepest = max(deepest, depth);
        }
    }
    if contacts == 0u {
        return s;
    }
    s.position += n * deepest;

    let inv_inertia = rotation * inv_inertia_body(c) * transpose(rotation);
    var velocity = s.linear_momentum * c.inv_mass;
    var angular_velocity = inv_inertia * s.angular_momentum;
    let towards_plane = max(-dot(acceleration, n), real(0.0));
    let resting_speed = RESTING_STEPS * towards_plane * h;
    var targets: array<real, 8>;
    for (var k = 0u; k < contacts; k++) {
        let normal_speed = dot(velocity + cross(angular_velocity, arms[k]), n);
        if normal_speed < real(0.0) {
            let at_surface =
                sqrt(max(normal_speed * normal_speed - real(2.0) * towards_plane * depths[k], real(0.0)));
            if at_surface > resting_speed {
                targets[k] = plane.restitution * at_surface;
            }
        }
    }

    var normal_impulses: array<real, 8>;
    var friction_impulses: array<vec3<real>, 8>;
    for (var iteration = 0u; iteration < CONTACT_ITERATIONS; iteration++) {
        for (var k = 0u; k < contacts; k++) {
            let r = arms[k];
            let normal_speed = dot(velocity + cross(angular_velocity, r), n);
            let k_normal = inverse_mass_along(c.inv_mass, inv_inertia, r, n);
            let total = max(normal_impulses[k] + (targets[k] - normal_speed) / k_normal, real(0.0));
            let push = n * (total - normal_impulses[k]);
            normal_impulses[k] = total;
            s.linear_momentum += push;
            s.angular_momentum += cross(r, push);
            velocity = s.linear_momentum * c.inv_mass;
            angular_velocity = inv_inertia * s.angular_momentum;

            let point_velocity = velocity + cross(angular_velocity, r);
            let slip = point_velocity - n * dot(point_velocity, n);
            let slip_speed = length(slip);
            if slip_speed > real(0.0) {
                let t = slip / slip_speed;
                let k_tangent = inverse_mass_along(c.inv_mass, inv_inertia, r, t);
                let wanted = friction_impulses[k] - t * (slip_speed / k_tangent);
                let limit = plane.friction * normal_impulses[k];
                var clamped = wanted;
                if length(wanted) > limit {
                    clamped = wanted * (limit / length(wanted));
                }
                let rub = clamped - friction_impulses[k];
                friction_impulses[k] = clamped;
                s.linear_momentum += rub;
                s.angular_momentum += cross(r, rub);
                velocity = s.linear_momentum * c.inv_mass;
                angular_velocity = inv_inertia * s.angular_momentum;
            }
        }
    }
    return s;
}
