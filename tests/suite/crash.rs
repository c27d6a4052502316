//! Crash consistency: `rigid-crowd run --checkpoint --record` killed with SIGKILL at random
//! (seeded) moments and resumed each time ends with final states and a trajectory byte for
//! byte those of a run never interrupted, and leaves no temporary file behind.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rigid_crowd::Checkpoint;

/// A crowd of boxes and spheres falling onto a floor and a wall: contacts, drag, spin.
const SCENE: &str = r#"{
  "version": 1, "dt": 0.002, "steps": 600, "integrator": "rk4",
  "forces": [
    {"type": "gravity", "acceleration": [0, 0, -9.81]},
    {"type": "linear_drag", "linear": 0.3, "angular": 0.05}
  ],
  "planes": [
    {"point": [0, 0, 0], "normal": [0, 0, 1], "restitution": 0.4, "friction": 0.5},
    {"point": [-2, 0, 0], "normal": [1, 0, 0], "restitution": 0.6, "friction": 0.2}
  ],
  "crowd": {"count": 40, "seed": 11, "region": [[-2, -2, 0.5], [2, 2, 3]],
            "mass": [0.5, 5.0], "size": [0.2, 0.6], "shapes": ["box", "sphere"],
            "speed": 3.0, "spin": 8.0}
}"#;

struct Case {
    backend: &'static str,
    /// `--out` and `--record` file names (their extensions pick the formats).
    out: &'static str,
    record: &'static str,
    every: u64,
    checkpoint_every: u64,
    kills: usize,
    seed: u64,
}

/// What happened over a case, for the report and the assertions.
#[derive(Debug, Default)]
struct Tally {
    kills: usize,
    /// Kills after which a checkpoint was there to resume from.
    resumed: usize,
    /// Kills of a resumed run.
    killed_resumes: usize,
    /// Temporary files (`.NAME.tmp-PID`) the killed runs left, for the next ones to remove.
    temporaries_left: usize,
    /// Runs (fresh or resumed) that completed before their kill came, or the last one.
    completed: usize,
    /// ... of which resumed ones.
    completed_by_resume: usize,
}

fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rigid-crowd"));
    command.stdout(Stdio::null()).stderr(Stdio::piped());
    command
}

fn run_args(case: &Case, dir: &Path, checkpoint: bool) -> Vec<String> {
    let mut args = vec![
        "run".to_string(),
        dir.join("scene.json").display().to_string(),
        "--backend".into(),
        case.backend.into(),
        "--quiet".into(),
        "--out".into(),
        dir.join(case.out).display().to_string(),
        "--record".into(),
        dir.join(case.record).display().to_string(),
        "--every".into(),
        case.every.to_string(),
    ];
    if checkpoint {
        args.extend([
            "--checkpoint".into(),
            dir.join("run.ckpt").display().to_string(),
            "--checkpoint-every".into(),
            case.checkpoint_every.to_string(),
        ]);
    }
    args
}

/// Waits for `child` and checks that it succeeded; returns its stderr.
fn finished(child: Child, what: &str) -> String {
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{what} failed: {stderr}");
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    stderr
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn assert_same_bytes(got: &Path, want: &Path, context: &str) {
    let (a, b) = (std::fs::read(got).unwrap(), std::fs::read(want).unwrap());
    assert!(
        a == b,
        "{context}: {} ({} bytes) differs from the uninterrupted run's {} ({} bytes)",
        got.display(),
        a.len(),
        want.display(),
        b.len()
    );
}

/// Kills the run `case.kills` times at random moments, resuming after each kill (or
/// starting again when no checkpoint was written yet); every run that completes must have
/// written exactly the uninterrupted run's files.
fn killed_and_resumed(case: &Case) -> Tally {
    let reference = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    for dir in [reference.path(), work.path()] {
        std::fs::write(dir.join("scene.json"), SCENE).unwrap();
    }
    // The uninterrupted run, without checkpoints: the files every other run must match.
    let child = binary()
        .args(run_args(case, reference.path(), false))
        .spawn()
        .unwrap();
    finished(child, "the uninterrupted run");
    let (want_out, want_record) = (
        reference.path().join(case.out),
        reference.path().join(case.record),
    );
    // The same with checkpoints, uninterrupted: the same files, and how long a run takes.
    let started = Instant::now();
    let child = binary()
        .args(run_args(case, work.path(), true))
        .spawn()
        .unwrap();
    finished(child, "the checkpointed run");
    let span = started.elapsed().as_secs_f64();
    let (out, record, checkpoint) = (
        work.path().join(case.out),
        work.path().join(case.record),
        work.path().join("run.ckpt"),
    );
    assert_same_bytes(&out, &want_out, "checkpointed, uninterrupted");
    assert_same_bytes(&record, &want_record, "checkpointed, uninterrupted");

    let mut rng = crate::common::Rng(case.seed); // reproducible kill moments
    let mut tally = Tally::default();
    let mut fresh = true;
    let check_complete = |tally: &mut Tally, resumed: bool| {
        assert_same_bytes(&out, &want_out, "after the kills");
        assert_same_bytes(&record, &want_record, "after the kills");
        tally.completed += 1;
        tally.completed_by_resume += resumed as usize;
    };
    // Kills land at random moments: go on past `case.kills` until one came after a checkpoint
    // and one killed a resumed run (a slow start-up, as the GPU's, can put the first few
    // kills before any checkpoint), within a bound that keeps the test finite.
    let enough = |tally: &Tally| {
        tally.kills >= case.kills && tally.killed_resumes >= 1 && tally.resumed >= case.kills / 4
    };
    while !enough(&tally) && tally.kills < 10 * case.kills {
        if fresh {
            // A new chain: nothing of the last one may be mistaken for its results.
            for path in [&out, &record, &checkpoint] {
                let _ = std::fs::remove_file(path);
            }
        }
        let resumed = !fresh;
        let args: Vec<String> = if resumed {
            vec![
                "resume".into(),
                checkpoint.display().to_string(),
                "--quiet".into(),
            ]
        } else {
            run_args(case, work.path(), true)
        };
        let mut child = binary().args(&args).spawn().unwrap();
        // A resumed run has less to do: its kill comes sooner, so that resumed runs are
        // killed too.
        let reach = if resumed { 0.6 } else { 1.2 };
        let deadline = Instant::now() + Duration::from_secs_f64(rng.unit() * reach * span);
        while Instant::now() < deadline && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(1));
        }
        if child.try_wait().unwrap().is_some() {
            // It finished before its kill came.
            finished(child, if resumed { "a resumed run" } else { "a run" });
            check_complete(&mut tally, resumed);
            fresh = true;
            continue;
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        tally.kills += 1;
        tally.killed_resumes += resumed as usize;
        let pid = child.id();
        tally.temporaries_left += names_in(work.path())
            .iter()
            .filter(|name| name.ends_with(&format!(".tmp-{pid}")))
            .count();
        // Whatever the moment, a checkpoint on disk is whole.
        fresh = !checkpoint.exists();
        if !fresh {
            Checkpoint::read(&checkpoint).unwrap_or_else(|e| {
                panic!("after kill {}: the checkpoint is broken: {e}", tally.kills)
            });
            tally.resumed += 1;
        }
    }
    // The last one runs to the end.
    let args: Vec<String> = if fresh {
        for path in [&out, &record] {
            let _ = std::fs::remove_file(path);
        }
        run_args(case, work.path(), true)
    } else {
        vec![
            "resume".into(),
            checkpoint.display().to_string(),
            "--quiet".into(),
        ]
    };
    let child = binary().args(&args).spawn().unwrap();
    finished(child, "the last run");
    check_complete(&mut tally, !fresh);
    // Every temporary file of the killed runs was cleaned up by the runs after them, and the
    // file in progress of the recording is in place.
    let mut expected = vec![case.out, case.record, "run.ckpt", "scene.json"];
    expected.sort();
    assert_eq!(names_in(work.path()), expected, "{}", case.backend);
    println!(
        "{}: {tally:?}, uninterrupted checkpointed run {span:.2} s",
        case.backend
    );
    assert!(
        tally.resumed >= case.kills / 4,
        "too few kills came after a checkpoint to test resuming: {tally:?}"
    );
    assert!(tally.completed_by_resume >= 1, "{tally:?}");
    assert!(tally.killed_resumes >= 1, "{tally:?}");
    // Each killed run leaves at least its claimed `--out` (unless killed before it claimed it).
    assert!(tally.temporaries_left >= case.kills / 2, "{tally:?}");
    tally
}

#[test]
fn killed_runs_resume_to_the_uninterrupted_files_on_the_fast_cpu_path() {
    killed_and_resumed(&Case {
        backend: "cpu",
        out: "final.csv",
        record: "trajectory.npz",
        every: 3,
        checkpoint_every: 5,
        kills: 20,
        seed: 0x5eed_0001,
    });
}

#[test]
fn killed_runs_resume_to_the_uninterrupted_files_on_the_reference() {
    killed_and_resumed(&Case {
        backend: "cpu-ref",
        out: "final.npy",
        record: "trajectory.csv",
        every: 2,
        checkpoint_every: 7,
        kills: 20,
        seed: 0x5eed_0002,
    });
}

#[test]
fn killed_runs_resume_to_the_uninterrupted_files_on_the_gpu() {
    killed_and_resumed(&Case {
        backend: "gpu",
        out: "final.npz",
        record: "trajectory.npy",
        every: 4,
        checkpoint_every: 25,
        kills: 4,
        seed: 0x5eed_0003,
    });
}
