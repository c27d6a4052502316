//! Crowds past the adapter's limits on one binding and on workgroups per dimension still run
//! correctly: the kernel splits them into chunks of buffers and spills into a 2D grid.

use crate::common;

use rigid_crowd::gpu::{GpuOptions, Precision};
use rigid_crowd::{Deviation, GPU_TOLERANCE, Integrator, Simulation, cross_check_crowd};

#[test]
fn a_crowd_past_one_binding_and_65535_workgroups_matches_the_reference() {
    let ctx = common::gpu();
    let per_binding = ctx.bodies_per_binding(Precision::F32);
    let max_workgroups = ctx.limits().max_compute_workgroups_per_dimension as usize;
    // A small workgroup makes the first (full) chunk need more than the workgroups one
    // dimension allows, on any adapter whose binding holds a million bodies or more.
    let workgroup_size = 16;
    assert!(
        per_binding / workgroup_size as usize > max_workgroups,
        "{per_binding} bodies per binding do not cross {max_workgroups} workgroups"
    );
    let bodies = per_binding + 100_003;
    // 3 steps with K = 2: one fused dispatch and one single step, on both chunks.
    let steps = 3;
    let options = GpuOptions {
        workgroup_size,
        steps_per_dispatch: 2,
        trusted_shader: true,
        precision: Precision::F32,
        ..GpuOptions::default()
    };
    let crowd = cross_check_crowd(bodies, 21, Integrator::Rk4, 1e-3).unwrap();

    let mut gpu = Simulation::gpu_with_options(&crowd, ctx, options).unwrap();
    assert_eq!(gpu.gpu_chunks().len(), 2);
    gpu.step(steps).unwrap();
    let gpu_bodies = gpu.bodies().unwrap();
    let mut reference = Simulation::reference(&crowd).unwrap();
    reference.step(steps).unwrap();
    let reference_bodies = reference.bodies().unwrap();

    assert_eq!(gpu_bodies.len(), bodies);
    let d = Deviation::between(&gpu_bodies, &reference_bodies);
    println!("{bodies} bodies, {steps} steps: {d:?}");
    assert!(d.max() <= GPU_TOLERANCE, "{d:?}");
    // Every body moved: no chunk or grid row was skipped.
    let unmoved = gpu_bodies
        .iter()
        .zip(&crowd.bodies)
        .filter(|(after, before)| after.state.position == before.state.position)
        .count();
    assert_eq!(unmoved, 0, "{unmoved} bodies never moved");
}
