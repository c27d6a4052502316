//! Byte-level: the scene files in scenes/ truncated, bit-flipped, overwritten, spliced and
//! cut, written to a file and read with `Scene::load` (so invalid UTF-8 is reachable too).

use proptest::prelude::*;
use proptest::sample::Index;

use crate::harness::cases;
use crate::scene_target::{check_scene_file, manifest};

/// The scene files, their generated crowds cut to a few dozen bodies so that one case stays
/// well under a millisecond (a mutation can still grow a count, by a digit or two).
fn corpus() -> Vec<Vec<u8>> {
    ["example.json", "floor.json", "rain.json", "shapes.json"]
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(manifest("scenes").join(name)).expect("a scene");
            text.replace("\"count\": 100000", "\"count\": 40")
                .replace("\"count\": 5000", "\"count\": 30")
                .into_bytes()
        })
        .collect()
}

#[derive(Clone, Debug)]
enum ByteMutation {
    Truncate(Index),
    FlipBit(Index, u8),
    Overwrite(Index, u8),
    Insert(Index, Vec<u8>),
    Delete(Index, usize),
    Duplicate(Index, usize),
}

fn byte_mutation() -> impl Strategy<Value = ByteMutation> {
    let splice = prop_oneof![
        prop::collection::vec(any::<u8>(), 1..8),
        prop::sample::select(vec![
            &b"1e400"[..],
            b"NaN",
            b"-",
            b"\"",
            b"\\",
            b"{",
            b"[",
            b"]}",
            b",",
            b"9999999999",
            b"\xff\xfe",
            b"\xc3",
            b"\xed\xa0\x80",
            b"\n",
            b"\0",
        ])
        .prop_map(<[u8]>::to_vec),
    ];
    prop_oneof![
        1 => any::<Index>().prop_map(ByteMutation::Truncate),
        3 => (any::<Index>(), 0..8u8).prop_map(|(i, bit)| ByteMutation::FlipBit(i, bit)),
        2 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| ByteMutation::Overwrite(i, b)),
        3 => (any::<Index>(), splice).prop_map(|(i, bytes)| ByteMutation::Insert(i, bytes)),
        1 => (any::<Index>(), 1..40usize).prop_map(|(i, n)| ByteMutation::Delete(i, n)),
        1 => (any::<Index>(), 1..40usize).prop_map(|(i, n)| ByteMutation::Duplicate(i, n)),
    ]
}

fn apply(bytes: &mut Vec<u8>, mutation: &ByteMutation) {
    if bytes.is_empty() {
        return;
    }
    let len = bytes.len();
    match mutation {
        ByteMutation::Truncate(i) => bytes.truncate(i.index(len)),
        ByteMutation::FlipBit(i, bit) => bytes[i.index(len)] ^= 1 << bit,
        ByteMutation::Overwrite(i, b) => bytes[i.index(len)] = *b,
        ByteMutation::Insert(i, more) => {
            let at = i.index(len + 1);
            bytes.splice(at..at, more.iter().copied());
        }
        ByteMutation::Delete(i, n) => {
            let at = i.index(len);
            bytes.drain(at..(at + n).min(len));
        }
        ByteMutation::Duplicate(i, n) => {
            let at = i.index(len);
            let copy = bytes[at..(at + n).min(len)].to_vec();
            bytes.splice(at..at, copy);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(0.3),
        failure_persistence: None,
        rng_seed: crate::harness::rng_seed(),
        ..ProptestConfig::default()
    })]

    #[test]
    fn corrupted_scene_files_are_read_or_refused_cleanly(
        which in any::<Index>(),
        mutations in prop::collection::vec(byte_mutation(), 1..6),
    ) {
        let corpus = corpus();
        let mut bytes = corpus[which.index(corpus.len())].clone();
        for mutation in &mutations {
            apply(&mut bytes, mutation);
        }
        // Next to a copy of the meshes, so shapes.json finds meshes/bracket.obj.
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::create_dir(dir.path().join("meshes")).expect("a mesh directory");
        std::fs::copy(
            manifest("scenes/meshes/bracket.obj"),
            dir.path().join("meshes/bracket.obj"),
        )
        .expect("copy the mesh");
        let path = dir.path().join("scene.json");
        std::fs::write(&path, &bytes).expect("write the scene");
        check_scene_file(path);
    }
}

#[test]
fn the_unmutated_corpus_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("meshes")).unwrap();
    std::fs::copy(
        manifest("scenes/meshes/bracket.obj"),
        dir.path().join("meshes/bracket.obj"),
    )
    .unwrap();
    for (i, bytes) in corpus().into_iter().enumerate() {
        let path = dir.path().join(format!("scene{i}.json"));
        std::fs::write(&path, bytes).unwrap();
        assert!(check_scene_file(path), "scene {i} of the corpus");
    }
}
