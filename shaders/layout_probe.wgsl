// Test kernel: copies every field of element 1 of each shared struct, in declaration order,
// into `reals` and `words`, so the Rust side can check that both languages agree on offsets
// and strides in both precisions. Used by the layout test in src/backends/gpu/kernel/layout.rs.

@group(0) @binding(0) var<storage, read> probe_states: array<BodyState>;
@group(0) @binding(1) var<storage, read> probe_constants: array<BodyConstants>;
@group(0) @binding(2) var<storage, read> probe_forces: array<Force>;
@group(0) @binding(3) var<uniform> probe_params: Params;
@group(0) @binding(4) var<storage, read> probe_planes: array<Plane>;
@group(0) @binding(5) var<storage, read> probe_loads: array<ExternalLoad>;
@group(0) @binding(6) var<storage, read_write> reals: array<real>;
@group(0) @binding(7) var<storage, read_write> words: array<u32>;

var<private> next_real: u32 = 0u;
var<private> next_word: u32 = 0u;

fn put(v: real) {
    reals[next_real] = v;
    next_real++;
}

fn put3(v: vec3<real>) {
    put(v.x);
    put(v.y);
    put(v.z);
}

fn put4(v: vec4<real>) {
    put3(v.xyz);
    put(v.w);
}

fn word(v: u32) {
    words[next_word] = v;
    next_word++;
}

@compute @workgroup_size(1)
fn probe() {
    let s = probe_states[1];
    put3(s.position);
    word(s.step_low);
    put4(s.orientation);
    put3(s.linear_momentum);
    word(s.step_high);
    put3(s.angular_momentum);
    word(s.status);

    let c = probe_constants[1];
    put4(c.shape);
    put(c.mass);
    put(c.inv_mass);
    put(c.inv_inertia_xx);
    put(c.inv_inertia_yy);
    put(c.inv_inertia_zz);
    put(c.inv_inertia_xy);
    put(c.inv_inertia_xz);
    put(c.inv_inertia_yz);
    word(c.force_first);
    word(c.force_count);
    word(c.shape_kind);
    word(c.own_kinds);

    let f = probe_forces[1];
    put4(f.a);
    put4(f.b);
    put4(f.c);
    word(f.kind);
    word(f.keyframe_first);
    word(f.keyframe_count);

    let p = probe_params;
    word(p.body_count);
    word(p.global_force_count);
    word(p.integrator);
    word(p.row_width);
    word(p.steps_per_dispatch);
    word(p.first_body);
    word(p.plane_count);
    word(p.on_fault);
    put(p.dt);
    put(p.max_speed_squared);
    put(p.max_angular_speed_squared);
    put(p.max_distance_squared);
    for (var i = 0u; i < PARAMS_PLANES; i++) {
        put4(p.plane_surfaces[i]);
    }

    let plane = probe_planes[1];
    put4(plane.surface);
    put(plane.restitution);
    put(plane.friction);

    let l = probe_loads[1];
    put4(l.force);
    put4(l.torque);
}
