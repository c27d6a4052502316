//! The command line honours the scene and CSV contracts; check, demo and info do their jobs.

use crate::common;

use common::rigid_crowd;
use std::path::Path;

const REQUIRED_COLUMNS: &str = "body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz";

fn example() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenes/example.json")
        .to_str()
        .unwrap()
        .to_string()
}

/// Rows of a state CSV as numbers, after checking the header.
fn read_csv(path: &Path) -> Vec<Vec<f64>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with(REQUIRED_COLUMNS), "header: {header}");
    let columns = header.split(',').count();
    lines
        .map(|line| {
            let row: Vec<f64> = line.split(',').map(|v| v.parse().unwrap()).collect();
            assert_eq!(row.len(), columns);
            row
        })
        .collect()
}

fn run_example(backend: &str, extra: &[&str]) -> Vec<Vec<f64>> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("final.csv");
    let example = example();
    let mut args = vec![
        "run",
        &example,
        "--backend",
        backend,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let output = rigid_crowd(&args, &[]);
    assert!(output.status.success(), "{output:?}");
    read_csv(&out)
}

#[test]
fn run_writes_one_row_per_body_on_every_backend_and_they_agree() {
    let reference = run_example("cpu-ref", &[]);
    assert_eq!(reference.len(), 2);
    for backend in ["cpu", "gpu"] {
        let rows = run_example(backend, &[]);
        assert_eq!(rows.len(), 2);
        for (r, t) in reference.iter().zip(&rows) {
            assert_eq!(r[0], t[0], "body index");
            for (column, (a, b)) in t.iter().zip(r).enumerate().skip(1) {
                assert!(
                    (a - b).abs() <= 1e-3 * b.abs().max(1.0),
                    "column {column}: {backend} {a} cpu-ref {b}"
                );
            }
        }
    }
}

#[test]
fn zero_steps_write_the_initial_state_in_world_frame_wxyz() {
    let rows = run_example("cpu-ref", &["--steps", "0"]);
    let body0 = &rows[0];
    // orientation [1, 0, 0, 0] is w first; angular_velocity [0, 0, 3] comes back as given.
    assert_eq!(&body0[4..8], &[1.0, 0.0, 0.0, 0.0]);
    let omega = &body0[11..14];
    assert!(
        omega[0] == 0.0 && omega[1] == 0.0 && (omega[2] - 3.0).abs() < 1e-12,
        "{omega:?}"
    );
    // L = I omega with Izz = 0.9.
    assert!((body0[19] - 2.7).abs() < 1e-12, "{body0:?}");
}

#[test]
fn overrides_change_the_run() {
    let rk4 = run_example("cpu-ref", &["--steps", "100"]);
    let euler = run_example("cpu-ref", &["--steps", "100", "--integrator", "euler"]);
    let half = run_example("cpu-ref", &["--steps", "200", "--dt", "0.0005"]);
    assert_ne!(rk4, euler, "the integrator override takes effect");
    // Same end time with half the step: RK4 agrees to far better than the Euler difference.
    let diff = |a: &[Vec<f64>], b: &[Vec<f64>]| (a[0][3] - b[0][3]).abs();
    assert!(diff(&rk4, &half) < 1e-9 && diff(&rk4, &euler) > 1e-6);
}

#[test]
fn a_successful_run_replaces_an_existing_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("final.csv");
    std::fs::write(&out, "old\n").unwrap();
    let example = example();
    let output = rigid_crowd(
        &[
            "run",
            &example,
            "--backend",
            "cpu",
            "--steps",
            "5",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    assert_eq!(read_csv(&out).len(), 2);
}

#[test]
fn check_passes_and_prints_every_quantity() {
    let output = rigid_crowd(&["check", "--bodies", "2000", "--steps", "200"], &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    for quantity in [
        "position",
        "orientation",
        "velocity",
        "angular_velocity",
        "linear_momentum",
        "angular_momentum",
        "PASS",
    ] {
        assert!(stdout.contains(quantity), "{quantity} missing: {stdout}");
    }
}

/// Without the custom WGSL force (the one physics with two definitions) the crowd is all the
/// one definition, and on lavapipe `gpu-f64` is `cpu-ref` bit for bit: `check` says so; with
/// it, it says which bodies are not and why.
#[test]
fn check_says_when_gpu_f64_is_bit_identical_and_why_not() {
    let without = rigid_crowd(
        &[
            "check",
            "--bodies",
            "500",
            "--steps",
            "100",
            "--no-custom-force",
        ],
        &[],
    );
    let stdout = String::from_utf8_lossy(&without.stdout);
    assert!(without.status.success(), "{stdout}");
    assert!(
        stdout.contains("PASS: gpu-f64 bit-identical to cpu-ref (every bit of all 500 bodies)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("gpu bit-identical to cpu (every bit of all 500 bodies, f32)"),
        "{stdout}"
    );
    let with = rigid_crowd(&["check", "--bodies", "500", "--steps", "100"], &[]);
    let stdout = String::from_utf8_lossy(&with.stdout);
    assert!(with.status.success(), "{stdout}");
    assert!(
        stdout.contains("bodies not bit-identical: the custom WGSL force and its Rust twin"),
        "{stdout}"
    );
    assert!(
        stdout.contains("gpu and cpu: ") && !stdout.contains("gpu bit-identical to cpu"),
        "{stdout}"
    );
}

#[test]
fn demo_reports_every_backend_and_their_agreement() {
    let output = rigid_crowd(&["demo", "--bodies", "3000", "--steps", "20"], &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    for row in [
        "gpu      ",
        "cpu      f32 fast path",
        "cpu-ref  f64 reference",
    ] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(row) && l.ends_with("body-steps/s")),
            "{row}: {stdout}"
        );
    }
    assert!(
        stdout.contains("gpu agreement with cpu-ref")
            && stdout.contains("cpu agreement with cpu-ref")
            && stdout.contains("within the documented tolerance"),
        "{stdout}"
    );
}

#[test]
fn demo_without_an_adapter_says_so_and_still_runs_the_cpu() {
    let no_driver = [
        ("VK_ICD_FILENAMES", "/nonexistent.json"),
        ("VK_DRIVER_FILES", "/nonexistent.json"),
    ];
    let output = rigid_crowd(&["demo", "--bodies", "1000", "--steps", "5"], &no_driver);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(
        stdout.contains("no GPU adapter found") && stdout.contains("mesa-vulkan-drivers"),
        "{stdout}"
    );
    assert!(
        stdout.contains("cpu-ref  f64 reference") && stdout.contains("cpu      f32 fast path"),
        "{stdout}"
    );
}

#[test]
fn info_lists_the_adapter_and_its_crowd_limit() {
    let output = rigid_crowd(&["info"], &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success());
    assert!(
        stdout.contains("max_storage_buffer_binding_size")
            && stdout.contains("bodies per storage binding, f32:")
            && stdout.contains("f64 kernels (SHADER_F64, the gpu-f64 backend): yes")
            && stdout.contains("bodies per storage binding, f64:"),
        "{stdout}"
    );
}

/// Mesa's device-select layer probes Wayland and libwayland complains on stderr when the
/// runtime directory is missing; the binary turns the futile probe off.
#[test]
fn a_gpu_start_without_a_runtime_directory_prints_no_wayland_noise() {
    let output = rigid_crowd(&["info"], &[("XDG_RUNTIME_DIR", "no-such-runtime-dir")]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("XDG_RUNTIME_DIR"), "{stderr}");
}

#[test]
fn bench_prints_the_table_and_writes_json_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bench.json");
    let plot = dir.path().join("bench.svg");
    let output = rigid_crowd(
        &[
            "bench",
            "--bodies",
            "100,1e3",
            "--steps",
            "4",
            "--repeats",
            "2",
            "--fuse",
            "1,2",
            "--threads",
            "1,2",
            "--json",
            json.to_str().unwrap(),
            "--plot",
            plot.to_str().unwrap(),
        ],
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    // 2 sizes x (cpu-ref and cpu at 1 and 2 threads, gpu and gpu-f64 fused 1 and 2).
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            ["cpu-ref ", "cpu ", "gpu ", "gpu-f64 "]
                .iter()
                .any(|b| l.starts_with(b))
        })
        .collect();
    assert_eq!(rows.len(), 16, "{stdout}");
    // The precision is a column: f32 and f64 GPU rows side by side.
    assert!(
        rows.iter().any(|l| l.starts_with("gpu      f32"))
            && rows.iter().any(|l| l.starts_with("gpu-f64  f64")),
        "{stdout}"
    );
    assert!(stdout.contains("copy bandwidth at 1000 bodies"), "{stdout}");

    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 16);
    for row in rows {
        let rate = row["body_steps_per_second"].as_f64().unwrap();
        let expected = row["bodies"].as_f64().unwrap() * 4.0 / row["seconds"].as_f64().unwrap();
        assert!((rate - expected).abs() <= 1e-9 * expected, "{row}");
        assert_eq!(row["runs"].as_array().unwrap().len(), 2);
        let is_gpu = row["backend"].as_str().unwrap().starts_with("gpu");
        assert_eq!(
            row["fraction_of_copy_bandwidth"].is_number(),
            is_gpu,
            "{row}"
        );
        assert!(row["speedup_over_cpu_ref"].as_f64().unwrap() > 0.0);
    }
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
    // One line per configuration: cpu-ref x2, cpu x2, gpu x2, gpu-f64 x2.
    assert_eq!(svg.matches("<polyline").count(), 8);
}

/// Each workload runs on the CPU and the GPU, its own kernel on the GPU, and the header
/// and the JSON name it. The general kernel is one source whatever the workload, and
/// lavapipe takes about a minute to compile it in each process: it runs with the workload
/// whose crowd reaches most of it (planes), not three times over.
#[test]
fn bench_runs_every_workload() {
    let dir = tempfile::tempdir().unwrap();
    for (workload, kernels, rows) in [
        ("gravity-drag", "specialized", 3),
        ("every-force", "specialized", 3),
        ("contacts", "specialized,general", 4),
    ] {
        let json = dir.path().join(format!("{workload}.json"));
        let output = rigid_crowd(
            &[
                "bench",
                "--bodies",
                "100",
                "--steps",
                "2",
                "--repeats",
                "1",
                "--fuse",
                "1",
                "--backends",
                "cpu-ref,cpu,gpu",
                "--kernel",
                kernels,
                "--workload",
                workload,
                "--json",
                json.to_str().unwrap(),
            ],
            &[],
        );
        assert!(output.status.success(), "{output:?}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.contains(&format!("workload {workload}: ")),
            "{stdout}"
        );
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(report["workload"], workload);
        // cpu-ref, cpu, and the gpu kernels asked for.
        assert_eq!(report["rows"].as_array().unwrap().len(), rows, "{report}");
    }
}

/// The colliding workload runs on the backend that resolves collisions, and another is
/// refused in one line naming the setting.
#[test]
fn bench_runs_the_colliding_workload_on_cpu_ref() {
    let args = |backends: &'static str| {
        [
            "bench",
            "--bodies",
            "300",
            "--steps",
            "3",
            "--repeats",
            "1",
            "--backends",
            backends,
            "--workload",
            "colliding",
        ]
    };
    let output = rigid_crowd(&args("cpu-ref"), &[]);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("workload colliding: "), "{stdout}");
    let refused = rigid_crowd(&args("cpu"), &[]);
    let line = common::error_line(&refused);
    assert!(
        line.starts_with("error: collisions: bodies collide on `cpu-ref` so far, not on `cpu`"),
        "{line}"
    );
}

#[test]
fn bench_rejects_bad_lists_naming_the_flag() {
    for (flag, value) in [
        ("--bodies", "1e3..1e2"),
        ("--backends", "cpu,tpu"),
        ("--fuse", "0x"),
        ("--shader", "fast"),
        ("--kernel", "fastest"),
        ("--workload", "vortex"),
        ("--threads", "0"),
        ("--f32-division", "fast"),
        ("--tangent-blocks", "2"),
        ("--tangent-blocks", "auto,16"),
    ] {
        let output = rigid_crowd(&["bench", flag, value], &[]);
        let line = common::error_line(&output);
        assert!(
            line.starts_with(&format!("error: {flag}: ")),
            "{flag}: {line}"
        );
    }
}

/// `integrators` made quick: coarse convergence runs and a small timed crowd.
const QUICK_INTEGRATORS: [&str; 9] = [
    "integrators",
    "--order-dt",
    "0.01",
    "--order-time",
    "1",
    "--bodies",
    "64",
    "--steps",
    "3",
];

#[test]
fn integrators_prints_one_row_per_integrator_and_writes_json() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("integrators.json");
    let mut args = QUICK_INTEGRATORS.to_vec();
    args.extend(["--long-steps", "200", "--json", json.to_str().unwrap()]);
    let output = rigid_crowd(&args, &[]);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    for name in [
        "euler",
        "symplectic_euler",
        "rk4",
        "lie_rk4",
        "lie_poisson",
        "lie_poisson4",
    ] {
        let rows = stdout
            .lines()
            .filter(|l| l.starts_with(&format!("| {name} |")))
            .count();
        assert_eq!(rows, 1, "{name}: {stdout}");
    }
    assert!(stdout.contains("ns/body-step gpu"), "{stdout}");
    let table: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    for row in rows {
        // Torque-free and force-free: the momentum form keeps L and P exactly.
        assert_eq!(row["angular_momentum_drift"].as_f64(), Some(0.0), "{row}");
        assert_eq!(row["linear_momentum_drift"].as_f64(), Some(0.0), "{row}");
        let order = row["measured_order"].as_f64().unwrap();
        let design = row["design_order"].as_f64().unwrap();
        assert!((order - design).abs() < 0.3, "{row}");
        assert_eq!(row["ns_per_body_step"].as_array().unwrap().len(), 3);
    }
}

#[test]
fn integrators_rejects_bad_sizes_naming_the_flag() {
    for (flag, value, with) in [
        ("--order-dt", "-1", None),
        ("--long-dt", "0", None),
        ("--long-steps", "0", None),
        ("--order-time", "0.01", None),
        ("--long-every", "5", None),
        ("--long-every", "0", Some("cpu-ref")),
        ("--long-backend", "gpu", None),
        ("--long-backend", "cpu", None),
    ] {
        // `--flag=value`: clap would read a bare `-1` as a flag of its own.
        let arg = format!("{flag}={value}");
        let mut args = vec!["integrators", &arg, "--no-gpu"];
        args.extend(
            with.map(|backend| ["--long-backend", backend])
                .iter()
                .flatten(),
        );
        let line = common::error_line(&rigid_crowd(&args, &[]));
        assert!(
            line.starts_with(&format!("error: {flag}: ")),
            "{flag}: {line}"
        );
    }
}

/// The long run read from a `gpu-f64` simulation after every step gives the scan of the
/// reference stepper's numbers, bit for bit; read every 50 steps, no larger error than it.
#[test]
fn integrators_long_run_on_gpu_f64_reads_the_references_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let table = |name: &str, extra: &[&str]| {
        let json = dir.path().join(name);
        let mut args = QUICK_INTEGRATORS.to_vec();
        args.extend(["--long-steps", "300", "--long-bodies", "3", "--no-gpu"]);
        args.extend(["--json", json.to_str().unwrap()]);
        args.extend(extra);
        let output = rigid_crowd(&args, &[]);
        assert!(output.status.success(), "{output:?}");
        let text = std::fs::read_to_string(&json).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    };
    let scan = table("scan.json", &[]);
    let every_step = table(
        "every.json",
        &["--long-backend", "gpu-f64", "--long-every", "1"],
    );
    let sparse = table(
        "sparse.json",
        &["--long-backend", "gpu-f64", "--long-every", "50"],
    );
    assert_eq!(
        sparse["plan"]["long_reads"],
        serde_json::json!({"sampled": {"backend": "gpu-f64", "every": 50}})
    );
    let rows = |t: &serde_json::Value| t["rows"].as_array().unwrap().clone();
    for ((scan, every), sparse) in rows(&scan).iter().zip(rows(&every_step)).zip(rows(&sparse)) {
        for key in ["energy_drift", "energy_history", "angular_momentum_drift"] {
            assert_eq!(every[key], scan[key], "{key}: {every}");
        }
        // Unseen by a sampled run (written as null).
        assert!(every["unit_norm_drift"].is_null(), "{every}");
        let drift = |row: &serde_json::Value| row["energy_drift"].as_f64().unwrap();
        assert!(drift(&sparse) <= drift(scan), "{sparse}");
    }
    assert_eq!(
        every_step["equal_cost"]["energy_history"],
        scan["equal_cost"]["energy_history"]
    );
}
