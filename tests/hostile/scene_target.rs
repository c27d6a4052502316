//! The scene reader as a hostile-input target: parse and validate, then build both CPU
//! backends on what was accepted (and take one step on a small crowd).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rigid_crowd::{Backend, Body, Scene, Simulation};

use crate::harness::{Outcome, check_cleanly};
use crate::scene_fields::names_scene_location;

/// Crowds up to this size also take one step on each CPU backend.
const STEPPED_CROWD: usize = 64;

/// A directory the generated scenes refer to: `cube.obj`, `bracket.obj` and `force.wgsl`.
pub fn assets() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temporary directory");
        for (name, from) in [
            ("cube.obj", "tests/data/cube.obj"),
            ("bracket.obj", "scenes/meshes/bracket.obj"),
        ] {
            std::fs::copy(manifest(from), dir.path().join(name)).expect("copy a mesh");
        }
        // Any text: the CPU backends refuse a custom force without a Rust twin anyway.
        std::fs::write(
            dir.path().join("force.wgsl"),
            "fn custom_force(input: CustomForceInput) -> Load { return Load(); }\n",
        )
        .expect("write the WGSL");
        dir
    })
    .path()
}

/// A path inside the crate.
pub fn manifest(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// Parses `text` as a scene whose files are relative to `dir`, under the hostile-input rules;
/// what is accepted must hold only numbers the f32 backends can use and must build on both
/// CPU backends without a panic. Returns whether it was accepted.
pub fn check_scene_text(text: String, dir: &Path) -> bool {
    let base = dir.to_path_buf();
    let outcome = check_cleanly(
        "the scene reader",
        text,
        move |text| parse_and_build(|| Scene::from_json_in(&text, &base)),
        |location, detail| names_scene_location(location, detail, dir),
    );
    matches!(outcome, Outcome::Accepted(()))
}

/// Like [`check_scene_text`] for a scene file read with [`Scene::load`].
pub fn check_scene_file(path: PathBuf) -> bool {
    let dir = path.parent().expect("a file in a directory").to_path_buf();
    let outcome = check_cleanly(
        "the scene loader",
        path,
        |path| parse_and_build(|| Scene::load(&path)),
        |location, detail| names_scene_location(location, detail, &dir),
    );
    matches!(outcome, Outcome::Accepted(()))
}

fn parse_and_build(parse: impl FnOnce() -> rigid_crowd::Result<Scene>) -> rigid_crowd::Result<()> {
    let scene = parse()?;
    for (i, body) in scene.crowd.bodies.iter().enumerate() {
        assert_usable_in_f32(i, body);
    }
    for backend in [Backend::Reference, Backend::FastCpu] {
        let mut sim = Simulation::new(&scene.crowd, backend)?;
        if scene.crowd.bodies.len() <= STEPPED_CROWD {
            // A valid scene may still blow up (a force of 1e38 overflows a momentum): that is
            // the run's NonFinite error, caught and named, not a parser failure.
            match sim.step(1) {
                Ok(()) | Err(rigid_crowd::Error::NonFinite { .. }) => {}
                Err(e) => return Err(e),
            }
            let bodies = sim.bodies()?;
            assert!(
                bodies.iter().all(|b| b.state.is_finite()),
                "a non-finite state escaped the check"
            );
        }
    }
    Ok(())
}

/// Validation promises numbers the f32 backends can hold: a body's mass, its inverse, its
/// inertia and inverse inertia, and its state must be finite in f32.
fn assert_usable_in_f32(i: usize, body: &Body) {
    let fits = |x: f64| x.is_finite() && (x as f32).is_finite();
    let m = &body.mass;
    let s = &body.state;
    let numbers = [m.mass(), m.inv_mass()]
        .into_iter()
        .chain(m.inertia_body().to_cols_array())
        .chain(m.inv_inertia_body().to_cols_array())
        .chain(s.position.to_array())
        .chain(s.orientation.to_array())
        .chain(s.linear_momentum.to_array())
        .chain(s.angular_momentum.to_array());
    for x in numbers {
        assert!(
            fits(x),
            "accepted body {i} holds {x}, which f32 cannot: {body:?}"
        );
    }
    assert!(
        m.mass() as f32 > 0.0,
        "accepted body {i} has zero mass in f32"
    );
}
