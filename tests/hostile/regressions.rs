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
            r"a\nb: unknown field `a\nb`, expected one of",
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
