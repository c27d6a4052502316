//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::process::{Command, Output};
use std::sync::{Mutex, PoisonError};

use rigid_crowd::glam::{DQuat, DVec3};
use rigid_crowd::gpu::GpuContext;
use rigid_crowd::{Backend, Body, Crowd, MassProperties, Shape, Simulation};

/// The device of the test running on this thread: one no other running test holds, taken
/// from the devices earlier tests gave back (with the kernels they compiled) or made anew.
/// Lavapipe compiles a kernel at its first dispatch on its device's one queue thread, so
/// tests sharing one device compiled one at a time: the suite's two test threads kept 1.1 of
/// its 2 cores busy. A missing adapter fails the test: in CI the software driver (Mesa
/// lavapipe) must be there, and a skipped GPU test would hide that.
pub fn gpu() -> &'static GpuContext {
    thread_local! {
        static LEASE: DeviceLease = DeviceLease::take();
    }
    LEASE.with(|lease| lease.0)
}

/// A device held by one test thread, given back when the thread ends.
struct DeviceLease(&'static GpuContext);

/// The devices no running test holds.
static FREE_DEVICES: Mutex<Vec<&'static GpuContext>> = Mutex::new(Vec::new());

impl DeviceLease {
    fn take() -> Self {
        let free = FREE_DEVICES
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        Self(free.unwrap_or_else(|| {
            let ctx =
                GpuContext::new().unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"));
            Box::leak(Box::new(ctx))
        }))
    }
}

impl Drop for DeviceLease {
    fn drop(&mut self) {
        FREE_DEVICES
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(self.0);
    }
}

/// The larger of `a` and `b`, and NaN if either is, for folding errors: `f64::max` returns
/// the other operand of a NaN, so a NaN error would pass a tolerance.
pub fn largest(a: f64, b: f64) -> f64 {
    if a.is_nan() || a >= b { a } else { b }
}

/// Runs `crowd` for `steps` steps on `backend` and returns the bodies.
pub fn run(crowd: &Crowd, steps: u64, backend: Backend) -> Vec<Body> {
    let mut sim = Simulation::on_backend(crowd, backend, gpu()).expect("valid crowd");
    sim.step(steps).expect("steps run");
    sim.bodies().expect("bodies read back")
}

/// Every backend, each with the relative tolerance its arithmetic allows for a
/// well-conditioned problem: f64 round-off for the reference and the f64 GPU kernel, f32
/// round-off (grown over the run) for the f32 paths.
pub const BACKENDS: [(Backend, f64); 4] = [
    (Backend::Reference, 1e-9),
    (Backend::FastCpu, 2e-5),
    (Backend::Gpu, 2e-5),
    (Backend::GpuF64, 1e-9),
];

/// `|a - b| <= tol * max(|b|, 1)`, with a message naming what was compared.
pub fn assert_close(what: &str, a: DVec3, b: DVec3, tol: f64) {
    let err = (a - b).length();
    assert!(
        err <= tol * b.length().max(1.0),
        "{what}: got {a:?}, expected {b:?} (error {err:.3e}, tolerance {tol:.1e})"
    );
}

/// A body from world-frame kinematics.
pub fn body(
    mass: MassProperties,
    position: DVec3,
    velocity: DVec3,
    angular_velocity: DVec3,
) -> Body {
    Body::from_kinematics(mass, position, DQuat::IDENTITY, velocity, angular_velocity)
}

/// Baraff's block of figures 8 and 9: 6 x 1 x 4, mass 24.
pub fn baraff_block() -> MassProperties {
    MassProperties::from_shape(
        24.0,
        Shape::Box {
            size: DVec3::new(6.0, 1.0, 4.0),
        },
        "block",
    )
    .unwrap()
}

/// `v` as `backend` stores it: the fast paths keep states in f32.
pub fn as_stored(backend: Backend, v: DVec3) -> DVec3 {
    match backend {
        Backend::Reference | Backend::GpuF64 => v,
        Backend::FastCpu | Backend::Gpu => v.as_vec3().as_dvec3(),
    }
}

/// Runs the `rigid-crowd` binary with `args` and extra environment; it must never panic.
pub fn rigid_crowd(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rigid-crowd"));
    command.args(args);
    for (k, v) in envs {
        command.env(k, v);
    }
    let output = command.output().expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    output
}

/// Every state component of every body as its bit pattern, for bit-for-bit comparisons.
pub fn state_bits(bodies: &[Body]) -> Vec<u64> {
    bodies
        .iter()
        .flat_map(|b| {
            let s = &b.state;
            let mut v = s.position.to_array().to_vec();
            v.extend(s.orientation.to_array());
            v.extend(s.linear_momentum.to_array());
            v.extend(s.angular_momentum.to_array());
            v
        })
        .map(f64::to_bits)
        .collect()
}

/// `count` bodies of every shape (seed `seed`) raining onto a floor and a slanted wall, under
/// gravity and `drag`, with restitution and friction: bodies bounce, rock, slide and come to
/// rest.
pub fn raining_onto_planes(count: usize, seed: u64, drag: rigid_crowd::ForceKind) -> Crowd {
    use rigid_crowd::{CrowdSpec, Force, ForceKind, Plane, ShapeKind};
    let spec = CrowdSpec {
        region: [[-2.0, -2.0, 0.5], [2.0, 2.0, 3.0]],
        size: [0.1, 0.3],
        shapes: ShapeKind::EVERY.to_vec(),
        ..CrowdSpec::new(count, seed)
    };
    Crowd::new(spec.generate().unwrap(), 1e-3)
        .with_force(Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        }))
        .with_force(Force::on_all(drag))
        .with_plane(Plane::ground(0.4, 0.5))
        .with_plane(Plane::through(
            DVec3::new(-2.0, 0.0, 0.0),
            DVec3::new(1.0, 0.2, 0.6),
            0.5,
            0.2,
        ))
}

/// A parsed `.npy`: dtype, shape and the raw little-endian data.
pub struct Npy {
    pub descr: String,
    pub shape: Vec<usize>,
    pub data: Vec<u8>,
}

/// Parses a version 1.0 `.npy` as rigid-crowd writes it (C order, 64-byte aligned data),
/// checking that the data holds exactly `shape` elements of the dtype.
pub fn parse_npy(bytes: &[u8]) -> Npy {
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00", "magic and version 1.0");
    let len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    assert_eq!((10 + len) % 64, 0, "data aligned to 64 bytes");
    let dict = std::str::from_utf8(&bytes[10..10 + len]).unwrap();
    assert!(dict.ends_with('\n'));
    assert!(dict.contains("'fortran_order': False"), "{dict}");
    let field = |name: &str| {
        let start = dict.find(&format!("'{name}': ")).unwrap() + name.len() + 4;
        &dict[start..]
    };
    let descr = field("descr")[1..4].to_string();
    let shape_text = field("shape");
    let shape: Vec<usize> = shape_text[1..shape_text.find(')').unwrap()]
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    let data = bytes[10 + len..].to_vec();
    let element = match descr.as_str() {
        "|u1" => 1,
        "<f4" | "<i4" | "<u4" => 4,
        "<f8" | "<i8" => 8,
        other => panic!("unexpected dtype {other}"),
    };
    let elements: usize = shape.iter().product();
    assert_eq!(data.len(), elements * element, "data size");
    Npy { descr, shape, data }
}

/// The lines of `stderr` that are the tool's: without the notices Mesa's software driver
/// may print (`XDG_RUNTIME_DIR`).
pub fn our_lines(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| !l.contains("XDG_RUNTIME_DIR"))
        .map(str::to_string)
        .collect()
}

/// The error of a failed command: a non-zero exit, no panic, exactly one line of ours.
pub fn error_line(output: &Output) -> String {
    assert!(!output.status.success(), "expected failure, got {output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    let ours = our_lines(&output.stderr);
    assert_eq!(ours.len(), 1, "one line of error: {stderr}");
    ours[0].clone()
}

/// Reproducible random numbers without another dependency: Vigna's xorshift64* over
/// Marsaglia's xorshift64 (shifts 13, 7, 17, which `stream` gives), streams their seeds fix.
pub struct Rng(pub u64);

impl Rng {
    /// xorshift64*'s next 64 bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `[0, 1)`, from xorshift64*.
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform below `n` (any `n`; 0 gives 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// Uniform in `[0, 1)` from plain xorshift64 instead (the stream the library's sample
    /// bodies draw from).
    pub fn xorshift64_unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}
