//! The tangents of the `cpu` backend: each block's run over lanes of duals
//! (`tangent_lanes`), whose values are the plain run's f32 steps, bit for bit, so they stand
//! in for it. Body by body, each body's steps over `Dual<f32, W>` (`body_steps::tangents`)
//! after the plain run, taking exactly the steps its lane took, give the same bits: the
//! tests compare the two.

use crate::assembly::body_masses::BodyMasses;
use crate::assembly::crowd::Crowd;
use crate::assembly::force_table::ForceTable;
use crate::backends::cpu::block::StateBlock;
use crate::backends::cpu::block_run::{BlockClone, BlockOutcome, BlockRun};
use crate::backends::cpu::tangent_lanes::{LaneInputs, LaneRun, LaneSeeds};
use crate::body_steps::carried::CarriedTangents;
use crate::body_steps::tangent_blocks::cpu_blocks;
use crate::body_steps::tangents::{Block, BodyInputs, components, directions_of};
use crate::model::error::Result;
use crate::model::force::ForceKind;
use crate::model::mass::MassProperties;
use crate::model::plane::Plane;
use crate::model::tangent::{Direction, STATE_COMPONENTS, Tangent, TangentPlan};
use crate::physics::dual::LANE_DUAL_WIDTHS;
use crate::physics::lanes::{LANES, Lanes};
use crate::physics::scalar::Carried;

/// What the tangents carry and what a body's dual steps read besides its lane.
#[derive(Clone, Debug)]
pub(crate) struct CpuTangents {
    pub carried: CarriedTangents<f32>,
    /// The blocks the columns run in, over lanes or body by body alike.
    blocks: Vec<Block>,
    /// The crowd's forces, in the order each body's steps take them.
    table: ForceTable,
    /// The keyframe tables in f32, as the body-by-body carry reads them.
    keyframes: Vec<Vec<[f32; 2]>>,
    /// Bodies whose dual steps ended on values other than their lane's: none, unless the
    /// two instances of the definition part (the tests assert none).
    pub departed: u64,
    /// How the blocks carry their tangents.
    pub carry_by: CarryBy,
    /// Every body's directions, when no body has forces of its own (then they are alike).
    shared_directions: Option<Vec<Option<Direction>>>,
    /// Whether a direction moves the inertia, whose seeds read each body's.
    seeds_inertia: bool,
}

/// How a block carries its tangents: both give the same bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CarryBy {
    /// Eight bodies at a time over lanes of duals (`tangent_lanes`): on x86-64 its AVX2
    /// clone alone.
    Lanes,
    /// Body by body, over `Dual<f32, W>`, after the plain run: the tests' reference, and
    /// x86-64 CPUs without AVX2. A baseline (SSE2) clone of the lanes for those CPUs was
    /// three fifths of the crate's release build, for a few times the speed on CPUs few
    /// run this on.
    Bodies,
}

impl CarryBy {
    /// How this CPU carries tangents fastest.
    fn fastest() -> Self {
        match LaneRun::runs_here() {
            true => Self::Lanes,
            false => Self::Bodies,
        }
    }
}

/// What every body of a step call shares.
#[derive(Clone, Copy)]
pub(crate) struct TangentRun<'a> {
    pub masses: &'a BodyMasses,
    /// The crowd's planes.
    pub planes: &'a [Plane],
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
        let table = ForceTable::new(crowd, bodies);
        let shared_directions = (!table.has_own_forces() && bodies > 0).then(|| {
            let forces: Vec<&ForceKind> = table.acting_on(0).collect();
            let origins: Vec<usize> = table.origins_of(0).collect();
            directions_of(plan, &forces, &origins)
        });
        let seeds_inertia = plan.tangents().contains(&Tangent::Inertia);
        Ok(Self {
            carried,
            blocks: cpu_blocks(plan, crowd, &LANE_DUAL_WIDTHS),
            table,
            shared_directions,
            seeds_inertia,
            keyframes: (crowd.keyframes.iter())
                .map(|table| table.iter().map(|k| k.map(|v| v as f32)).collect())
                .collect(),
            departed: 0,
            carry_by: CarryBy::fastest(),
        })
    }

    /// Every body's columns, what the bodies read to carry them, and the count of bodies
    /// whose values departed from their lanes'.
    pub(crate) fn split(&mut self) -> (&mut [f32], BlockTangents<'_>, &mut u64) {
        let body_len = self.carried.plan.body_len();
        let shared = BlockTangents {
            plan: &self.carried.plan,
            blocks: &self.blocks,
            table: &self.table,
            keyframes: &self.keyframes,
            body_len,
            carry_by: self.carry_by,
            shared_directions: self.shared_directions.as_deref(),
            seeds_inertia: self.seeds_inertia,
        };
        (&mut self.carried.columns, shared, &mut self.departed)
    }
}

/// What the bodies of every block read to carry their tangents.
#[derive(Clone, Copy)]
pub(crate) struct BlockTangents<'a> {
    plan: &'a TangentPlan,
    blocks: &'a [Block],
    table: &'a ForceTable,
    keyframes: &'a [Vec<[f32; 2]>],
    /// The numbers of one body's block.
    pub body_len: usize,
    carry_by: CarryBy,
    shared_directions: Option<&'a [Option<Direction>]>,
    seeds_inertia: bool,
}

impl BlockTangents<'_> {
    /// Block `index`'s run `block_run` from `state`, on the clone `clone`, carrying its
    /// bodies' tangents (`columns`, theirs in crowd order): its outcome, and how many
    /// bodies' dual values departed from the values its outcome holds. Eight bodies at a
    /// time over lanes of duals, whose values are the run's (no plain run is needed), or body
    /// by body after the plain run on `clone`.
    pub(crate) fn step_block(
        &self,
        run: &TangentRun,
        block_run: &BlockRun,
        index: usize,
        state: &StateBlock,
        clone: BlockClone,
        columns: &mut [f32],
    ) -> (BlockOutcome, u64) {
        match self.carry_by {
            CarryBy::Bodies => {
                let outcome = clone(block_run, state);
                let taken: [u64; LANES] =
                    std::array::from_fn(|lane| block_run.steps_taken(&outcome, lane));
                let states = (state, &outcome.state);
                let departed = self.carry_bodies(run, block_run, index, states, columns, taken);
                (outcome, departed)
            }
            CarryBy::Lanes => {
                let lane_run = LaneRun { block: *block_run };
                self.carry_lanes(run, &lane_run, index, state, columns)
            }
        }
    }

    /// [`step_block`](Self::step_block) over lanes of duals (`tangent_lanes`): every block
    /// of directions runs the steps and judges them as the plain run would, on the same
    /// values; the first's outcome is the block's.
    fn carry_lanes(
        &self,
        run: &TangentRun,
        lane_run: &LaneRun,
        index: usize,
        start: &StateBlock,
        columns: &mut [f32],
    ) -> (BlockOutcome, u64) {
        let used = columns.len() / self.body_len;
        // A short last block's spare lanes stand in for its first body.
        let body = |lane: usize| index * LANES + if lane < used { lane } else { 0 };
        let contacts = lane_run.block.contacts.is_some();
        let needs_forces = contacts || self.shared_directions.is_none();
        let forces: Vec<Vec<&ForceKind>> = match needs_forces {
            true => (0..LANES)
                .map(|l| self.table.acting_on(body(l)).collect())
                .collect(),
            false => Vec::new(),
        };
        let own_directions: Vec<Vec<Option<Direction>>> = match self.shared_directions {
            Some(_) => Vec::new(),
            None => (0..LANES)
                .map(|l| {
                    let origins: Vec<usize> = self.table.origins_of(body(l)).collect();
                    directions_of(self.plan, &forces[l], &origins)
                })
                .collect(),
        };
        let directions = std::array::from_fn(|l| match self.shared_directions {
            Some(shared) => shared,
            None => &own_directions[l][..],
        });
        let masses: Vec<MassProperties> = match contacts || self.seeds_inertia {
            true => (0..LANES).map(|l| run.masses.get(body(l))).collect(),
            false => Vec::new(),
        };
        // Each lane's own inputs, for its contacts alone.
        let bases: Vec<BodyInputs<f32>> = match contacts {
            true => (0..LANES)
                .map(|l| BodyInputs::of(&start.state(l), &masses[l], &forces[l], run.planes))
                .collect(),
            false => Vec::new(),
        };
        let seeds = LaneSeeds {
            directions,
            masses: &masses,
            used,
        };
        let lanes = LaneBlockInputs {
            start,
            bases: &bases,
            seeds,
        };
        let mut first: Option<BlockOutcome> = None;
        let mut departed = 0;
        for &block in self.blocks {
            let outcome = match block.dual_width {
                1 => lanes.run::<1>(lane_run, block, columns),
                2 => lanes.run::<2>(lane_run, block, columns),
                _ => lanes.run::<4>(lane_run, block, columns),
            };
            match &first {
                None => first = Some(outcome),
                Some(first) => {
                    let (ours, theirs) = (outcome.state.to_scalars(), first.state.to_scalars());
                    let differs = |l: usize| {
                        let bits = |v: &Lanes| v.0[l].to_bits();
                        ours.iter().zip(&theirs).any(|(a, b)| bits(a) != bits(b))
                    };
                    departed += (0..used).filter(|&l| differs(l)).count() as u64;
                }
            }
        }
        (first.expect("at least one direction"), departed)
    }
}

/// What every dual block of a block of lanes starts from: the plain run's start, the seeds,
/// and each lane's own inputs when its contacts need them.
struct LaneBlockInputs<'a, 'b> {
    start: &'b StateBlock,
    bases: &'b [BodyInputs<'a, f32>],
    seeds: LaneSeeds<'b>,
}

impl LaneBlockInputs<'_, '_> {
    /// Runs the columns of `block` of the lanes' used bodies (`columns`, theirs in crowd
    /// order) over `Dual<_, N>`, writes them back and returns the run's outcome.
    fn run<const N: usize>(
        &self,
        lane_run: &LaneRun,
        block: Block,
        columns: &mut [f32],
    ) -> BlockOutcome {
        let seeds = &self.seeds;
        let k = seeds.directions[0].len();
        let body_len = k * STATE_COMPONENTS;
        let lanes = (self.bases.iter().enumerate())
            .map(|(l, base)| {
                let own = (l < seeds.used).then(|| &columns[l * body_len..][..body_len]);
                base.seeded_block::<N>(&seeds.masses[l], seeds.directions[l], block, own)
            })
            .collect();
        let inputs = LaneInputs::seeded(&lane_run.block, self.start, seeds, block, columns, lanes);
        let (y, outcome) = lane_run.carry::<N>(&inputs);
        let y = components(&y);
        for (l, own) in columns.chunks_mut(body_len).enumerate() {
            for (r, component) in y.iter().enumerate() {
                for (j, &c) in block.columns().iter().enumerate() {
                    own[r * k + c] = component.tangent[j].0[l];
                }
            }
        }
        outcome
    }
}

/// The body-by-body carry: the tests' reference, and x86-64 CPUs without AVX2.
mod by_bodies {
    use crate::backends::cpu::block::StateBlock;
    use crate::backends::cpu::block_run::BlockRun;
    use crate::backends::cpu::tangents::{BlockTangents, TangentRun};
    use crate::body_steps::derivative::ForceEnv;
    use crate::body_steps::tangents::{BodyInputs, TangentSteps, directions_of};
    use crate::model::force::ForceKind;
    use crate::physics::force_law::ExternalLoad;
    use crate::physics::lanes::{LANES, Vec3Lanes};
    use crate::physics::motion::State;
    use crate::physics::scalar::Carried;

    impl BlockTangents<'_> {
        /// [`step_block`](Self::step_block) one body at a time, over `Dual<f32, W>`
        /// (`body_steps`), after the plain run: each body takes the steps `taken[lane]` from
        /// `start`, as `block_run` runs them; returns how many bodies' values differ from
        /// `end`.
        pub(super) fn carry_bodies(
            &self,
            run: &TangentRun,
            block_run: &BlockRun,
            index: usize,
            (start, end): (&StateBlock, &StateBlock),
            columns: &mut [f32],
            taken: [u64; LANES],
        ) -> u64 {
            let mut departed = 0;
            for (lane, columns) in columns.chunks_mut(self.body_len).enumerate() {
                let i = index * LANES + lane;
                let forces: Vec<&ForceKind> = self.table.acting_on(i).collect();
                let origins: Vec<usize> = self.table.origins_of(i).collect();
                let directions = directions_of(self.plan, &forces, &origins);
                let mass = run.masses.get(i);
                let (load, forces_run) = (block_run.forces.load, &block_run.forces);
                let lane_load = |v: &Vec3Lanes| {
                    glam::DVec3::new(v.x.0[lane].into(), v.y.0[lane].into(), v.z.0[lane].into())
                };
                let steps = TangentSteps {
                    base: BodyInputs::of(&start.state(lane), &mass, &forces, run.planes),
                    mass: &mass,
                    directions: &directions,
                    blocks: self.blocks,
                    integrator: block_run.integrator,
                    env: ForceEnv {
                        body: forces_run.first_body + i,
                        load: ExternalLoad {
                            force: lane_load(&load.force),
                            torque: lane_load(&load.torque),
                        },
                        keyframes: self.keyframes,
                        custom_force: forces_run.custom_force,
                    },
                };
                let mut values = steps.base.state;
                let span = (block_run.first_step, taken[lane], f64::from(block_run.dt));
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
}

#[cfg(test)]
mod tests {
    use glam::DVec3;

    use super::{CarryBy, CpuTangents};
    use crate::assembly::body_source::BodySource;
    use crate::assembly::crowd::Crowd;
    use crate::backends::cpu::CpuSimulation;
    use crate::model::fault::Fault;
    use crate::model::fault_rules::QuarantinedBody;
    use crate::model::fault_rules::{Envelope, FaultRules, OnFault};
    use crate::model::force::ForceKind;
    use crate::model::integrator::Integrator;
    use crate::model::plane::Plane;
    use crate::model::tangent::TangentPlan;
    use crate::physics::custom_force::CustomForce;
    use crate::physics::force_law::ExternalLoad;
    use crate::verify::check_crowd::cross_check_crowd;
    use crate::verify::test_crowds::Tether;

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
    /// numeric field of each force, and each keyframed force's table.
    fn every_name(crowd: &Crowd) -> Vec<String> {
        let mut names = vec!["state".to_string(), "mass".into(), "inertia".into()];
        for (i, force) in crowd.forces.iter().enumerate() {
            for field in force.kind.numeric_fields() {
                names.push(format!("forces[{i}].{}", field.name));
            }
            if let ForceKind::Keyframed { .. } = force.kind {
                names.push(format!("forces[{i}].keyframes"));
            }
        }
        names
    }

    /// Runs `crowd` on `cpu` with every tangent, in two calls, under external loads; the
    /// number of bodies whose dual values departed from their lanes', and how many columns
    /// moved.
    fn departures(crowd: &Crowd) -> (u64, usize) {
        let tangents = carried(crowd, Some(CarryBy::Bodies)).tangents.unwrap();
        let moved = tangents
            .carried
            .columns
            .iter()
            .filter(|t| **t != 0.0)
            .count();
        (tangents.departed, moved)
    }

    /// What [`carried`] ran to.
    struct Ran {
        tangents: Option<CpuTangents>,
        /// Every body's state, as bits.
        states: Vec<u64>,
        /// What each `step` call returned.
        stops: Vec<Option<(usize, u64, Fault)>>,
        quarantined: Vec<QuarantinedBody>,
    }

    /// [`departures`]' run, its tangents carried `by`, or none.
    fn carried(crowd: &Crowd, by: Option<CarryBy>) -> Ran {
        let names = every_name(crowd);
        let plan = TangentPlan::parse(
            &names,
            &crowd.forces,
            &crowd.planes,
            &crowd.keyframes,
            "tangents",
        )
        .unwrap();
        let mut sim = CpuSimulation::new(crowd, &BodySource::given(&crowd.bodies), 0).unwrap();
        let loads: Vec<ExternalLoad> = (0..crowd.bodies.len())
            .map(|i| ExternalLoad {
                force: DVec3::new(0.1 * i as f64, -0.3, 0.2),
                torque: DVec3::new(0.0, 0.05, -0.01 * i as f64),
            })
            .collect();
        sim.set_external_loads(&loads);
        if let Some(by) = by {
            sim.start_tangents(&plan, crowd).unwrap();
            sim.carry_tangents_by(by);
        }
        let stops = vec![sim.step(40), sim.step(35)];
        let mut states = Vec::new();
        sim.visit_states(|_, _, s| {
            let q = s.orientation;
            let numbers = [s.position, s.linear_momentum, s.angular_momentum]
                .into_iter()
                .flat_map(|v| v.to_array())
                .chain([q.w, q.x, q.y, q.z]);
            states.extend(numbers.map(f64::to_bits));
        });
        Ran {
            tangents: sim.tangents().cloned(),
            states,
            stops,
            quarantined: sim.quarantined(),
        }
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

    /// Blocks carry their tangents eight bodies at a time over lanes of duals, whose values
    /// stand in for the plain run's: the same tangents as body by body (which x86-64 CPUs
    /// without AVX2 run), both with the same states, stops and frozen bodies as the plain
    /// run, under every integrator, every force kind (a force law's instance over duals of
    /// lanes against its instance over duals of f32), own forces or none, keyframes,
    /// external loads, contacts or none, and lanes frozen or stopped mid-run.
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
        // Forces on every body alone and no planes: every body's directions are alike.
        let mut global = cross_check_crowd(45, 11, Integrator::Rk4, 1e-2).unwrap();
        global.forces.retain(|f| f.body.is_none());
        global.custom_force = Some(CustomForce::from_law(Tether));
        runs.push(("global forces".into(), global));
        // Every NaN as one. Under `lie_rk4` body 41's tangents grow about a hundredfold a step
        // after it bounces off the floor (the linearized step is far from stable there at
        // dt = 1e-2; `cpu-ref`'s pass 1e30 by step 27), so they overflow f32 and inf - inf
        // gives NaN both ways, with payloads SIMD and scalar instructions set differently.
        let bits = |ran: &Ran| -> Vec<u32> {
            let columns = &ran.tangents.as_ref().unwrap().carried.columns;
            let canonical = |v: &f32| if v.is_nan() { f32::NAN } else { *v };
            columns.iter().map(|v| canonical(v).to_bits()).collect()
        };
        for (name, crowd) in runs {
            let plain = carried(&crowd, None);
            let bodies = carried(&crowd, Some(CarryBy::Bodies));
            assert!(bits(&bodies).iter().any(|&t| t != 0), "{name}");
            // The lanes on a CPU that runs them; a CPU without AVX2 carries body by body.
            let lanes = carried(&crowd, Some(CarryBy::fastest()));
            let (ours, theirs) = (bits(&lanes), bits(&bodies));
            let differing: Vec<(usize, f32, f32)> = (0..ours.len())
                .filter(|&i| ours[i] != theirs[i])
                .map(|i| (i, f32::from_bits(ours[i]), f32::from_bits(theirs[i])))
                .collect();
            assert!(
                differing.is_empty(),
                "{name}: {} of {} tangents differ, the first (index, lanes, bodies): {:?}",
                differing.len(),
                ours.len(),
                &differing[..differing.len().min(4)]
            );
            for (by, ran) in [("lanes", &lanes), ("bodies", &bodies)] {
                let departed = ran.tangents.as_ref().unwrap().departed;
                assert_eq!(departed, 0, "{name} {by}: bodies whose values parted");
                assert_eq!(ran.states, plain.states, "{name} {by}: states");
                assert_eq!(ran.stops, plain.stops, "{name} {by}: stops");
                assert_eq!(ran.quarantined, plain.quarantined, "{name} {by}: frozen");
            }
            if name == "Stop" || name == "Freeze" {
                let faults = plain.stops.iter().flatten().count() + plain.quarantined.len();
                assert!(faults > 0, "{name}: no body broke a rule");
            }
        }
    }
}
