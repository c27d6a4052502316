//! A force law registered under a name is a force kind like a built-in one: a scene names it
//! and sets its numbers, they are checked with the built-in kinds' messages, its derivatives
//! along them come from the one definition on every backend (the twins bit for bit), and a
//! checkpoint carries them.

use std::path::Path;

use crate::common;

use rigid_crowd::glam::DVec3;
use rigid_crowd::gpu::{DeviceCount, GpuContext};
use rigid_crowd::{
    Backend, Checkpoint, Force, ForceInput, ForceKind, ForceLaw, ForceLaws, Load,
    ParameterDeclaration, ParameterShape, Real, Scene, Simulation,
};

#[path = "../../examples/force_law.rs"]
pub(crate) mod force_law;

fn scene() -> Scene {
    Scene::from_json_with_laws(force_law::SCENE, Path::new(""), &force_law::laws().unwrap())
        .unwrap()
}

fn simulation(scene: &Scene, backend: Backend) -> Simulation {
    Simulation::on_backend(&scene.crowd, backend, common::gpu()).unwrap()
}

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// The largest difference of `a` from `b`, relative where `b` exceeds 1.
fn largest_difference(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    (a.iter().zip(b))
        .map(|(x, y)| (x - y).abs() / y.abs().max(1.0))
        .fold(0.0, f64::max)
}

/// The example's law, named by a scene with two forces of it: the sensitivities along both
/// of its numbers are the Richardson differences of whole runs to 1e-8 in f64 (4.8e-12
/// measured); `gpu-f64` gives `cpu-ref`'s bits and `gpu` `cpu`'s, states and columns.
#[test]
fn a_registered_laws_sensitivities_are_differences_of_runs_on_every_backend() {
    let scene = scene();
    let reference = force_law::differences(&scene).unwrap();
    // The columns are far from zero: a law that did not see its numbers would fail.
    assert!(reference.iter().map(|c| c.abs()).fold(0.0, f64::max) > 0.1);
    let mut columns = Vec::new();
    let mut states = Vec::new();
    for backend in Backend::ALL {
        let mut sim = simulation(&scene, backend);
        columns.push(force_law::sensitivities(&mut sim, scene.steps).unwrap());
        states.push(common::state_bits(&sim.bodies().unwrap()));
    }
    let [cpu_ref, cpu, gpu, gpu_f64] = [0, 1, 2, 3].map(|i| Backend::ALL[i]);
    assert_eq!([cpu_ref, cpu, gpu, gpu_f64], Backend::ALL);
    for (backend, tolerance) in [(0, 1e-8), (3, 1e-8), (1, 1e-4), (2, 1e-4)] {
        let largest = largest_difference(&columns[backend], &reference);
        assert!(
            largest <= tolerance,
            "{:?}: {largest:e} from the differences",
            Backend::ALL[backend]
        );
    }
    assert_eq!(
        bits(&columns[3]),
        bits(&columns[0]),
        "gpu-f64 against cpu-ref"
    );
    assert_eq!(bits(&columns[2]), bits(&columns[1]), "gpu against cpu");
    assert_eq!(states[3], states[0], "gpu-f64 against cpu-ref");
    assert_eq!(states[2], states[1], "gpu against cpu");
}

/// A law written as the built-in spring is, with the spring's four numbers declared: a scene
/// of it runs as the same scene with built-in springs, to the bit on every backend (the same
/// operations in the same order): each number reaches the law in its lane, and a law's force
/// costs no rounding a built-in one does not.
struct SpringLaw;

impl ForceLaw for SpringLaw {
    fn load<R: Real>(&self, b: &ForceInput<R>) -> Load<R> {
        let [anchor, attach] = b.parameters.vectors;
        let [stiffness, damping, ..] = b.parameters.scalars;
        let arm = b.orientation.to_rotation().mul_vec(attach);
        let stretch = b.position + arm - anchor;
        let attach_velocity = b.velocity + b.angular_velocity.cross(arm);
        let applied = -(stretch * stiffness) - attach_velocity * damping;
        Load {
            force: applied,
            torque: arm.cross(applied),
        }
    }

    fn parameters(&self) -> &'static [ParameterDeclaration] {
        const {
            &[
                ParameterDeclaration::new("anchor", ParameterShape::Vector, "m").required(),
                ParameterDeclaration::new("attach", ParameterShape::Vector, "m"),
                ParameterDeclaration::new("stiffness", ParameterShape::Number, "N/m")
                    .non_negative()
                    .required(),
                ParameterDeclaration::new("damping", ParameterShape::Number, "N s/m")
                    .non_negative(),
            ]
        }
    }
}

fn spring_scene(kind: &str) -> Scene {
    let text = format!(
        r#"{{"dt": 0.01, "steps": 50, "integrator": "rk4",
          "forces": [
            {{"type": "{kind}", "anchor": [0, 0, 1], "attach": [0.1, 0, 0.2], "stiffness": 20,
              "damping": 0.3}},
            {{"type": "{kind}", "body": 2, "anchor": [1, 0, 0], "stiffness": 5}}
          ],
          "crowd": {{"count": 5, "seed": 3}}}}"#
    );
    let laws = ForceLaws::new().with("spring_law", SpringLaw).unwrap();
    Scene::from_json_with_laws(&text, Path::new(""), &laws).unwrap()
}

#[test]
fn a_law_with_a_built_in_kinds_numbers_runs_as_that_kind() {
    let (law, built_in) = (spring_scene("spring_law"), spring_scene("spring"));
    assert!(matches!(law.crowd.forces[1].kind, ForceKind::Law { .. }));
    for backend in Backend::ALL {
        let end = |scene: &Scene| {
            let mut sim = simulation(scene, backend);
            sim.step(scene.steps).unwrap();
            sim.bodies().unwrap()
        };
        let (by_law, by_kind) = (end(&law), end(&built_in));
        assert_eq!(
            common::state_bits(&by_law),
            common::state_bits(&by_kind),
            "{backend:?}"
        );
    }
}

/// The message for a bad value, a missing number, an unknown field or kind: a law's as a
/// built-in kind's, from the same reader.
#[test]
fn a_laws_bad_numbers_get_the_built_in_kinds_messages() {
    let laws = ForceLaws::new().with("spring_law", SpringLaw).unwrap();
    let error = |kind: &str, fields: &str| -> String {
        let text = format!(
            r#"{{"dt": 0.01, "steps": 1, "forces": [{{"type": "{kind}"{fields}}}],
              "crowd": {{"count": 2, "seed": 1}}}}"#
        );
        Scene::from_json_with_laws(&text, Path::new(""), &laws)
            .unwrap_err()
            .to_string()
    };
    for fields in [
        r#", "anchor": [0, 0, 1], "stiffness": -2"#,
        r#", "anchor": [0, 0, 1], "stiffness": 2, "damping": -1"#,
        r#", "anchor": [0, 0, "a"], "stiffness": 2"#,
        r#", "anchor": [0, 0, 1]"#,
        r#", "stiffness": 2"#,
        r#", "anchor": [0, 0, 1], "stiffness": 2, "body": 7"#,
    ] {
        let (by_law, by_kind) = (error("spring_law", fields), error("spring", fields));
        assert_eq!(by_law, by_kind, "{fields}");
        assert!(!by_law.contains('\n'), "{by_law}");
    }
    assert_eq!(
        error(
            "spring_law",
            r#", "anchor": [0, 0, 1], "stiffness": 2, "stifness": 1"#
        ),
        "forces[0].stifness: unknown field `stifness`, expected one of `body`, `anchor`, \
         `attach`, `stiffness`, `damping`"
    );
    let unknown = error("sprung", "");
    assert!(
        unknown.starts_with("forces[0].type: unknown variant `sprung`"),
        "{unknown}"
    );
    assert!(unknown.ends_with("`custom`, `spring_law`"), "{unknown}");
}

/// A law written as the built-in linear drag is, with its two numbers.
struct DragLaw;

impl ForceLaw for DragLaw {
    fn load<R: Real>(&self, b: &ForceInput<R>) -> Load<R> {
        let [linear, angular, ..] = b.parameters.scalars;
        Load {
            force: -(b.velocity * linear),
            torque: -(b.angular_velocity * angular),
        }
    }

    fn parameters(&self) -> &'static [ParameterDeclaration] {
        const {
            &[
                ParameterDeclaration::new("linear", ParameterShape::Number, "N s/m").non_negative(),
                ParameterDeclaration::new("angular", ParameterShape::Number, "N m s")
                    .non_negative(),
            ]
        }
    }
}

/// Both laws, registered in the order opposite to the one a crowd of [`two_law_scene`]
/// numbers them in (by first use): a law's number in the crowd is not its registration's.
fn two_laws() -> ForceLaws {
    (ForceLaws::new().with("spring_law", SpringLaw))
        .and_then(|laws| laws.with("drag_law", DragLaw))
        .unwrap()
}

/// A crowd with forces of two laws, every body's and one body's own, several of one law on
/// one body; with `drag` and `spring` the built-in kinds, the same forces in the same order
/// (each group is ordered by kind, and the built-in drag comes before the spring).
fn two_law_scene(drag: &str, spring: &str) -> Scene {
    let text = format!(
        r#"{{"dt": 0.01, "steps": 50, "integrator": "rk4",
          "forces": [
            {{"type": "gravity", "acceleration": [0, 0, -9.81]}},
            {{"type": "{drag}", "linear": 0.4, "angular": 0.05}},
            {{"type": "{spring}", "anchor": [0, 0, 1], "attach": [0.1, 0, 0.2],
              "stiffness": 20, "damping": 0.3}},
            {{"type": "{drag}", "body": 2, "linear": 1.5}},
            {{"type": "{spring}", "body": 2, "anchor": [1, 0, 0], "stiffness": 5}},
            {{"type": "{drag}", "body": 2, "angular": 0.7}},
            {{"type": "{spring}", "body": 4, "anchor": [0, 1, 0], "stiffness": 3,
              "damping": 0.1}}
          ],
          "crowd": {{"count": 5, "seed": 3}}}}"#
    );
    Scene::from_json_with_laws(&text, Path::new(""), &two_laws()).unwrap()
}

/// The tangents along numbers of both laws.
const TWO_LAW_TANGENTS: [&str; 5] = [
    "forces[1].angular",
    "forces[2].stiffness",
    "forces[4].anchor",
    "forces[5].angular",
    "forces[6].damping",
];

/// The states after the scene's steps, and the tangents along [`TWO_LAW_TANGENTS`].
fn run_with_tangents(scene: &Scene, backend: Backend) -> (Vec<u64>, Vec<u64>) {
    run_with_tangents_on(scene, simulation(scene, backend))
}

/// [`run_with_tangents`] of `sim`, a simulation of `scene`.
fn run_with_tangents_on(scene: &Scene, mut sim: Simulation) -> (Vec<u64>, Vec<u64>) {
    sim.start_tangents(&TWO_LAW_TANGENTS).unwrap();
    sim.step(scene.steps).unwrap();
    let mut columns = Vec::new();
    for name in TWO_LAW_TANGENTS {
        let width = if name.ends_with("anchor") { 3 } else { 1 };
        let mut column = vec![0.0; scene.crowd.bodies.len() * 13 * width];
        sim.read_tangents(name, &mut column).unwrap();
        columns.extend(column);
    }
    (common::state_bits(&sim.bodies().unwrap()), bits(&columns))
}

/// A crowd runs several registered laws, each force with its own: a scene of a drag law and a
/// spring law runs as the same scene of the built-in kinds, states and tangents along both
/// laws' numbers to the bit, on every backend (so the twins agree as the built-in kinds do),
/// and on `gpu` over two devices as on one.
/// A force given the other law, or the laws' numbers swapped, would not.
#[test]
fn a_crowd_runs_several_laws_each_force_with_its_own() {
    let (laws, built_in) = (
        two_law_scene("drag_law", "spring_law"),
        two_law_scene("linear_drag", "spring"),
    );
    let custom = laws.crowd.custom_force.as_ref().unwrap();
    let numbered: Vec<&str> = (custom.laws())
        .map(|law| law.law_declaration().unwrap().name)
        .collect();
    assert_eq!(numbered, ["drag_law", "spring_law"]);
    let mut runs = Vec::new();
    for backend in Backend::ALL {
        let (by_law, by_kind) = (
            run_with_tangents(&laws, backend),
            run_with_tangents(&built_in, backend),
        );
        assert!(by_law.1.iter().any(|&b| b != 0), "{backend:?}");
        assert_eq!(by_law.0, by_kind.0, "{backend:?}: states");
        assert_eq!(by_law.1, by_kind.1, "{backend:?}: tangents");
        runs.push(by_law);
    }
    assert_eq!(runs[3], runs[0], "gpu-f64 against cpu-ref");
    assert_eq!(runs[2], runs[1], "gpu against cpu");
    // Spread over two devices, body 2's own forces on one and body 4's on the other.
    let devices = GpuContext::open_devices(DeviceCount::Count(2)).unwrap();
    let spread = Simulation::on_devices(&laws.crowd, Backend::Gpu, &devices).unwrap();
    assert_eq!(
        run_with_tangents_on(&laws, spread),
        runs[2],
        "gpu on two devices"
    );
}

/// A crowd runs a custom force written in WGSL or laws, not both; a force whose law the crowd
/// does not run is refused naming the laws it runs; a name is registered once.
#[test]
fn a_crowds_laws_are_checked_and_a_name_is_registered_once() {
    struct Other;
    impl ForceLaw for Other {
        fn load<R: Real>(&self, b: &ForceInput<R>) -> Load<R> {
            Load {
                force: b.velocity,
                torque: b.angular_velocity,
            }
        }
    }
    let laws = two_laws().with("other", Other).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("push.wgsl"),
        "fn custom_force(position: vec3<real>, orientation: vec4<real>, velocity: vec3<real>, \
         angular_velocity: vec3<real>, mass: real, time: real, body: u32) -> Load {\n\
         return Load(vec3<real>(real(0.0)), vec3<real>(real(0.0)));\n}\n",
    )
    .unwrap();
    let text = r#"{"dt": 0.01, "steps": 1, "forces": [
        {"type": "custom", "wgsl_file": "push.wgsl"},
        {"type": "spring_law", "anchor": [0, 0, 1], "stiffness": 2}],
        "crowd": {"count": 2, "seed": 1}}"#;
    let error = Scene::from_json_with_laws(text, dir.path(), &laws).unwrap_err();
    assert_eq!(
        error.to_string(),
        "forces[1].type: a crowd has one custom force or force law, and forces[0].wgsl_file \
         already names another"
    );

    let mut crowd = two_law_scene("drag_law", "spring_law").crowd;
    let other = laws.get("other").unwrap().law_declaration().unwrap();
    crowd.forces.push(Force::on_all(ForceKind::Law {
        law: other,
        vectors: [DVec3::ZERO; 2],
        scalars: [0.0; 4],
    }));
    let error = Simulation::new(&crowd, Backend::Reference).err().unwrap();
    assert_eq!(
        error.to_string(),
        "forces[7].type: the force law \"other\" is not among the crowd's (drag_law, \
         spring_law): add it (CustomForce::with_law)"
    );
    let custom = crowd.custom_force.take().unwrap();
    crowd.custom_force = Some(custom.with_law(laws.get("other").unwrap().clone()).unwrap());
    Simulation::new(&crowd, Backend::Reference).unwrap();

    for taken in ["spring", "law", "other"] {
        let error = laws.clone().with(taken, Other).unwrap_err();
        assert!(
            error.to_string().contains("already names a force kind"),
            "{error}"
        );
    }
}

/// `read`, resumed on `backend` and stepped 15 steps, ends with `whole`'s bits.
fn assert_resumes_to(read: &Checkpoint, backend: Backend, whole: &Simulation) {
    let mut resumed = match backend {
        Backend::Reference => Simulation::resume(read, backend).unwrap(),
        _ => Simulation::resume_on_gpu(read, common::gpu()).unwrap(),
    };
    resumed.step(15).unwrap();
    assert_eq!(
        common::state_bits(&resumed.bodies().unwrap()),
        common::state_bits(&whole.bodies().unwrap()),
        "{backend:?}"
    );
}

/// A checkpoint of a crowd of several laws (format 8) names each force's law; resumed with the
/// laws attached by name, the run goes on as the uninterrupted one.
#[test]
fn a_checkpoint_carries_each_forces_law() {
    let scene = two_law_scene("drag_law", "spring_law");
    for backend in [Backend::Reference, Backend::Gpu] {
        let mut whole = simulation(&scene, backend);
        whole.step(40).unwrap();
        let mut first = simulation(&scene, backend);
        first.step(25).unwrap();
        let bytes = first.checkpoint().unwrap().to_bytes();
        assert_eq!(bytes[8..12], 8u32.to_le_bytes(), "format 8");
        let read = Checkpoint::from_bytes(&bytes).unwrap();
        assert_eq!(read.force_laws, ["drag_law", "spring_law"]);
        // Registered in another order, attached by name.
        let other_order = (ForceLaws::new().with("drag_law", DragLaw))
            .and_then(|laws| laws.with("spring_law", SpringLaw))
            .unwrap();
        for laws in [two_laws(), other_order] {
            let read = read.clone().with_laws(&laws).unwrap();
            assert_eq!(read.crowd.forces, scene.crowd.forces);
            assert_resumes_to(&read, backend, &whole);
        }
        let only_one = ForceLaws::new().with("drag_law", DragLaw).unwrap();
        let refused = read.with_laws(&only_one).err().unwrap().to_string();
        assert!(refused.starts_with("force_laws[1]: "), "{refused}");
    }
}

/// A checkpoint keeps a law's numbers; resumed with the law attached, the run goes on as the
/// uninterrupted one; without it, it is refused in one line naming the force.
#[test]
fn a_checkpoint_carries_a_laws_numbers() {
    let scene = scene();
    let law = force_law::laws()
        .unwrap()
        .get("soft_tether")
        .unwrap()
        .clone();
    for backend in [Backend::Reference, Backend::Gpu] {
        let mut whole = simulation(&scene, backend);
        whole.step(40).unwrap();
        let mut first = simulation(&scene, backend);
        first.step(25).unwrap();
        let bytes = first.checkpoint().unwrap().to_bytes();
        let read = Checkpoint::from_bytes(&bytes).unwrap();
        let refused = Simulation::resume(&read, Backend::Reference).err().unwrap();
        assert_eq!(refused.to_string().lines().count(), 1, "{refused}");
        assert!(
            refused.to_string().starts_with("forces[1].type: "),
            "{refused}"
        );
        let read = read.with_custom_force(law.clone());
        assert_eq!(read.crowd.forces, scene.crowd.forces);
        assert_resumes_to(&read, backend, &whole);
    }
    // The force as the Rust API builds it is the one the scene reads.
    assert_eq!(
        Force::on_all(ForceKind::Law {
            law: law.law_declaration().unwrap(),
            vectors: [DVec3::new(0.0, 0.0, 2.0), DVec3::ZERO],
            scalars: [30.0, 0.0, 0.0, 0.0],
        }),
        scene.crowd.forces[1]
    );
}

#[test]
fn the_force_law_example_runs() {
    force_law::main().unwrap();
}

/// A program that registers the law runs the command line with it (`cli::main_with_laws`,
/// `examples/force_law_cli.rs`): `run --sensitivity` along both of the law's numbers writes
/// the bytes the library's sensitivities give on the backend's twin, and a run checkpointed
/// at step 25 and resumed (the law attached again by the name the checkpoint holds) ends with
/// the whole run's bytes. The same program without the law refuses the scene and the
/// checkpoint.
#[test]
fn a_program_with_a_law_runs_the_command_line_with_it() {
    use std::io::Read;
    use std::process::ExitCode;
    let dir = tempfile::tempdir().unwrap();
    let scene_path = dir.path().join("tether.json");
    std::fs::write(&scene_path, force_law::SCENE).unwrap();
    let scene_text = scene_path.to_str().unwrap();
    let command = |args: &[&str], laws: ForceLaws| {
        let program = std::iter::once("rigid-crowd").chain(args.iter().copied());
        rigid_crowd::cli::run_with_laws(program, laws)
    };
    let laws = || force_law::laws().unwrap();
    let entry = |path: &Path, name: &str| {
        let mut archive = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
        let mut bytes = Vec::new();
        (archive.by_name(name).unwrap().read_to_end(&mut bytes)).unwrap();
        bytes
    };
    let scene = scene();
    let names = ["forces[1].anchor", "forces[1].stiffness"];
    for (name, backend) in [
        ("cpu-ref", Backend::Reference),
        ("cpu", Backend::FastCpu),
        ("gpu", Backend::Gpu),
        ("gpu-f64", Backend::GpuF64),
    ] {
        let out = dir.path().join(format!("{name}.npz"));
        let mut args = vec!["run", scene_text, "--backend", name, "--quiet"];
        args.extend([
            "--sensitivity",
            "forces[1].anchor,forces[1].stiffness",
            "--out",
        ]);
        args.push(out.to_str().unwrap());
        assert_eq!(command(&args, laws()), ExitCode::SUCCESS, "{name}");
        let twin = match backend {
            Backend::Gpu => Backend::FastCpu,
            Backend::GpuF64 => Backend::Reference,
            cpu => cpu,
        };
        let mut sim = Simulation::new(&scene.crowd, twin).unwrap();
        sim.start_tangents(&names).unwrap();
        sim.step(scene.steps).unwrap();
        for (tangent, width) in [(names[0], 3), (names[1], 1)] {
            let mut expected = vec![0.0; 3 * 13 * width];
            sim.read_tangents(tangent, &mut expected).unwrap();
            let expected: Vec<u8> = match backend {
                Backend::FastCpu | Backend::Gpu => (expected.iter())
                    .flat_map(|&v| (v as f32).to_le_bytes())
                    .collect(),
                _ => expected.iter().flat_map(|v| v.to_le_bytes()).collect(),
            };
            let npy = common::parse_npy(&entry(&out, &format!("{tangent}.npy")));
            assert_eq!(npy.shape, [3, 13, width], "{name}: {tangent}");
            assert!(expected.iter().any(|&b| b != 0), "{name}: {tangent}");
            assert_eq!(npy.data, expected, "{name}: {tangent}");
        }

        let part = dir.path().join(format!("{name}.ckpt"));
        let part_out = dir.path().join(format!("{name}-part.npz"));
        let mut args = vec![
            "run",
            scene_text,
            "--backend",
            name,
            "--quiet",
            "--steps",
            "25",
        ];
        args.extend(["--sensitivity", "forces[1].anchor,forces[1].stiffness"]);
        args.extend([
            "--checkpoint",
            part.to_str().unwrap(),
            "--checkpoint-every",
            "25",
        ]);
        args.extend(["--out", part_out.to_str().unwrap()]);
        assert_eq!(command(&args, laws()), ExitCode::SUCCESS, "{name}");
        let read = Checkpoint::read(&part).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read.force_laws, ["soft_tether"]);
        // Format 7, the first to hold a law's name.
        assert_eq!(std::fs::read(&part).unwrap()[8..12], 7u32.to_le_bytes());
        let refused = read.with_laws(&ForceLaws::new()).err().unwrap().to_string();
        assert_eq!(
            refused,
            "force_laws[0]: the crowd's forces name the force law \"soft_tether\", which this program has not registered (ForceLaws::with)"
        );
        let resume = |laws| {
            let resumed = dir.path().join(format!("{name}-resumed.npz"));
            let args = ["resume", part.to_str().unwrap(), "--quiet", "--steps", "35"];
            let code = command(
                &[&args[..], &["--out", resumed.to_str().unwrap()]].concat(),
                laws,
            );
            (code, resumed)
        };
        assert_eq!(resume(ForceLaws::new()).0, ExitCode::FAILURE, "{name}");
        let (code, resumed) = resume(laws());
        assert_eq!(code, ExitCode::SUCCESS, "{name}");
        for tangent in [
            "states.npy",
            "forces[1].anchor.npy",
            "forces[1].stiffness.npy",
        ] {
            assert_eq!(
                entry(&resumed, tangent),
                entry(&out, tangent),
                "{name}: {tangent}"
            );
        }
    }
    // Without the law, the scene is refused.
    let out = dir.path().join("refused.npz");
    let args = ["run", scene_text, "--out", out.to_str().unwrap(), "--quiet"];
    assert_eq!(command(&args, ForceLaws::new()), ExitCode::FAILURE);
    assert!(!out.exists());
}
