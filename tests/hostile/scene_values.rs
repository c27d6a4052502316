//! Structure-aware: valid scenes (every shape, density or mass, every force kind, planes,
//! integrators, a generated crowd) with a few fields replaced by hostile values, removed,
//! duplicated or joined by unknown ones.

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Map, Value, json};

use crate::harness::cases;
use crate::scene_target::{assets, check_scene_text};

fn vec3(range: std::ops::Range<f64>) -> impl Strategy<Value = Value> {
    prop::array::uniform3(range).prop_map(|v| json!(v))
}

fn shape() -> impl Strategy<Value = Value> {
    prop_oneof![
        vec3(0.1..3.0).prop_map(|v| json!({ "box": v })),
        (0.1..2.0f64).prop_map(|r| json!({ "sphere": r })),
        (0.1..2.0f64, 0.1..3.0f64)
            .prop_map(|(r, h)| json!({ "cylinder": { "radius": r, "height": h } })),
        (0.1..2.0f64, 0.0..3.0f64)
            .prop_map(|(r, l)| json!({ "capsule": { "radius": r, "length": l } })),
        vec3(0.1..2.0).prop_map(|v| json!({ "ellipsoid": v })),
        Just(json!({ "mesh": "cube.obj" })),
        (0.1..5.0f64).prop_map(|s| json!({ "mesh": { "file": "bracket.obj", "scale": s } })),
    ]
}

/// Moments that keep A + B >= C: each in [1, 2].
fn inertia() -> impl Strategy<Value = Value> {
    prop_oneof![
        vec3(1.0..2.0),
        prop::array::uniform3(1.0..2.0f64).prop_map(|[a, b, c]| json!([
            [a, 0.0, 0.0],
            [0.0, b, 0.0],
            [0.0, 0.0, c]
        ])),
    ]
}

fn body() -> impl Strategy<Value = Value> {
    let mass_and_solid = prop_oneof![
        (0.1..10.0f64, shape()).prop_map(|(m, s)| json!({ "mass": m, "shape": s })),
        (10.0..2000.0f64, shape()).prop_map(|(d, s)| json!({ "density": d, "shape": s })),
        (0.1..10.0f64, inertia()).prop_map(|(m, i)| json!({ "mass": m, "inertia": i })),
    ];
    let unit_quaternion = prop::array::uniform4(-1.0..1.0f64).prop_map(|q| {
        let n = q.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-3);
        json!(q.map(|x| x / n))
    });
    (
        mass_and_solid,
        prop::option::of(vec3(-10.0..10.0)),
        prop::option::of(unit_quaternion),
        prop::option::of(vec3(-5.0..5.0)),
        prop::option::of(vec3(-5.0..5.0)),
    )
        .prop_map(|(mut body, position, orientation, velocity, spin)| {
            let fields = [
                ("position", position),
                ("orientation", orientation),
                ("velocity", velocity),
                ("angular_velocity", spin),
            ];
            for (key, value) in fields {
                if let Some(value) = value {
                    body[key] = value;
                }
            }
            body
        })
}

fn force() -> impl Strategy<Value = Value> {
    let kind = prop_oneof![
        vec3(-10.0..10.0).prop_map(|a| json!({ "type": "gravity", "acceleration": a })),
        (0.0..1.0f64, 0.0..1.0f64)
            .prop_map(|(l, a)| json!({ "type": "linear_drag", "linear": l, "angular": a })),
        (vec3(-5.0..5.0), vec3(-1.0..1.0))
            .prop_map(|(f, p)| json!({ "type": "point_force", "force": f, "point": p })),
        (vec3(-5.0..5.0), vec3(-1.0..1.0), 0.0..50.0f64, 0.0..1.0f64).prop_map(
            |(anchor, attach, k, c)| json!({ "type": "spring", "anchor": anchor,
                "attach": attach, "stiffness": k, "damping": c })
        ),
        (vec3(-5.0..5.0), -10.0..10.0f64, 0.0..1.0f64).prop_map(|(c, s, e)| json!({
            "type": "attractor", "centre": c, "strength": s, "softening": e })),
        (vec3(-5.0..5.0), vec3(-1.0..1.0))
            .prop_map(|(f, t)| json!({ "type": "thrust", "force": f, "torque": t })),
        (vec3(-5.0..5.0), -1.0..1.0f64, 0.0..5.0f64, 0.0..10.0f64).prop_map(
            |(f, a, w, p)| json!({ "type": "sinusoidal", "force": f, "offset": 0.5,
                "amplitude": a, "frequency": w, "phase": p })
        ),
        (vec3(-5.0..5.0), prop::collection::vec(-2.0..2.0f64, 1..5)).prop_map(|(t, values)| {
            let keyframes: Vec<[f64; 2]> = values
                .iter()
                .enumerate()
                .map(|(i, &v)| [i as f64 * 0.1, v])
                .collect();
            json!({ "type": "keyframed", "torque": t, "keyframes": keyframes })
        }),
        Just(json!({ "type": "custom", "wgsl_file": "force.wgsl" })),
    ];
    (kind, prop::option::of(0..3usize)).prop_map(|(mut force, body)| {
        if let Some(body) = body {
            force["body"] = json!(body);
        }
        force
    })
}

fn plane() -> impl Strategy<Value = Value> {
    (vec3(-5.0..5.0), vec3(-1.0..1.0), 0.0..1.0f64, 0.0..1.0f64).prop_map(
        |(p, n, e, mu)| json!({ "point": p, "normal": n, "restitution": e, "friction": mu }),
    )
}

fn crowd() -> impl Strategy<Value = Value> {
    let shapes = prop::sample::subsequence(
        vec!["box", "sphere", "cylinder", "capsule", "ellipsoid"],
        1..=5,
    );
    (0..20usize, any::<u64>(), shapes, 0.0..5.0f64, 0.0..5.0f64).prop_map(
        |(count, seed, shapes, speed, spin)| {
            json!({ "count": count, "seed": seed, "region": [[-5, -5, 0], [5, 5, 10]],
                "mass": [0.5, 2.0], "size": [0.2, 1.0], "shapes": shapes,
                "speed": speed, "spin": spin })
        },
    )
}

/// A scene that is valid but for the odd force body index or a plane's zero normal.
fn valid_scene() -> impl Strategy<Value = Value> {
    let integrator = prop::option::of(prop::sample::select(vec![
        "euler",
        "symplectic_euler",
        "rk4",
        "lie_rk4",
        "lie_poisson",
        "lie_poisson4",
    ]));
    (
        (
            1e-4..1e-2f64,
            0..1000u64,
            integrator,
            prop::option::of(0..1_000_000u64),
        ),
        prop::collection::vec(body(), 0..4),
        prop::collection::vec(force(), 0..4),
        prop::collection::vec(plane(), 0..3),
        prop::option::of(crowd()),
        any::<bool>(),
    )
        .prop_map(
            |((dt, steps, integrator, start_step), bodies, forces, planes, crowd, version)| {
                let mut scene = Map::new();
                scene.insert("dt".into(), json!(dt));
                scene.insert("steps".into(), json!(steps));
                let optional = [
                    ("version", version.then(|| json!(1))),
                    ("integrator", integrator.map(|i| json!(i))),
                    ("start_step", start_step.map(|s| json!(s))),
                    ("crowd", crowd),
                ];
                for (key, value) in optional {
                    if let Some(value) = value {
                        scene.insert(key.into(), value);
                    }
                }
                // Planes need contact geometry on every body: drop them for meshes and
                // inertia-only bodies, so most scenes stay valid until mutated.
                let collide = bodies
                    .iter()
                    .all(|b| b.get("shape").is_some_and(|s| s.get("mesh").is_none()));
                for (key, list) in [("bodies", bodies), ("forces", forces)] {
                    scene.insert(key.into(), Value::Array(list));
                }
                if collide {
                    scene.insert("planes".into(), Value::Array(planes));
                }
                Value::Object(scene)
            },
        )
}

/// JSON text that `serde_json::Value` cannot hold (or that is large), spliced in verbatim.
fn raw_token() -> impl Strategy<Value = String> {
    let fixed = prop::sample::select(vec![
        "1e400",
        "-1e400",
        "1e-400",
        "NaN",
        "-NaN",
        "Infinity",
        "-Infinity",
        "inf",
        "-0",
        "-0.0",
        "00",
        "01",
        "1.",
        ".5",
        "+1",
        "0x10",
        "1e",
        "18446744073709551616",
        "-9223372036854775809",
        "340282346638528859811704183484516925440000",
        "\"\\u0000\"",
        "\"\\ud800\"",
        "\"a\\nb\"",
        "\"\\u2028\"",
        "\"\\u001b[31m\"",
        "\"/dev/zero\"",
        "\"/\"",
        "\"..\"",
        "\"cube.obj\\u0000\"",
    ])
    .prop_map(str::to_string);
    prop_oneof![
        4 => fixed,
        1 => (1..300usize).prop_map(|depth| "[".repeat(depth) + &"]".repeat(depth)),
        1 => (1..300usize).prop_map(|depth| "{\"a\":".repeat(depth) + "1" + &"}".repeat(depth)),
        1 => (0..20_000usize).prop_map(|n| format!("[{}]", vec!["0"; n].join(","))),
        1 => (0..100_000usize).prop_map(|n| format!("\"{}\"", "x".repeat(n))),
    ]
}

/// A value in place of a valid one.
fn hostile_value() -> impl Strategy<Value = Value> {
    let numbers = prop::sample::select(vec![
        0.0,
        -0.0,
        -1.0,
        1.0,
        2.0,
        0.5,
        1e-320,
        f64::MIN_POSITIVE,
        1e-300,
        1e-40,
        1e-39,
        1e-30,
        1e30,
        1e38,
        3.4e38,
        3.5e38,
        1e300,
        f64::MAX,
        -f64::MAX,
        281474976710656.0,
        4294967296.0,
    ])
    .prop_map(|x| json!(x));
    let integers = prop_oneof![
        Just(json!(u64::MAX)),
        Just(json!(i64::MIN)),
        Just(json!(1u64 << 48)),
        Just(json!(u32::MAX as u64 + 1)),
        any::<i64>().prop_map(|x| json!(x)),
    ];
    let strings = prop::sample::select(vec![
        "",
        "NaN",
        "nan",
        "inf",
        "-inf",
        "Infinity",
        "1e3",
        "box",
        "gravity",
        "rk4",
        "type",
        "mesh",
        "a\nb",
        "\r",
        "\u{0}",
        "\u{1b}[2J",
        "\u{2028}",
        "é",
        "../../etc/passwd",
        "/dev/null",
        "/dev/zero",
        "cube.obj",
        "force.wgsl",
        "missing.obj",
        ".",
    ])
    .prop_map(|s| json!(s));
    prop_oneof![
        4 => numbers,
        2 => integers,
        1 => any::<f64>().prop_filter("JSON numbers are finite", |x| x.is_finite())
            .prop_map(|x| json!(x)),
        2 => strings,
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => Just(json!([])),
        1 => Just(json!({})),
        1 => Just(json!([1, 2])),
        1 => Just(json!([1, 2, 3, 4])),
        1 => Just(json!([[1, 2, 3], [4, 5, 6]])),
        1 => Just(json!({ "type": "gravity" })),
        1 => Just(json!({ "file": "cube.obj", "scale": -1 })),
        2 => raw_token().prop_map(|raw| json!(format!("\u{1}RAW\u{1}{raw}\u{1}"))),
    ]
}

#[derive(Clone, Debug)]
enum Mutation {
    /// Replace the value at the chosen place.
    Replace(Index, Value),
    /// Remove the chosen key or array element.
    Remove(Index),
    /// Add a key to the chosen object (or the nearest one above it).
    AddKey(Index, String, Value),
    /// Repeat the chosen array element (or the nearest array above it).
    Repeat(Index),
    /// Scale the chosen number.
    Scale(Index, f64),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let key = prop::sample::select(vec![
        "colour", "type", "mass", "density", "shape", "a\nb", "", "\u{0}", "body", "file",
    ])
    .prop_map(str::to_string);
    let factor = prop::sample::select(vec![-1.0, 0.0, 1e-30, 1e30, 1e300, -1e300]);
    prop_oneof![
        5 => (any::<Index>(), hostile_value()).prop_map(|(i, v)| Mutation::Replace(i, v)),
        2 => any::<Index>().prop_map(Mutation::Remove),
        1 => (any::<Index>(), key, hostile_value()).prop_map(|(i, k, v)| Mutation::AddKey(i, k, v)),
        1 => any::<Index>().prop_map(Mutation::Repeat),
        2 => (any::<Index>(), factor).prop_map(|(i, f)| Mutation::Scale(i, f)),
    ]
}

#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Element(usize),
}

/// Every place in `value`, the root first.
fn places(value: &Value, here: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(here.clone());
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                here.push(Step::Key(key.clone()));
                places(child, here, out);
                here.pop();
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                here.push(Step::Element(i));
                places(child, here, out);
                here.pop();
            }
        }
        _ => {}
    }
}

fn at<'a>(value: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(value, |v, step| match step {
        Step::Key(k) => &mut v[k.as_str()],
        Step::Element(i) => &mut v[*i],
    })
}

fn apply(scene: &mut Value, mutation: &Mutation) {
    let mut all = Vec::new();
    places(scene, &mut Vec::new(), &mut all);
    let pick = |i: &Index| all[i.index(all.len())].clone();
    match mutation {
        Mutation::Replace(i, value) => *at(scene, &pick(i)) = value.clone(),
        Mutation::Remove(i) => {
            let mut path = pick(i);
            match path.pop() {
                Some(Step::Key(k)) => {
                    at(scene, &path).as_object_mut().map(|m| m.remove(&k));
                }
                Some(Step::Element(e)) => {
                    at(scene, &path).as_array_mut().map(|a| a.remove(e));
                }
                None => *scene = Value::Null,
            }
        }
        Mutation::AddKey(i, key, value) => {
            let mut path = pick(i);
            while !at(scene, &path).is_object() && path.pop().is_some() {}
            if let Some(map) = at(scene, &path).as_object_mut() {
                map.insert(key.clone(), value.clone());
            }
        }
        Mutation::Repeat(i) => {
            let mut path = pick(i);
            while !at(scene, &path).is_array() && path.pop().is_some() {}
            if let Some(items) = at(scene, &path).as_array_mut() {
                if let Some(last) = items.last().cloned() {
                    items.push(last);
                }
            }
        }
        Mutation::Scale(i, factor) => {
            let target = at(scene, &pick(i));
            if let Some(x) = target.as_f64() {
                *target = json!(x * factor);
            }
        }
    }
}

/// The scene as text, with the raw tokens spliced in where their markers are.
fn render(scene: &Value) -> String {
    let text = serde_json::to_string(scene).expect("a Value serializes");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(start) = rest.find("\"\\u0001RAW\\u0001") {
        out.push_str(&rest[..start]);
        let after = &rest[start + "\"\\u0001RAW\\u0001".len()..];
        let end = after.find("\\u0001\"").expect("a marker ends");
        // The token was escaped as a JSON string; read it back to get its raw text.
        let token: String =
            serde_json::from_str(&format!("\"{}\"", &after[..end])).expect("the token round-trips");
        out.push_str(&token);
        rest = &after[end + "\\u0001\"".len()..];
    }
    out.push_str(rest);
    out
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(0.5),
        failure_persistence: None,
        rng_seed: crate::harness::rng_seed(),
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_scenes_are_read_or_refused_cleanly(
        scene in valid_scene(),
        mutations in prop::collection::vec(mutation(), 0..4),
    ) {
        let mut scene = scene;
        for mutation in &mutations {
            apply(&mut scene, mutation);
        }
        check_scene_text(render(&scene), assets());
    }
}

#[test]
fn most_unmutated_scenes_are_accepted() {
    // The generator must make valid scenes, or the mutations test only the first checks.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let total = 200;
    let accepted = (0..total)
        .filter(|_| {
            let scene = valid_scene().new_tree(&mut runner).unwrap().current();
            check_scene_text(render(&scene), assets())
        })
        .count();
    // Random force body indices past the last body and zero plane normals are the only
    // rejections; at least half must pass.
    assert!(accepted * 2 >= total, "only {accepted} of {total} accepted");
}

#[test]
fn raw_tokens_are_spliced_verbatim() {
    let scene = json!({ "dt": "\u{1}RAW\u{1}1e400\u{1}", "steps": [format!("\u{1}RAW\u{1}\"a\\nb\"\u{1}")] });
    assert_eq!(render(&scene), r#"{"dt":1e400,"steps":["a\nb"]}"#);
}
