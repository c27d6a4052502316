//! The crowds the benchmarks run.

use glam::DVec3;

use crate::assembly::crowd::Crowd;
use crate::assembly::generate::CrowdSpec;
use crate::model::body::{Body, BodyState};
use crate::model::error::Result;
use crate::model::force::{Force, ForceKind};
use crate::model::integrator::Integrator;
use crate::model::names::parse_name;
use crate::model::plane::Plane;
use crate::model::shape::ShapeKind;
use crate::physics::algebra::{Quat, Vec3};
use crate::physics::contact::{
    PlaneConstants, ShapeConstants, bounding_radius, candidate_count, contact_candidates,
};

/// What the benchmark crowd feels: each builds a kernel of its own on the GPU, so a slowdown
/// of any of them shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Workload {
    /// Gravity and linear drag ([`workload`]): a particle-like crowd.
    #[default]
    GravityDrag,
    /// Every force kind, keyframes and a custom force ([`crate::cross_check_crowd`]).
    EveryForce,
    /// Gravity and drag in a pit: a floor and four walls around the crowd, which falls
    /// towards the floor; the bodies near a plane run the contact code.
    Contacts,
    /// The contacts' pit with every plane moved 10 km out: no body comes near one, so the
    /// crowd should cost what gravity-drag costs.
    DistantPlanes,
    /// A settled pile: the crowd of five shapes standing on the floor of a pit ([`resting`]),
    /// so that every body touches the floor at every step.
    Resting,
    /// Spheres and capsules spread out under gravity and drag that collide with each other
    /// ([`colliding`]): what collisions cost a crowd whose bodies rarely meet (`spheres`
    /// is the same crowd without them).
    Colliding,
    /// [`Workload::Colliding`]'s crowd without collisions.
    Spheres,
}

impl Workload {
    /// Every workload.
    pub const ALL: [Workload; 7] = [
        Workload::GravityDrag,
        Workload::EveryForce,
        Workload::Contacts,
        Workload::DistantPlanes,
        Workload::Resting,
        Workload::Colliding,
        Workload::Spheres,
    ];

    /// The name `--workload` takes.
    pub fn name(self) -> &'static str {
        match self {
            Workload::GravityDrag => "gravity-drag",
            Workload::EveryForce => "every-force",
            Workload::Contacts => "contacts",
            Workload::DistantPlanes => "distant-planes",
            Workload::Resting => "resting",
            Workload::Colliding => "colliding",
            Workload::Spheres => "spheres",
        }
    }

    /// What the bench header says of it.
    pub fn describe(self) -> &'static str {
        match self {
            Workload::GravityDrag => "seeded boxes and spheres, gravity + drag, rk4",
            Workload::EveryForce => {
                "seeded boxes and spheres, every force kind with keyframes and a custom force, rk4"
            }
            Workload::Contacts => {
                "seeded boxes and spheres, gravity + drag in a pit of five planes, rk4"
            }
            Workload::DistantPlanes => {
                "seeded boxes and spheres, gravity + drag, five planes 10 km away, rk4"
            }
            Workload::Resting => {
                "seeded bodies of five shapes at rest on the floor of a pit, gravity + drag, rk4"
            }
            Workload::Colliding => {
                "seeded spheres and capsules spread out, gravity + drag, colliding (cpu-ref), rk4"
            }
            Workload::Spheres => "seeded spheres and capsules spread out, gravity + drag, rk4",
        }
    }

    /// The crowd of `bodies` bodies, seeded by `seed`.
    pub fn crowd(self, bodies: usize, seed: u64) -> Result<Crowd> {
        match self {
            Workload::GravityDrag => workload(bodies, seed),
            Workload::EveryForce => crate::cross_check_crowd(bodies, seed, Integrator::Rk4, 1e-3),
            Workload::Contacts => pit(bodies, seed, 0.0),
            Workload::DistantPlanes => pit(bodies, seed, DISTANT),
            Workload::Resting => resting(bodies, seed),
            Workload::Colliding => Ok(spheres(bodies, seed)?
                .with_collisions(crate::model::collisions::Collisions::new(0.5, 0.3))),
            Workload::Spheres => spheres(bodies, seed),
        }
    }
}

/// How far out [`Workload::DistantPlanes`] moves the pit's planes (m).
pub const DISTANT: f64 = 1e4;

/// [`workload`] in a pit: a floor and four walls through the corners of the region the crowd
/// is drawn from, each moved `out` metres along its outward side.
fn pit(bodies: usize, seed: u64, out: f64) -> Result<Crowd> {
    let [low, high] = CrowdSpec::new(bodies, seed).region;
    let wall = |point: [f64; 3], normal: DVec3| {
        Plane::through(DVec3::from(point) - normal * out, normal, 0.5, 0.3)
    };
    Ok(workload(bodies, seed)?
        .with_plane(wall(low, DVec3::Z))
        .with_plane(wall(low, DVec3::X))
        .with_plane(wall(low, DVec3::Y))
        .with_plane(wall(high, DVec3::NEG_X))
        .with_plane(wall(high, DVec3::NEG_Y)))
}

impl std::str::FromStr for Workload {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, String> {
        parse_name(&Workload::ALL, Workload::name, text)
            .map_err(|names| format!("unknown workload `{text}`: expected one of {names}"))
    }
}

/// The benchmark crowd: seeded boxes and spheres under gravity and linear drag, RK4,
/// `dt = 1e-3` — the forces every body of a particle-like crowd feels.
pub fn workload(bodies: usize, seed: u64) -> Result<Crowd> {
    Ok(Crowd::new(CrowdSpec::new(bodies, seed).generate()?, 1e-3)
        .with_force(Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        }))
        .with_force(Force::on_all(ForceKind::LinearDrag {
            linear: 0.3,
            angular: 0.05,
        })))
}

/// [`workload`]'s forces on seeded spheres and capsules 0.2 to 0.6 m across, spread through
/// its region (100 m a side): 1e5 of them are about 2 m apart.
pub fn spheres(bodies: usize, seed: u64) -> Result<Crowd> {
    let spec = CrowdSpec {
        shapes: vec![ShapeKind::Sphere, ShapeKind::Capsule],
        size: [0.2, 0.6],
        ..CrowdSpec::new(bodies, seed)
    };
    Ok(Crowd {
        bodies: spec.generate()?,
        ..workload(0, seed)?
    })
}

/// The settled pile: seeded bodies of the five solid shapes, unturned and at rest on a
/// square grid, each standing on the floor (`z = 0`) of a pit of five planes with its lowest
/// point on the surface, under gravity and drag ([`workload`]'s forces). From the first step
/// on, gravity presses every body into the floor and its contacts hold it up.
pub fn resting(bodies: usize, seed: u64) -> Result<Crowd> {
    let spec = CrowdSpec {
        shapes: vec![
            ShapeKind::Box,
            ShapeKind::Sphere,
            ShapeKind::Capsule,
            ShapeKind::Cylinder,
            ShapeKind::Ellipsoid,
        ],
        ..CrowdSpec::new(bodies, seed)
    };
    let mut generated = spec.generate()?;
    let shape = |body: &Body| body.mass.shape().expect("a generated body has a shape");
    // Grid cells wide enough for the largest body, whatever way it is turned.
    let cell = (generated.iter())
        .map(|body| 2.0 * bounding_radius(&shape(body)))
        .fold(0.0, f64::max);
    let side = (bodies as f64).sqrt().ceil().max(1.0) as usize;
    for (i, body) in generated.iter_mut().enumerate() {
        // The depth of the lowest of the shape's points, unturned at the origin, below a
        // floor through the origin: how high its centre stands on the floor.
        let floor = PlaneConstants::<f64>::of(&Plane::through(DVec3::ZERO, DVec3::Z, 0.0, 0.0));
        let constants = ShapeConstants::of(&shape(body));
        let unturned = Quat::new(1.0, 0.0, 0.0, 0.0).to_rotation();
        let points = contact_candidates(&constants, Vec3::splat(0.0), &unturned, floor.normal);
        let height = (points[..candidate_count(constants.kind)].iter())
            .map(|&point| floor.depth(point))
            .fold(0.0, f64::max);
        let (row, column) = (i / side, i % side);
        body.state = BodyState {
            position: DVec3::new(column as f64 * cell, row as f64 * cell, height),
            ..BodyState::default()
        };
    }
    let far = (side as f64) * cell;
    let wall = |point: DVec3, normal: DVec3| Plane::through(point, normal, 0.5, 0.3);
    let low = DVec3::splat(-cell);
    let high = DVec3::new(far, far, 0.0);
    let crowd = Crowd {
        bodies: generated,
        ..workload(0, seed)?
    };
    Ok(crowd
        .with_plane(wall(DVec3::ZERO, DVec3::Z))
        .with_plane(wall(low, DVec3::X))
        .with_plane(wall(low, DVec3::Y))
        .with_plane(wall(high, DVec3::NEG_X))
        .with_plane(wall(high, DVec3::NEG_Y)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_workload_is_a_valid_crowd_of_what_it_says() {
        for workload in Workload::ALL {
            let crowd = workload.crowd(50, 3).unwrap();
            crowd.validate().unwrap();
            assert_eq!(crowd.bodies.len(), 50);
            assert_eq!(workload.name().parse::<Workload>(), Ok(workload));
        }
        assert_eq!(Workload::Contacts.crowd(50, 3).unwrap().planes.len(), 5);
        assert!(
            Workload::GravityDrag
                .crowd(50, 3)
                .unwrap()
                .planes
                .is_empty()
        );
        for workload in [Workload::DistantPlanes, Workload::Resting] {
            assert_eq!(workload.crowd(50, 3).unwrap().planes.len(), 5);
        }
        let colliding = Workload::Colliding.crowd(50, 3).unwrap();
        assert!(colliding.collisions.is_some());
        let spheres = Workload::Spheres.crowd(50, 3).unwrap();
        assert_eq!(
            spheres,
            Crowd {
                collisions: None,
                ..colliding
            }
        );
        let every = Workload::EveryForce.crowd(50, 3).unwrap();
        let mut kinds: Vec<_> = every.forces.iter().map(|f| f.type_name()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        // Every built-in kind; a registered law takes the one custom slot its custom force has.
        assert_eq!(kinds.len(), crate::model::force::ForceType::LISTED.len());
    }

    /// The distant planes are the contact pit's, each 10 km farther out along its outward
    /// side: no body starts within 9 km of one.
    #[test]
    fn the_distant_planes_are_the_pits_moved_out() {
        let near = Workload::Contacts.crowd(50, 3).unwrap();
        let far = Workload::DistantPlanes.crowd(50, 3).unwrap();
        for (n, f) in near.planes.iter().zip(&far.planes) {
            assert_eq!(n.normal, f.normal);
            assert!(
                (n.offset - f.offset - DISTANT).abs() < 1e-9,
                "{} {}",
                n.offset,
                f.offset
            );
            for body in &far.bodies {
                assert!(f.normal.dot(body.state.position) - f.offset > 9e3);
            }
        }
    }

    /// The resting pile is settled: each body stands with its lowest point on the floor, and
    /// after 0.2 s on the reference every body has moved less than 0.1 mm and turned less
    /// than 1e-3 rad. A body set a millimetre too high would fall 1 mm; one set inside the
    /// floor would be pushed out by its depth.
    #[test]
    fn the_resting_pile_is_settled() {
        let crowd = Workload::Resting.crowd(60, 3).unwrap();
        let kinds: std::collections::HashSet<_> = (crowd.bodies.iter())
            .map(|b| b.mass.shape().unwrap().kind())
            .collect();
        assert_eq!(kinds.len(), 5, "every shape kind");
        let mut simulation = crate::Simulation::reference(&crowd).unwrap();
        simulation.step(200).unwrap();
        for (start, end) in crowd.bodies.iter().zip(simulation.bodies().unwrap()) {
            let (start, end) = (start.state, end.state);
            let moved = (end.position - start.position).length();
            let turned = end.orientation.angle_between(start.orientation);
            assert!(
                moved < 1e-4 && turned < 1e-3,
                "moved {moved} m, turned {turned} rad"
            );
        }
    }
}
