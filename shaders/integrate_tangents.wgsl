// The integration kernel's steps over dual numbers: one body per invocation, its state and
// the derivatives of one block of its directions (DUAL_WIDTH of them at most). Every formula
// is generated from the Rust definition traced over `Dual` (core/src/physics/dual_wgsl.rs), and
// the visits of the force records are the plain kernel's over duals (kernel_spec.rs); this
// file reads and writes the storage, visits the planes, and judges the faults on the
// values, as `integrate` does, so the values are the plain kernel's bit for bit. A body's
// directions may take several blocks: each reads the states the step starts from, and the
// last one writes the new states and reports the faults.

/// Which of a body's columns one dispatch carries, and over which bodies: a piece of the
/// chunk, as many bodies as one storage binding holds the columns of.
struct TangentBlock {
    /// The first column of the block.
    first_column: u32,
    /// Columns of a body in all: its tangents are `13 x columns`.
    columns: u32,
    /// Columns this block carries, at most DUAL_WIDTH.
    width: u32,
    /// 1 for the block that writes the states and reports the faults, else 0.
    writes_state: u32,
    /// The chunk's index of the piece's first body: the tangent buffers start there.
    first_body: u32,
    /// Bodies in the piece.
    body_count: u32,
    /// Invocations per row of the piece's dispatch grid.
    row_width: u32,
    _pad: u32,
}

@group(1) @binding(0) var<uniform> block: TangentBlock;
/// Each body's `13 x columns` derivatives of its state, number-major across the piece's
/// bodies: row `r`, column `c` of body `i` at `(r * columns + c) * body_count + i`, so that
/// neighbouring invocations read neighbouring words.
@group(1) @binding(1) var<storage, read_write> tangents: array<real>;
/// Each body's `8 x columns` derivatives of its mass constants (`mass, inv_mass`, then
/// `Ibody^-1`'s `xx, yy, zz, xy, xz, yz`) along the directions, laid out as `tangents`.
@group(1) @binding(2) var<storage, read> constant_seeds: array<real>;
/// The crowd force each force record comes from.
@group(1) @binding(3) var<storage, read> force_origins: array<u32>;
/// Per column, what it is the derivative along besides the state and the mass constants:
/// x, the crowd force whose number it is, plus one (0 for none), and y, the number's place
/// among a record's parameters; z, the plane whose number it is, plus one (0 for none).
@group(1) @binding(4) var<storage, read> number_seeds: array<vec4<u32>>;
/// Per column, the derivatives of the six numbers of that plane (`normal`, `offset`,
/// `restitution`, `friction`) along it, computed on the host (`PlaneNumber::seeds`).
@group(1) @binding(5) var<storage, read> plane_seeds: array<real>;

/// The body's external load and constants, read once a dispatch as the plain kernel reads
/// them, not at every stage (with its force records: `dual_records`).
var<private> dispatch_load: ExternalLoad;
var<private> dispatch_constants: BodyConstants;

/// `x` along no direction.
fn dual_fixed(x: real) -> DualReal {
    var d: DualReal;
    d[0] = x;
    return d;
}

/// Force record `record`'s parameters, the numbers the block's columns are taken along
/// seeded with 1.
fn dual_parameters(record: u32) -> DualParameters {
    let f = forces[record];
    let values = array<real, 10>(f.a.x, f.a.y, f.a.z, f.b.x, f.b.y, f.b.z, f.c.x, f.c.y, f.c.z, f.c.w);
    var p: DualParameters;
    for (var i = 0u; i < 10u; i++) {
        p[i * DUAL_STRIDE] = values[i];
    }
    let origin = force_origins[record] + 1u;
    // Loops over DUAL_WIDTH and the places, not block.width and seed.y: with constant
    // bounds a driver unrolls them and keeps the dual arrays in registers, where an index
    // known only at run time would put them in memory.
    for (var j = 0u; j < DUAL_WIDTH; j++) {
        if j < block.width {
            let seed = number_seeds[block.first_column + j];
            for (var i = 0u; i < 10u; i++) {
                if seed.x == origin && seed.y == i {
                    p[i * DUAL_STRIDE + 1u + j] = real(1.0);
                }
            }
        }
    }
    return p;
}

/// Plane `i` (`normal`, `offset`, `restitution`, `friction`), the numbers the block's
/// columns are taken along seeded.
fn dual_plane(i: u32) -> DualPlane {
    let plane = planes[i];
    let values = array<real, 6>(
        plane.surface.x, plane.surface.y, plane.surface.z, plane.surface.w,
        plane.restitution, plane.friction,
    );
    var p: DualPlane;
    for (var n = 0u; n < 6u; n++) {
        p[n * DUAL_STRIDE] = values[n];
    }
    for (var j = 0u; j < DUAL_WIDTH; j++) {
        if j < block.width && number_seeds[block.first_column + j].z == i + 1u {
            for (var n = 0u; n < 6u; n++) {
                p[n * DUAL_STRIDE + 1u + j] = plane_seeds[(block.first_column + j) * 6u + n];
            }
        }
    }
    return p;
}

/// The state `next`, after a step from `start`, resolved against every plane in turn, as
/// `resolve_contacts` does.
fn dual_resolve_contacts(start: DualMotion, next: DualMotion, c: DualConstants,
    plain: BodyConstants, h: real) -> DualMotion {
    let acceleration = dual_step_acceleration(start, next, c, h);
    var s = next;
    for (var i = 0u; i < params.plane_count; i++) {
        s = dual_resolve_plane(s, c, plain.shape_kind, plain.shape, dual_plane(i), acceleration, h);
    }
    return s;
}

/// dY/dt of body `index` at time t: its external load, then the forces on every body, then
/// its own, in record order (as `derivative` sums them).
fn dual_derivative(s: DualMotion, c: DualConstants, t: DualReal, index: u32) -> DualMotion {
    let aux = dual_auxiliaries(s, c);
    let body = params.first_body + index;
    let load = dispatch_load;
    var total: DualLoad;
    total[0] = load.force.x;
    total[DUAL_STRIDE] = load.force.y;
    total[2u * DUAL_STRIDE] = load.force.z;
    total[3u * DUAL_STRIDE] = load.torque.x;
    total[4u * DUAL_STRIDE] = load.torque.y;
    total[5u * DUAL_STRIDE] = load.torque.z;
    total = dual_accumulate_global_forces(s, c, aux, t, dispatch_constants, body, total);
    total = dual_accumulate_own_forces(s, c, aux, t, dispatch_constants, body, total);
    return dual_state_derivative(s, aux, total);
}

/// The values of a dual state.
fn motion_value(s: DualMotion) -> Motion {
    return Motion(
        vec3<real>(s[0], s[DUAL_STRIDE], s[2u * DUAL_STRIDE]),
        vec4<real>(s[4u * DUAL_STRIDE], s[5u * DUAL_STRIDE], s[6u * DUAL_STRIDE], s[3u * DUAL_STRIDE]),
        vec3<real>(s[7u * DUAL_STRIDE], s[8u * DUAL_STRIDE], s[9u * DUAL_STRIDE]),
        vec3<real>(s[10u * DUAL_STRIDE], s[11u * DUAL_STRIDE], s[12u * DUAL_STRIDE]),
    );
}

/// `params.steps_per_dispatch` steps of one body and one block of its tangents.
@compute @workgroup_size(workgroup_size)
fn integrate_tangents(@builtin(global_invocation_id) id: vec3<u32>) {
    let in_piece = id.y * block.row_width + id.x;
    if in_piece >= block.body_count || atomicLoad(&faults.first_fault) != HEALTHY
        || atomicLoad(&faults.first_unknown_code) != HEALTHY {
        return;
    }
    let index = block.first_body + in_piece;
    let stored = states[index];
    if stored.status != HEALTHY_STATUS {
        return;
    }
    let plain = constants[index];
    let m = motion_of(stored);
    let state_values = array<real, 13>(
        m.position.x, m.position.y, m.position.z,
        m.orientation.w, m.orientation.x, m.orientation.y, m.orientation.z,
        m.linear_momentum.x, m.linear_momentum.y, m.linear_momentum.z,
        m.angular_momentum.x, m.angular_momentum.y, m.angular_momentum.z,
    );
    let constant_values = array<real, 8>(
        plain.mass, plain.inv_mass,
        plain.inv_inertia_xx, plain.inv_inertia_yy, plain.inv_inertia_zz,
        plain.inv_inertia_xy, plain.inv_inertia_xz, plain.inv_inertia_yz,
    );
    // Only the derivatives the block's columns can move are read and written (generated:
    // `read_block_tangents`, `write_block_tangents`, `read_block_constant_seeds`); the
    // others are zero for every body at every step.
    let first = block.first_column * block.body_count + in_piece;
    var s = read_block_tangents(first);
    for (var r = 0u; r < 13u; r++) {
        s[r * DUAL_STRIDE] = state_values[r];
    }
    var c = read_block_constant_seeds(first);
    for (var r = 0u; r < 8u; r++) {
        c[r * DUAL_STRIDE] = constant_values[r];
    }
    // The principal axes are fixed per body: found once a dispatch, by kernels that split.
    let axes = dual_kernel_split_axes(c);
    dispatch_load = external_load(index);
    dispatch_constants = plain;
    var low = stored.step_low;
    var high = stored.step_high;
    dual_records = dual_load_force_records(plain, params.first_body + index, low, high);
    var status = HEALTHY_STATUS;
    for (var k = 0u; k < params.steps_per_dispatch; k++) {
        let t = step_time(low, high, params.dt);
        var next = dual_renormalize(dual_scheme_step(s, c, axes, t, params.dt, index));
        // KERNEL_CONTACTS is generated: false folds the contact code away.
        if KERNEL_CONTACTS && params.plane_count > 0u {
            next = dual_resolve_contacts(s, next, c, plain, params.dt);
        }
        status = state_fault(motion_value(next), plain);
        if status != HEALTHY_STATUS {
            if block.writes_state == 1u {
                report_fault(index);
            }
            break;
        }
        s = next;
        advance_clock(&low, &high);
    }
    write_block_tangents(first, s);
    if block.writes_state == 1u {
        let v = motion_value(s);
        states[index] = BodyState(
            v.position,
            low,
            v.orientation,
            v.linear_momentum,
            high,
            v.angular_momentum,
            status,
        );
    }
}
