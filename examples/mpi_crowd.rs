//! One crowd over MPI ranks from a Rust program that owns the communicator, checked against
//! one process: rank 0 also integrates the whole crowd alone and compares every state bit
//! for bit, and the reduced totals with its own sums. Two crowds: one with a custom force
//! written in WGSL, one with a force law registered under a name (its numbers in the
//! forces' records, one force on a single body of the last rank). Exits 1 on any difference.
//!
//! ```sh
//! cargo build --release --features mpi --example mpi_crowd
//! mpirun -np 2 target/release/examples/mpi_crowd          # cpu and cpu-ref
//! mpirun -np 2 target/release/examples/mpi_crowd gpu gpu-f64
//! ```

use std::process::ExitCode;

use rigid_crowd::glam::DVec3;
use rigid_crowd::mpi::mpi::traits::*;
use rigid_crowd::mpi::{MpiSimulation, mpi};
use rigid_crowd::{
    Backend, Body, Crowd, CrowdSpec, CustomForce, CustomForceInput, ExternalLoad, Force,
    ForceInput, ForceKind, ForceLaw, ForceLaws, Load, ParameterDeclaration, ParameterShape, Real,
    Simulation,
};

/// A push that depends on the body's crowd index: a rank that passed its own indices would
/// push the wrong bodies.
const PUSH_WGSL: &str = "\
fn custom_force(position: vec3<real>, orientation: vec4<real>, velocity: vec3<real>,
                angular_velocity: vec3<real>, mass: real, time: real, body: u32) -> Load {
    let k = real(body % 7u) * real(0.25);
    return Load(vec3<real>(k * mass, real(0.0), real(0.0)), vec3<real>(real(0.0), real(0.0), k));
}
";

fn push(input: &CustomForceInput) -> ExternalLoad {
    let k = (input.body % 7) as f64 * 0.25;
    ExternalLoad {
        force: DVec3::new(k * input.mass, 0.0, 0.0),
        torque: DVec3::new(0.0, 0.0, k),
    }
}

fn main() -> ExitCode {
    let universe = mpi::initialize().expect("MPI initializes once");
    let world = universe.world();
    let backends: Vec<Backend> = match std::env::args().skip(1).collect::<Vec<_>>() {
        names if names.is_empty() => vec![Backend::FastCpu, Backend::Reference],
        names => names
            .iter()
            .map(|n| n.parse().expect("a backend name"))
            .collect(),
    };
    match check(&world, &backends) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("rank {}: error: {e}", world.rank());
            ExitCode::FAILURE
        }
    }
}

/// A pull towards an anchor that grows with the body's crowd index (a rank that passed its
/// own indices would pull the wrong bodies), its anchor and strength declared numbers.
struct IndexedTether;

impl ForceLaw for IndexedTether {
    fn load<R: Real>(&self, b: &ForceInput<R>) -> Load<R> {
        let [anchor, _] = b.parameters.vectors;
        let [strength, ..] = b.parameters.scalars;
        let pull = strength * (R::constant(1.0) + b.body * R::constant(0.001));
        Load {
            force: (anchor - b.position) * pull,
            torque: b.angular_velocity * (-strength * R::constant(0.01)),
        }
    }

    fn parameters(&self) -> &'static [ParameterDeclaration] {
        const {
            &[
                ParameterDeclaration::new("anchor", ParameterShape::Vector, "m").required(),
                ParameterDeclaration::new("strength", ParameterShape::Number, "1/s^2")
                    .non_negative()
                    .required(),
            ]
        }
    }
}

/// A force of the registered law `law` with its anchor and strength.
fn tether(law: &CustomForce, anchor: DVec3, strength: f64) -> ForceKind {
    ForceKind::Law {
        law: law.law_declaration().expect("a registered law"),
        vectors: [anchor, DVec3::ZERO],
        scalars: [strength, 0.0, 0.0, 0.0],
    }
}

/// Whether every backend's run of both crowds over the ranks matches one process's.
fn check(
    world: &mpi::topology::SimpleCommunicator,
    backends: &[Backend],
) -> rigid_crowd::Result<bool> {
    // Generated bodies, own forces on bodies of every rank, and the custom force.
    let count = 5_003;
    let mut crowd = Crowd::new(CrowdSpec::new(count, 11).generate()?, 1e-3)
        .with_force(Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        }))
        .with_custom_force(CustomForce::new(PUSH_WGSL, push))
        .with_force(Force::on_all(ForceKind::Custom));
    for body in [3, count / 2 + 1, count - 2] {
        crowd = crowd.with_force(Force::on_body(
            body,
            ForceKind::Spring {
                anchor: DVec3::ZERO,
                attach: DVec3::new(0.1, 0.0, 0.0),
                stiffness: 20.0,
                damping: 0.2,
            },
        ));
    }
    // The same bodies under a registered law, on all of them and once more on the last.
    let laws = ForceLaws::new().with("indexed_tether", IndexedTether)?;
    let law = laws.get("indexed_tether").expect("registered above");
    let law_crowd = Crowd::new(crowd.bodies.clone(), 1e-3)
        .with_custom_force(law.clone())
        .with_force(Force::on_all(tether(law, DVec3::new(0.0, 0.0, 1.0), 2.0)))
        .with_force(Force::on_body(
            count - 1,
            tether(law, DVec3::new(1.0, -1.0, 0.0), 30.0),
        ));
    let mut all_match = true;
    for (what, crowd) in [("", &crowd), (" with a registered law", &law_crowd)] {
        all_match &= check_crowd(world, backends, what, crowd)?;
    }
    Ok(all_match)
}

/// Whether every backend's run of `crowd` over the ranks matches one process's.
fn check_crowd(
    world: &mpi::topology::SimpleCommunicator,
    backends: &[Backend],
    what: &str,
    crowd: &Crowd,
) -> rigid_crowd::Result<bool> {
    let mut all_match = true;
    for &backend in backends {
        let mut sim = MpiSimulation::new(world.duplicate(), crowd, backend)?;
        sim.step(25)?;
        sim.step(15)?;
        let totals = sim.totals()?;
        let Some(states) = sim.states_on_root()? else {
            continue;
        };
        let mut alone = Simulation::new(crowd, backend)?;
        alone.step(40)?;
        let bodies = alone.bodies()?;
        let same_bits = states.len() == bodies.len()
            && states.iter().zip(&bodies).all(|(a, b)| {
                let (a, b) = (Body { state: *a, ..*b }, b);
                bits(&a) == bits(b)
            });
        let energy: f64 = bodies.iter().map(Body::kinetic_energy).sum();
        let momentum: DVec3 = bodies.iter().map(|b| b.state.linear_momentum).sum();
        let relative = |a: f64, b: f64| (a - b).abs() / b.abs().max(1e-300);
        let totals_agree = relative(totals.kinetic_energy, energy) < 1e-12
            && (totals.linear_momentum - momentum).length() < 1e-12 * momentum.length();
        println!(
            "{backend}{what} over {} ranks: states {} one process's, totals {} (kinetic energy {:.6e})",
            sim.ranks(),
            if same_bits {
                "bit for bit"
            } else {
                "DIFFER from"
            },
            if totals_agree { "agree" } else { "DIFFER" },
            totals.kinetic_energy
        );
        all_match &= same_bits && totals_agree;
    }
    Ok(all_match)
}

/// A body's state as its bits.
fn bits(body: &Body) -> Vec<u64> {
    let s = &body.state;
    [s.position, s.linear_momentum, s.angular_momentum]
        .iter()
        .flat_map(|v| v.to_array())
        .chain(s.orientation.to_array())
        .map(f64::to_bits)
        .collect()
}
