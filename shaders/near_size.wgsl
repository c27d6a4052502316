// Sizes the indirect dispatch of `integrate_near` over the bodies handed over in this
// dispatch, and empties their list for the next: a module of its own, so that the buffer
// it writes is not bound while it serves as the indirect dispatch's arguments. Needs
// near_list.wgsl before it.

@group(0) @binding(0) var<storage, read_write> near: NearList;
/// `integrate_near`'s workgroups in x, y and z.
@group(0) @binding(1) var<storage, read_write> near_groups: array<u32, 3>;

/// The kernel's workgroup size.
override workgroup_size: u32 = 64u;

@compute @workgroup_size(1)
fn size_near() {
    let count = atomicLoad(&near.count);
    near.taken = count;
    atomicStore(&near.count, 0u);
    let groups = min((count + workgroup_size - 1u) / workgroup_size, MAX_NEAR_GROUPS);
    near.stride = groups * workgroup_size;
    near_groups = array<u32, 3>(groups, 1u, 1u);
}
