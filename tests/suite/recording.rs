//! Reading states back without blocking, and recording them: the frames are exactly the
//! states of their step on every backend, recording changes nothing, and the files are
//! valid CSV, `.npy` and `.npz` (parsed here without Python).

use crate::common;

use common::parse_npy;

use std::io::Read;
use std::path::Path;

use common::{gpu, rigid_crowd};
use rigid_crowd::glam::DVec3;
use rigid_crowd::record::{TRAJECTORY_COLUMNS, TrajectoryWriter, frame_count, record_run};
use rigid_crowd::{Backend, Body, Crowd, CrowdSpec, Force, ForceKind, Simulation};

/// A tumbling crowd under gravity, drag and a force that varies in time, so a frame taken at
/// the wrong step or a step taken twice would show.
fn crowd() -> Crowd {
    Crowd::new(CrowdSpec::new(300, 11).generate().unwrap(), 1e-3)
        .with_force(Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        }))
        .with_force(Force::on_all(ForceKind::LinearDrag {
            linear: 0.3,
            angular: 0.05,
        }))
        .with_force(Force::on_all(ForceKind::Sinusoidal {
            force: DVec3::new(1.0, 0.5, 0.0),
            torque: DVec3::new(0.0, 0.2, 0.1),
            offset: 0.0,
            amplitude: 1.0,
            frequency: 7.0,
            phase: 0.3,
        }))
}

fn simulation(crowd: &Crowd, backend: Backend) -> Simulation {
    match backend {
        Backend::Gpu => Simulation::gpu(crowd, gpu()),
        other => Simulation::new(crowd, other),
    }
    .unwrap()
}

/// `(step, time, bodies)` of every frame `record_run` hands out.
fn recorded(crowd: &Crowd, backend: Backend, steps: u64, every: u64) -> Vec<(u64, f64, Vec<Body>)> {
    let mut sim = simulation(crowd, backend);
    let mut frames = Vec::new();
    record_run(
        &mut sim,
        steps,
        every,
        |step, time, bodies| {
            frames.push((step, time, bodies.to_vec()));
            Ok(())
        },
        |_| {},
    )
    .unwrap();
    assert_eq!(sim.steps_taken(), steps);
    frames
}

#[test]
fn recorded_frames_are_the_states_of_their_step_on_every_backend() {
    let crowd = crowd();
    let (steps, every) = (53, 10);
    for backend in Backend::ALL {
        let frames = recorded(&crowd, backend, steps, every);
        assert_eq!(frames.len(), frame_count(steps, every));
        assert_eq!(frames.len(), 6);
        // The same steps, read back with the blocking `bodies()` after each batch.
        let mut sim = simulation(&crowd, backend);
        for (i, (step, time, bodies)) in frames.iter().enumerate() {
            assert_eq!(*step, i as u64 * every);
            if i > 0 {
                sim.step(every).unwrap();
            }
            assert_eq!(*time, sim.time());
            assert_eq!(bodies, &sim.bodies().unwrap(), "{backend:?}, frame {i}");
        }
        // Recording changes nothing: the frame at step 50 equals one uninterrupted run.
        let mut plain = simulation(&crowd, backend);
        plain.step(50).unwrap();
        assert_eq!(frames[5].2, plain.bodies().unwrap(), "{backend:?}");
        assert_ne!(frames[4].2, frames[5].2, "{backend:?}: the crowd moves");
    }
}

#[test]
fn tickets_redeem_once_in_any_order_and_only_on_their_simulation() {
    let crowd = crowd();
    for backend in Backend::ALL {
        let mut sim = simulation(&crowd, backend);
        let mut expected = Vec::new();
        let mut tickets = Vec::new();
        // Five outstanding requests: more than the two staging sets, so the oldest move to
        // host memory on the GPU.
        for batch in [3, 8, 1, 16, 5] {
            tickets.push(sim.request_states().unwrap());
            expected.push(sim.bodies().unwrap());
            sim.step(batch).unwrap();
        }
        assert_eq!(
            tickets.iter().map(|t| t.step()).collect::<Vec<_>>(),
            vec![0, 3, 11, 12, 28]
        );
        // Redeem newest first, half of them polled without blocking.
        for (i, ticket) in tickets.into_iter().enumerate().rev() {
            let bodies = if i % 2 == 0 {
                sim.finish().unwrap();
                loop {
                    if let Some(bodies) = sim.try_states(&ticket).unwrap() {
                        let spent = sim.try_states(&ticket).unwrap_err().to_string();
                        assert!(spent.contains("already redeemed"), "{spent}");
                        break bodies;
                    }
                }
            } else {
                sim.wait_states(ticket).unwrap()
            };
            assert_eq!(bodies, expected[i], "{backend:?}, ticket {i}");
        }
        let mut other = simulation(&crowd, backend);
        let foreign = other.request_states().unwrap();
        let e = sim.try_states(&foreign).unwrap_err().to_string();
        assert_eq!(
            e,
            "states ticket: was already redeemed or belongs to another simulation"
        );
        assert!(sim.wait_states(foreign).is_err());
    }
}

#[test]
fn a_request_does_not_block_the_integration_queued_behind_it() {
    // GPU: stepping continues while a request is outstanding, and the ticket still
    // holds the states of its own step.
    let crowd = crowd();
    let mut sim = simulation(&crowd, Backend::Gpu);
    sim.step(7).unwrap();
    let at_seven = sim.bodies().unwrap();
    let ticket = sim.request_states().unwrap();
    sim.step(40).unwrap();
    let at_47 = sim.bodies().unwrap();
    assert_eq!(sim.wait_states(ticket).unwrap(), at_seven);
    assert_ne!(at_seven, at_47);
}

fn f64s(data: &[u8]) -> Vec<f64> {
    data.chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// What a frame must hold: the CSV's columns of each body, in order.
fn rows(bodies: &[Body]) -> Vec<f64> {
    let mut text = Vec::new();
    rigid_crowd::write_states_csv(&mut text, bodies).unwrap();
    String::from_utf8(text)
        .unwrap()
        .lines()
        .skip(1)
        .flat_map(|line| {
            line.split(',')
                .skip(1)
                .map(|v| v.parse::<f64>().unwrap())
                .collect::<Vec<_>>()
        })
        .collect()
}

fn record_to(path: &Path, backend: Backend) -> Vec<(u64, f64, Vec<Body>)> {
    let crowd = crowd();
    let frames = recorded(&crowd, backend, 25, 10);
    let mut writer = TrajectoryWriter::create(path, crowd.bodies.len(), frames.len()).unwrap();
    for (step, time, bodies) in &frames {
        writer.write_frame(*step, *time, bodies).unwrap();
    }
    writer.finish().unwrap();
    frames
}

#[test]
fn npy_and_npz_files_hold_the_frames_in_the_documented_shape() {
    let dir = tempfile::tempdir().unwrap();
    for backend in [Backend::FastCpu, Backend::Gpu] {
        let npy_path = dir.path().join("trajectory.npy");
        let frames = record_to(&npy_path, backend);
        let expected: Vec<f64> = frames.iter().flat_map(|(_, _, b)| rows(b)).collect();
        let npy = parse_npy(&std::fs::read(&npy_path).unwrap());
        assert_eq!(npy.descr, "<f8");
        assert_eq!(npy.shape, vec![3, 300, TRAJECTORY_COLUMNS.len()]);
        assert_eq!(f64s(&npy.data), expected);

        let npz_path = dir.path().join("trajectory.npz");
        record_to(&npz_path, backend);
        let mut archive = zip::ZipArchive::new(std::fs::File::open(&npz_path).unwrap()).unwrap();
        let mut entry = |name: &str| {
            let mut file = archive.by_name(name).unwrap();
            assert_eq!(file.compression(), zip::CompressionMethod::Stored);
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes).unwrap();
            parse_npy(&bytes)
        };
        let states = entry("states.npy");
        assert_eq!(states.shape, vec![3, 300, 19]);
        assert_eq!(f64s(&states.data), expected);
        let steps = entry("steps.npy");
        assert_eq!(
            (steps.descr.as_str(), steps.shape.as_slice()),
            ("<i8", &[3][..])
        );
        let steps: Vec<i64> = steps
            .data
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(steps, vec![0, 10, 20]);
        let times = entry("times.npy");
        assert_eq!(times.descr, "<f8");
        let expected_times: Vec<f64> = frames.iter().map(|f| f.1).collect();
        assert_eq!(f64s(&times.data), expected_times);
    }
}

#[test]
fn a_csv_trajectory_has_step_time_and_body_before_the_state_columns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trajectory.csv");
    let frames = record_to(&path, Backend::Reference);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        format!("step,time,body,{}", TRAJECTORY_COLUMNS.join(","))
    );
    let values: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(values.len(), 3 * 300);
    for (f, (step, time, bodies)) in frames.iter().enumerate() {
        let expected = rows(bodies);
        for (i, row) in values[f * 300..(f + 1) * 300].iter().enumerate() {
            assert_eq!(row[..3], [*step as f64, *time, i as f64]);
            assert_eq!(row[3..], expected[i * 19..(i + 1) * 19]);
        }
    }
}

#[test]
fn an_unfinished_trajectory_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let bodies = crowd().bodies;
    for name in ["t.csv", "t.npy", "t.npz"] {
        let path = dir.path().join(name);
        let mut writer = TrajectoryWriter::create(&path, bodies.len(), 2).unwrap();
        writer.write_frame(0, 0.0, &bodies).unwrap();
        let e = writer
            .write_frame(1, 0.1, &bodies[1..])
            .unwrap_err()
            .to_string();
        assert_eq!(e, "record: a frame of 299 bodies in a trajectory of 300");
        assert_eq!(
            writer.finish().unwrap_err().to_string(),
            "record: 1 of 2 frames written"
        );
        drop(TrajectoryWriter::create(&path, bodies.len(), 1).unwrap());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "{name}");
    }
}

fn example_scene() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenes/example.json")
        .to_str()
        .unwrap()
        .to_string()
}

#[test]
fn run_records_the_trajectory_and_the_last_frame_is_the_final_state() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("final.csv");
    let record = dir.path().join("run.npz");
    let scene = example_scene();
    let output = rigid_crowd(
        &[
            "run",
            &scene,
            "--backend",
            "gpu",
            "--steps",
            "100",
            "--out",
            out.to_str().unwrap(),
            "--record",
            record.to_str().unwrap(),
            "--every",
            "25",
        ],
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("5 frames to"), "{stderr}");
    // stderr is a pipe here: no progress bar.
    assert!(
        !stderr.contains("ETA") && !stderr.contains('\r'),
        "{stderr}"
    );
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&record).unwrap()).unwrap();
    let mut bytes = Vec::new();
    archive
        .by_name("states.npy")
        .unwrap()
        .read_to_end(&mut bytes)
        .unwrap();
    let states = parse_npy(&bytes);
    assert_eq!(states.shape, vec![5, 2, 19]);
    let last = &f64s(&states.data)[4 * 2 * 19..];
    let text = std::fs::read_to_string(&out).unwrap();
    let final_rows: Vec<f64> = text
        .lines()
        .skip(1)
        .flat_map(|l| {
            l.split(',')
                .skip(1)
                .map(|v| v.parse::<f64>().unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(last, final_rows.as_slice());
}

#[test]
fn bad_record_flags_are_named_and_leave_no_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("final.csv");
    let scene = example_scene();
    let cases: [(&[&str], &str); 4] = [
        (
            &["--record", "run.json"],
            "error: --record: cannot tell the format of",
        ),
        (
            &["--record", "run.npy", "--every", "0"],
            "error: --every: must be at least 1",
        ),
        (&["--record", "missing-dir/run.npy"], "missing-dir/run.npy"),
        (&["--every", "5"], "error: --every: needs --record FILE"),
    ];
    for (extra, expected) in cases {
        let extra: Vec<String> = extra
            .iter()
            .map(|a| match *a {
                "run.json" | "run.npy" | "missing-dir/run.npy" => {
                    dir.path().join(a).to_str().unwrap().to_string()
                }
                other => other.to_string(),
            })
            .collect();
        let mut args = vec![
            "run",
            &scene,
            "--backend",
            "cpu",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(extra.iter().map(String::as_str));
        let output = rigid_crowd(&args, &[]);
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(expected), "{stderr}");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{stderr}"
        );
    }
}

#[test]
fn bench_times_the_gpu_recorded_against_unrecorded() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bench.json");
    let output = rigid_crowd(
        &[
            "bench",
            "--bodies",
            "200",
            "--steps",
            "20",
            "--repeats",
            "1",
            "--backends",
            "gpu",
            "--fuse",
            "8",
            "--record-every",
            "10",
            "--json",
            json.to_str().unwrap(),
        ],
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("recording every 10 steps"), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let costs = report["recording"].as_array().unwrap();
    assert_eq!(costs.len(), 1);
    let cost = &costs[0];
    assert_eq!(
        (cost["bodies"].as_u64(), cost["every"].as_u64()),
        (Some(200), Some(10))
    );
    let (plain, recorded) = (
        cost["unrecorded_body_steps_per_second"].as_f64().unwrap(),
        cost["recorded_body_steps_per_second"].as_f64().unwrap(),
    );
    assert!(plain > 0.0 && recorded > 0.0);
    assert!((cost["kept"].as_f64().unwrap() - recorded / plain).abs() < 1e-12);

    for (args, expected) in [
        (
            &["--record-every", "0"][..],
            "error: --record-every: must be at least 1",
        ),
        (
            &["--record-every", "5", "--backends", "cpu"],
            "error: --record-every: measures the gpu backend",
        ),
    ] {
        let mut all = vec!["bench", "--bodies", "100", "--steps", "5"];
        all.extend_from_slice(args);
        let output = rigid_crowd(&all, &[]);
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.starts_with(expected), "{stderr}");
    }
}

#[test]
fn a_recorder_advanced_in_odd_batches_records_the_same_frames() {
    use rigid_crowd::record::Recorder;
    let crowd = crowd();
    for backend in Backend::ALL {
        let whole = recorded(&crowd, backend, 50, 10);
        let mut sim = simulation(&crowd, backend);
        let mut frames = Vec::new();
        let mut recorder = Recorder::start(&mut sim, 10).unwrap();
        for batch in [7, 7, 7, 7, 7, 7, 7, 1] {
            recorder
                .advance(
                    &mut sim,
                    batch,
                    |step, time, bodies| {
                        frames.push((step, time, bodies.to_vec()));
                        Ok(())
                    },
                    |_| {},
                )
                .unwrap();
        }
        recorder
            .finish(&mut sim, |step, time, bodies| {
                frames.push((step, time, bodies.to_vec()));
                Ok(())
            })
            .unwrap();
        assert_eq!(frames, whole, "{backend:?}");
    }
}

#[test]
fn recording_across_checkpoints_writes_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let scene = example_scene();
    let run = |extra: &[&str], record: &Path| {
        let out = dir.path().join("final.csv");
        let mut args = vec![
            "run",
            &scene,
            "--backend",
            "cpu",
            "--steps",
            "50",
            "--out",
            out.to_str().unwrap(),
            "--record",
            record.to_str().unwrap(),
            "--every",
            "10",
        ];
        args.extend_from_slice(extra);
        let output = rigid_crowd(&args, &[]);
        assert!(output.status.success(), "{output:?}");
        std::fs::read(record).unwrap()
    };
    let plain = run(&[], &dir.path().join("plain.npy"));
    let checkpoint = dir.path().join("run.checkpoint");
    let with_checkpoints = run(
        &[
            "--checkpoint",
            checkpoint.to_str().unwrap(),
            "--checkpoint-every",
            "7",
        ],
        &dir.path().join("checkpointed.npy"),
    );
    assert_eq!(parse_npy(&plain).shape, vec![6, 2, 19]);
    assert_eq!(plain, with_checkpoints);
}
