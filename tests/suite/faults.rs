//! Device faults are errors of the library, never panics: a lost device is reported by every
//! later call, and the CLI points to the last checkpoint.

use crate::common;

use rigid_crowd::{Error, Integrator, Simulation, cross_check_crowd};

#[test]
fn a_lost_device_is_an_error_on_every_later_call() {
    let ctx = rigid_crowd::gpu::GpuContext::new().expect("GPU tests need an adapter");
    let crowd = cross_check_crowd(256, 3, Integrator::Rk4, 1e-3).unwrap();
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

/// A copy of scenes/floor.json with `count` bodies and one step.
fn floor_scene(dir: &std::path::Path, count: usize) -> String {
    let text = std::fs::read_to_string("scenes/floor.json").unwrap();
    let text = text
        .replace("\"count\": 5000", &format!("\"count\": {count}"))
        .replace("\"steps\": 4000", "\"steps\": 1");
    let path = dir.join(format!("floor-{count}.json"));
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_crowd_too_large_for_the_device_is_refused_up_front_with_the_largest_that_fits() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.csv");
    let out = out.to_str().unwrap();
    let budget = [(rigid_crowd::gpu::MEMORY_BUDGET_VAR, "1000000")];
    let refused = common::rigid_crowd(
        &["run", &floor_scene(dir.path(), 5000), "--out", out],
        &budget,
    );
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    let line = stderr.lines().last().unwrap();
    assert!(line.contains("crowd of 5000 bodies does not fit"), "{line}");
    let largest: usize = line
        .rsplit("the largest that fits is ")
        .next()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no largest size in: {line}"));
    assert!(largest > 0 && largest < 5000, "{line}");
    // The size it names does fit, and one more body does not.
    let fits = common::rigid_crowd(
        &["run", &floor_scene(dir.path(), largest), "--out", out],
        &budget,
    );
    assert!(fits.status.success(), "{fits:?}");
    let one_more = common::rigid_crowd(
        &["run", &floor_scene(dir.path(), largest + 1), "--out", out],
        &budget,
    );
    assert_eq!(one_more.status.code(), Some(1), "{one_more:?}");
    // A bad budget names the variable.
    let bad = common::rigid_crowd(
        &["run", &floor_scene(dir.path(), 10), "--out", out],
        &[(rigid_crowd::gpu::MEMORY_BUDGET_VAR, "lots")],
    );
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains(rigid_crowd::gpu::MEMORY_BUDGET_VAR),
        "{bad:?}"
    );
}

/// Tangents take device memory beside the states: a crowd that fits without them but not
/// with them is refused in one line before any work, naming the largest crowd that fits
/// with them; that many bodies run, one more is refused, and nothing is written.
#[test]
fn tangents_too_large_for_the_device_are_refused_naming_the_largest_that_fits() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.npz");
    let out = out.to_str().unwrap();
    let budget = [(rigid_crowd::gpu::MEMORY_BUDGET_VAR, "1000000")];
    let run = |count: usize| {
        let scene = floor_scene(dir.path(), count);
        let args = ["run", &scene, "--out", out, "--jacobian"];
        common::rigid_crowd(&args, &budget)
    };
    let refused = run(2000);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let line = common::error_line(&refused);
    assert!(
        line.contains("crowd of 2000 bodies does not fit") && line.contains("13 tangent columns"),
        "{line}"
    );
    assert!(!std::path::Path::new(out).exists());
    let largest: usize = line
        .rsplit("the largest that fits is ")
        .next()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no largest size in: {line}"));
    // The plain run of 2000 bodies fits the same budget (the other test's largest is larger).
    assert!(largest > 0 && largest < 2000, "{line}");
    let fits = run(largest);
    assert!(fits.status.success(), "{fits:?}");
    std::fs::remove_file(out).unwrap();
    let one_more = run(largest + 1);
    assert_eq!(one_more.status.code(), Some(1), "{one_more:?}");
    assert!(!std::path::Path::new(out).exists());
}
