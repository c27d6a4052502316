//! OBJ meshes: valid files with lines removed, repeated, swapped or rewritten and numbers
//! replaced by hostile ones, read directly and as a scene's mesh body.

use proptest::prelude::*;
use proptest::sample::Index;
use rigid_crowd::TriangleMesh;

use crate::harness::{cases, check_cleanly};
use crate::scene_target::{check_scene_text, manifest};

fn corpus() -> Vec<String> {
    let mut texts: Vec<String> = [
        "tests/data/cube.obj",
        "tests/data/tetrahedron.obj",
        "scenes/meshes/bracket.obj",
    ]
    .iter()
    .map(|path| std::fs::read_to_string(manifest(path)).expect("a mesh"))
    .collect();
    // An octahedron in every corner form, with negative indices and skipped statements.
    texts.push(
        "mtllib a.mtl\no oct\nv 1 0 0\nv -1 0 0\nv 0 1 0\nv 0 -1 0\nv 0 0 1 1\nv 0 0 -1 0.5 0.5 0.5\n\
         vt 0 0\nvn 0 0 1\ng top\ns 1\nusemtl m\n\
         f 1/1/1 3/1/1 5/1/1\nf 3//1 2//1 5//1\nf 2/1 4/1 5/1\nf 4 1 5\n\
         f -5 -6 -1\nf -4 -5 -1\nf -3 -4 -1\nf -6 -3 -1\nl 1 2\np 3\n"
            .to_string(),
    );
    texts
}

#[derive(Clone, Debug)]
enum LineMutation {
    Remove(Index),
    Repeat(Index),
    Swap(Index, Index),
    /// Replace one word of a line.
    Word(Index, Index, String),
    /// Reverse a face (flips its winding).
    Reverse(Index),
    Insert(Index, String),
    Truncate(Index),
}

fn hostile_word() -> impl Strategy<Value = String> {
    let fixed = prop::sample::select(vec![
        "nan",
        "NaN",
        "inf",
        "-inf",
        "infinity",
        "1e400",
        "-1e400",
        "1e-400",
        "1e300",
        "-1e300",
        "1e200",
        "1e38",
        "3.5e38",
        "1e-300",
        "1e-30",
        "-0",
        "0",
        "1",
        "-1",
        "2",
        "1/2/3",
        "1//",
        "//1",
        "/",
        "",
        "0/0",
        "-0",
        "9223372036854775807",
        "-9223372036854775808",
        "9223372036854775808",
        "18446744073709551616",
        "4294967296",
        "99999",
        "-99999",
        "1.5",
        "x",
        "é",
        "\u{0}",
        "\u{1b}[2J",
        "\u{2028}",
        "#",
        "f",
        "v",
    ])
    .prop_map(str::to_string);
    prop_oneof![
        4 => fixed,
        1 => any::<i64>().prop_map(|i| i.to_string()),
        1 => any::<f64>().prop_map(|x| x.to_string()),
    ]
}

fn hostile_line() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "v 0 0 0",
            "v 1 2",
            "v 1 2 3 4",
            "v 1 2 3 0",
            "v 1 2 3 4 5",
            "f 1 2",
            "f 1 1 1",
            "f 1 2 3 4 5 6 7 8",
            "f",
            "vt",
            "curv 0 1",
            "surf 0 1",
            "o",
            "#",
            "\\",
            "f 1/ 2/ 3/",
            "f -1 -2 -3",
            "v nan 0 0",
            "\r",
            "v\t0\t0\t0",
            "f\u{b}1\u{c}2\u{85}3",
        ])
        .prop_map(str::to_string),
        "[ -~]{0,40}",
        prop::collection::vec(hostile_word(), 0..6).prop_map(|w| w.join(" ")),
        (1..3000usize).prop_map(|n| format!(
            "f {}",
            (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join(" ")
        )),
    ]
}

fn line_mutation() -> impl Strategy<Value = LineMutation> {
    prop_oneof![
        2 => any::<Index>().prop_map(LineMutation::Remove),
        1 => any::<Index>().prop_map(LineMutation::Repeat),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| LineMutation::Swap(a, b)),
        4 => (any::<Index>(), any::<Index>(), hostile_word())
            .prop_map(|(l, w, s)| LineMutation::Word(l, w, s)),
        1 => any::<Index>().prop_map(LineMutation::Reverse),
        2 => (any::<Index>(), hostile_line()).prop_map(|(i, l)| LineMutation::Insert(i, l)),
        1 => any::<Index>().prop_map(LineMutation::Truncate),
    ]
}

fn apply(lines: &mut Vec<String>, mutation: &LineMutation) {
    if lines.is_empty() {
        return;
    }
    let len = lines.len();
    match mutation {
        LineMutation::Remove(i) => {
            lines.remove(i.index(len));
        }
        LineMutation::Repeat(i) => {
            let line = lines[i.index(len)].clone();
            lines.insert(i.index(len), line);
        }
        LineMutation::Swap(a, b) => lines.swap(a.index(len), b.index(len)),
        LineMutation::Word(l, w, word) => {
            let line = &mut lines[l.index(len)];
            let mut words: Vec<String> = line.split(' ').map(str::to_string).collect();
            let n = words.len();
            words[w.index(n)] = word.clone();
            *line = words.join(" ");
        }
        LineMutation::Reverse(i) => {
            let line = &mut lines[i.index(len)];
            if let Some(corners) = line.strip_prefix("f ") {
                let mut corners: Vec<&str> = corners.split_whitespace().collect();
                corners.reverse();
                *line = format!("f {}", corners.join(" "));
            }
        }
        LineMutation::Insert(i, line) => lines.insert(i.index(len + 1), line.clone()),
        LineMutation::Truncate(i) => lines.truncate(i.index(len)),
    }
}

/// Errors from `parse_obj` + `integrals` under field `m` name the file `t.obj`.
fn names_obj_location(location: &str, _detail: &str) -> bool {
    location == "m"
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(0.2),
        failure_persistence: None,
        rng_seed: crate::harness::rng_seed(),
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_obj_meshes_are_read_or_refused_cleanly(
        which in any::<Index>(),
        mutations in prop::collection::vec(line_mutation(), 1..5),
        density in any::<bool>(),
        scale in prop::sample::select(vec![1.0, 1e-30, 1e-10, 0.5, 3.0, 1e10, 1e30, 1e200]),
    ) {
        let corpus = corpus();
        let mut lines: Vec<String> =
            corpus[which.index(corpus.len())].lines().map(str::to_string).collect();
        for mutation in &mutations {
            apply(&mut lines, mutation);
        }
        let text = lines.join("\n");

        // Directly: the reader and the solid checks.
        if let crate::harness::Outcome::Rejected(message) = check_cleanly(
            "the OBJ reader",
            text.clone(),
            |text| TriangleMesh::parse_obj(&text, "t.obj", "m")?.integrals("m"),
            names_obj_location,
        ) {
            // After the field comes the file, and for a syntax error its line.
            prop_assert!(message.starts_with("m: t.obj"), "{}", message);
        }

        // As a scene's mesh body, built on the CPU backends.
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(dir.path().join("m.obj"), &text).expect("write the mesh");
        let amount = if density { "\"density\": 700" } else { "\"mass\": 2" };
        let scene = format!(
            r#"{{"dt": 0.001, "steps": 1, "bodies": [{{{amount},
                "shape": {{"mesh": {{"file": "m.obj", "scale": {scale:e}}}}}}}]}}"#
        );
        check_scene_text(scene, dir.path());
    }
}
