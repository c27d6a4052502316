//! Many machines over MPI (feature `mpi`; `.ci/run` builds it and installs Open MPI): runs,
//! recordings, tangents and checkpoints under `mpirun -np R` give byte for byte the files of
//! one process, a run killed and resumed over the ranks ends as the uninterrupted one, faults
//! stop every rank naming the crowd index and the rank, bad use is one line, and a Rust
//! program with its own communicator gets one process's states.
#![cfg(feature = "mpi")]

mod common;

#[allow(dead_code)] // The law's scene; the example's own checks run in the suite.
#[path = "../examples/force_law.rs"]
mod force_law;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_rigid-crowd");

/// `mpirun -np ranks program args...`, as root too, more ranks than cores allowed.
fn mpirun(ranks: usize, program: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("mpirun");
    command
        .args(["--allow-run-as-root", "--oversubscribe", "-np"])
        .arg(ranks.to_string())
        .arg(program)
        .args(args);
    command
}

/// The binary under `mpirun -np ranks`; it must never panic.
fn ranks(ranks: usize, args: &[&str]) -> Output {
    let output = mpirun(ranks, Path::new(BIN), args)
        .output()
        .expect("mpirun runs (Open MPI: openmpi-bin)");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    output
}

/// The binary as one process.
fn alone(args: &[&str]) -> Output {
    common::rigid_crowd(args, &[])
}

/// Our lines of stderr: without Mesa's notices and mpirun's banner.
fn error_lines(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter(|l| l.starts_with("error:"))
        .map(str::to_string)
        .collect()
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Given bodies with forces of their own (one in each rank's shard, whatever the count)
/// before a generated crowd, under gravity and drag.
fn scene(dir: &Path, generated: usize) -> PathBuf {
    let given = r#"{"mass": 2.0, "inertia": [0.5, 0.7, 0.9], "position": [0, 0, 0],
                    "velocity": [1, 0, 0], "angular_velocity": [0, 0, 3]},
                   {"mass": 24, "shape": {"box": [6, 1, 4]}, "angular_velocity": [1, 2, 3]}"#;
    let last = 2 + generated - 1;
    let text = format!(
        r#"{{"version": 1, "dt": 0.001, "steps": 30, "integrator": "rk4",
  "forces": [{{"type": "gravity", "acceleration": [0, 0, -9.81]}},
             {{"type": "linear_drag", "linear": 0.3, "angular": 0.05}},
             {{"type": "point_force", "body": 0, "force": [0, 0, 1], "point": [-3, 0, -2]}},
             {{"type": "spring", "body": {mid}, "anchor": [0, 0, 0], "attach": [0.1, 0, 0],
               "stiffness": 20, "damping": 0.2}},
             {{"type": "thrust", "body": {last}, "force": [0, 0, 3]}},
             {{"type": "keyframed", "body": {last}, "force": [0, 1, 0],
               "keyframes": [[0.0031, 0.5], [0.0117, -1], [0.0203, 2]]}}],
  "bodies": [{given}],
  "crowd": {{"count": {generated}, "seed": 5, "speed": 3.0, "spin": 6.0,
             "shapes": ["box", "sphere", "capsule", "cylinder", "ellipsoid"]}}}}"#,
        mid = (2 + generated) / 2,
    );
    let path = dir.join(format!("scene-{generated}.json"));
    std::fs::write(&path, text).unwrap();
    path
}

/// A run and its recording over 2 and 3 ranks are byte for byte one process's, on every
/// backend and integrator, in every format.
#[test]
fn runs_and_recordings_over_ranks_are_one_process_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let scene = scene(dir.path(), 3001);
    let scene = s(&scene);
    let cases: &[(&str, &str, &str, &str, usize)] = &[
        ("cpu", "rk4", "csv", "npy", 2),
        ("cpu", "lie_rk4", "npz", "csv", 3),
        ("cpu", "euler", "npy", "npz", 2),
        ("cpu", "symplectic_euler", "csv", "csv", 3),
        ("cpu-ref", "rk4", "csv", "npz", 3),
        ("gpu", "rk4", "csv", "npy", 2),
        ("gpu-f64", "lie_rk4", "npy", "csv", 2),
    ];
    for &(backend, integrator, out, record, count) in cases {
        let name = format!("{backend}-{integrator}");
        let files = |who: &str| {
            (
                dir.path().join(format!("{name}-{who}.{out}")),
                dir.path().join(format!("{name}-{who}-trajectory.{record}")),
            )
        };
        let run = |who: &str| {
            let (out, record) = files(who);
            let args = vec![
                "run".to_string(),
                scene.to_string(),
                "--backend".into(),
                backend.into(),
                "--integrator".into(),
                integrator.into(),
                "--out".into(),
                s(&out).into(),
                "--record".into(),
                s(&record).into(),
                "--every".into(),
                "7".into(),
            ];
            args
        };
        let args = run("one");
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let one = alone(&args);
        assert!(one.status.success(), "{name}: {one:?}");
        let args = run("ranks");
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let spread = ranks(count, &args);
        assert!(
            spread.status.success(),
            "{name} over {count} ranks: {spread:?}"
        );
        let summary = String::from_utf8_lossy(&spread.stderr);
        assert!(summary.contains(&format!("{count} MPI ranks")), "{summary}");
        let (one_out, one_record) = files("one");
        let (ranks_out, ranks_record) = files("ranks");
        assert!(
            read(&ranks_out) == read(&one_out),
            "{name}: --out over {count} ranks differs from one process's"
        );
        assert!(
            read(&ranks_record) == read(&one_record),
            "{name}: --record over {count} ranks differs from one process's"
        );
    }
}

/// A crowd large enough that the ranks' shards start on generator chunks (taken straight
/// from the recipe), and a contact scene: the same bytes as one process.
#[test]
fn chunk_aligned_shards_and_contacts_over_ranks_are_one_process_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    // 2 ranks x 8 chunks of 16,384, and a few more.
    let large = scene(dir.path(), 2 * 8 * 16_384 + 98);
    for (scene, backend, steps) in [
        (s(&large), "cpu", "3"),
        ("scenes/floor.json", "gpu", "40"),
        ("scenes/floor.json", "cpu-ref", "40"),
    ] {
        let one = dir.path().join("one.npy");
        let two = dir.path().join("two.npy");
        let args = |out: &Path| {
            vec![
                "run".to_string(),
                scene.into(),
                "--backend".into(),
                backend.into(),
                "--steps".into(),
                steps.into(),
                "--out".into(),
                s(out).into(),
            ]
        };
        let a = args(&one);
        let output = alone(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(output.status.success(), "{output:?}");
        let a = args(&two);
        let output = ranks(2, &a.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(output.status.success(), "{output:?}");
        assert!(
            read(&one) == read(&two),
            "{scene} on {backend}: the files differ"
        );
    }
}

/// Tangents over 2 and 3 ranks are one process's, byte for byte: the Jacobian and the
/// sensitivities of forces acting on one rank's bodies only (zero on the others), of a
/// crowd-wide force, the inertia and a plane's friction; on every backend, and carried on
/// by `resume` from the ranks' checkpoint.
#[test]
fn tangents_over_ranks_are_one_process_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    // Over 3 ranks, body 0's point force, the middle body's spring and the last body's
    // thrust and keyframed force each act on one rank's shard.
    let scene = scene(dir.path(), 37);
    let own = "forces[2].point,forces[3].stiffness,forces[4].force,forces[5].keyframes,\
               forces[1].linear,inertia";
    let path = |name: &str| dir.path().join(name);
    let cases: &[(&str, &str, &str, &str, usize)] = &[
        (s(&scene), "cpu-ref", "lie_rk4", own, 3),
        (s(&scene), "cpu", "rk4", own, 2),
        (s(&scene), "gpu-f64", "rk4", own, 3),
        (s(&scene), "gpu", "lie_rk4", own, 2),
        (
            "scenes/floor.json",
            "cpu-ref",
            "rk4",
            "planes[0].friction,mass",
            2,
        ),
    ];
    for &(scene, backend, integrator, sensitivity, count) in cases {
        let name = format!("{backend}-{integrator}-{count}");
        let args = |out: &Path, steps: &str| {
            vec![
                "run".to_string(),
                scene.to_string(),
                "--backend".into(),
                backend.into(),
                "--integrator".into(),
                integrator.into(),
                "--steps".into(),
                steps.into(),
                "--out".into(),
                s(out).into(),
                "--jacobian".into(),
                "--sensitivity".into(),
                sensitivity.into(),
            ]
        };
        let run = |ranks_count: usize, out: &Path, steps: &str, extra: &[&str]| {
            let mut a = args(out, steps);
            a.extend(extra.iter().map(|x| x.to_string()));
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            let output = match ranks_count {
                1 => alone(&a),
                n => ranks(n, &a),
            };
            assert!(output.status.success(), "{name}: {output:?}");
        };
        let one = path(&format!("{name}-one.npz"));
        run(1, &one, "24", &[]);
        let spread = path(&format!("{name}-ranks.npz"));
        run(count, &spread, "24", &[]);
        assert!(
            read(&spread) == read(&one),
            "{name}: over {count} ranks differs from one process's"
        );
        // Stopped at step 16 with a checkpoint, resumed over the ranks for the other 8.
        let manifest = path(&format!("{name}.ckpt"));
        run(
            count,
            &path("half.npz"),
            "16",
            &["--checkpoint", s(&manifest)],
        );
        let resumed = path(&format!("{name}-resumed.npz"));
        let output = ranks(
            count,
            &["resume", s(&manifest), "--steps", "8", "--out", s(&resumed)],
        );
        assert!(output.status.success(), "{name}: {output:?}");
        assert!(
            read(&resumed) == read(&one),
            "{name}: resumed over {count} ranks differs from one process's"
        );
    }
}

/// A program with a force law of its own (`examples/force_law_cli.rs`, built with the `mpi`
/// feature: `.ci/run` builds it) runs and resumes over ranks: the law's forces and the
/// tangents along its numbers give one process's bytes, and the checkpoint's shards attach
/// the law again by name on every rank. As one process it quiets Mesa's device-select layer
/// as `rigid-crowd` does.
#[test]
fn a_programs_force_law_runs_and_resumes_over_ranks() {
    let program = Path::new(BIN)
        .with_file_name("examples")
        .join("force_law_cli");
    assert!(
        program.exists(),
        "{}: build it first (cargo build --release --features mpi --example force_law_cli)",
        program.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let scene = path("tether.json");
    std::fs::write(&scene, force_law::SCENE).unwrap();
    for (backend, count) in [("cpu-ref", 3), ("gpu", 2)] {
        let name = format!("{backend}-{count}");
        let run = |out: &Path, steps: &str, extra: &[&str]| -> Vec<String> {
            let mut args = vec!["run", s(&scene), "--backend", backend, "--quiet"];
            args.extend(["--steps", steps, "--out", s(out)]);
            args.extend(["--sensitivity", "forces[1].anchor,forces[1].stiffness"]);
            args.extend(extra);
            args.iter().map(|a| a.to_string()).collect()
        };
        let one = path(&format!("{name}-one.npz"));
        // Quieted as `rigid-crowd` is: no device-select notice without a runtime directory.
        let output = Command::new(&program)
            .args(run(&one, "60", &[]))
            .env("XDG_RUNTIME_DIR", "no-such-runtime-dir")
            .output()
            .unwrap();
        assert!(output.status.success(), "{name}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("XDG_RUNTIME_DIR"), "{name}: {stderr}");
        let in_ranks = |args: &[String]| {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let output = mpirun(count, &program, &args).output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(!stderr.contains("panicked"), "panic: {stderr}");
            assert!(output.status.success(), "{name}: {output:?}");
        };
        let spread = path(&format!("{name}-ranks.npz"));
        in_ranks(&run(&spread, "60", &[]));
        assert!(
            read(&spread) == read(&one),
            "{name}: ranks differ from one process"
        );
        let manifest = path(&format!("{name}.ckpt"));
        let half = path(&format!("{name}-half.npz"));
        in_ranks(&run(&half, "25", &["--checkpoint", s(&manifest)]));
        let resumed = path(&format!("{name}-resumed.npz"));
        let resume = [
            "resume",
            s(&manifest),
            "--steps",
            "35",
            "--quiet",
            "--out",
            s(&resumed),
        ];
        in_ranks(&resume.map(str::to_string));
        assert!(
            read(&resumed) == read(&one),
            "{name}: resumed over {count} ranks differs from one process's"
        );
    }
}

/// A run over 2 ranks with checkpoints and a recording, killed at a moment after its first
/// checkpoint, resumed over 2 ranks: the final states and the trajectory are the
/// uninterrupted one-process run's. Resuming over another rank count is refused.
#[test]
fn a_killed_run_resumes_over_its_ranks_to_the_uninterrupted_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let scene = scene(dir.path(), 40_000);
    let path = |name: &str| dir.path().join(name);
    let common_args = |out: &Path, record: &Path| {
        vec![
            "run".to_string(),
            s(&scene).into(),
            "--backend".into(),
            "cpu-ref".into(),
            "--steps".into(),
            "300".into(),
            "--out".into(),
            s(out).into(),
            "--record".into(),
            s(record).into(),
            "--every".into(),
            "30".into(),
        ]
    };
    let uninterrupted = common_args(&path("one.csv"), &path("one.npz"));
    let output = alone(&uninterrupted.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(output.status.success(), "{output:?}");

    let manifest = path("run.ckpt");
    let mut args = common_args(&path("two.csv"), &path("two.npz"));
    args.extend(["--checkpoint".into(), s(&manifest).into()]);
    args.extend(["--checkpoint-every".into(), "40".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // Killed once the first checkpoint is in place, in the middle of the run; a run that
    // ended first (a fast machine) is started again and killed sooner.
    let mut killed = false;
    for attempt in 0..5 {
        let _ = std::fs::remove_file(&manifest);
        let mut child = mpirun(2, Path::new(BIN), &args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        while !manifest.exists() && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(manifest.exists(), "the run ended before a checkpoint");
        std::thread::sleep(Duration::from_millis(150 >> attempt));
        killed = child.try_wait().unwrap().is_none();
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        child.wait().unwrap();
        if killed {
            break;
        }
    }
    assert!(killed, "every run ended before it could be killed");
    // mpirun is gone; its ranks end with it.
    std::thread::sleep(Duration::from_millis(300));

    let wrong = ranks(3, &["resume", s(&manifest)]);
    assert_eq!(wrong.status.code(), Some(1), "{wrong:?}");
    let lines = error_lines(&wrong);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("written by 2 MPI ranks"), "{lines:?}");

    let plain = alone(&["resume", s(&manifest)]);
    assert_eq!(plain.status.code(), Some(1));
    let lines = error_lines(&plain);
    assert!(
        lines.len() == 1 && lines[0].contains("manifest") && lines[0].contains("mpirun"),
        "{lines:?}"
    );

    let resumed = ranks(2, &["resume", s(&manifest)]);
    assert!(resumed.status.success(), "{resumed:?}");
    assert!(
        read(&path("two.csv")) == read(&path("one.csv")),
        "final states differ"
    );
    assert!(
        read(&path("two.npz")) == read(&path("one.npz")),
        "trajectories differ"
    );
}

/// `gpu` with its f32 divisions in f64 over 2 ranks, checkpointed and resumed over 2 ranks:
/// the resumed run says it kept the setting and ends at the bytes of the uninterrupted
/// one-process run and of `cpu` (lavapipe's f64 divisions are exact).
#[test]
fn f32_divisions_in_f64_over_ranks_resume_to_one_process_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let scene = scene(dir.path(), 37);
    let path = |name: &str| dir.path().join(name);
    let run = |out: &Path, backend: &str, extra: &[&str]| {
        let mut args = vec!["run", s(&scene), "--backend", backend, "--out", s(out)];
        args.extend_from_slice(extra);
        args.iter().map(|a| a.to_string()).collect::<Vec<_>>()
    };
    let go = |count: usize, args: Vec<String>| {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = match count {
            1 => alone(&a),
            n => ranks(n, &a),
        };
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let note = "f32 divisions and square roots in f64";
    let one = path("one.npy");
    assert!(
        go(
            1,
            run(&one, "gpu", &["--steps", "90", "--f32-divisions-in-f64"])
        )
        .contains(note)
    );
    let cpu = path("cpu.npy");
    go(1, run(&cpu, "cpu", &["--steps", "90"]));
    let (two, manifest) = (path("two.npy"), path("run.ckpt"));
    let first = [
        "--steps",
        "40",
        "--f32-divisions-in-f64",
        "--checkpoint",
        s(&manifest),
        "--checkpoint-every",
        "40",
    ];
    assert!(go(2, run(&two, "gpu", &first)).contains(note));
    let resume = ["resume", s(&manifest), "--steps", "50", "--out", s(&two)];
    let resumed = go(2, resume.iter().map(|a| a.to_string()).collect());
    assert!(resumed.contains(note), "{resumed}");
    assert!(
        read(&two) == read(&one),
        "two ranks resumed differ from one process"
    );
    assert!(read(&two) == read(&cpu), "gpu differs from cpu");
}

/// Body 2 (rank 1's when 3 bodies are split over 2 ranks) leaves the envelope. Under `stop`
/// every rank stops, one line naming body 2, its step and rank 1; under `freeze` the final
/// states, the recording with its status and the list of frozen bodies are one process's,
/// byte for byte. On every backend.
#[test]
fn a_fault_on_one_rank_stops_them_all_naming_the_body_and_the_rank() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("runaway.json");
    std::fs::write(
        &scene,
        r#"{"version": 1, "dt": 0.015625, "steps": 100,
 "forces": [{"type": "gravity", "acceleration": [0, -9.81, 0]}],
 "bodies": [
  {"mass": 1, "shape": {"sphere": 0.1}, "position": [0, 0, 0], "velocity": [1, 0, 0]},
  {"mass": 2, "shape": {"box": [1, 2, 3]}, "position": [2, 0, 0], "angular_velocity": [1, 2, 3]},
  {"mass": 1, "shape": {"sphere": 0.1}, "position": [1, 0, 0], "velocity": [30, 0, 0]}
 ]}"#,
    )
    .unwrap();
    for backend in ["cpu", "cpu-ref", "gpu", "gpu-f64"] {
        let out = dir.path().join(format!("{backend}.csv"));
        let output = ranks(
            2,
            &[
                "run",
                s(&scene),
                "--backend",
                backend,
                "--out",
                s(&out),
                "--max-distance",
                "20",
            ],
        );
        assert_eq!(output.status.code(), Some(1), "{backend}: {output:?}");
        let lines = error_lines(&output);
        assert_eq!(lines.len(), 1, "{backend}: {lines:?}");
        assert!(
            lines[0].contains("body 2 passed its distance limit in step 40")
                && lines[0].contains("MPI rank 1 of 2"),
            "{backend}: {lines:?}"
        );
        assert!(!out.exists(), "{backend}: no final states after a fault");

        let files = |who: &str| {
            let out = dir.path().join(format!("{backend}-{who}.csv"));
            let record = dir.path().join(format!("{backend}-{who}.npz"));
            let list = dir
                .path()
                .join(format!("{backend}-{who}.csv.quarantine.json"));
            (out, record, list)
        };
        let freeze = |who: &str| {
            let (out, record, _) = files(who);
            vec![
                "run".to_string(),
                s(&scene).into(),
                "--backend".into(),
                backend.into(),
                "--out".into(),
                s(&out).into(),
                "--record".into(),
                s(&record).into(),
                "--every".into(),
                "10".into(),
                "--on-fault".into(),
                "freeze".into(),
                "--max-distance".into(),
                "20".into(),
            ]
        };
        let args = freeze("one");
        let one = alone(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(one.status.success(), "{backend}: {one:?}");
        let args = freeze("two");
        let two = ranks(2, &args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(two.status.success(), "{backend}: {two:?}");
        let stderr = String::from_utf8_lossy(&two.stderr);
        assert!(
            stderr.contains("quarantined 1 of 3 bodies (first: body 2 in step 40, distance)"),
            "{backend}: {stderr}"
        );
        let (one_files, two_files) = (files("one"), files("two"));
        for (a, b) in [
            (&one_files.0, &two_files.0),
            (&one_files.1, &two_files.1),
            (&one_files.2, &two_files.2),
        ] {
            assert!(read(a) == read(b), "{backend}: {} differs", b.display());
        }
    }
}

/// Bad use of the ranks is one line and exit code 1, with nothing written.
#[test]
fn bad_use_over_ranks_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.csv");
    let one_body = dir.path().join("one.json");
    std::fs::write(
        &one_body,
        r#"{"version": 1, "dt": 0.01, "steps": 3, "bodies": [{"mass": 1, "inertia": [1, 1, 1]}]}"#,
    )
    .unwrap();
    let scene = scene(dir.path(), 100);
    let other = dir.path().join("other.json");
    std::fs::write(
        &other,
        std::fs::read_to_string(&scene)
            .unwrap()
            .replace("\"seed\": 5", "\"seed\": 6"),
    )
    .unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["run", s(&one_body), "--backend", "cpu", "--out", s(&out)],
            "a crowd of 1 bodies cannot be split over 2 MPI ranks",
        ),
        (
            vec!["run", s(&scene), "--out", s(&out), "--devices", "2"],
            "--devices",
        ),
        (
            vec!["run", s(&scene), "--backend", "cpu", "--out", "out.txt"],
            "--out",
        ),
    ];
    for (args, expected) in cases {
        let output = ranks(2, &args);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {output:?}");
        let lines = error_lines(&output);
        assert_eq!(lines.len(), 1, "{args:?}: {lines:?}");
        assert!(lines[0].contains(expected), "{args:?}: {lines:?}");
        assert!(!out.exists(), "{args:?}: nothing written");
    }
    // Each rank reads its own file (rank 0 `scene`, rank 1 `other`): they differ.
    let script = format!(
        "if [ \"$OMPI_COMM_WORLD_RANK\" = 0 ]; then f={}; else f={}; fi; exec {BIN} run \"$f\" --backend cpu --out {}",
        s(&scene),
        s(&other),
        s(&out)
    );
    let output = mpirun(2, Path::new("sh"), &["-c", &script])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let lines = error_lines(&output);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("the ranks read different scene files"),
        "{lines:?}"
    );
    assert!(!out.exists());
}

/// A Rust program with its own communicator (examples/mpi_crowd.rs) gets one process's
/// states bit for bit and the same totals, over 2 and 3 ranks, on every backend, for a crowd
/// with a WGSL custom force and one with a registered force law.
#[test]
fn a_program_with_its_own_communicator_gets_one_process_states() {
    let example = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples/mpi_crowd");
    assert!(
        example.exists(),
        "{} is missing: cargo build --release --features mpi --example mpi_crowd",
        example.display()
    );
    for (count, backends) in [
        (2, vec!["cpu", "cpu-ref", "gpu"]),
        (3, vec!["cpu", "gpu-f64"]),
    ] {
        let output = mpirun(count, &example, &backends).output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{stdout}\n{output:?}");
        for backend in backends {
            for what in ["", " with a registered law"] {
                assert!(
                    stdout.contains(&format!(
                        "{backend}{what} over {count} ranks: states bit for bit one process's, \
                         totals agree"
                    )),
                    "{stdout}"
                );
            }
        }
    }
}

/// `bench` under mpirun prints one row per variant (and tangents carried) with both
/// efficiencies.
#[test]
fn bench_over_ranks_reports_strong_and_weak_scaling() {
    let output = ranks(
        2,
        &[
            "bench",
            "--backends",
            "cpu,gpu",
            "--bodies",
            "2000",
            "--steps",
            "4",
            "--repeats",
            "1",
            "--threads",
            "1",
            "--fuse",
            "1",
            "--tangents",
            "none,mass",
        ],
    );
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("cpu ") || l.starts_with("gpu "))
        .collect();
    // Each backend plain and carrying the mass's tangents.
    assert_eq!(rows.len(), 4, "{stdout}");
    assert_eq!(
        rows.iter().filter(|r| r.contains(", mass")).count(),
        2,
        "{stdout}"
    );
    for row in rows {
        // backend, variant words, bodies, then three rates with units and two efficiencies.
        let efficiency: Vec<f64> = row
            .split_whitespace()
            .rev()
            .step_by(3)
            .take(2)
            .map(|v| v.parse().unwrap())
            .collect();
        assert!(efficiency.iter().all(|e| *e > 0.0), "{row}");
    }
}
