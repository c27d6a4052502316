//! `run --out` and `resume --out` write the final states in the format the extension names:
//! `.csv` (std's shortest text, as ever), `.npy` and `.npz` (the CSV's 19 columns in the
//! backend's precision); anything else is refused before any work, leaving no file.

use crate::common;

use common::{Npy, parse_npy};

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{gpu, rigid_crowd};
use rigid_crowd::{Backend, Body, CSV_HEADER, Scene, Simulation};

/// Every backend by its command-line name, and whether it computes in f32.
const BACKENDS: [(&str, Backend, bool); 4] = [
    ("cpu-ref", Backend::Reference, false),
    ("cpu", Backend::FastCpu, true),
    ("gpu", Backend::Gpu, true),
    ("gpu-f64", Backend::GpuF64, false),
];

/// A scene of `count` generated bodies of every shape after a mesh body (whose model frame
/// is not its body frame) and `steps` steps.
fn write_scene(dir: &Path, count: usize, steps: u64) -> PathBuf {
    let mesh = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/meshes/bracket.obj");
    let mesh = serde_json::to_string(mesh.to_str().unwrap()).unwrap();
    let text = format!(
        r#"{{ "dt": 0.001, "steps": {steps}, "integrator": "rk4",
  "forces": [ {{"type": "gravity", "acceleration": [0, 0, -9.81]}},
              {{"type": "linear_drag", "linear": 0.3, "angular": 0.05}} ],
  "bodies": [ {{"density": 100, "shape": {{"mesh": {mesh}}},
               "position": [0, 0, 10], "orientation": [0.9238795, 0, 0.3826834, 0],
               "velocity": [1, 0, 5], "angular_velocity": [0.5, 2, 1]}} ],
  "crowd": {{ "count": {count}, "seed": 11, "region": [[-50, -50, 0], [50, 50, 100]],
              "mass": [0.5, 5.0], "size": [0.2, 2.0],
              "shapes": ["box", "sphere", "capsule", "cylinder", "ellipsoid"],
              "speed": 5.0, "spin": 10.0 }} }}"#
    );
    let path = dir.join("scene.json");
    std::fs::write(&path, text).unwrap();
    path
}

/// More bodies than the CSV writer formats in one parallel batch, so the chunks' order shows.
const BODIES: usize = 20_000;
const STEPS: u64 = 3;

/// `rigid-crowd ARGS`, which must succeed.
fn succeed(args: &[&str]) {
    let output = rigid_crowd(args, &[]);
    assert!(output.status.success(), "{args:?}: {output:?}");
}

fn run_to(scene: &Path, backend: &str, out: &Path) {
    succeed(&[
        "run",
        scene.to_str().unwrap(),
        "--backend",
        backend,
        "--out",
        out.to_str().unwrap(),
    ]);
}

/// The rows of a state CSV as numbers, after checking the header.
fn read_csv(path: &Path) -> Vec<[f64; 19]> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(CSV_HEADER));
    lines
        .enumerate()
        .map(|(i, line)| {
            let mut fields = line.split(',');
            assert_eq!(fields.next(), Some(i.to_string().as_str()), "body index");
            let row: Vec<f64> = fields.map(|v| v.parse().unwrap()).collect();
            row.try_into().unwrap()
        })
        .collect()
}

/// Checks `states` against the CSV rows of the same final states: the dtype of the backend,
/// shape `(bodies, 19)`, every f64 value bit for bit, every f32 value the CSV's rounded.
fn assert_states_match_csv(what: &str, states: &Npy, csv: &[[f64; 19]], f32_backend: bool) {
    assert_eq!(states.shape, vec![csv.len(), 19], "{what}: shape");
    let expected = csv.iter().flatten();
    if f32_backend {
        assert_eq!(states.descr, "<f4", "{what}: dtype");
        let values = states.data.chunks_exact(4);
        for (k, (bytes, &csv)) in values.zip(expected).enumerate() {
            let value = f32::from_le_bytes(bytes.try_into().unwrap());
            assert!(
                value.to_bits() == (csv as f32).to_bits(),
                "{what}: body {} column {}: {value} is not the CSV's {csv} as f32",
                k / 19,
                k % 19
            );
        }
    } else {
        assert_eq!(states.descr, "<f8", "{what}: dtype");
        let values = states.data.chunks_exact(8);
        for (k, (bytes, &csv)) in values.zip(expected).enumerate() {
            let value = f64::from_le_bytes(bytes.try_into().unwrap());
            assert!(
                value.to_bits() == csv.to_bits(),
                "{what}: body {} column {}: {value} is not the CSV's {csv}",
                k / 19,
                k % 19
            );
        }
    }
}

/// The state CSV as the writer of before formatted it, one thread and std's `{}`.
fn csv_with_std_formatting(bodies: &[Body]) -> Vec<u8> {
    use std::io::Write;
    let mut text = format!("{CSV_HEADER}\n").into_bytes();
    for (i, body) in bodies.iter().enumerate() {
        let pose = body.model_pose();
        let (x, q) = (pose.position, pose.orientation);
        let (v, w) = (body.velocity(), body.angular_velocity());
        let (p, l) = (body.state.linear_momentum, body.state.angular_momentum);
        let values = [
            x.x, x.y, x.z, q.w, q.x, q.y, q.z, v.x, v.y, v.z, w.x, w.y, w.z, p.x, p.y, p.z, l.x,
            l.y, l.z,
        ];
        write!(text, "{i}").unwrap();
        for value in values {
            write!(text, ",{value}").unwrap();
        }
        text.push(b'\n');
    }
    text
}

#[test]
fn csv_output_is_the_text_it_always_was() {
    let dir = tempfile::tempdir().unwrap();
    let scene_path = write_scene(dir.path(), BODIES, STEPS);
    let scene = Scene::load(&scene_path).unwrap();
    for (name, backend, _) in BACKENDS {
        let out = dir.path().join(format!("{name}.csv"));
        run_to(&scene_path, name, &out);
        let mut sim = Simulation::on_backend(&scene.crowd, backend, gpu()).unwrap();
        sim.step(STEPS).unwrap();
        let expected = csv_with_std_formatting(&sim.bodies().unwrap());
        assert!(
            std::fs::read(&out).unwrap() == expected,
            "{name}: the CSV is not std's text of the final states"
        );
    }
}

#[test]
fn npy_output_holds_the_csv_values_in_the_backend_precision() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write_scene(dir.path(), BODIES, STEPS);
    for (name, _, f32_backend) in BACKENDS {
        let csv = dir.path().join(format!("{name}.csv"));
        let npy = dir.path().join(format!("{name}.npy"));
        run_to(&scene, name, &csv);
        run_to(&scene, name, &npy);
        let states = parse_npy(&std::fs::read(&npy).unwrap());
        assert_states_match_csv(name, &states, &read_csv(&csv), f32_backend);
    }
}

#[test]
fn npz_output_from_run_and_resume_is_an_archive_of_states_step_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write_scene(dir.path(), 3_000, STEPS);
    let path = |name: &str| dir.path().join(name);
    let text = |p: &Path| p.to_str().unwrap().to_string();
    for (name, _, f32_backend) in BACKENDS {
        // The whole run, and its last step again from a checkpoint, each as CSV and .npz.
        for out in [format!("{name}.csv"), format!("{name}.npz")] {
            run_to(&scene, name, &path(&out));
        }
        let partial = path(&format!("{name}-partial.ckpt"));
        succeed(&[
            "run",
            scene.to_str().unwrap(),
            "--backend",
            name,
            "--steps",
            &(STEPS - 1).to_string(),
            "--out",
            &text(&path("partial.csv")),
            "--checkpoint",
            &text(&partial),
        ]);
        for out in [format!("{name}-resumed.csv"), format!("{name}-resumed.npz")] {
            // A resumed run goes on checkpointing to its file: resume from a copy each time.
            let copy = path("copy.ckpt");
            std::fs::copy(&partial, &copy).unwrap();
            succeed(&[
                "resume",
                &text(&copy),
                "--steps",
                "1",
                "--out",
                &text(&path(&out)),
            ]);
        }
        let csv = read_csv(&path(&format!("{name}.csv")));
        assert_eq!(csv, read_csv(&path(&format!("{name}-resumed.csv"))));
        for npz in [format!("{name}.npz"), format!("{name}-resumed.npz")] {
            let file = std::fs::File::open(path(&npz)).unwrap();
            let mut archive = zip::ZipArchive::new(file).unwrap();
            let mut names: Vec<_> = archive.file_names().collect();
            names.sort();
            assert_eq!(names, ["states.npy", "step.npy", "time.npy"], "{npz}");
            let mut entry = |entry: &str| {
                let mut file = archive.by_name(entry).unwrap();
                assert_eq!(file.compression(), zip::CompressionMethod::Stored);
                let mut bytes = Vec::new();
                file.read_to_end(&mut bytes).unwrap();
                parse_npy(&bytes)
            };
            assert_states_match_csv(&npz, &entry("states.npy"), &csv, f32_backend);
            let step = entry("step.npy");
            assert_eq!((step.descr.as_str(), step.shape.len()), ("<i8", 0), "{npz}");
            assert_eq!(
                i64::from_le_bytes(step.data.try_into().unwrap()),
                STEPS as i64
            );
            let time = entry("time.npy");
            assert_eq!((time.descr.as_str(), time.shape.len()), ("<f8", 0), "{npz}");
            let time = f64::from_le_bytes(time.data.try_into().unwrap());
            assert_eq!(time, STEPS as f64 * 0.001, "{npz}");
        }
    }
}

/// Runs the binary, killing it (and failing) if it is not done within `limit`.
fn run_within(args: &[&str], limit: Duration) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rigid-crowd"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{args:?} still running after {limit:?}: it went on to the work");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status, stderr)
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn an_unknown_or_missing_extension_is_refused_before_any_work_leaving_no_file() {
    let dir = tempfile::tempdir().unwrap();
    // A checkpoint to resume from, taken after one step of a small run.
    let small = write_scene(dir.path(), 10, 1);
    let checkpoint = dir.path().join("run.ckpt");
    let small_out = dir.path().join("small.csv");
    succeed(&[
        "run",
        small.to_str().unwrap(),
        "--backend",
        "cpu",
        "--out",
        small_out.to_str().unwrap(),
        "--checkpoint",
        checkpoint.to_str().unwrap(),
    ]);
    // Days of work if it were integrated: a million steps of 200,000 bodies.
    let scene = write_scene(dir.path(), 200_000, 1_000_000);
    let scene = scene.to_str().unwrap();
    let before = entries(dir.path());
    for name in ["final.txt", "final", "final.npy.bak", "final.CSV.gz"] {
        let out = dir.path().join(name);
        let out = out.to_str().unwrap();
        let cases: [&[&str]; 3] = [
            &["run", scene, "--backend", "cpu", "--out", out],
            &["run", scene, "--backend", "gpu", "--out", out],
            &[
                "resume",
                checkpoint.to_str().unwrap(),
                "--steps",
                "1000000000",
                "--out",
                out,
            ],
        ];
        for args in cases {
            let (status, stderr) = run_within(args, Duration::from_secs(30));
            assert!(
                status.code().is_some_and(|c| c != 0),
                "{args:?}: {status:?}"
            );
            let line = stderr.trim_end();
            assert!(!line.contains('\n'), "{args:?}: one line: {stderr}");
            assert!(
                line.starts_with("error: --out: ")
                    && line.contains(name)
                    && line.contains(".csv, .npy or .npz"),
                "{args:?}: {line}"
            );
            assert_eq!(entries(dir.path()), before, "{args:?}: no file left behind");
        }
    }
}

#[test]
fn the_summary_line_gives_the_time_of_each_phase() {
    let dir = tempfile::tempdir().unwrap();
    let scene = write_scene(dir.path(), 1_000, STEPS);
    let out = dir.path().join("final.npy");
    let output = rigid_crowd(
        &[
            "run",
            scene.to_str().unwrap(),
            "--backend",
            "cpu",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    let line = stderr.trim_end();
    let (_, phases) = line.rsplit_once("; ").unwrap_or_else(|| panic!("{line}"));
    let seconds: Vec<f64> = phases
        .split(", ")
        .zip(["set-up ", "integration ", "output "])
        .map(|(phase, name)| {
            let value = phase.strip_prefix(name).and_then(|p| p.strip_suffix(" s"));
            value
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("`{phase}` in {line}"))
        })
        .collect();
    assert_eq!(seconds.len(), 3, "{line}");
    assert!(seconds.iter().all(|s| *s >= 0.0), "{line}");
}

/// `--jacobian` and `--sensitivity` add `(bodies, 13, k)` arrays to the `.npz`, the bytes
/// the library's `read_tangents` gives for the same scene; a bad request is one line before
/// any work, and no file is written. A run resumed from a checkpoint carries them on.
#[test]
fn tangents_go_into_the_npz_as_the_library_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("pair.json");
    std::fs::write(
        &scene,
        r#"{ "dt": 0.01, "steps": 40, "integrator": "lie_rk4",
  "forces": [ {"type": "gravity", "acceleration": [0, 0, -9.81]},
              {"type": "spring", "body": 1, "anchor": [0, 0, 0], "attach": [0.1, 0, 0],
               "stiffness": 20, "damping": 0.2},
              {"type": "quadratic_drag", "linear": 0.1, "angular": 0.02} ],
  "bodies": [ {"mass": 2.0, "inertia": [0.5, 0.7, 0.9], "position": [0, 0, 0],
               "orientation": [0.8, 0.2, -0.4, 0.1], "velocity": [1, 0, 0],
               "angular_velocity": [0.3, 2.0, -1.0]},
              {"mass": 1.0, "inertia": [0.2, 0.3, 0.4], "position": [1, 2, 0],
               "orientation": [1, 0, 0, 0], "velocity": [0, 0, 1],
               "angular_velocity": [5, 0.1, 0]} ] }"#,
    )
    .unwrap();
    let scene = scene.to_str().unwrap();
    let mut reference_part = PathBuf::new();
    for (backend_name, backend, descr) in [
        ("gpu", Backend::Gpu, "<f4"),
        ("gpu-f64", Backend::GpuF64, "<f8"),
        ("cpu", Backend::FastCpu, "<f4"),
        ("cpu-ref", Backend::Reference, "<f8"),
    ] {
        let out = dir.path().join(format!("final-{backend_name}.npz"));
        let tangent_args = [
            "--jacobian",
            "--sensitivity",
            "mass,inertia,forces[1].stiffness,forces[0].acceleration",
        ];
        let mut args = vec!["run", scene, "--backend", backend_name, "--out"];
        args.push(out.to_str().unwrap());
        args.extend(tangent_args);
        succeed(&args);

        // The library's tangents on the backend's CPU twin, whose bits a GPU backend's are
        // (tests/suite/gpu_tangents.rs): the file then holds the twin's bits too, and the
        // GPU's tangent kernels compile once in the binary, not again in this process.
        let twin = match backend {
            Backend::Gpu => Backend::FastCpu,
            Backend::GpuF64 => Backend::Reference,
            cpu => cpu,
        };
        let loaded = Scene::load(std::path::Path::new(scene)).unwrap();
        let mut sim = Simulation::new(&loaded.crowd, twin).unwrap();
        let names = [
            "state",
            "mass",
            "inertia",
            "forces[1].stiffness",
            "forces[0].acceleration",
        ];
        sim.start_tangents(&names).unwrap();
        sim.step(40).unwrap();
        let mut archive = zip::ZipArchive::new(std::fs::File::open(&out).unwrap()).unwrap();
        let entries: Vec<String> = archive.file_names().map(str::to_string).collect();
        assert_eq!(
            entries,
            [
                "states.npy",
                "step.npy",
                "time.npy",
                "jacobian.npy",
                "mass.npy",
                "inertia.npy",
                "forces[1].stiffness.npy",
                "forces[0].acceleration.npy"
            ]
        );
        for (name, entry, width) in [
            ("state", "jacobian.npy", 13),
            ("mass", "mass.npy", 1),
            ("inertia", "inertia.npy", 6),
            ("forces[1].stiffness", "forces[1].stiffness.npy", 1),
            ("forces[0].acceleration", "forces[0].acceleration.npy", 3),
        ] {
            let mut bytes = Vec::new();
            archive
                .by_name(entry)
                .unwrap()
                .read_to_end(&mut bytes)
                .unwrap();
            let npy = parse_npy(&bytes);
            assert_eq!(
                (npy.descr.as_str(), &npy.shape[..]),
                (descr, &[2, 13, width][..])
            );
            let mut expected = vec![0.0; 2 * 13 * width];
            sim.read_tangents(name, &mut expected).unwrap();
            let expected: Vec<u8> = match backend {
                // f32 tangents, widened exactly by read_tangents: the file holds the f32s.
                Backend::FastCpu | Backend::Gpu => expected
                    .iter()
                    .flat_map(|&v| (v as f32).to_le_bytes())
                    .collect(),
                _ => expected.iter().flat_map(|v| v.to_le_bytes()).collect(),
            };
            assert_eq!(npy.data, expected, "{backend_name}: {entry}");
        }
        // The spring acts on body 1 alone.
        let mut stiffness = vec![0.0; 26];
        sim.read_tangents("forces[1].stiffness", &mut stiffness)
            .unwrap();
        assert!(stiffness[..13].iter().all(|&v| v == 0.0));
        assert!(stiffness[13..].iter().any(|&v| v != 0.0));

        // Interrupted at step 25 and resumed: the same tangents' bytes as the whole run's.
        let part = dir.path().join(format!("part-{backend_name}.ckpt"));
        let mut args = vec!["run", scene, "--backend", backend_name, "--steps", "25"];
        let part_out = dir.path().join(format!("part-{backend_name}.npz"));
        args.extend(["--out", part_out.to_str().unwrap()]);
        args.extend([
            "--checkpoint",
            part.to_str().unwrap(),
            "--checkpoint-every",
            "25",
        ]);
        args.extend(tangent_args);
        succeed(&args);
        let resumed = dir.path().join(format!("resumed-{backend_name}.npz"));
        let (part, resumed_text) = (part.to_str().unwrap(), resumed.to_str().unwrap());
        succeed(&["resume", part, "--steps", "15", "--out", resumed_text]);
        let mut whole = zip::ZipArchive::new(std::fs::File::open(&out).unwrap()).unwrap();
        let mut again = zip::ZipArchive::new(std::fs::File::open(&resumed).unwrap()).unwrap();
        assert_eq!(
            whole.file_names().collect::<Vec<_>>(),
            again.file_names().collect::<Vec<_>>()
        );
        for entry in entries
            .iter()
            .filter(|e| *e != "step.npy" && *e != "time.npy")
        {
            let read = |archive: &mut zip::ZipArchive<std::fs::File>| {
                let mut bytes = Vec::new();
                archive
                    .by_name(entry)
                    .unwrap()
                    .read_to_end(&mut bytes)
                    .unwrap();
                bytes
            };
            assert_eq!(
                read(&mut whole),
                read(&mut again),
                "{backend_name}: {entry}"
            );
        }
        reference_part = dir.path().join(format!("part-{backend_name}.ckpt"));
    }
    let part = reference_part.to_str().unwrap();
    let output = rigid_crowd(&["resume", part, "--out", "resumed.csv"], &[]);
    assert_eq!(
        common::error_line(&output),
        "error: --out: the checkpoint carries tangents, which only `.npz` output holds (--out is resumed.csv)"
    );

    let refused = dir.path().join("refused.npz");
    let refused_text = refused.to_str().unwrap();
    for (extra, expected) in [
        (
            vec!["--sensitivity", "forces[1].stifness", "--out", refused_text],
            "error: --sensitivity: `forces[1].stifness`: a spring force has no number `stifness`; its numbers are anchor, attach, stiffness, damping",
        ),
        (
            vec!["--sensitivity", "forces[3].linear", "--out", refused_text],
            "error: --sensitivity: `forces[3].linear`: there is no forces[3] (the crowd has 3 forces)",
        ),
        (
            vec!["--jacobian", "--out", "refused.csv"],
            "error: --jacobian: needs `.npz` output, which holds the arrays beside the states (--out is refused.csv)",
        ),
    ] {
        let mut args = vec!["run", scene];
        args.extend(&extra);
        if !extra.contains(&"--backend") {
            args.extend(["--backend", "cpu-ref"]);
        }
        let output = Command::new(env!("CARGO_BIN_EXE_rigid-crowd"))
            .args(&args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(common::error_line(&output), expected);
        assert!(!refused.exists() && !dir.path().join("refused.csv").exists());
    }
    // Through plane contacts (a sphere and a box already touching the floor): each GPU
    // backend writes the bytes of the CPU backend of its precision.
    let floor = dir.path().join("floor.json");
    let text = std::fs::read_to_string(scene)
        .unwrap()
        .replacen(
            "\"forces\"",
            r#""planes": [{"point": [0, 0, -0.2], "normal": [0, 0, 1], "restitution": 0.6, "friction": 0.4}], "forces""#,
            1,
        )
        .replace(
            r#""inertia": [0.5, 0.7, 0.9]"#,
            r#""shape": {"sphere": 0.3}"#,
        )
        .replace(
            r#""inertia": [0.2, 0.3, 0.4]"#,
            r#""shape": {"box": [1, 0.5, 0.3]}"#,
        );
    std::fs::write(&floor, text).unwrap();
    let floor = floor.to_str().unwrap();
    let contact_entries = [
        "jacobian.npy",
        "planes[0].point.npy",
        "planes[0].normal.npy",
        "planes[0].restitution.npy",
        "planes[0].friction.npy",
    ];
    let mut by_backend = Vec::new();
    for backend in ["cpu-ref", "gpu-f64", "cpu", "gpu"] {
        let out = dir.path().join(format!("floor-{backend}.npz"));
        let args = [
            "run",
            floor,
            "--backend",
            backend,
            "--jacobian",
            "--sensitivity",
            "planes[0].point,planes[0].normal,planes[0].restitution,planes[0].friction",
            "--out",
            out.to_str().unwrap(),
        ];
        succeed(&args);
        let mut archive = zip::ZipArchive::new(std::fs::File::open(&out).unwrap()).unwrap();
        let arrays: Vec<Vec<u8>> = contact_entries
            .iter()
            .map(|entry| {
                let mut bytes = Vec::new();
                archive
                    .by_name(entry)
                    .unwrap()
                    .read_to_end(&mut bytes)
                    .unwrap();
                bytes
            })
            .collect();
        by_backend.push(arrays);
    }
    for (entry, i) in contact_entries.iter().zip(0..) {
        assert_eq!(
            by_backend[1][i], by_backend[0][i],
            "gpu-f64 against cpu-ref: {entry}"
        );
        assert_eq!(
            by_backend[3][i], by_backend[2][i],
            "gpu against cpu: {entry}"
        );
    }
    // The floor's point moved the bodies it held up.
    let point = parse_npy(&by_backend[0][1]);
    assert!(
        point
            .data
            .chunks(8)
            .any(|v| f64::from_le_bytes(v.try_into().unwrap()) != 0.0)
    );
}
