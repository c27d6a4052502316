// A tangent kernel's block: the bindings and hooks with which the integration kernel
// (integrate.wgsl) carries one block of a body's directions (DUAL_WIDTH of them at most)
// beside its state. A body's directions may take several blocks: each reads the states the
// step starts from, and the last one writes the new states and reports the faults. The
// block's reads and writes of its tangents are generated (`read_block_tangents`,
// `write_block_tangents`, `read_block_constant_seeds`: src/backends/gpu/kernel/tangent_kernel.rs).

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
/// among a record's parameters; z, the plane whose number it is, plus one (0 for none); w,
/// the keyframe number of the force's table, plus one (0 for none).
@group(1) @binding(4) var<storage, read> number_seeds: array<vec4<u32>>;
/// Per column, the derivatives of the six numbers of that plane (`normal`, `offset`,
/// `restitution`, `friction`) along it, computed on the host (`PlaneNumber::seeds`).
@group(1) @binding(5) var<storage, read> plane_seeds: array<real>;

/// The chunk's index of the body invocation `id` carries, NO_BODY past the piece.
fn block_body(id: vec3<u32>) -> u32 {
    let in_piece = id.y * block.row_width + id.x;
    if in_piece >= block.body_count {
        return NO_BODY;
    }
    return block.first_body + in_piece;
}

/// Whether this block writes the states and reports the faults: the last of a body's.
fn block_writes_state() -> bool {
    return block.writes_state == 1u;
}

/// A tangent kernel resolves its contacts itself (KERNEL_HANDS_OVER_CONTACTS is false): it
/// never hands a body over.
fn hand_over(index: u32, step: u32) {}

fn empty_next_list(id: vec3<u32>) {}

/// Where body `index`'s block starts in the tangent buffers: its first column's first number.
fn block_first(index: u32) -> u32 {
    return block.first_column * block.body_count + index - block.first_body;
}

/// Body `index`'s state over duals: `values` beside the derivatives its block carries.
fn block_state(index: u32, values: array<real, 13>) -> DualMotion {
    var s = read_block_tangents(index);
    for (var r = 0u; r < 13u; r++) {
        s[r * DUAL_STRIDE] = values[r];
    }
    return s;
}

/// Body `index`'s mass constants over duals: `values` beside their seeds along the block.
fn block_constants(index: u32, values: array<real, 8>) -> DualConstants {
    var c = read_block_constant_seeds(index);
    for (var r = 0u; r < 8u; r++) {
        c[r * DUAL_STRIDE] = values[r];
    }
    return c;
}

/// A load's `values` along no direction.
fn fixed_load(values: array<real, 6>) -> DualLoad {
    // Number by number, not in a loop: every stage of every step builds one.
    var load: DualLoad;
    load[0] = values[0];
    load[DUAL_STRIDE] = values[1];
    load[2u * DUAL_STRIDE] = values[2];
    load[3u * DUAL_STRIDE] = values[3];
    load[4u * DUAL_STRIDE] = values[4];
    load[5u * DUAL_STRIDE] = values[5];
    return load;
}

// The seeds loop over DUAL_WIDTH and the places, not block.width and seed.y: with constant
// bounds a driver unrolls them and keeps the dual arrays in registers, where an index known
// only at run time would put them in memory.

/// Record `record`'s parameters `values` over duals, seeded with 1 along the block's columns
/// taken along them.
fn block_parameters(record: u32, values: array<real, 10>) -> DualParameters {
    var p: DualParameters;
    for (var i = 0u; i < 10u; i++) {
        p[i * DUAL_STRIDE] = values[i];
    }
    let origin = force_origins[record] + 1u;
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

/// Plane `i`'s numbers `values` over duals, seeded along the block's columns taken along them.
fn block_plane(i: u32, values: array<real, 6>) -> DualPlane {
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

/// Keyframe `i` of record `record`'s table, `values` (its time and value) over duals, seeded
/// with 1 along the block's columns taken along them.
fn block_keyframe(record: u32, i: u32, values: array<real, 2>) -> DualKeyframe {
    var d: DualKeyframe;
    d[0] = values[0];
    d[DUAL_STRIDE] = values[1];
    let origin = force_origins[record] + 1u;
    for (var j = 0u; j < DUAL_WIDTH; j++) {
        if j < block.width {
            let seed = number_seeds[block.first_column + j];
            if seed.x == origin && seed.w == 2u * i + 1u {
                d[1u + j] = real(1.0);
            }
            if seed.x == origin && seed.w == 2u * i + 2u {
                d[DUAL_STRIDE + 1u + j] = real(1.0);
            }
        }
    }
    return d;
}
