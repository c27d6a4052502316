//! The crowds the benchmarks run.

use glam::DVec3;

use crate::assembly::crowd::Crowd;
use crate::assembly::generate::CrowdSpec;
use crate::model::error::Result;
use crate::model::force::{Force, ForceKind};
use crate::model::integrator::Integrator;
use crate::model::names::parse_name;
use crate::model::plane::Plane;

/// What the benchmark crowd feels: each builds a kernel of its own on the GPU, so a slowdown
/// of any of them shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Workload {
    /// Gravity and linear drag ([`workload`]): a particle-like crowd.
    #[default]
    GravityDrag,
    /// Every force kind, keyframes and a custom force ([`crate::cross_check_crowd`]).
    EveryForce,
    /// Gravity and drag in a pit: a floor and four walls around the crowd, so every step
    /// runs the contact code.
    Contacts,
}

impl Workload {
    /// Every workload.
    pub const ALL: [Workload; 3] = [
        Workload::GravityDrag,
        Workload::EveryForce,
        Workload::Contacts,
    ];

    /// The name `--workload` takes.
    pub fn name(self) -> &'static str {
        match self {
            Workload::GravityDrag => "gravity-drag",
            Workload::EveryForce => "every-force",
            Workload::Contacts => "contacts",
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
        }
    }

    /// The crowd of `bodies` bodies, seeded by `seed`.
    pub fn crowd(self, bodies: usize, seed: u64) -> Result<Crowd> {
        match self {
            Workload::GravityDrag => workload(bodies, seed),
            Workload::EveryForce => crate::cross_check_crowd(bodies, seed, Integrator::Rk4, 1e-3),
            Workload::Contacts => {
                let [low, high] = CrowdSpec::new(bodies, seed).region;
                let wall = |point: [f64; 3], normal: DVec3| {
                    Plane::through(DVec3::from(point), normal, 0.5, 0.3)
                };
                Ok(workload(bodies, seed)?
                    .with_plane(wall(low, DVec3::Z))
                    .with_plane(wall(low, DVec3::X))
                    .with_plane(wall(low, DVec3::Y))
                    .with_plane(wall(high, DVec3::NEG_X))
                    .with_plane(wall(high, DVec3::NEG_Y)))
            }
        }
    }
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
        let every = Workload::EveryForce.crowd(50, 3).unwrap();
        let mut kinds: Vec<_> = every.forces.iter().map(|f| f.type_name()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        // Every built-in kind; a registered law takes the one custom slot its custom force has.
        assert_eq!(kinds.len(), crate::model::force::ForceType::LISTED.len());
    }
}
