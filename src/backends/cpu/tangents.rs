//! The tangents of the `cpu` backend: each body's steps over `Dual<f32, W>`
//! (`body_steps::tangents`), whose values are the f32 steps its lane took, bit for bit. The
//! lanes keep the states and judge the faults; a body's tangents then take exactly the steps
//! its lane took.

use crate::assembly::body_masses::BodyMasses;
use crate::assembly::crowd::Crowd;
use crate::assembly::force_table::ForceTable;
use crate::backends::cpu::block::{ConstantBlock, LaneForce, StateBlock};
use crate::backends::cpu::derivative::BlockForces;
use crate::backends::cpu::tangent_lanes::{LANE_WIDTHS, LaneInputs, LaneRun, values};
use crate::body_steps::carried::CarriedTangents;
use crate::body_steps::derivative::ForceEnv;
use crate::body_steps::tangents::{
    BodyInputs, TangentSteps, block_widths_among, components, directions_of, from_components,
};
use crate::model::error::Result;
use crate::model::force::ForceKind;
use crate::model::integrator::Integrator;
use crate::model::mass::MassProperties;
use crate::model::plane::Plane;
use crate::model::tangent::{Direction, STATE_COMPONENTS, TangentPlan};
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
    /// How the blocks carry their tangents.
    pub carry_by: CarryBy,
}

/// How a block carries its tangents: all give the same bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CarryBy {
    /// Eight bodies at a time on the widest clone this CPU runs, or body by body for a
    /// crowd with a custom force.
    Lanes,
    /// Eight bodies at a time on the baseline clone (SSE2), whatever the CPU.
    #[cfg_attr(not(test), allow(dead_code))]
    BaselineLanes,
    /// Body by body, over `Dual<f32, W>`.
    #[cfg_attr(not(test), allow(dead_code))]
    Bodies,
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
            carry_by: CarryBy::Lanes,
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
            carry_by: self.carry_by,
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
    carry_by: CarryBy,
}

/// One block as the plain run left it, for its tangents.
#[derive(Clone, Copy)]
pub(crate) struct BlockOfLanes<'a> {
    /// The block's index.
    pub index: usize,
    pub constants: &'a ConstantBlock,
    /// The block's forces and loads, as its plain run read them.
    pub forces: BlockForces<'a>,
    /// Whether the crowd has planes.
    pub contacts: bool,
    /// The block's states before and after the run.
    pub start: &'a StateBlock,
    pub end: &'a StateBlock,
}

impl BlockTangents<'_> {
    /// Carries the tangents of `block`'s bodies (`columns`, theirs in crowd order) through
    /// the steps `taken(lane)` of each lane, and returns how many bodies' dual values differ
    /// from the lanes' states after the run. Eight bodies at a time over lanes, or body by
    /// body when the crowd has a custom force.
    pub(crate) fn carry(
        &self,
        run: &TangentRun,
        block: BlockOfLanes,
        columns: &mut [f32],
        taken: impl Fn(usize) -> u64,
    ) -> u64 {
        let taken: [u64; LANES] = std::array::from_fn(taken);
        match (self.carry_by, run.custom_force) {
            (CarryBy::Bodies, _) | (_, Some(_)) => self.carry_bodies(run, block, columns, taken),
            (by, None) => {
                let baseline = by == CarryBy::BaselineLanes;
                self.carry_lanes(run, block, columns, taken, baseline)
            }
        }
    }

    /// [`carry`](Self::carry) over lanes of duals (`tangent_lanes`).
    fn carry_lanes(
        &self,
        run: &TangentRun,
        block: BlockOfLanes,
        columns: &mut [f32],
        taken: [u64; LANES],
        baseline: bool,
    ) -> u64 {
        let used = columns.len() / self.body_len;
        // A short last block's spare lanes stand in for its first body.
        let body = |lane: usize| block.index * LANES + if lane < used { lane } else { 0 };
        let forces: Vec<Vec<&ForceKind>> = (0..LANES)
            .map(|l| self.table.acting_on(body(l)).collect())
            .collect();
        let directions: Vec<Vec<Option<Direction>>> = (0..LANES)
            .map(|l| {
                let origins: Vec<usize> = self.table.origins_of(body(l)).collect();
                directions_of(self.plan, &forces[l], &origins)
            })
            .collect();
        let masses: Vec<MassProperties> = (0..LANES).map(|l| run.masses.get(body(l))).collect();
        let bases: Vec<BodyInputs<f32>> = (0..LANES)
            .map(|l| BodyInputs::of(&block.start.state(l), &masses[l], &forces[l], run.planes))
            .collect();
        let lane_run = LaneRun {
            integrator: run.integrator,
            constants: block.constants,
            forces: BlockForces {
                custom_force: None,
                ..block.forces
            },
            dt: run.dt,
            first_step: run.first_step,
            taken,
            contacts: block.contacts,
            baseline,
        };
        let lanes = LaneBlockInputs {
            bases: &bases,
            masses: &masses,
            directions: &directions,
            global: block.forces.global.len(),
            own: block.forces.own,
        };
        let k = self.body_len / STATE_COMPONENTS;
        let mut departed = 0;
        let mut first_column = 0;
        for (b, width) in block_widths_among(k, &LANE_WIDTHS).into_iter().enumerate() {
            let width = width.min(k - first_column);
            let values = match width {
                1 => lanes.run::<1>(&lane_run, first_column, width, columns, used),
                _ => lanes.run::<4>(&lane_run, first_column, width, columns, used),
            };
            if b == 0 {
                let (ours, lanes) = (values.to_scalars(), block.end.to_scalars());
                let differs = |l: usize| {
                    ours.iter()
                        .zip(&lanes)
                        .any(|(a, b)| a.0[l].to_bits() != b.0[l].to_bits())
                };
                departed = (0..used).filter(|&l| differs(l)).count() as u64;
            }
            first_column += width;
        }
        departed
    }

    /// [`carry`](Self::carry) one body at a time, over `Dual<f32, W>` (`body_steps`).
    fn carry_bodies(
        &self,
        run: &TangentRun,
        block: BlockOfLanes,
        columns: &mut [f32],
        taken: [u64; LANES],
    ) -> u64 {
        let mut departed = 0;
        for (lane, columns) in columns.chunks_mut(self.body_len).enumerate() {
            let i = block.index * LANES + lane;
            let forces: Vec<&ForceKind> = self.table.acting_on(i).collect();
            let origins: Vec<usize> = self.table.origins_of(i).collect();
            let directions = directions_of(self.plan, &forces, &origins);
            let mass = run.masses.get(i);
            let load = block.forces.load;
            let lane_load = |v: &Vec3Lanes| {
                glam::DVec3::new(v.x.0[lane].into(), v.y.0[lane].into(), v.z.0[lane].into())
            };
            let steps = TangentSteps {
                base: BodyInputs::of(&block.start.state(lane), &mass, &forces, run.planes),
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
            let span = (run.first_step, taken[lane], f64::from(run.dt));
            steps.run(&mut values, columns, span, |_, _| None::<()>);
            let lane_end = State::<f64>::from(&block.end.state(lane)).map(|v| v as f32);
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

/// What every dual block of a block of lanes starts from: each lane's body's inputs, mass
/// and directions, and the block's force records.
struct LaneBlockInputs<'a, 'b> {
    bases: &'b [BodyInputs<'a, f32>],
    masses: &'b [MassProperties],
    directions: &'b [Vec<Option<Direction>>],
    /// The number of global force records.
    global: usize,
    own: &'b [LaneForce],
}

impl LaneBlockInputs<'_, '_> {
    /// Runs the `width` columns from `first_column` of the block's `used` bodies (`columns`,
    /// theirs in crowd order) over `Dual<_, N>`, writes them back and returns the values.
    fn run<const N: usize>(
        &self,
        lane_run: &LaneRun,
        first_column: usize,
        width: usize,
        columns: &mut [f32],
        used: usize,
    ) -> StateBlock {
        let body_len = self.directions[0].len() * STATE_COMPONENTS;
        let k = body_len / STATE_COMPONENTS;
        let lanes = (0..LANES)
            .map(|l| {
                let directions = &self.directions[l][first_column..][..width];
                let seeds = directions.iter().enumerate().filter_map(|(j, d)| match d {
                    Some(Direction::State(_)) | None => None,
                    Some(d) => Some((j, *d)),
                });
                let mut inputs = self.bases[l].seeded_along::<N>(&self.masses[l], seeds);
                if l < used {
                    let own = &columns[l * body_len..][..body_len];
                    let mut y = components(&inputs.state);
                    for (r, component) in y.iter_mut().enumerate() {
                        component.tangent[..width]
                            .copy_from_slice(&own[r * k + first_column..][..width]);
                    }
                    inputs.state = from_components(y);
                }
                inputs
            })
            .collect();
        let inputs = LaneInputs::gather(lanes, self.global, self.own);
        let y = lane_run.carry::<N>(&inputs);
        for (l, own) in columns.chunks_mut(body_len).enumerate() {
            for (r, component) in components(&y).iter().enumerate() {
                for (i, t) in own[r * k + first_column..][..width].iter_mut().enumerate() {
                    *t = component.tangent[i].0[l];
                }
            }
        }
        values(&y)
    }
}

#[cfg(test)]
mod tests {
    use glam::DVec3;

    use super::{CarryBy, CpuTangents};
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
        let tangents = carried(crowd, CarryBy::Lanes);
        let moved = tangents
            .carried
            .columns
            .iter()
            .filter(|t| **t != 0.0)
            .count();
        (tangents.departed, moved)
    }

    /// The tangents of [`departures`]' run, carried `by`.
    fn carried(crowd: &Crowd, by: CarryBy) -> CpuTangents {
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
        sim.carry_tangents_by(by);
        sim.step(40);
        sim.step(35);
        sim.tangents().unwrap().clone()
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

    /// Without a custom force, blocks carry their tangents eight bodies at a time over
    /// lanes of duals, on the widest clone and on the baseline one: the same bits as body by
    /// body, every integrator, every other force kind, own forces, keyframes, external
    /// loads, contacts, and lanes frozen or stopped mid-run.
    #[test]
    fn lanes_of_duals_carry_the_bodies_tangents_bit_for_bit() {
        let rules = |on_fault| FaultRules {
            on_fault,
            envelope: Envelope {
                max_speed: Some(3.0),
                ..Envelope::default()
            },
        };
        let mut runs = vec![];
        for integrator in Integrator::ALL {
            runs.push((integrator.to_string(), crowd(integrator)));
        }
        for on_fault in [OnFault::Freeze, OnFault::Stop] {
            let faulty = crowd(Integrator::Rk4).with_fault_rules(rules(on_fault));
            runs.push((format!("{on_fault:?}"), faulty));
        }
        for (name, mut crowd) in runs {
            crowd.custom_force = None;
            let bodies = carried(&crowd, CarryBy::Bodies);
            let bits = |t: &CpuTangents| -> Vec<u32> {
                t.carried.columns.iter().map(|v| v.to_bits()).collect()
            };
            assert!(bodies.carried.columns.iter().any(|t| *t != 0.0), "{name}");
            for by in [CarryBy::Lanes, CarryBy::BaselineLanes] {
                let lanes = carried(&crowd, by);
                assert_eq!(
                    lanes.departed, 0,
                    "{name} {by:?}: bodies whose values departed"
                );
                assert_eq!(bits(&lanes), bits(&bodies), "{name} {by:?}");
            }
        }
    }
}
