//! A full disk: every write past a file-size limit fails (`ulimit -f` with SIGXFSZ ignored,
//! so a write returns EFBIG as it returns ENOSPC on a full disk). A run whose recording,
//! checkpoint or final states cannot be written says so in one line naming the file and
//! exits 1, without a panic; the checkpoint it had written stays whole and resumes, and the
//! files already there from before (final states, trajectory, checkpoint) are untouched.

use std::path::Path;
use std::process::{Command, Output};

use rigid_crowd::Checkpoint;

const SCENE: &str = r#"{
  "version": 1, "dt": 0.002, "steps": 100, "integrator": "rk4",
  "forces": [{"type": "gravity", "acceleration": [0, 0, -9.81]}],
  "planes": [{"point": [0, 0, 0], "normal": [0, 0, 1], "restitution": 0.4, "friction": 0.5}],
  "crowd": {"count": 100, "seed": 5, "region": [[-2, -2, 0.5], [2, 2, 3]],
            "mass": [0.5, 5.0], "size": [0.2, 0.6], "shapes": ["box", "sphere"],
            "speed": 3.0, "spin": 8.0}
}"#;

/// `rigid-crowd ARGS` in `dir`, with files limited to `limit` bytes (a multiple of 512) if
/// given.
fn rigid_crowd(dir: &Path, limit: Option<u64>, args: &[&str]) -> Output {
    let binary = env!("CARGO_BIN_EXE_rigid-crowd");
    let mut command = match limit {
        Some(bytes) => {
            assert_eq!(bytes % 512, 0);
            let mut sh = Command::new("sh");
            // POSIX `ulimit -f` counts 512-byte blocks (dash, and bash as `sh`).
            sh.args([
                "-c",
                r#"trap '' XFSZ; ulimit -f "$1" || exit 99; shift; exec "$@""#,
            ])
            .arg("sh")
            .arg((bytes / 512).to_string())
            .arg(binary);
            sh
        }
        None => Command::new(binary),
    };
    let output = command.args(args).current_dir(dir).output().unwrap();
    assert_ne!(output.status.code(), Some(99), "ulimit -f failed");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "a panic: {stderr}");
    output
}

/// The run failed with exit status 1 and one line on stderr that says `File too large`
/// (EFBIG) and names `file`; returns the line.
fn refused(output: &Output, file: &str) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr:?}");
    assert!(
        stderr.starts_with("error: ") && stderr.ends_with('\n'),
        "{stderr:?}"
    );
    assert!(stderr.contains(file), "names {file}: {stderr}");
    assert!(stderr.contains("File too large"), "{stderr}");
    stderr
}

fn succeeded(output: &Output) {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Two directories holding the scene: one for the uninterrupted run, one for the test.
fn dirs() -> (tempfile::TempDir, tempfile::TempDir) {
    let (reference, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for dir in [&reference, &work] {
        std::fs::write(dir.path().join("scene.json"), SCENE).unwrap();
    }
    (reference, work)
}

const OLD_FINAL: &[u8] = b"the final states of an earlier run\n";
const OLD_TRAJECTORY: &[u8] = b"the trajectory of an earlier run\n";

#[test]
fn a_recording_that_fills_the_disk_stops_the_run_and_the_checkpoint_resumes_it() {
    for record in ["trajectory.npy", "trajectory.npz", "trajectory.csv"] {
        let (reference, work) = dirs();
        let args = [
            "run",
            "scene.json",
            "--backend",
            "cpu",
            "--out",
            "final.csv",
            "--record",
            record,
            "--every",
            "1",
        ];
        succeeded(&rigid_crowd(reference.path(), None, &args));
        // Room for 15.5 frames (of 101): the recording fills it between the checkpoints at
        // steps 10 and 20 (a frame is 100 bodies x 19 values: 15 kB in binary, about 40 kB
        // as CSV; a checkpoint is 27 kB).
        let frame = read(reference.path(), record).len() as u64 / 101;
        let limit = (frame * 31 / 2).next_multiple_of(512);
        let dir = work.path();
        std::fs::write(dir.join("final.csv"), OLD_FINAL).unwrap();
        std::fs::write(dir.join(record), OLD_TRAJECTORY).unwrap();
        let mut checkpointed = args.to_vec();
        checkpointed.extend(["--checkpoint", "run.ckpt", "--checkpoint-every", "10"]);
        let line = refused(&rigid_crowd(dir, Some(limit), &checkpointed), record);
        assert!(
            line.contains("the last checkpoint is run.ckpt (step 10)")
                && line.contains("rigid-crowd resume run.ckpt"),
            "{line}"
        );
        // What was there is untouched; the checkpoint is whole.
        assert_eq!(read(dir, "final.csv"), OLD_FINAL, "{record}");
        assert_eq!(read(dir, record), OLD_TRAJECTORY, "{record}");
        assert_eq!(Checkpoint::read(dir.join("run.ckpt")).unwrap().step(), 10);
        // With room again, resuming finishes the run as if nothing had happened.
        succeeded(&rigid_crowd(dir, None, &["resume", "run.ckpt", "--quiet"]));
        assert_eq!(
            read(dir, "final.csv"),
            read(reference.path(), "final.csv"),
            "{record}"
        );
        assert!(
            read(dir, record) == read(reference.path(), record),
            "{record} differs from the uninterrupted run's"
        );
        assert_eq!(
            names_in(dir),
            ["final.csv", "run.ckpt", "scene.json", record],
            "no temporary or partial file is left"
        );
    }
}

#[test]
fn a_recording_without_checkpoints_that_fills_the_disk_leaves_nothing_behind() {
    for record in ["trajectory.npz", "trajectory.npy", "trajectory.csv"] {
        let (_, work) = dirs();
        let dir = work.path();
        std::fs::write(dir.join(record), OLD_TRAJECTORY).unwrap();
        let output = rigid_crowd(
            dir,
            Some(64 << 10),
            &[
                "run",
                "scene.json",
                "--backend",
                "cpu",
                "--out",
                "final.npz",
                "--record",
                record,
            ],
        );
        // One line: for .npz also no second message from the archive's writer.
        refused(&output, record);
        assert_eq!(read(dir, record), OLD_TRAJECTORY);
        assert_eq!(
            names_in(dir),
            ["scene.json", record],
            "no temporary is left"
        );
    }
}

#[test]
fn a_checkpoint_that_cannot_be_written_leaves_the_previous_one_whole() {
    let (reference, work) = dirs();
    fn run(steps: &str) -> Vec<&str> {
        vec![
            "run",
            "scene.json",
            "--backend",
            "cpu-ref",
            "--out",
            "final.csv",
            "--steps",
            steps,
            "--checkpoint",
            "run.ckpt",
            "--checkpoint-every",
            "10",
        ]
    }
    succeeded(&rigid_crowd(reference.path(), None, &run("100")));
    let dir = work.path();
    succeeded(&rigid_crowd(dir, None, &run("40")));
    let (checkpoint, final_states) = (read(dir, "run.ckpt"), read(dir, "final.csv"));
    assert_eq!(Checkpoint::read(dir.join("run.ckpt")).unwrap().step(), 40);
    // Sixty more steps, with room for 4 kB: the checkpoint (27 kB) at step 50 fails.
    let output = rigid_crowd(
        dir,
        Some(4 << 10),
        &["resume", "run.ckpt", "--steps", "60", "--quiet"],
    );
    let line = refused(&output, "run.ckpt");
    assert!(line.contains("run.ckpt is unchanged"), "{line}");
    assert_eq!(
        read(dir, "run.ckpt"),
        checkpoint,
        "the checkpoint is untouched"
    );
    assert_eq!(
        read(dir, "final.csv"),
        final_states,
        "so are the final states"
    );
    assert_eq!(names_in(dir), ["final.csv", "run.ckpt", "scene.json"]);
    // With room again, it resumes to the uninterrupted run's states.
    succeeded(&rigid_crowd(
        dir,
        None,
        &["resume", "run.ckpt", "--steps", "60", "--quiet"],
    ));
    assert_eq!(read(dir, "final.csv"), read(reference.path(), "final.csv"));
}

#[test]
fn final_states_that_cannot_be_written_leave_the_old_ones_and_a_checkpoint_to_resume() {
    let (reference, work) = dirs();
    let args = [
        "run",
        "scene.json",
        "--backend",
        "cpu",
        "--out",
        "final.csv",
        "--checkpoint",
        "run.ckpt",
    ];
    succeeded(&rigid_crowd(reference.path(), None, &args));
    let dir = work.path();
    std::fs::write(dir.join("final.csv"), OLD_FINAL).unwrap();
    // The checkpoint of 100 bodies (27 kB) fits in 32 kB, their CSV (37 kB) does not.
    let limit = 32 << 10;
    assert!(read(reference.path(), "final.csv").len() > limit);
    assert!(read(reference.path(), "run.ckpt").len() < limit);
    refused(&rigid_crowd(dir, Some(limit as u64), &args), "final.csv");
    assert_eq!(
        read(dir, "final.csv"),
        OLD_FINAL,
        "the old final states are untouched"
    );
    assert_eq!(Checkpoint::read(dir.join("run.ckpt")).unwrap().step(), 100);
    succeeded(&rigid_crowd(dir, None, &["resume", "run.ckpt", "--quiet"]));
    assert_eq!(read(dir, "final.csv"), read(reference.path(), "final.csv"));
    assert_eq!(names_in(dir), ["final.csv", "run.ckpt", "scene.json"]);
}

#[test]
fn final_states_as_npz_that_cannot_be_written_leave_nothing_behind() {
    let (_, work) = dirs();
    let dir = work.path();
    std::fs::write(dir.join("final.npz"), OLD_FINAL).unwrap();
    // 100 x 19 float32 values are 7.6 kB.
    let output = rigid_crowd(
        dir,
        Some(4 << 10),
        &[
            "run",
            "scene.json",
            "--backend",
            "cpu",
            "--out",
            "final.npz",
        ],
    );
    refused(&output, "final.npz");
    assert_eq!(read(dir, "final.npz"), OLD_FINAL);
    assert_eq!(names_in(dir), ["final.npz", "scene.json"]);
}
