//! The tangents of the `cpu` backend: each body's steps over `Dual<f32, W>`
//! (`body_steps::tangents`), whose values are the f32 steps its lane took, bit for bit. The
//! lanes keep the states and judge the faults; a body's tangents then take exactly the steps
//! its lane took.

use crate::assembly::body_masses::BodyMasses;
use crate::assembly::crowd::Crowd;
use crate::assembly::force_table::ForceTable;
use crate::backends::cpu::block::{LoadBlock, StateBlock};
use crate::body_steps::carried::CarriedTangents;
use crate::body_steps::derivative::ForceEnv;
use crate::body_steps::tangents::{BodyInputs, TangentSteps, directions_of};
use crate::model::error::Result;
use crate::model::force::ForceKind;
use crate::model::integrator::Integrator;
use crate::model::plane::Plane;
use crate::model::tangent::TangentPlan;
use crate::physics::custom_force::CustomForce;
use crate::physics::force_law::ExternalLoad;
use crate::physics::lanes::{LANES, Vec3Lanes};
use crate::physics::motion::State;
use crate::physics::scalar::Carried;

/// What the tangents carry and what a body's dual steps read besides its lane.
#[derive(Clone, Debug)]
pub(crate) struct CpuTangents {
    pub carried: CarriedTangents<f32>,
    /// The crowd's forces, in the order each body's steps take them.
    table: ForceTable,
    /// The keyframe tables in f32, as the lanes read them.
    keyframes: Vec<Vec<[f32; 2]>>,
    /// Bodies whose dual steps ended on values other than their lane's: none, unless the
    /// two instances of the definition part (the tests assert none).
    pub departed: u64,
}

/// What every body of a step call shares.
#[derive(Clone, Copy)]
pub(crate) struct TangentRun<'a> {
    pub masses: &'a BodyMasses,
    /// The crowd's planes.
    pub planes: &'a [Plane],
    pub integrator: Integrator,
    pub dt: f32,
    pub first_step: u64,
    /// The crowd index of body 0 here.
    pub first_body: usize,
    /// The crowd's custom force (a force law, when tangents are carried through it).
    pub custom_force: Option<&'a CustomForce>,
}

impl CpuTangents {
    /// The tangents of `plan` (checked against `crowd`) started from the states of `blocks`,
    /// which hold `bodies` bodies.
    pub(crate) fn start(
        plan: &TangentPlan,
        crowd: &Crowd,
        blocks: &[StateBlock],
        bodies: usize,
    ) -> Result<Self> {
        let carried = CarriedTangents::start(plan, bodies, |i| {
            let q = blocks[i / LANES].state(i % LANES).orientation;
            [q.w, q.x, q.y, q.z]
        })?;
        let round = |table: &Vec<[f64; 2]>| table.iter().map(|k| k.map(|v| v as f32)).collect();
        Ok(Self {
            carried,
            table: ForceTable::new(crowd, bodies),
            keyframes: crowd.keyframes.iter().map(round).collect(),
            departed: 0,
        })
    }

    /// Every body's columns, what the bodies read to carry them, and the count of bodies
    /// whose values departed from their lanes'.
    pub(crate) fn split(&mut self) -> (&mut [f32], BlockTangents<'_>, &mut u64) {
        let body_len = self.carried.plan.body_len();
        let shared = BlockTangents {
            plan: &self.carried.plan,
            table: &self.table,
            keyframes: &self.keyframes,
            body_len,
        };
        (&mut self.carried.columns, shared, &mut self.departed)
    }
}

/// What the bodies of every block read to carry their tangents.
#[derive(Clone, Copy)]
pub(crate) struct BlockTangents<'a> {
    plan: &'a TangentPlan,
    table: &'a ForceTable,
    keyframes: &'a [Vec<[f32; 2]>],
    /// The numbers of one body's block.
    pub body_len: usize,
}

impl BlockTangents<'_> {
    /// Carries the tangents of block `block`'s bodies (`columns`, theirs in crowd order)
    /// through the steps `taken(lane)` of each lane from the states `start` under the loads
    /// `load`, and returns how many bodies' dual values differ from `end`, the lanes' states
    /// after the run.
    pub(crate) fn carry(
        &self,
        run: &TangentRun,
        block: usize,
        (start, load, end): (&StateBlock, &LoadBlock, &StateBlock),
        columns: &mut [f32],
        taken: impl Fn(usize) -> u64,
    ) -> u64 {
        let mut departed = 0;
        for (lane, columns) in columns.chunks_mut(self.body_len).enumerate() {
            let i = block * LANES + lane;
            let forces: Vec<&ForceKind> = self.table.acting_on(i).collect();
            let origins: Vec<usize> = self.table.origins_of(i).collect();
            let directions = directions_of(self.plan, &forces, &origins);
            let mass = run.masses.get(i);
            let lane_load = |v: &Vec3Lanes| {
                glam::DVec3::new(v.x.0[lane].into(), v.y.0[lane].into(), v.z.0[lane].into())
            };
            let steps = TangentSteps {
                base: BodyInputs::of(&start.state(lane), &mass, &forces, run.planes),
                mass: &mass,
                directions: &directions,
                integrator: run.integrator,
                env: ForceEnv {
                    body: run.first_body + i,
                    load: ExternalLoad {
                        force: lane_load(&load.force),
                        torque: lane_load(&load.torque),
                    },
                    keyframes: self.keyframes,
                    custom_force: run.custom_force,
                },
            };
            let mut values = steps.base.state;
            let span = (run.first_step, taken(lane), f64::from(run.dt));
            steps.run(&mut values, columns, span, |_, _| None::<()>);
            let lane_end = State::<f64>::from(&end.state(lane)).map(|v| v as f32);
            if values
                .to_scalars()
                .iter()
                .map(|v| v.to_bits())
                .ne(lane_end.to_scalars().iter().map(|v| v.to_bits()))
            {
                departed += 1;
            }
        }
        departed
    }
}

#[cfg(test)]
mod tests {
    use glam::DVec3;

    use crate::assembly::body_source::BodySource;
    use crate::assembly::crowd::Crowd;
    use crate::backends::cpu::CpuSimulation;
    use crate::body_steps::tangents::tests::Tether;
    use crate::model::fault_rules::{Envelope, FaultRules, OnFault};
    use crate::model::force::ForceKind;
    use crate::model::integrator::Integrator;
    use crate::model::plane::Plane;
    use crate::model::tangent::TangentPlan;
    use crate::physics::custom_force::CustomForce;
    use crate::physics::force_law::ExternalLoad;
    use crate::verify::check_crowd::cross_check_crowd;

    /// The cross-check crowd (every force kind, own forces, keyframes) on a floor, its
    /// custom force a force law.
    fn crowd(integrator: Integrator) -> Crowd {
        let mut crowd = cross_check_crowd(45, 11, integrator, 1e-2)
            .unwrap()
            .with_plane(Plane::ground(0.5, 0.3));
        assert!(crowd.forces.iter().any(|f| f.kind == ForceKind::Custom));
        crowd.custom_force = Some(CustomForce::from_law(Tether));
        crowd
    }

    /// Every name of a direction `crowd` has: the state, the mass, the inertia and each
    /// numeric field of each force.
    fn every_name(crowd: &Crowd) -> Vec<String> {
        let mut names = vec!["state".to_string(), "mass".into(), "inertia".into()];
        for (i, force) in crowd.forces.iter().enumerate() {
            for field in force.kind.numeric_fields() {
                names.push(format!("forces[{i}].{}", field.name));
            }
        }
        names
    }

    /// Runs `crowd` on `cpu` with every tangent, in two calls, under external loads; the
    /// number of bodies whose dual values departed from their lanes', and how many columns
    /// moved.
    fn departures(crowd: &Crowd) -> (u64, usize) {
        let names = every_name(crowd);
        let plan = TangentPlan::parse(&names, &crowd.forces, &crowd.planes, "tangents").unwrap();
        let mut sim = CpuSimulation::new(crowd, &BodySource::given(&crowd.bodies), 0).unwrap();
        let loads: Vec<ExternalLoad> = (0..crowd.bodies.len())
            .map(|i| ExternalLoad {
                force: DVec3::new(0.1 * i as f64, -0.3, 0.2),
                torque: DVec3::new(0.0, 0.05, -0.01 * i as f64),
            })
            .collect();
        sim.set_external_loads(&loads);
        sim.start_tangents(&plan, crowd).unwrap();
        sim.step(40);
        sim.step(35);
        let tangents = sim.tangents().unwrap();
        let moved = tangents
            .carried
            .columns
            .iter()
            .filter(|t| **t != 0.0)
            .count();
        (tangents.departed, moved)
    }

    /// The `cpu` instance of the tangents is the definition over `Dual<f32, W>`: its values
    /// are the lanes' f32 steps, bit for bit, under every integrator, every force kind (a
    /// force law's dual instance against its lanes instance), own forces, keyframes, external
    /// loads and contacts.
    #[test]
    fn dual_steps_take_the_lanes_values_bit_for_bit() {
        for integrator in Integrator::ALL {
            let crowd = crowd(integrator);
            let (departed, moved) = departures(&crowd);
            assert_eq!(departed, 0, "{integrator}: bodies whose values departed");
            assert!(moved > 0, "{integrator}: no tangent moved");
        }
    }

    /// Bodies frozen mid-run, and a block stopped at its first broken step: the tangents
    /// take exactly the steps each lane took.
    #[test]
    fn tangents_stop_where_their_lanes_stop() {
        for on_fault in [OnFault::Freeze, OnFault::Stop] {
            let crowd = crowd(Integrator::Rk4).with_fault_rules(FaultRules {
                on_fault,
                envelope: Envelope {
                    max_speed: Some(3.0),
                    ..Envelope::default()
                },
            });
            let (departed, _) = departures(&crowd);
            assert_eq!(departed, 0, "{on_fault:?}: bodies whose values departed");
        }
    }
}
