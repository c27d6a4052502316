//! Checkpoints continue a run bit for bit on the backend that wrote them, survive a crash
//! mid-write, and refuse truncated, corrupted, foreign and future files with a clear error.

use crate::common;

use common::rigid_crowd;
use rigid_crowd::glam::DVec3;
use rigid_crowd::{
    Backend, CHECKPOINT_VERSION, Checkpoint, Crowd, Error, ExternalLoad, Integrator, Plane,
    Simulation, cross_check_crowd,
};

/// Every force kind (custom included), a floor and a wall the crowd hits, lie_rk4.
fn crowd() -> Crowd {
    cross_check_crowd(300, 11, Integrator::LieRk4, 2e-3)
        .unwrap()
        .with_plane(Plane::through(
            DVec3::new(0.0, 0.0, -1.0),
            DVec3::Z,
            0.5,
            0.4,
        ))
        .with_plane(Plane::through(
            DVec3::new(3.0, 0.0, 0.0),
            -DVec3::X,
            0.7,
            0.2,
        ))
}

fn loads(count: usize) -> Vec<ExternalLoad> {
    (0..count)
        .map(|i| ExternalLoad {
            force: DVec3::new(0.1 * (i % 7) as f64, -0.2, 0.05),
            torque: DVec3::new(0.0, 0.01 * (i % 3) as f64, 0.0),
        })
        .collect()
}

fn open(crowd: &Crowd, backend: Backend) -> Simulation {
    match backend {
        Backend::Gpu => Simulation::gpu(crowd, common::gpu()),
        other => Simulation::new(crowd, other),
    }
    .unwrap()
}

#[test]
fn resuming_from_a_checkpoint_continues_bit_for_bit_on_every_backend() {
    let crowd = crowd();
    let custom = crowd.custom_force.clone().unwrap();
    for backend in Backend::ALL {
        // Uninterrupted: 40 steps, loads set after 10.
        let mut whole = open(&crowd, backend);
        whole.step(10).unwrap();
        whole
            .set_external_loads(&loads(crowd.bodies.len()))
            .unwrap();
        whole.step(30).unwrap();
        let expected = whole.bodies().unwrap();

        // Interrupted after 25 steps; the checkpoint goes through its bytes.
        let mut first = open(&crowd, backend);
        first.step(10).unwrap();
        first
            .set_external_loads(&loads(crowd.bodies.len()))
            .unwrap();
        first.step(15).unwrap();
        let bytes = first.checkpoint().unwrap().to_bytes();
        drop(first);
        let checkpoint = Checkpoint::from_bytes(&bytes).unwrap();
        assert_eq!(checkpoint.step(), 25);
        assert_eq!(checkpoint.backend, backend);
        // A file holds the custom force's WGSL, not its Rust twin: attach it again.
        let checkpoint = checkpoint.with_custom_force(custom.clone());
        let mut resumed = match backend {
            Backend::Gpu => Simulation::resume_on_gpu(&checkpoint, common::gpu()),
            other => Simulation::resume(&checkpoint, other),
        }
        .unwrap();
        assert_eq!(resumed.time(), 25.0 * crowd.dt);
        resumed.step(15).unwrap();
        let got = resumed.bodies().unwrap();
        assert_eq!(
            common::state_bits(&got),
            common::state_bits(&expected),
            "{}: resumed run differs",
            backend.name()
        );
        // Something happened: the crowd moved and hit the planes.
        assert_ne!(common::state_bits(&got), common::state_bits(&crowd.bodies));
    }
}

#[test]
fn a_checkpoint_round_trips_every_field() {
    let crowd = crowd();
    let mut sim = Simulation::reference(&crowd).unwrap();
    sim.set_external_loads(&loads(crowd.bodies.len())).unwrap();
    sim.step(3).unwrap();
    let mut checkpoint = sim.checkpoint().unwrap();
    checkpoint.run = Some(rigid_crowd::RunPlan {
        end_step: 99,
        out: "final.csv".into(),
        checkpoint_every: 7,
        recording: Some(rigid_crowd::RecordingPlan {
            path: "trajectory.npz".into(),
            every: 3,
            frames: 34,
            first_step: 1,
            progress: rigid_crowd::record::TrajectoryProgress {
                frames_written: 2,
                bytes: 4096,
                crc32: 0xdead_beef,
            },
        }),
    });
    let back = Checkpoint::from_bytes(&checkpoint.to_bytes()).unwrap();
    // The closure cannot travel; everything else must.
    let back = back.with_custom_force(crowd.custom_force.clone().unwrap());
    assert_eq!(back, checkpoint);
}

/// Bytes of the format-3 trailer of a checkpoint with the default fault rules and no frozen
/// body: the policy, three absent limits, an empty list.
const DEFAULT_FAULT_TRAILER: usize = 1 + 3 * (1 + 8) + 8;
/// Bytes of the format-4 trailer of a checkpoint without tangents: the absent flag.
const NO_TANGENTS_TRAILER: usize = 1;
/// Bytes of the format-6 trailer: whether `gpu` took its f32 divisions in f64.
const DIVISIONS_TRAILER: usize = 1;

#[test]
fn version_1_to_3_checkpoints_are_still_read() {
    let crowd = cross_check_crowd(20, 2, Integrator::Rk4, 1e-3).unwrap();
    let mut sim = Simulation::reference(&crowd).unwrap();
    sim.step(2).unwrap();
    let mut checkpoint = sim.checkpoint().unwrap();
    checkpoint.run = Some(rigid_crowd::RunPlan {
        end_step: 40,
        out: "final.csv".into(),
        checkpoint_every: 0x0102_0304_0506_0708,
        recording: None,
    });
    let current = checkpoint.to_bytes();
    // Version 3 is version 4 (6 without the divisions' byte and with no planes) without the
    // tangents' flag at the end.
    let (header, payload) = current.split_at(24);
    let payload = &payload[..payload.len() - DIVISIONS_TRAILER - NO_TANGENTS_TRAILER];
    let mut bytes = sealed(header, payload);
    bytes[8..12].copy_from_slice(&3u32.to_le_bytes());
    let back = Checkpoint::from_bytes(&bytes)
        .unwrap()
        .with_custom_force(crowd.custom_force.clone().unwrap());
    assert_eq!(back, checkpoint);
    // Version 2 is version 3 without the fault rules and frozen bodies at the end.
    let payload = &payload[..payload.len() - DEFAULT_FAULT_TRAILER];
    let mut bytes = sealed(header, payload);
    bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
    let back = Checkpoint::from_bytes(&bytes)
        .unwrap()
        .with_custom_force(crowd.custom_force.clone().unwrap());
    assert_eq!(back, checkpoint);
    // Version 1 is version 2 without the run plan's recording flag, the byte after the
    // checkpoint interval.
    let mut marker = b"final.csv".to_vec();
    marker.extend_from_slice(&0x0102_0304_0506_0708u64.to_le_bytes());
    let at = payload
        .windows(marker.len())
        .position(|w| w == marker.as_slice())
        .expect("the run plan is in the payload")
        + marker.len();
    assert_eq!(payload[at], 0, "no recording");
    let mut old = payload.to_vec();
    old.remove(at);
    let mut bytes = sealed(header, &old);
    bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
    let back = Checkpoint::from_bytes(&bytes)
        .unwrap()
        .with_custom_force(crowd.custom_force.clone().unwrap());
    assert_eq!(back, checkpoint);
    // The same bytes called version 2 lack the flag: refused, not misread.
    bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
    assert!(Checkpoint::from_bytes(&bytes).is_err());
}

/// A version 4 checkpoint kept no plane's point: it is read with each plane's point nearest
/// the origin, which a change of the normal then turns the plane about.
#[test]
fn version_4_checkpoints_take_each_planes_point_nearest_the_origin() {
    let mut crowd = cross_check_crowd(6, 2, Integrator::Rk4, 1e-3).unwrap();
    let tilted = Plane::through(
        DVec3::new(0.5, -2.0, 1.0),
        DVec3::new(0.2, 0.1, 1.0),
        0.3,
        0.7,
    );
    crowd.planes = vec![Plane::ground(0.5, 0.2), tilted];
    let mut sim = Simulation::reference(&crowd).unwrap();
    sim.step(2).unwrap();
    let checkpoint = sim.checkpoint().unwrap();
    let current = checkpoint.to_bytes();
    let (header, payload) = current.split_at(24);
    // Version 4 is version 5 (6 without the divisions' byte at the end) without the 24 bytes
    // of each plane's point after its friction.
    let mut old = payload[..payload.len() - DIVISIONS_TRAILER].to_vec();
    for plane in crowd.planes.iter().rev() {
        let numbers = [plane.restitution, plane.friction, plane.point.x];
        let marker: Vec<u8> = numbers.iter().flat_map(|v| v.to_le_bytes()).collect();
        let at = old
            .windows(marker.len())
            .position(|w| w == marker.as_slice())
            .expect("the plane is in the payload")
            + 16;
        old.drain(at..at + 24);
    }
    let mut bytes = sealed(header, &old);
    bytes[8..12].copy_from_slice(&4u32.to_le_bytes());
    let back = Checkpoint::from_bytes(&bytes)
        .unwrap()
        .with_custom_force(crowd.custom_force.clone().unwrap());
    let foot = tilted.normal * tilted.offset;
    assert_eq!(back.crowd.planes[1].point, foot);
    assert!((foot - tilted.point).length() > 1.0, "a point off the foot");
    let mut expected = checkpoint.clone();
    expected.crowd.planes[1].point = foot;
    assert_eq!(back, expected);
    // Read as version 5, the same bytes lack the points: refused, not misread.
    bytes[8..12].copy_from_slice(&5u32.to_le_bytes());
    assert!(Checkpoint::from_bytes(&bytes).is_err());
}

fn valid_bytes() -> Vec<u8> {
    let crowd = cross_check_crowd(20, 2, Integrator::Rk4, 1e-3).unwrap();
    let mut sim = Simulation::reference(&crowd).unwrap();
    sim.step(2).unwrap();
    sim.checkpoint().unwrap().to_bytes()
}

/// A rejection: an `Error::Invalid` whose message is one non-empty line.
fn rejected(bytes: &[u8]) -> String {
    match Checkpoint::from_bytes(bytes) {
        Err(e @ Error::Invalid { .. }) => {
            let text = e.to_string();
            assert!(!text.is_empty() && !text.contains('\n'), "{text:?}");
            text
        }
        other => panic!("expected a clear rejection, got {other:?}"),
    }
}

#[test]
fn truncated_corrupted_foreign_and_future_checkpoints_are_refused_clearly() {
    let bytes = valid_bytes();
    // Every truncation.
    for len in 0..bytes.len() {
        let text = rejected(&bytes[..len]);
        assert!(
            text.contains("truncated") || text.contains("not a rigid-crowd checkpoint"),
            "{len}: {text}"
        );
    }
    // Every single-bit flip in a sample of positions: the checksum (or the header check)
    // catches it.
    for at in (0..bytes.len()).step_by(7) {
        let mut flipped = bytes.clone();
        flipped[at] ^= 1 << (at % 8);
        rejected(&flipped);
    }
    let mut corrupted = bytes.clone();
    let last = corrupted.len() - 1;
    corrupted[last] ^= 0xff;
    assert!(rejected(&corrupted).contains("corrupted"));
    let mut future = bytes.clone();
    future[8..12].copy_from_slice(&(CHECKPOINT_VERSION + 1).to_le_bytes());
    assert!(rejected(&future).contains("format version"));
    assert!(rejected(b"{\"version\": 1}").contains("not a rigid-crowd checkpoint"));
    let mut padded = bytes.clone();
    padded.push(0);
    assert!(rejected(&padded).contains("padded"));
}

#[test]
fn the_cli_resumes_after_a_lost_device_and_matches_the_uninterrupted_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let scene = path("scene.json");
    // Two falling boxes over a floor, with a time-varying force: a small but full run.
    std::fs::write(
        &scene,
        r#"{"version": 1, "dt": 0.002, "steps": 120, "integrator": "rk4",
            "forces": [{"type": "gravity", "acceleration": [0, 0, -9.81]},
                       {"type": "sinusoidal", "force": [1, 0, 0], "torque": [0, 0, 0.2],
                        "amplitude": 1, "frequency": 3}],
            "planes": [{"point": [0, 0, 0], "normal": [0, 0, 1], "restitution": 0.5, "friction": 0.3}],
            "bodies": [
              {"mass": 1, "shape": {"box": [1, 0.5, 0.3]}, "position": [0, 0, 0.4], "angular_velocity": [1, 2, 0]},
              {"mass": 2, "shape": {"sphere": 0.3}, "position": [2, 0, 0.5], "velocity": [0, 0, -1]}
            ]}"#,
    )
    .unwrap();
    for backend in ["cpu", "gpu"] {
        let (whole, part, ckpt) = (
            path(&format!("whole-{backend}.csv")),
            path(&format!("part-{backend}.csv")),
            path(&format!("run-{backend}.ckpt")),
        );
        let ok = rigid_crowd(&["run", &scene, "--backend", backend, "--out", &whole], &[]);
        assert!(ok.status.success(), "{ok:?}");

        let args = [
            "run",
            &scene,
            "--backend",
            backend,
            "--out",
            &part,
            "--checkpoint",
            &ckpt,
            "--checkpoint-every",
            "50",
        ];
        let envs: &[(&str, &str)] = match backend {
            "gpu" => &[("RIGID_CROWD_INJECT_DEVICE_LOSS_AT", "60")],
            _ => &[],
        };
        let failed = rigid_crowd(&args, envs);
        if backend == "gpu" {
            // Lost at step 100 (the first chunk past 60): the checkpoint of step 50 is kept.
            assert_eq!(failed.status.code(), Some(1), "{failed:?}");
            let stderr = String::from_utf8_lossy(&failed.stderr);
            // The last line is ours (a software driver may print its own noise first).
            let line = stderr.lines().last().unwrap();
            assert!(line.contains("GPU device lost"), "{line}");
            assert!(
                line.contains(&format!("the last checkpoint is {ckpt} (step 50)")),
                "{line}"
            );
            assert!(
                !std::path::Path::new(&part).exists(),
                "no half-written output"
            );
        } else {
            assert!(failed.status.success(), "{failed:?}");
            // The run's last checkpoint is at its end; roll back to step 50 to resume.
            let done = Checkpoint::read(&ckpt).unwrap();
            assert_eq!(done.step(), 120);
            let redo = rigid_crowd(
                &[
                    "run",
                    &scene,
                    "--backend",
                    backend,
                    "--out",
                    &part,
                    "--checkpoint",
                    &ckpt,
                    "--checkpoint-every",
                    "50",
                    "--steps",
                    "50",
                ],
                &[],
            );
            assert!(redo.status.success(), "{redo:?}");
            // `--steps 50` made a run that ends at 50; resume to the scene's 120.
            let resumed = rigid_crowd(&["resume", &ckpt, "--steps", "70", "--out", &part], &[]);
            assert!(resumed.status.success(), "{resumed:?}");
            assert_eq!(
                std::fs::read(&part).unwrap(),
                std::fs::read(&whole).unwrap()
            );
            continue;
        }
        let resumed = rigid_crowd(&["resume", &ckpt], &[]);
        assert!(resumed.status.success(), "{resumed:?}");
        assert_eq!(
            std::fs::read(&part).unwrap(),
            std::fs::read(&whole).unwrap(),
            "{backend}: resumed output differs from the uninterrupted run"
        );
    }
}

/// `run --f32-divisions-in-f64` (gpu only): the run says so, its checkpoint keeps it, and
/// `resume` continues with it, to the bytes of the uninterrupted run and of `cpu` (lavapipe's
/// f64 divisions are exact). On another backend the flag is one line naming it, and no
/// output is written.
#[test]
fn f32_divisions_in_f64_survive_a_checkpoint_and_resume() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (scene, ckpt) = ("scenes/example.json", path("run.ckpt"));
    let run = |backend: &str, out: &str, extra: &[&str]| {
        let mut args = vec!["run", scene, "--backend", backend, "--out", out];
        args.extend_from_slice(extra);
        rigid_crowd(&args, &[])
    };
    let said = |output: &std::process::Output| {
        String::from_utf8_lossy(&output.stderr).contains("f32 divisions and square roots in f64")
    };
    let whole = run(
        "gpu",
        &path("whole.npy"),
        &["--steps", "90", "--f32-divisions-in-f64"],
    );
    assert!(whole.status.success() && said(&whole), "{whole:?}");
    let cpu = run("cpu", &path("cpu.npy"), &["--steps", "90"]);
    assert!(cpu.status.success(), "{cpu:?}");
    let part = path("part.npy");
    // The first 40 steps of the 90, checkpointed at their end; `resume` does the other 50.
    let first = run(
        "gpu",
        &path("first.npy"),
        &[
            "--f32-divisions-in-f64",
            "--checkpoint",
            &ckpt,
            "--checkpoint-every",
            "40",
            "--steps",
            "40",
        ],
    );
    assert!(first.status.success(), "{first:?}");
    let checkpoint = Checkpoint::read(&ckpt).unwrap();
    assert!(checkpoint.f32_divisions_in_f64);
    assert_eq!(checkpoint.step(), 40);
    let resumed = rigid_crowd(&["resume", &ckpt, "--steps", "50", "--out", &part], &[]);
    assert!(resumed.status.success() && said(&resumed), "{resumed:?}");
    let bytes = |p: &str| std::fs::read(p).unwrap();
    assert_eq!(bytes(&part), bytes(&path("whole.npy")));
    assert_eq!(bytes(&part), bytes(&path("cpu.npy")));
    // A run without the flag writes checkpoints without it.
    let plain = run(
        "gpu",
        &path("plain.npy"),
        &["--checkpoint", &ckpt, "--checkpoint-every", "40"],
    );
    assert!(plain.status.success() && !said(&plain), "{plain:?}");
    assert!(!Checkpoint::read(&ckpt).unwrap().f32_divisions_in_f64);

    for backend in ["cpu", "cpu-ref", "gpu-f64"] {
        let out = path(&format!("refused-{backend}.npy"));
        let refused = run(backend, &out, &["--f32-divisions-in-f64"]);
        assert_eq!(refused.status.code(), Some(1));
        assert_eq!(
            common::error_line(&refused),
            format!(
                "error: --f32-divisions-in-f64: applies to the `gpu` backend only, not `{backend}`"
            )
        );
        assert!(
            !std::path::Path::new(&out).exists(),
            "{backend}: output written"
        );
    }
}

#[test]
fn resume_errors_name_the_file_or_flag() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.ckpt");
    std::fs::write(&bad, b"RGDCRWD\n\x01\x00\x00\x00").unwrap();
    let out = rigid_crowd(&["resume", bad.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("bad.ckpt") && stderr.contains("truncated"),
        "{stderr}"
    );

    let out = rigid_crowd(
        &[
            "run",
            "scenes/example.json",
            "--out",
            "x.csv",
            "--checkpoint-every",
            "5",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--checkpoint-every"));
}

/// Re-seals a mutated payload with a correct length and checksum, so the mutation reaches the
/// decoder instead of stopping at the checksum.
fn sealed(header: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut bytes = header[..12].to_vec();
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32fast_hash(payload).to_le_bytes());
    bytes.extend_from_slice(payload);
    bytes
}

/// CRC-32 (IEEE), bit by bit: the test's own, independent of the one the reader uses.
fn crc32fast_hash(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Thousands of mutated checkpoints whose checksum is valid: byte overwrites, bit flips,
/// insertions, deletions, truncations, huge counts, NaN and infinite floats. The reader
/// accepts or refuses each with one clear line; it never panics or allocates what the file
/// does not hold. `RIGID_CROWD_FUZZ_CASES` sets the count (default 3000).
#[test]
fn mutated_checkpoints_with_valid_checksums_never_panic_the_reader() {
    let cases: usize = std::env::var("RIGID_CROWD_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let crowd = cross_check_crowd(12, 4, Integrator::Rk4, 1e-3)
        .unwrap()
        .with_plane(Plane::through(DVec3::ZERO, DVec3::Z, 0.5, 0.5));
    let mut sim = Simulation::reference(&crowd).unwrap();
    sim.set_external_loads(&loads(crowd.bodies.len())).unwrap();
    let mut checkpoint = sim.checkpoint().unwrap();
    checkpoint.run = Some(rigid_crowd::RunPlan {
        end_step: 10,
        out: "out.csv".into(),
        checkpoint_every: 5,
        recording: Some(rigid_crowd::RecordingPlan {
            path: "trajectory.csv".into(),
            every: 2,
            frames: 6,
            first_step: 0,
            progress: rigid_crowd::record::TrajectoryProgress {
                frames_written: 3,
                bytes: 9000,
                crc32: 0x1234_5678,
            },
        }),
    });
    let valid = checkpoint.to_bytes();
    let (header, payload) = valid.split_at(24);
    let mut rng = common::Rng(0x9e37_79b9_7f4a_7c15); // a reproducible stream of mutations
    let (mut accepted, mut refused) = (0, 0);
    for case in 0..cases {
        let mut p = payload.to_vec();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(p.len());
            match rng.below(7) {
                0 => p[at] = rng.next() as u8,
                1 => p[at] ^= 1 << rng.below(8),
                2 => p.insert(at, rng.next() as u8),
                3 => {
                    p.remove(at);
                }
                4 => p.truncate(at),
                5 => {
                    // A huge little-endian count or index.
                    let end = (at + 8).min(p.len());
                    p[at..end].fill(0xff);
                }
                _ => {
                    // A NaN, an infinity or a huge float where a value was.
                    let end = (at + 8).min(p.len());
                    let special = [f64::NAN, f64::INFINITY, -f64::INFINITY, 1e300, -0.0]
                        [rng.below(5)]
                    .to_le_bytes();
                    p[at..end].copy_from_slice(&special[..end - at]);
                }
            }
            if p.is_empty() {
                break;
            }
        }
        let bytes = sealed(header, &p);
        match std::panic::catch_unwind(|| Checkpoint::from_bytes(&bytes)) {
            Ok(Ok(_)) => accepted += 1,
            Ok(Err(e)) => {
                let text = e.to_string();
                assert!(
                    matches!(e, Error::Invalid { .. }) && !text.contains('\n') && text.len() > 10,
                    "case {case}: unclear rejection {text:?}"
                );
                refused += 1;
            }
            Err(_) => panic!("case {case}: the reader panicked"),
        }
    }
    println!("{cases} mutated checkpoints: {accepted} accepted, {refused} refused");
    assert_eq!(accepted + refused, cases);
    assert!(refused > cases / 2, "most mutations must be caught");
}
