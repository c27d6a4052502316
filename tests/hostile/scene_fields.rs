//! Which locations a scene error may name: the fields a scene file can have (see
//! core/src/assembly/scene.rs), so an error that names an internal value (`linear_momentum`, a plane's
//! `offset`) instead of what the user wrote is caught.

use std::path::Path;

/// Every field path of a scene file, array indices written `[]`.
const SCENE_FIELDS: &[&str] = &[
    "scene",
    "version",
    "dt",
    "steps",
    "integrator",
    "start_step",
    "forces",
    "forces[]",
    "forces[].type",
    "forces[].body",
    "forces[].acceleration",
    "forces[].linear",
    "forces[].angular",
    "forces[].force",
    "forces[].point",
    "forces[].anchor",
    "forces[].attach",
    "forces[].stiffness",
    "forces[].damping",
    "forces[].centre",
    "forces[].strength",
    "forces[].softening",
    "forces[].torque",
    "forces[].offset",
    "forces[].amplitude",
    "forces[].frequency",
    "forces[].phase",
    "forces[].keyframes",
    "forces[].keyframes[]",
    "forces[].wgsl_file",
    "bodies",
    "bodies[]",
    "bodies[].mass",
    "bodies[].density",
    "bodies[].inertia",
    "bodies[].shape",
    "bodies[].shape.box",
    "bodies[].shape.sphere",
    "bodies[].shape.cylinder",
    "bodies[].shape.cylinder.radius",
    "bodies[].shape.cylinder.height",
    "bodies[].shape.capsule",
    "bodies[].shape.capsule.radius",
    "bodies[].shape.capsule.length",
    "bodies[].shape.ellipsoid",
    "bodies[].shape.mesh",
    "bodies[].shape.mesh.file",
    "bodies[].shape.mesh.scale",
    "bodies[].position",
    "bodies[].orientation",
    "bodies[].velocity",
    "bodies[].angular_velocity",
    "crowd",
    "crowd.count",
    "crowd.seed",
    "crowd.region",
    "crowd.mass",
    "crowd.size",
    "crowd.shapes",
    "crowd.speed",
    "crowd.spin",
    "planes",
    "planes[]",
    "planes[].point",
    "planes[].normal",
    "planes[].restitution",
    "planes[].friction",
];

/// Whether `location` is a scene field (trailing element indices allowed, so `dt`,
/// `bodies[2].position[1]`, `crowd.region[0][2]`), or for an `unknown field` error a key
/// inside one (the error names the key the user wrote), or a file under `dir` (a scene file
/// that cannot be read), or anything for a JSON error that gives its line and column.
pub fn names_scene_location(location: &str, detail: &str, dir: &Path) -> bool {
    if location.starts_with(&*dir.to_string_lossy()) {
        return true;
    }
    // A JSON error names the line and column, and its path is where the reader was in the
    // text, made of the keys as written (a misspelt key, an array where an object belongs).
    if detail.contains(" at line ") && detail.contains(" column ") {
        return true;
    }
    let generic = without_indices(location);
    let known = |path: &str| {
        let mut path = path;
        // Elements of vectors and matrices: `position[1]`, `inertia[0][2]`.
        while let Some(stripped) = path.strip_suffix("[]") {
            if SCENE_FIELDS.contains(&path) {
                return true;
            }
            path = stripped;
        }
        SCENE_FIELDS.contains(&path)
    };
    if known(&generic) {
        return true;
    }
    if !detail.starts_with("unknown field") {
        return false;
    }
    // `bodies[0].colour`: an unknown key inside a known object; a key that is not a plain
    // word is quoted (`forces[1]."a.b"`) and may hold dots of its own.
    let parent = if generic.ends_with('"') {
        generic[..generic.len() - 1]
            .rfind(".\"")
            .map(|at| &generic[..at])
    } else {
        generic.rsplit_once('.').map(|(parent, _)| parent)
    };
    match parent {
        Some(parent) => known(parent),
        None => true, // an unknown top-level key, plain or quoted
    }
}

/// `bodies[12].box[0]` -> `bodies[].box[]`.
fn without_indices(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '[' {
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
            }
        }
    }
    out
}

#[test]
fn scene_locations_are_recognized() {
    let dir = Path::new("/tmp/x");
    for ok in [
        "dt",
        "scene",
        "bodies[2].position[1]",
        "crowd.region[0][2]",
        "forces[3].keyframes[1][0]",
        "/tmp/x/scene.json",
    ] {
        assert!(names_scene_location(ok, "must be > 0", dir), "{ok}");
    }
    for unknown in [
        "bodies[0].shape.mesh.colour",
        "colour",
        r#"forces[1]."a.gular""#,
        r#""a.b""#,
        r#"forces[3].": [0.1,stiffness""#,
    ] {
        assert!(
            names_scene_location(unknown, "unknown field", dir),
            "{unknown}"
        );
        assert!(
            !names_scene_location(unknown, "must be > 0", dir),
            "{unknown}"
        );
    }
    for bad in [
        "bodies[3].linear_momentum[0]",
        "planes[0].offset[0]",
        "crowd.inertia",
        "keyframes[0]",
        "custom_force",
    ] {
        assert!(!names_scene_location(bad, "must be > 0", dir), "{bad}");
    }
}
