//! Every kind of bad input gets a one-line error naming the field, a non-zero exit, no panic,
//! and never a half-written or clobbered output file.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::rigid_crowd;
use rigid_crowd::gpu::GpuOptions;
use rigid_crowd::{Crowd, CrowdSpec, Scene, Simulation};

fn example_scene() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/example.json"))
        .unwrap()
}

/// The example scene with one substring replaced (which must occur).
fn edited(from: &str, to: &str) -> String {
    let scene = example_scene();
    assert!(scene.contains(from), "example scene lacks {from:?}");
    scene.replacen(from, to, 1)
}

fn scene_error(text: &str) -> String {
    match Scene::from_json(text) {
        Ok(_) => panic!("accepted a bad scene:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_example_scene_is_valid() {
    let scene = Scene::from_json(&example_scene()).unwrap();
    assert_eq!(scene.crowd.bodies.len(), 2);
    assert_eq!(scene.steps, 2000);
}

#[test]
fn each_bad_scene_value_is_named_in_the_error() {
    let cases: &[(&str, &str, &str)] = &[
        (
            r#""mass": 2.0"#,
            r#""mass": -1"#,
            "bodies[0].mass: must be a finite number > 0",
        ),
        (
            r#""mass": 2.0"#,
            r#""mass": 0"#,
            "bodies[0].mass: must be a finite number > 0",
        ),
        (
            "[0.5, 0.7, 0.9]",
            "[0.5, 0.5, 1.1]",
            "bodies[0].inertia: is physically impossible",
        ),
        (
            "[0.5, 0.7, 0.9]",
            "[[1, 0.1, 0], [0, 1, 0], [0, 0, 1]]",
            "bodies[0].inertia: must be symmetric",
        ),
        (
            "[0.5, 0.7, 0.9]",
            "[[1, 0, 0], [0, -1, 0], [0, 0, 1]]",
            "bodies[0].inertia: must be positive definite",
        ),
        (
            "[0.5, 0.7, 0.9]",
            "[0.5, 0, 0.9]",
            "bodies[0].inertia: must be positive definite",
        ),
        (
            "[0.5, 0.7, 0.9]",
            r#""heavy""#,
            "bodies[0].inertia: expected 3 principal moments",
        ),
        (
            "[1, 0, 0, 0]",
            "[0, 0, 0, 0]",
            "bodies[0].orientation: must not be zero-length",
        ),
        (r#""dt": 0.001"#, r#""dt": 0"#, "dt: must be > 0"),
        (r#""dt": 0.001"#, r#""dt": -0.5"#, "dt: must be > 0"),
        (
            r#""rk4""#,
            r#""rk5""#,
            "integrator: unknown integrator `rk5`",
        ),
        (
            r#""gravity""#,
            r#""magnet""#,
            "forces[0].type: unknown variant `magnet`",
        ),
        (
            r#""box""#,
            r#""cone""#,
            "bodies[1].shape: unknown variant `cone`",
        ),
        (
            r#""body": 1"#,
            r#""body": 2"#,
            "forces[3].body: names body 2, but the scene has 2 bodies",
        ),
        (
            r#""stiffness": 20"#,
            r#""stiffness": 1e999"#,
            "forces[3].stiffness: number out of range",
        ),
        (
            r#""stiffness": 20"#,
            r#""stiffness": -20"#,
            "forces[3].stiffness: must be >= 0",
        ),
        (
            r#""position": [0, 0, 0]"#,
            r#""position": [0, 0, 1e39]"#,
            "bodies[0].position[2]: 1000000000000000000000000000000000000000 is out of range",
        ),
        (
            r#""angular_velocity": [0, 0, 3]"#,
            r#""angular_velocity": [0, "fast", 3]"#,
            "bodies[0].angular_velocity[1]: invalid type",
        ),
        (r#""steps": 2000"#, r#""steps": -3"#, "steps: invalid value"),
        (
            r#""mass": 24,"#,
            r#""mass": 24, "inertia": [1, 1, 1],"#,
            "bodies[1]: give either `inertia` or `shape`, not both",
        ),
        (
            r#""mass": 24, "shape": {"box": [6, 1, 4]}"#,
            r#""mass": 24"#,
            "bodies[1]: needs `inertia` or `shape`",
        ),
        (
            r#"{"box": [6, 1, 4]}"#,
            r#"{"box": [6, 0, 4]}"#,
            "bodies[1].shape.box[1]: must be a finite number > 0 (got 0)",
        ),
        (
            r#""mass": 2.0,"#,
            r#""mass": 2.0, "colour": "red","#,
            "bodies[0].colour: unknown field `colour`",
        ),
        (
            r#""steps": 2000,"#,
            r#""steps": 2000, "version": 2,"#,
            "version: unsupported scene version 2",
        ),
        (r#""linear": 0.3,"#, r#""linear": 0.3,,"#, "forces[1]"),
    ];
    for &(from, to, expected) in cases {
        let message = scene_error(&edited(from, to));
        assert!(
            message.starts_with(expected),
            "{from} -> {to}: got `{message}`, expected `{expected}...`"
        );
        assert!(!message.contains('\n'), "one line: {message}");
    }
}

#[test]
fn bad_quadratic_drag_coefficients_are_named() {
    let scene = |drag: &str| {
        format!(
            r#"{{"dt": 0.001, "steps": 1, "forces": [{{"type": "gravity", "acceleration": [0, 0, -9.81]}}, {drag}],
            "bodies": [{{"mass": 1, "inertia": [1, 1, 1]}}]}}"#
        )
    };
    let cases = [
        (
            r#"{"type": "quadratic_drag", "linear": -0.5}"#,
            "forces[1].linear: must be >= 0 (got -0.5)",
        ),
        (
            r#"{"type": "quadratic_drag", "linear": 0.5, "angular": -2}"#,
            "forces[1].angular: must be >= 0 (got -2)",
        ),
        (
            r#"{"type": "quadratic_drag", "linear": "a lot"}"#,
            "forces[1]",
        ),
        (
            r#"{"type": "quadratic_drag", "linear": 0.5, "quadratic": 1}"#,
            "forces[1]",
        ),
    ];
    for (drag, expected) in cases {
        let message = scene_error(&scene(drag));
        assert!(message.starts_with(expected), "{drag}: got `{message}`");
        assert!(!message.contains('\n'), "one line: {message}");
    }
    let fine = Scene::from_json(&scene(
        r#"{"type": "quadratic_drag", "linear": 0.5, "angular": 0.1}"#,
    ));
    assert!(fine.is_ok(), "{:?}", fine.err());
}

#[test]
fn malformed_and_truncated_json_is_reported_with_its_position() {
    let text = example_scene();
    for cut in [1, text.len() / 3, text.len() - 2] {
        let message = scene_error(&text[..cut]);
        assert!(message.contains("line"), "{message}");
    }
    assert!(
        scene_error("{} trailing").starts_with("scene:"),
        "missing fields first"
    );
    assert!(scene_error(r#"{"dt": 1, "steps": 1} x"#).starts_with("scene: trailing characters"));
}

#[test]
fn a_bad_crowd_recipe_is_named() {
    let recipe = r#"{"dt": 0.001, "steps": 1, "crowd": {"count": 10, "mass": [2, 1]}}"#;
    assert!(scene_error(recipe).starts_with("crowd.mass: must be a range"));
    let recipe = r#"{"dt": 0.001, "steps": 1, "crowd": {"count": 1000000000000000}}"#;
    assert!(scene_error(recipe).starts_with("crowd.count: 1000000000000000 bodies do not fit"));
    let recipe = r#"{"dt": 0.001, "steps": 1, "crowd": {"count": 10, "shapes": []}}"#;
    assert!(scene_error(recipe).starts_with("crowd.shapes: must name at least one shape"));
}

#[test]
fn bad_gpu_kernel_options_are_named() {
    let ctx = common::gpu();
    let crowd = Crowd::new(CrowdSpec::new(10, 1).generate().unwrap(), 1e-3);
    let largest = ctx.limits().max_compute_invocations_per_workgroup;
    let options = |workgroup_size, steps_per_dispatch| GpuOptions {
        workgroup_size,
        steps_per_dispatch,
        ..GpuOptions::default()
    };
    let cases = [
        (options(0, 1), "workgroup_size: must be between 1 and"),
        (
            options(largest + 1, 1),
            "workgroup_size: must be between 1 and",
        ),
        (options(64, 0), "steps_per_dispatch: must be at least 1"),
    ];
    for (options, expected) in cases {
        match Simulation::gpu_with_options(&crowd, ctx, options) {
            Err(e) => assert!(e.to_string().starts_with(expected), "{e}"),
            Ok(_) => panic!("{options:?} was accepted"),
        }
    }
}

// ----- the command line -----

/// The last stderr line of a failed run: exactly one `error:` line, no panic.
fn failure(output: &Output) -> String {
    common::error_line(output)
}

/// `rigid-crowd run SCENE --backend cpu --out OUT`.
fn run_on_cpu(scene: &str, out: &str) -> Output {
    rigid_crowd(&["run", scene, "--backend", "cpu", "--out", out], &[])
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_failed_run_leaves_an_existing_output_untouched() {
    let dir = temp_dir();
    let out = write(dir.path(), "final.csv", "precious results\n");
    let bad = write(
        dir.path(),
        "bad.json",
        &edited(r#""mass": 2.0"#, r#""mass": -1"#),
    );
    let output = run_on_cpu(bad.to_str().unwrap(), out.to_str().unwrap());
    let line = failure(&output);
    assert!(
        line.starts_with("error: ")
            && line.ends_with("bodies[0].mass: must be a finite number > 0 (got -1)"),
        "{line}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious results\n");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        2,
        "no temporary file left behind: {leftovers:?}"
    );
}

#[test]
fn a_missing_scene_file_is_named() {
    let dir = temp_dir();
    let out = dir.path().join("o.csv");
    let output = run_on_cpu("no/such/scene.json", out.to_str().unwrap());
    let line = failure(&output);
    assert!(
        line.starts_with("error: no/such/scene.json: No such file"),
        "{line}"
    );
    assert!(!out.exists());
}

#[test]
fn an_unwritable_output_fails_before_running() {
    let dir = temp_dir();
    let scene = write(dir.path(), "s.json", &example_scene());
    for out in ["/nonexistent-dir/final.csv", dir.path().to_str().unwrap()] {
        let output = run_on_cpu(scene.to_str().unwrap(), out);
        let line = failure(&output);
        assert!(line.starts_with(&format!("error: {out}: ")), "{line}");
    }
}

#[test]
fn bad_overrides_and_flags_are_named() {
    let dir = temp_dir();
    let scene = write(dir.path(), "s.json", &example_scene());
    let out = dir.path().join("o.csv");
    let (scene, out) = (scene.to_str().unwrap(), out.to_str().unwrap());
    let cases: &[(&[&str], &str)] = &[
        (
            &["--dt", "-1"],
            "error: --dt: must be a finite number > 0 (got -1)",
        ),
        (
            &["--dt", "0"],
            "error: --dt: must be a finite number > 0 (got 0)",
        ),
        (
            &["--integrator", "leapfrog"],
            "error: --integrator: unknown integrator `leapfrog`",
        ),
        (
            &["--backend", "tpu"],
            "error: --backend: unknown backend `tpu`",
        ),
        (&["--steps", "-4"], "error: "),
        (
            &["--steps", "many"],
            "error: invalid value 'many' for '--steps <STEPS>'",
        ),
    ];
    for (flags, expected) in cases {
        let mut args = vec!["run", scene, "--out", out];
        args.extend_from_slice(flags);
        if !flags.contains(&"--backend") {
            args.extend(["--backend", "cpu"]);
        }
        let line = failure(&rigid_crowd(&args, &[]));
        assert!(line.starts_with(expected), "{flags:?}: {line}");
        assert!(!Path::new(out).exists());
    }
}

#[test]
fn gpu_backend_without_an_adapter_says_how_to_get_one() {
    let dir = temp_dir();
    let scene = write(dir.path(), "s.json", &example_scene());
    let out = dir.path().join("o.csv");
    let args = [
        "run",
        scene.to_str().unwrap(),
        "--backend",
        "gpu",
        "--out",
        out.to_str().unwrap(),
    ];
    // No Vulkan driver at all.
    let line = failure(&rigid_crowd(
        &args,
        &[
            ("VK_ICD_FILENAMES", "/nonexistent.json"),
            ("VK_DRIVER_FILES", "/nonexistent.json"),
        ],
    ));
    assert!(line.starts_with("error: no GPU adapter found"), "{line}");
    assert!(line.contains("mesa-vulkan-drivers"), "{line}");
    // An adapter name that matches nothing.
    let line = failure(&rigid_crowd(&args, &[("WGPU_ADAPTER_NAME", "no-such-gpu")]));
    assert!(
        line.starts_with("error: WGPU_ADAPTER_NAME=`no-such-gpu` matches no adapter"),
        "{line}"
    );
    assert!(!out.exists());
}

/// A scene of one sphere and the given forces (a JSON array).
fn scene_with_forces(forces: &str) -> String {
    format!(
        r#"{{"dt": 0.001, "steps": 10,
            "bodies": [{{"mass": 1, "inertia": [1, 1, 1]}}],
            "forces": {forces}}}"#
    )
}

#[test]
fn each_bad_value_of_the_newer_forces_is_named() {
    let cases: &[(&str, &str)] = &[
        (
            r#"[{"type": "attractor", "centre": [0, 0, 1e39], "strength": 1}]"#,
            "forces[0].centre[2]: 1000000000000000000000000000000000000000 is out of range",
        ),
        (
            r#"[{"type": "attractor", "centre": [0, 0, 0], "strength": 1, "softening": -1}]"#,
            "forces[0].softening: must be >= 0 (got -1)",
        ),
        (
            r#"[{"type": "attractor", "centre": [0, 0, 0]}]"#,
            "forces[0]: missing field `strength`",
        ),
        (
            r#"[{"type": "attractor", "centre": [0, 0, 0], "strength": 1e39}]"#,
            "forces[0].strength: 1000000000000000000000000000000000000000 is out of range",
        ),
        (
            r#"[{"type": "thrust", "force": [1, 2]}]"#,
            "forces[0].force: invalid length 2, expected an array of length 3",
        ),
        (
            r#"[{"type": "thrust", "torque": [0, -1e39, 0]}]"#,
            "forces[0].torque[1]: -1000000000000000000000000000000000000000 is out of range",
        ),
        (
            r#"[{"type": "sinusoidal", "force": [1, 0, 0], "amplitude": 1, "frequency": -2}]"#,
            "forces[0].frequency: must be >= 0 (got -2)",
        ),
        (
            r#"[{"type": "sinusoidal", "force": [1, 0, 0], "frequency": 2}]"#,
            "forces[0]: missing field `amplitude`",
        ),
        (
            r#"[{"type": "sinusoidal", "amplitude": 1, "frequency": 1, "phase": 1e40}]"#,
            "forces[0].phase: 10000000000000000000000000000000000000000 is out of range",
        ),
        (
            r#"[{"type": "sinusoidal", "amplitude": 1, "frequency": 1, "offset": 1e40}]"#,
            "forces[0].offset: 10000000000000000000000000000000000000000 is out of range",
        ),
        (
            r#"[{"type": "keyframed", "force": [1, 0, 0], "keyframes": []}]"#,
            "forces[0].keyframes: needs at least one [t, value] keyframe",
        ),
        (
            r#"[{"type": "keyframed", "force": [1, 0, 0], "keyframes": [[0, 1], [2, 3], [2, 4]]}]"#,
            "forces[0].keyframes[2]: keyframe times must increase strictly (got 2 after 2)",
        ),
        (
            r#"[{"type": "keyframed", "keyframes": [[0, 1], [1, 1e39]]}]"#,
            "forces[0].keyframes[1][1]: 1000000000000000000000000000000000000000 is out of range",
        ),
        (
            r#"[{"type": "keyframed", "keyframes": [[0, 1, 2]]}]"#,
            "forces[0].keyframes[0]: invalid length 3, expected fewer elements in array",
        ),
        (
            r#"[{"type": "keyframed", "force": [1, 0, 0]}]"#,
            "forces[0]: missing field `keyframes`",
        ),
        (
            r#"[{"type": "keyframed", "keyframes": [[0, 1]], "body": 1}]"#,
            "forces[0].body: names body 1, but the scene has 1 bodies",
        ),
        (
            r#"[{"type": "custom", "wgsl_file": "/nonexistent/force.wgsl"}]"#,
            "forces[0].wgsl_file: cannot read /nonexistent/force.wgsl:",
        ),
        (
            r#"[{"type": "custom"}]"#,
            "forces[0]: missing field `wgsl_file`",
        ),
    ];
    for &(forces, expected) in cases {
        let message = scene_error(&scene_with_forces(forces));
        assert!(
            message.starts_with(expected),
            "{forces}: got `{message}`, expected `{expected}...`"
        );
        assert!(!message.contains('\n'), "one line: {message}");
    }
}

#[test]
fn two_custom_forces_from_different_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.wgsl"), "// a").unwrap();
    std::fs::write(dir.path().join("b.wgsl"), "// b").unwrap();
    let path = dir.path().join("scene.json");
    let forces = r#"[{"type": "custom", "wgsl_file": "a.wgsl"},
                     {"type": "custom", "wgsl_file": "a.wgsl", "body": 0},
                     {"type": "custom", "wgsl_file": "b.wgsl"}]"#;
    std::fs::write(&path, scene_with_forces(forces)).unwrap();
    let message = Scene::load(&path).unwrap_err().to_string();
    assert_eq!(
        message,
        "forces[2].wgsl_file: a crowd has one custom force, and forces[0].wgsl_file already names another WGSL file"
    );
}

#[test]
fn a_bad_start_step_is_named() {
    let scene = r#"{"dt": 0.001, "steps": 1, "start_step": 281474976710656}"#;
    assert_eq!(
        scene_error(scene),
        "start_step: must be < 2^48 (got 281474976710656)"
    );
    let scene = r#"{"dt": 0.001, "steps": 1, "start_step": -1}"#;
    assert!(scene_error(scene).starts_with("start_step: invalid value"));
}

#[test]
fn library_forces_that_refer_to_missing_tables_or_custom_forces_are_named() {
    use rigid_crowd::glam::DVec3;
    use rigid_crowd::{Force, ForceKind};
    let bodies = CrowdSpec::new(3, 1).generate().unwrap();
    let mut crowd = Crowd::new(bodies, 1e-3);
    crowd.add_keyframes(vec![[0.0, 1.0]]);
    crowd.forces.push(Force::on_all(ForceKind::Keyframed {
        force: DVec3::X,
        torque: DVec3::ZERO,
        table: 1,
    }));
    assert_eq!(
        crowd.validate().unwrap_err().to_string(),
        "forces[0].table: names keyframe table 1, but the crowd has 1"
    );
    crowd.forces[0] = Force::on_body(2, ForceKind::Custom);
    assert_eq!(
        crowd.validate().unwrap_err().to_string(),
        "forces[0]: a custom force needs the crowd's custom_force (Crowd::with_custom_force)"
    );
    crowd.forces.clear();
    crowd.keyframes[0] = vec![[1.0, 1.0], [0.5, f64::NAN]];
    assert_eq!(
        crowd.validate().unwrap_err().to_string(),
        "keyframes[0][1][1]: must be finite (got NaN)"
    );
    crowd.keyframes[0] = vec![[1.0, 1.0], [0.5, 2.0]];
    assert_eq!(
        crowd.validate().unwrap_err().to_string(),
        "keyframes[0][1]: keyframe times must increase strictly (got 0.5 after 1)"
    );
    for backend in [
        rigid_crowd::Backend::Reference,
        rigid_crowd::Backend::FastCpu,
    ] {
        let e = Simulation::new(&crowd, backend).unwrap_err().to_string();
        assert!(e.starts_with("keyframes[0][1]: "), "{e}");
    }
}
