//! Inputs the generated cases found mishandled, kept as fixed cases with the exact message.

use rigid_crowd::Scene;

use crate::scene_target::assets;

fn error(text: &str) -> String {
    match Scene::from_json_in(text, assets()) {
        Ok(_) => panic!("accepted {text}"),
        Err(e) => e.to_string(),
    }
}

fn scene(extra: &str) -> String {
    format!(r#"{{"dt": 0.001, "steps": 1, {extra}}}"#)
}

fn assert_starts(message: &str, expected: &str) {
    assert!(
        message.starts_with(expected),
        "got `{message}`, expected `{expected}...`"
    );
}

#[test]
fn input_echoed_in_an_error_stays_on_one_line() {
    let cases = [
        (
            scene(r#""a\nb": 1"#),
            r#""a\nb": unknown field `a\nb`, expected one of"#,
        ),
        (
            scene(r#""integrator": "rk\r\n4""#),
            r"integrator: unknown integrator `rk\r\n4`",
        ),
        (
            scene(r#""bodies": [{"mass": 1, "shape": {"pyr\u001b[2Jamid": 1}}]"#),
            r"bodies[0].shape: unknown variant `pyr\u{1b}[2Jamid`",
        ),
        (
            scene(r#""bodies": [{"mass": 1, "shape": {"mesh": "a\u2028b.obj"}}]"#),
            r"bodies[0].shape.mesh: ",
        ),
    ];
    for (text, expected) in cases {
        let message = error(&text);
        assert_starts(&message, expected);
        assert!(!message.chars().any(char::is_control), "{message:?}");
        assert!(!message.contains('\u{2028}'), "{message:?}");
    }
}

#[test]
fn files_a_scene_names_must_be_regular_files() {
    // Reading /dev/zero to its end would never finish (and fill the memory on the way).
    let message = error(&scene(
        r#""bodies": [{"mass": 1, "shape": {"mesh": "/dev/zero"}}]"#,
    ));
    assert_eq!(
        message,
        "bodies[0].shape.mesh: /dev/zero: is not a regular file (a device, pipe or socket)"
    );
    let message = error(&scene(
        r#""forces": [{"type": "custom", "wgsl_file": "/dev/zero"}]"#,
    ));
    assert_eq!(
        message,
        "forces[0].wgsl_file: cannot read /dev/zero: is not a regular file (a device, pipe or socket)"
    );
    let message = error(&scene(r#""bodies": [{"mass": 1, "shape": {"mesh": "."}}]"#));
    assert!(message.ends_with(": is a directory"), "{message}");
}

#[test]
fn an_error_inside_a_force_names_the_field_in_it() {
    let cases = [
        (
            r#"{"type": "gravity", "acceleration": [0, 0, "x"]}"#,
            r#"forces[0].acceleration[2]: invalid type: string "x", expected f64"#,
        ),
        (
            r#"{"type": "spring", "anchor": [0, 0, 0], "stiffness": -1e400}"#,
            "forces[0].stiffness: number out of range at line 1 column",
        ),
        (
            r#"{"type": "spring", "anchor": [0, 0, 0], "stiffness": "stiff"}"#,
            r#"forces[0].stiffness: invalid type: string "stiff", expected f64"#,
        ),
        (
            r#"{"type": "keyframed", "keyframes": [[0, 1], [1]]}"#,
            "forces[0].keyframes[1]: invalid length 1, expected an array of length 2",
        ),
        (
            r#"{"type": "gravity", "acceleration": [0, 0, 1], "k": 2}"#,
            "forces[0].k: unknown field `k`, expected `body` or `acceleration`",
        ),
        (
            r#"{"type": "gravity"}"#,
            "forces[0]: missing field `acceleration`",
        ),
        (
            r#"{"type": "gravityy"}"#,
            "forces[0].type: unknown variant `gravityy`, expected one of `gravity`",
        ),
        (
            r#"{"acceleration": [0, 0, 1]}"#,
            "forces[0].type: missing: name the kind of force",
        ),
        (r#"{"type": 3}"#, "forces[0].type: must be a string"),
        ("[1, 2]", "forces[0]: expected a force object"),
    ];
    for (force, expected) in cases {
        let text = scene(&format!(r#""forces": [{force}]"#));
        assert_starts(&error(&text), expected);
    }
}

#[test]
fn a_plane_error_names_what_the_scene_wrote() {
    let cases = [
        (
            r#"{"point": [3e38, 3e38, 3e38], "normal": [1, 1, 1]}"#,
            "planes[0].point: lies too far from the origin",
        ),
        (
            r#"{"point": [0, 0, 1e39], "normal": [0, 0, 1]}"#,
            "planes[0].point[2]: 1000000000000000000000000000000000000000 is out of range",
        ),
        (
            r#"{"normal": [0, 1e39, 0]}"#,
            "planes[0].normal[1]: 1000000000000000000000000000000000000000 is out of range",
        ),
    ];
    for (plane, expected) in cases {
        let text = scene(&format!(r#""planes": [{plane}]"#));
        assert_starts(&error(&text), expected);
    }
}

#[test]
fn an_unreadable_or_empty_key_is_named_by_where_it_is() {
    assert_starts(
        &error(r#"{"dt": 1, "steps": 1, "forces": [{"type": "gravity", 3: 1}]}"#),
        "forces[0]: key must be a string at line 1 column",
    );
    assert_starts(
        &error(r#"{"dt": 1, "steps": 1, "": 0}"#),
        r#""": unknown field ``, expected one of"#,
    );
    assert_starts(
        &error(r#"{"dt": 1, "steps": 1, " ": 0}"#),
        r#"" ": unknown field ` `, expected one of"#,
    );
    assert_starts(
        &error(r#"{"dt": 1, "steps": 1, "bodies": [{"mass": 1, "shape": {"mesh": {"a.b": 1}}}]}"#),
        r#"bodies[0].shape.mesh."a.b": unknown field, expected `file` or `scale`"#,
    );
    assert_starts(
        &error(r#"{"dt": 1, "steps": 1, "bodies": [{"mass": 1, "": 0}]}"#),
        r#"bodies[0]."": unknown field ``"#,
    );
}

#[test]
fn numbers_the_f32_backends_cannot_hold_are_refused_by_what_gave_them() {
    let body = |body: &str| scene(&format!(r#""bodies": [{body}]"#));
    let cases = [
        (
            body(r#"{"mass": 1e-40, "shape": {"sphere": 1}}"#),
            "bodies[0].mass: 1e-40 is out of range (must be between 1.1754943508222875e-38 and",
        ),
        (
            body(r#"{"density": 1e30, "shape": {"box": [1e5, 1e5, 1e6]}}"#),
            "bodies[0].density: gives a mass of 1e46 for a volume of 1e16, out of range",
        ),
        (
            body(r#"{"mass": 1e10, "shape": {"box": [1e20, 1, 1]}}"#),
            "bodies[0].shape: gives principal moments of inertia",
        ),
        (
            body(r#"{"mass": 1, "inertia": [1e-39, 1e-39, 1e-39]}"#),
            "bodies[0].inertia: gives principal moments of inertia 1.0000000000000001e-39, 1.0000000000000001e-39,",
        ),
        (
            body(r#"{"mass": 1, "shape": {"mesh": {"file": "cube.obj", "scale": 1e200}}}"#),
            "bodies[0].shape.mesh: ",
        ),
        (
            body(r#"{"mass": 10, "shape": {"sphere": 1}, "velocity": [3e38, 0, 0]}"#),
            "bodies[0].velocity: gives a linear momentum M v of (3e39, 0e0, 0e0), out of range",
        ),
        (
            scene(r#""crowd": {"count": 2, "region": [[-3e38, 0, 0], [3e38, 1, 1]]}"#),
            "crowd.region: spans 6e38 along axis 0, out of range",
        ),
        (
            scene(r#""crowd": {"count": 20, "mass": [100, 200], "speed": 3e38}"#),
            "crowd: generated body ",
        ),
        (
            scene(r#""crowd": {"count": 2, "mass": [1, 2], "size": [1e-30, 1e-30]}"#),
            "crowd: generated body 0 is out of range (body.shape: gives principal moments",
        ),
    ];
    for (text, expected) in cases {
        assert_starts(&error(&text), expected);
    }
    let mesh = error(&body(
        r#"{"mass": 1, "shape": {"mesh": {"file": "cube.obj", "scale": 1e200}}}"#,
    ));
    assert!(
        mesh.ends_with(
            "cube.obj: vertex 2 (1e200, 0e0, 0e0) is out of range (coordinates, after any `scale`, must be finite with magnitude <= 3.4028234663852886e38)"
        ),
        "{mesh}"
    );
}
