// Test kernel: copies every field of element 1 of each shared struct, in declaration order,
// into `words`, so the Rust side can check that both languages agree on offsets and strides.
// Used by the layout test in src/gpu/layout.rs.

@group(0) @binding(0) var<storage, read> probe_states: array<BodyState>;
@group(0) @binding(1) var<storage, read> probe_constants: array<BodyConstants>;
@group(0) @binding(2) var<storage, read> probe_forces: array<Force>;
@group(0) @binding(3) var<uniform> probe_params: Params;
@group(0) @binding(4) var<storage, read_write> words: array<u32>;
@group(0) @binding(5) var<storage, read> probe_planes: array<Plane>;
@group(0) @binding(6) var<storage, read> probe_loads: array<ExternalLoad>;

fn put4(at: u32, v: vec4<f32>) {
    words[at] = bitcast<u32>(v.x);
    words[at + 1u] = bitcast<u32>(v.y);
    words[at + 2u] = bitcast<u32>(v.z);
    words[at + 3u] = bitcast<u32>(v.w);
}

@compute @workgroup_size(1)
fn probe() {
    let s = probe_states[1];
    put4(0u, s.position);
    put4(4u, s.orientation);
    put4(8u, s.linear_momentum);
    put4(12u, s.angular_momentum);

    let c = probe_constants[1];
    words[16] = bitcast<u32>(c.mass);
    words[17] = bitcast<u32>(c.inv_mass);
    words[18] = bitcast<u32>(c.inv_inertia_xx);
    words[19] = bitcast<u32>(c.inv_inertia_yy);
    words[20] = bitcast<u32>(c.inv_inertia_zz);
    words[21] = bitcast<u32>(c.inv_inertia_xy);
    words[22] = bitcast<u32>(c.inv_inertia_xz);
    words[23] = bitcast<u32>(c.inv_inertia_yz);
    words[24] = c.force_first;
    words[25] = c.force_count;
    words[26] = c.shape_kind;
    words[27] = c._pad0;
    put4(28u, c.shape);

    let f = probe_forces[1];
    words[32] = f.kind;
    words[33] = f._pad0;
    words[34] = f._pad1;
    words[35] = f._pad2;
    put4(36u, f.a);
    put4(40u, f.b);
    put4(44u, f.c);

    let p = probe_params;
    words[48] = p.body_count;
    words[49] = p.global_force_count;
    words[50] = p.integrator;
    words[51] = p.row_width;
    words[52] = bitcast<u32>(p.dt);
    words[53] = p.steps_per_dispatch;
    words[54] = p.first_body;
    words[55] = p.plane_count;

    let plane = probe_planes[1];
    put4(56u, plane.surface);
    words[60] = bitcast<u32>(plane.restitution);
    words[61] = bitcast<u32>(plane.friction);
    words[62] = plane._pad0;
    words[63] = plane._pad1;

    let l = probe_loads[1];
    put4(64u, l.force);
    put4(68u, l.torque);
}
