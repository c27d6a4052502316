//! Host memory at scale: a run of millions of generated bodies stays within a fixed number of
//! bytes per body on each backend, measured by the process itself (its peak resident memory,
//! which `run` reports on Linux). The bounds are the ones the project promises at 1e8 bodies
//! (cpu), 5e6 (gpu, the device's memory included where it is host memory, as on lavapipe)
//! and for the f64 reference; the fixed cost of the process (its code, the GPU driver) is
//! included and still fits.

use std::process::Command;

/// Peak memory per body of `rigid-crowd run` of `BODIES` bodies on `backend`, writing `.npy`
/// final states.
fn peak_bytes_per_body<const BODIES: usize>(backend: &str) -> f64 {
    let dir = std::env::temp_dir().join(format!(
        "rigid-crowd-scale-{}-{backend}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("scene.json");
    std::fs::write(
        &scene,
        format!(
            r#"{{"dt": 0.001, "steps": 1, "crowd": {{"count": {BODIES}, "seed": 7}},
                "forces": [{{"type": "gravity", "acceleration": [0, 0, -9.81]}}]}}"#
        ),
    )
    .unwrap();
    let out = dir.join("final.npy");
    let run = Command::new(env!("CARGO_BIN_EXE_rigid-crowd"))
        .args([
            "run",
            scene.to_str().unwrap(),
            "--backend",
            backend,
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    // The whole output was written: the .npy header plus 19 values a body.
    let element = if backend.ends_with("ref") || backend.ends_with("f64") {
        8
    } else {
        4
    };
    let written = std::fs::metadata(&out).unwrap().len() as usize;
    assert_eq!((written - 128) / (19 * element), BODIES, "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
    let summary = stderr.lines().last().unwrap();
    let megabytes: f64 = summary
        .split("peak memory ")
        .nth(1)
        .and_then(|rest| rest.strip_suffix(" MB"))
        .unwrap_or_else(|| panic!("no peak memory in {summary}"))
        .parse()
        .unwrap();
    let per_body = megabytes * 1e6 / BODIES as f64;
    eprintln!("{backend}: peak memory {megabytes} MB, {per_body:.0} bytes a body");
    per_body
}

#[test]
fn the_fast_cpu_path_holds_under_200_bytes_a_body() {
    assert!(peak_bytes_per_body::<1_000_000>("cpu") <= 200.0);
}

#[test]
fn the_reference_holds_under_350_bytes_a_body() {
    assert!(peak_bytes_per_body::<1_000_000>("cpu-ref") <= 350.0);
}

#[test]
fn the_gpu_holds_under_200_bytes_a_body_device_included() {
    assert!(peak_bytes_per_body::<5_000_000>("gpu") <= 200.0);
}
