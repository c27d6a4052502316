//! A force law with numbers of its own, registered under a name: a scene names it and sets
//! its numbers as it does a built-in kind's, they are checked the same way, and their
//! derivatives come from the one definition on every backend. Reads a scene that names the
//! law, runs it on every backend and takes the sensitivities along both of the law's numbers,
//! checked against differences of whole runs.
//!
//! `cargo run --release --example force_law`

use rigid_crowd::glam::DVec3;
use rigid_crowd::{
    Backend, ForceInput, ForceLaw, ForceLaws, Load, ParameterDeclaration, ParameterShape, Real,
    STATE_COMPONENTS, Scene, Simulation, Vec3,
};

/// A soft tether from a world anchor to a point on the body's z axis, 0.2 m above its
/// centre: `F = -stiffness d / sqrt(1 + |d|^2)` with `d = x + R p - anchor`, applied at `R p`,
/// so the pull levels off far from the anchor and turns the body.
pub struct SoftTether;

impl ForceLaw for SoftTether {
    fn load<R: Real>(&self, b: &ForceInput<R>) -> Load<R> {
        let c = R::constant;
        let [anchor, _] = b.parameters.vectors;
        let [stiffness, ..] = b.parameters.scalars;
        let arm = (b.orientation.to_rotation()).mul_vec(Vec3::new(c(0.0), c(0.0), c(0.2)));
        let d = b.position + arm - anchor;
        let pull = d * (-stiffness / (c(1.0) + d.length_squared()).sqrt());
        Load {
            force: pull,
            torque: arm.cross(pull),
        }
    }

    fn parameters(&self) -> &'static [ParameterDeclaration] {
        const {
            &[
                ParameterDeclaration::new("anchor", ParameterShape::Vector, "m").required(),
                ParameterDeclaration::new("stiffness", ParameterShape::Number, "N")
                    .non_negative()
                    .required(),
            ]
        }
    }
}

/// The laws the scene may name.
pub fn laws() -> rigid_crowd::Result<ForceLaws> {
    ForceLaws::new().with("soft_tether", SoftTether)
}

/// Three tumbling boxes under gravity, each on a soft tether, the second on a second one.
pub const SCENE: &str = r#"{
  "dt": 0.01, "steps": 60, "integrator": "rk4",
  "forces": [
    {"type": "gravity", "acceleration": [0, 0, -9.81]},
    {"type": "soft_tether", "anchor": [0, 0, 2], "stiffness": 30},
    {"type": "soft_tether", "body": 1, "anchor": [1, -1, 0.5], "stiffness": 12.5}
  ],
  "bodies": [
    {"mass": 2.0, "shape": {"box": [0.4, 0.3, 0.6]}, "position": [0.5, 0, 1],
     "velocity": [0, 0.4, 0], "angular_velocity": [0.3, -0.2, 1.1]},
    {"mass": 1.2, "shape": {"box": [0.2, 0.5, 0.3]}, "position": [-0.4, 0.3, 0.8],
     "velocity": [0.2, 0, 0.1], "angular_velocity": [-0.6, 0.4, 0.2]},
    {"mass": 0.7, "shape": {"box": [0.3, 0.3, 0.2]}, "position": [0.1, -0.6, 1.4],
     "velocity": [0, 0, -0.3], "angular_velocity": [0.1, 0.9, -0.5]}
  ]
}"#;

/// The sensitivities of every body's state after `steps` of `sim` along the anchor and the
/// stiffness of `forces[1]`: `(bodies, 13, 4)` numbers, the anchor's three columns first.
pub fn sensitivities(sim: &mut Simulation, steps: u64) -> rigid_crowd::Result<Vec<f64>> {
    let names = ["forces[1].anchor", "forces[1].stiffness"];
    sim.start_tangents(&names)?;
    sim.step(steps)?;
    let bodies = sim.bodies()?.len();
    let mut anchor = vec![0.0; bodies * STATE_COMPONENTS * 3];
    let mut stiffness = vec![0.0; bodies * STATE_COMPONENTS];
    sim.read_tangents(names[0], &mut anchor)?;
    sim.read_tangents(names[1], &mut stiffness)?;
    let rows = anchor.chunks(3).zip(stiffness.iter());
    Ok(rows.flat_map(|(a, &s)| [a[0], a[1], a[2], s]).collect())
}

/// The same columns from Richardson differences of whole `cpu-ref` runs: each number moved
/// by `±h` and `±h/2`.
pub fn differences(scene: &Scene) -> rigid_crowd::Result<Vec<f64>> {
    let end = |nudge: &dyn Fn(&mut [DVec3; 2], &mut [f64; 4])| {
        let mut crowd = scene.crowd.clone();
        if let rigid_crowd::ForceKind::Law {
            vectors, scalars, ..
        } = &mut crowd.forces[1].kind
        {
            nudge(vectors, scalars);
        }
        let mut sim = Simulation::new(&crowd, Backend::Reference)?;
        sim.step(scene.steps)?;
        Ok::<_, rigid_crowd::Error>(
            (sim.bodies()?.iter())
                .flat_map(|b| {
                    let s = &b.state;
                    let q = s.orientation;
                    (s.position.to_array().into_iter())
                        .chain([q.w, q.x, q.y, q.z])
                        .chain(s.linear_momentum.to_array())
                        .chain(s.angular_momentum.to_array())
                })
                .collect::<Vec<f64>>(),
        )
    };
    let central = |number: usize, h: f64| -> rigid_crowd::Result<Vec<f64>> {
        let moved = |by: f64| {
            end(&|vectors, scalars| match number {
                3 => scalars[0] += by,
                axis => vectors[0][axis] += by,
            })
        };
        let (up, down) = (moved(h)?, moved(-h)?);
        Ok(up
            .iter()
            .zip(&down)
            .map(|(u, d)| (u - d) / (2.0 * h))
            .collect())
    };
    let mut columns = Vec::new();
    for number in 0..4 {
        let h = 1e-3;
        let (coarse, fine) = (central(number, h)?, central(number, h / 2.0)?);
        columns.push(
            fine.iter()
                .zip(&coarse)
                .map(|(f, c)| (4.0 * f - c) / 3.0)
                .collect::<Vec<_>>(),
        );
    }
    let rows = columns[0].len();
    Ok((0..rows)
        .flat_map(|r| columns.iter().map(move |c| c[r]))
        .collect())
}

pub fn main() -> rigid_crowd::Result<()> {
    let scene = Scene::from_json_with_laws(SCENE, std::path::Path::new(""), &laws()?)?;
    let reference = differences(&scene)?;
    println!(
        "{} bodies, {} steps: d(state)/d(forces[1].anchor, forces[1].stiffness)",
        scene.crowd.bodies.len(),
        scene.steps
    );
    for backend in Backend::ALL {
        let mut sim = Simulation::new(&scene.crowd, backend)?;
        let columns = sensitivities(&mut sim, scene.steps)?;
        let largest = (columns.iter().zip(&reference))
            .map(|(a, b)| (a - b).abs() / b.abs().max(1.0))
            .fold(0.0, f64::max);
        println!("{backend:>7}: largest difference from Richardson differences {largest:.2e}");
    }
    Ok(())
}
