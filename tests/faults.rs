//! Device faults are errors of the library, never panics: a lost device is reported by every
//! later call, and the CLI points to the last checkpoint.

mod common;

use rigid_crowd::{Error, Integrator, Simulation, check_crowd};

#[test]
fn a_lost_device_is_an_error_on_every_later_call() {
    let ctx = rigid_crowd::gpu::GpuContext::new().expect("GPU tests need an adapter");
    let crowd = check_crowd(256, 3, Integrator::Rk4, 1e-3).unwrap();
    let mut sim = Simulation::gpu(&crowd, &ctx).unwrap();
    sim.step(10).unwrap();
    sim.finish().unwrap();
    ctx.destroy_device();
    let lost = |r: Result<(), Error>, what: &str| match r {
        Err(Error::DeviceLost(message)) => assert!(!message.is_empty(), "{what}"),
        other => panic!("{what}: expected DeviceLost, got {other:?}"),
    };
    lost(sim.step(10), "step");
    lost(sim.finish(), "finish");
    lost(sim.bodies().map(|_| ()), "bodies");
    lost(sim.checkpoint().map(|_| ()), "checkpoint");
    lost(
        Simulation::gpu(&crowd, &ctx).map(|_| ()),
        "a new simulation on the lost device",
    );
}
