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
    assert!(message.starts_with(expected), "got `{message}`, expected `{expected}...`");
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
    let message = error(&scene(r#""forces": [{"type": "custom", "wgsl_file": "/dev/zero"}]"#));
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
