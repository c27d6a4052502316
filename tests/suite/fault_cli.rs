//! Per-body fault isolation from the command line: `--on-fault freeze` with an envelope
//! quarantines the body that leaves it, lists it beside the output, and leaves every other
//! body as a run without it would; `stop` ends the run; bad flags are one line each.

use crate::common;

use common::our_lines;

use common::rigid_crowd;
use std::path::Path;

/// Three bodies under gravity; body 1 flies off at 30 m/s and passes 20 m after step 40.
const SCENE: &str = r#"{"version": 1, "dt": 0.015625, "steps": 100,
 "forces": [{"type": "gravity", "acceleration": [0, -9.81, 0]}],
 "bodies": [
  {"mass": 1, "shape": {"sphere": 0.1}, "position": [0, 0, 0], "velocity": [1, 0, 0]},
  {"mass": 1, "shape": {"sphere": 0.1}, "position": [1, 0, 0], "velocity": [30, 0, 0]},
  {"mass": 2, "shape": {"box": [1, 2, 3]}, "position": [2, 0, 0], "angular_velocity": [1, 2, 3]}
 ]}"#;

/// The same scene without body 1.
fn without_runaway() -> String {
    let lines: Vec<&str> = SCENE.lines().collect();
    lines
        .iter()
        .filter(|l| !l.contains("[30, 0, 0]"))
        .copied()
        .collect::<Vec<_>>()
        .join("\n")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// The CSV's rows without the body column.
fn rows(path: &str) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split_once(',').unwrap().1.to_string())
        .collect()
}

#[test]
fn freeze_lists_the_runaway_and_leaves_the_rest_as_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write(dir.path(), "scene.json", SCENE);
    let alone = write(dir.path(), "alone.json", &without_runaway());
    for backend in ["cpu", "cpu-ref", "gpu", "gpu-f64"] {
        let out = dir.path().join(format!("{backend}.csv"));
        let out = out.to_str().unwrap();
        let output = rigid_crowd(
            &[
                "run",
                &scene,
                "--backend",
                backend,
                "--out",
                out,
                "--on-fault",
                "freeze",
                "--max-distance",
                "20",
            ],
            &[],
        );
        assert!(output.status.success(), "{backend}: {output:?}");
        let lines = our_lines(&output.stderr);
        assert_eq!(lines.len(), 2, "{backend}: {lines:?}");
        let expected = format!(
            "quarantined 1 of 3 bodies (first: body 1 in step 40, distance); the list is in {out}.quarantine.json"
        );
        assert_eq!(lines[1], expected, "{backend}");
        let report: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(format!("{out}.quarantine.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(report["on_fault"], "freeze");
        assert_eq!(report["envelope"]["max_distance"], 20.0);
        assert_eq!(report["bodies"], 3);
        let list = report["quarantined"].as_array().unwrap();
        assert_eq!(list.len(), 1, "{backend}");
        assert_eq!(list[0]["body"], 1);
        assert_eq!(list[0]["step"], 40);
        assert_eq!(list[0]["fault"], "distance");
        // Its last good state: 40 steps of 30 m/s along x from x = 1.
        let x = list[0]["position"][0].as_f64().unwrap();
        assert!(
            (x - (1.0 + 30.0 * 40.0 / 64.0)).abs() < 1e-9,
            "{backend}: {x}"
        );
        assert_eq!(list[0]["orientation"][0], 1.0);
        // Every body in --out; the other two as in a run without the runaway.
        let all = rows(out);
        assert_eq!(all.len(), 3);
        let reference = dir.path().join(format!("{backend}-alone.csv"));
        let reference = reference.to_str().unwrap();
        let output = rigid_crowd(
            &["run", &alone, "--backend", backend, "--out", reference],
            &[],
        );
        assert!(output.status.success(), "{backend}: {output:?}");
        let healthy = rows(reference);
        assert_eq!(vec![all[0].clone(), all[2].clone()], healthy, "{backend}");
    }
}

#[test]
fn the_scene_file_sets_the_rules_and_stop_ends_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let with_rules = SCENE.replacen(
        "\"steps\": 100,",
        "\"steps\": 100, \"fault_rules\": {\"on_fault\": \"freeze\", \"max_distance\": 20},",
        1,
    );
    let scene = write(dir.path(), "rules.json", &with_rules);
    let out = dir.path().join("from-scene.csv");
    let out = out.to_str().unwrap();
    let output = rigid_crowd(&["run", &scene, "--backend", "cpu", "--out", out], &[]);
    assert!(output.status.success(), "{output:?}");
    assert!(Path::new(&format!("{out}.quarantine.json")).exists());
    // The flag overrides the file: stop.
    let stopped = dir.path().join("stopped.csv");
    let stopped = stopped.to_str().unwrap();
    let output = rigid_crowd(
        &[
            "run",
            &scene,
            "--backend",
            "cpu",
            "--out",
            stopped,
            "--on-fault",
            "stop",
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let lines = our_lines(&output.stderr);
    assert_eq!(
        lines,
        ["error: body 1 passed its distance limit in step 40; its last state inside is kept"]
    );
    assert!(!Path::new(stopped).exists());
    assert!(!Path::new(&format!("{stopped}.quarantine.json")).exists());
    let bad_rules = SCENE.replacen(
        "\"steps\": 100,",
        "\"steps\": 100, \"fault_rules\": {\"on_fault\": \"later\"},",
        1,
    );
    let bad = write(dir.path(), "bad.json", &bad_rules);
    let output = rigid_crowd(&["run", &bad, "--out", out], &[]);
    let lines = our_lines(&output.stderr);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        lines[0].contains("fault_rules.on_fault: unknown fault policy `later`"),
        "{lines:?}"
    );
}

#[test]
fn bad_fault_flags_are_one_line_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write(dir.path(), "scene.json", SCENE);
    let out = dir.path().join("x.csv");
    let out = out.to_str().unwrap();
    for (flag, value) in [
        ("--on-fault", "ignore"),
        ("--max-speed", "0"),
        ("--max-speed", "-1"),
        ("--max-angular-speed", "inf"),
        ("--max-distance", "nan"),
    ] {
        let output = rigid_crowd(&["run", &scene, "--out", out, flag, value], &[]);
        assert_eq!(output.status.code(), Some(1), "{flag} {value}");
        let lines = our_lines(&output.stderr);
        assert_eq!(lines.len(), 1, "{flag} {value}: {lines:?}");
        assert!(
            lines[0].starts_with(&format!("error: {flag}: ")),
            "{lines:?}"
        );
    }
}

#[test]
fn a_resumed_freeze_run_ends_with_the_same_output_and_list() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write(dir.path(), "scene.json", SCENE);
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let flags = [
        "--on-fault",
        "freeze",
        "--max-distance",
        "20",
        "--backend",
        "cpu",
    ];
    let whole = path("whole.csv");
    let mut args = vec!["run", scene.as_str(), "--out", whole.as_str()];
    args.extend(flags);
    assert!(rigid_crowd(&args, &[]).status.success());
    // 60 steps (body 1 frozen at 40) with a checkpoint, then the other 40 from it.
    let (first, ckpt, rest) = (path("first.csv"), path("run.ckpt"), path("rest.csv"));
    let mut args = vec![
        "run",
        scene.as_str(),
        "--out",
        first.as_str(),
        "--steps",
        "60",
    ];
    args.extend(["--checkpoint", ckpt.as_str()]);
    args.extend(flags);
    assert!(rigid_crowd(&args, &[]).status.success());
    let output = rigid_crowd(
        &["resume", &ckpt, "--steps", "40", "--out", &rest, "--quiet"],
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        std::fs::read(&rest).unwrap(),
        std::fs::read(&whole).unwrap()
    );
    assert_eq!(
        std::fs::read(format!("{rest}.quarantine.json")).unwrap(),
        std::fs::read(format!("{whole}.quarantine.json")).unwrap()
    );
}
