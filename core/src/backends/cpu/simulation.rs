//! The fast CPU backend: f32, eight bodies per block, blocks spread over every core.

use rayon::prelude::*;

use crate::assembly::body_masses::{BodyMasses, MassChunk};
use crate::assembly::body_source::{BodySource, SOURCE_CHUNK};
use crate::assembly::crowd::Crowd;
use crate::assembly::force_table::{ForceTable, flatten_keyframes};
use crate::backends::cpu::block::{
    ConstantBlock, ForceF32, LaneForce, LoadBlock, StateBlock, ZERO_LOAD, pack_block,
};
use crate::backends::cpu::block_run::{BlockClone, BlockRun, widest_clone};
use crate::backends::cpu::contact::ContactBlock;
use crate::backends::cpu::derivative::BlockForces;
use crate::backends::cpu::faults::LaneMask;
use crate::backends::cpu::tangents::{CpuTangents, TangentRun};
use crate::model::body::{Body, BodyState};
use crate::model::error::Result;
use crate::model::fault::Fault;
use crate::model::fault_rules::QuarantinedBody;
use crate::model::integrator::Integrator;
use crate::model::mass::MassProperties;
use crate::model::plane::Plane;
use crate::model::quarantine::Quarantine;
use crate::model::tangent::TangentPlan;
use crate::physics::contact::PlaneConstants;
use crate::physics::custom_force::CustomForce;
use crate::physics::force_law::ExternalLoad;
use crate::physics::lanes::LANES;

/// Each lane's crowd index, the clock step of its last good state and its fault, for the
/// lanes that broke a rule in a run.
type BlockFaults = [Option<(usize, u64, Fault)>; LANES];

/// Blocks per rayon task: enough work to amortise the task, small enough to balance cores.
const BLOCKS_PER_TASK: usize = 16;

/// A crowd integrated in f32 on every core, eight bodies per SIMD block.
#[derive(Clone, Debug)]
pub struct CpuSimulation {
    states: Vec<StateBlock>,
    constants: Vec<ConstantBlock>,
    global: Vec<ForceF32>,
    own: Vec<LaneForce>,
    /// One per block once set; empty (every load zero) until then.
    loads: Vec<LoadBlock>,
    keyframes: Vec<[f32; 2]>,
    custom_force: Option<CustomForce>,
    /// The crowd index of body 0 here (a custom force sees crowd indices).
    first_body: usize,
    masses: BodyMasses,
    /// One per block when the crowd has planes, else empty.
    contacts: Vec<ContactBlock>,
    /// The planes, rounded to f32 as the f32 kernel's are.
    planes: Vec<PlaneConstants<f32>>,
    /// The crowd's planes, whose numbers tangents are taken along.
    crowd_planes: Vec<Plane>,
    /// Whether each body's steps read its state alone
    /// ([`Crowd::steps_read_the_state_alone`]).
    settles: bool,
    integrator: Integrator,
    dt: f32,
    /// `start_step` plus the steps taken.
    step: u64,
    /// The squared speed, angular speed and distance limits, when any is set.
    envelope_squared: Option<[f32; 3]>,
    /// Each block's frozen lanes.
    frozen_lanes: Vec<LaneMask>,
    /// Each block's lanes at rest when its last step ended (`physics::rest`): their steps
    /// leave them as they are until their states or the loads are set again.
    resting_lanes: Vec<LaneMask>,
    /// The policy and the frozen bodies, whose last good states `states` keeps.
    quarantine: Quarantine,
    /// The tangents carried with the states, once started.
    tangents: Option<CpuTangents>,
}

impl CpuSimulation {
    /// Takes the bodies of `source` and the rest of `crowd` (whose settings are validated;
    /// each body is checked here); fails on a custom force without a Rust twin. `source`
    /// starts at crowd index `first_body` (not 0 for an MPI rank's shard): the index a
    /// custom force sees.
    pub fn new(crowd: &Crowd, source: &BodySource, first_body: usize) -> Result<Self> {
        if let Some(custom) = &crowd.custom_force {
            custom.closure()?;
        }
        let table = ForceTable::new(crowd, source.len());
        let (keyframes, spans) = flatten_keyframes(&crowd.keyframes, |v| v as f32);
        let blocks = source.len().div_ceil(LANES);
        let mut states = zeroed_vec::<StateBlock>(blocks, source.len())?;
        let mut constants = zeroed_vec::<ConstantBlock>(blocks, source.len())?;
        let frozen_lanes = zeroed_vec::<LaneMask>(blocks, source.len())?;
        let resting_lanes = zeroed_vec::<LaneMask>(blocks, source.len())?;
        // Each chunk of the source is packed straight into its blocks, in parallel.
        let blocks_per_chunk = SOURCE_CHUNK / LANES;
        let with_planes = !crowd.planes.is_empty();
        let chunks = states
            .par_chunks_mut(blocks_per_chunk)
            .zip(constants.par_chunks_mut(blocks_per_chunk))
            .enumerate()
            .map(|(chunk, (states, constants))| {
                source.with_chunk(chunk, |first, bodies| {
                    crowd.validate_bodies(first, bodies)?;
                    let blocks = bodies.chunks(LANES).zip(states.iter_mut().zip(constants));
                    for (b, (lanes, (state, constant))) in blocks.enumerate() {
                        (*state, *constant) = pack_block(lanes, first + b * LANES);
                    }
                    let contacts = match with_planes {
                        true => bodies.chunks(LANES).map(contact_block).collect(),
                        false => Vec::new(),
                    };
                    Ok((MassChunk::of(bodies), contacts))
                })?
            })
            .collect::<Result<Vec<_>>>()?;
        let (masses, contacts): (Vec<_>, Vec<Vec<ContactBlock>>) = chunks.into_iter().unzip();
        let mut own = Vec::new();
        if table.has_own_forces() {
            for block in &mut constants {
                block.take_own_forces(&table, &spans, &mut own);
            }
        }
        Ok(Self {
            loads: Vec::new(),
            states,
            constants,
            global: table.forces[..table.global_count]
                .iter()
                .map(|kind| ForceF32::new(kind, &spans, &table))
                .collect(),
            own,
            keyframes,
            custom_force: crowd.custom_force.clone(),
            first_body,
            masses: BodyMasses::from_chunks(masses),
            contacts: contacts.concat(),
            planes: crowd.planes.iter().map(PlaneConstants::of).collect(),
            crowd_planes: crowd.planes.clone(),
            settles: crowd.steps_read_the_state_alone(),
            integrator: crowd.integrator,
            dt: crowd.dt as f32,
            step: crowd.start_step,
            quarantine: Quarantine::new(crowd.fault_rules.on_fault),
            envelope_squared: crowd
                .fault_rules
                .envelope
                .is_set()
                .then(|| crowd.fault_rules.envelope.squared_limits(|v| v as f32)),
            frozen_lanes,
            resting_lanes,
            tangents: None,
        })
    }

    /// Replaces the external loads (one per body, already validated), in f32.
    pub fn set_external_loads(&mut self, loads: &[ExternalLoad]) {
        // A lane at rest under the old loads may move under the new ones.
        self.resting_lanes.fill(0);
        self.loads.resize(self.states.len(), LoadBlock::default());
        for (block, chunk) in self.loads.iter_mut().zip(loads.chunks(LANES)) {
            *block = LoadBlock::default();
            for (lane, load) in chunk.iter().enumerate() {
                for (lanes, value) in [
                    (&mut block.force, load.force),
                    (&mut block.torque, load.torque),
                ] {
                    lanes.x.0[lane] = value.x as f32;
                    lanes.y.0[lane] = value.y as f32;
                    lanes.z.0[lane] = value.z as f32;
                }
            }
        }
    }

    /// Advances every body by `steps` steps on the current rayon pool. Each block runs all
    /// its steps before the next starts, so its state stays in registers and L1.
    ///
    /// A body whose new state would break a fault rule (turn NaN or infinite, or leave the
    /// envelope) stops at its last good state: under `stop` with its whole block, and the
    /// lowest such body, the clock step of its last good state and the fault are returned;
    /// under `freeze` alone, frozen there and left out of later steps.
    pub fn step(&mut self, steps: u64) -> Option<(usize, u64, Fault)> {
        self.step_with(widest_clone(), steps)
    }

    /// [`CpuSimulation::step`] with the block loop compiled for one instruction set.
    fn step_with(&mut self, clone: BlockClone, steps: u64) -> Option<(usize, u64, Fault)> {
        let (global, own) = (&self.global[..], &self.own[..]);
        let (contacts, planes) = (&self.contacts[..], &self.planes[..]);
        let (keyframes, custom_force) = (&self.keyframes[..], self.custom_force.as_ref());
        let first_body = self.first_body;
        let (integrator, dt, first_step) = (self.integrator, self.dt, self.step);
        let loads = &self.loads[..];
        let envelope_squared = self.envelope_squared.as_ref();
        let freeze = self.quarantine.freezes();
        let settles = self.settles;
        let tangent_run = TangentRun {
            masses: &self.masses,
            planes: &self.crowd_planes,
        };
        let (tangent_columns, tangents, departed) = match &mut self.tangents {
            Some(t) => {
                let (columns, shared, departed) = t.split();
                (Some(columns), Some(shared), Some(departed))
            }
            None => (None, None, None),
        };
        // One block's run; its bodies' tangent columns, when carried, follow its lanes.
        let block_steps = |block: usize,
                           state: &mut StateBlock,
                           (frozen, resting): (&mut LaneMask, &mut LaneMask),
                           constants: &ConstantBlock,
                           columns: Option<&mut [f32]>| {
            let load = loads.get(block).unwrap_or(&ZERO_LOAD);
            // Tangents move on at rest: a run carrying them takes every step.
            let carrying = columns.is_some();
            let (first, count) = constants.own_forces;
            let run = BlockRun {
                integrator,
                constants,
                forces: BlockForces {
                    global,
                    own: &own[first as usize..(first + count) as usize],
                    load,
                    keyframes,
                    custom_force,
                    first_body,
                },
                dt,
                first_step,
                steps,
                contacts: contacts.get(block).map(|c| (c, planes)),
                envelope_squared,
                settles,
                freeze,
                frozen: *frozen,
                resting: if carrying { 0 } else { *resting },
            };
            let (outcome, departed) = match (columns, &tangents) {
                (Some(columns), Some(tangents)) => {
                    tangents.step_block(&tangent_run, &run, block, state, clone, columns)
                }
                _ => (clone(&run, state), 0),
            };
            let at_rest = if carrying { 0 } else { outcome.resting };
            (*state, *frozen, *resting) = (outcome.state, outcome.frozen, at_rest);
            let mut faults: BlockFaults = [None; LANES];
            for (lane, fault) in outcome.faults.into_iter().enumerate() {
                faults[lane] =
                    fault.map(|(step, fault)| (constants.bodies[lane] as usize, step, fault));
            }
            (faults, departed)
        };
        let blocks = self
            .states
            .par_iter_mut()
            .zip(self.frozen_lanes.par_iter_mut())
            .zip(self.resting_lanes.par_iter_mut())
            .zip(&self.constants);
        let outcomes: Vec<(BlockFaults, u64)> = match (tangent_columns, &tangents) {
            (Some(columns), Some(tangents)) => blocks
                .zip(columns.par_chunks_mut(LANES * tangents.body_len))
                .enumerate()
                .with_min_len(BLOCKS_PER_TASK)
                .map(
                    |(block, ((((state, frozen), resting), constants), columns))| {
                        block_steps(block, state, (frozen, resting), constants, Some(columns))
                    },
                )
                .filter(|(faults, departed)| *departed > 0 || faults.iter().any(Option::is_some))
                .collect(),
            _ => blocks
                .enumerate()
                .with_min_len(BLOCKS_PER_TASK)
                .map(|(block, (((state, frozen), resting), constants))| {
                    block_steps(block, state, (frozen, resting), constants, None)
                })
                .filter(|(faults, _)| faults.iter().any(Option::is_some))
                .collect(),
        };
        if let Some(departed) = departed {
            *departed += outcomes.iter().map(|(_, d)| d).sum::<u64>();
        }
        let faults = outcomes
            .into_iter()
            .flat_map(|(faults, _)| faults.into_iter().flatten());
        self.step += steps;
        self.quarantine.settle(faults.collect::<Vec<_>>())
    }

    /// Body `i`'s mass properties.
    pub fn mass(&self, i: usize) -> MassProperties {
        self.masses.get(i)
    }

    /// The frozen bodies, in crowd order.
    pub fn quarantined(&self) -> Vec<QuarantinedBody> {
        self.quarantine
            .records(|body| self.states[body / LANES].state(body % LANES))
    }

    /// Freezes each body of `bodies` at its given state, step and fault (validated).
    pub fn freeze(&mut self, bodies: &[QuarantinedBody]) {
        for q in bodies {
            self.set_state(q.body, &q.state);
            self.quarantine.freeze(q);
            let (block, lane) = (q.body / LANES, q.body % LANES);
            self.frozen_lanes[block] |= self.lanes_of(block, lane);
        }
    }

    /// Lane `lane` of block `block`, and the spare lanes of a short last block when `lane`
    /// is 0 (they repeat its first body).
    fn lanes_of(&self, block: usize, lane: usize) -> LaneMask {
        let used = (self.masses.len() - block * LANES).min(LANES);
        match lane {
            0 => (0..LANES)
                .filter(|&l| l == 0 || l >= used)
                .fold(0, |mask, l| mask | (1 << l)),
            _ => 1 << lane,
        }
    }

    /// Replaces body `i`'s state (validated by the caller); a frozen body rejoins the
    /// integration. A short last block repeats its first body in the unused lanes
    /// (`pack_block`); they follow it, so a state left there can never fault on the body's
    /// behalf.
    pub fn set_state(&mut self, i: usize, state: &BodyState) {
        let (block, lane) = (i / LANES, i % LANES);
        let lanes = self.lanes_of(block, lane);
        for l in (0..LANES).filter(|l| lanes & (1 << l) != 0) {
            self.states[block].set(l, state);
        }
        self.frozen_lanes[block] &= !lanes;
        self.resting_lanes[block] &= !lanes;
        self.quarantine.release(i);
        if let Some(tangents) = &mut self.tangents {
            let q = self.states[block].state(lane).orientation;
            tangents.carried.restart_body(i, [q.w, q.x, q.y, q.z]);
        }
    }

    /// Starts carrying the tangents of `plan` (validated against `crowd`, this simulation's
    /// settings) from every body's state now, replacing any carried before. Fails if the
    /// columns do not fit in memory.
    pub fn start_tangents(&mut self, plan: &TangentPlan, crowd: &Crowd) -> Result<()> {
        let bodies = self.masses.len();
        self.tangents = Some(CpuTangents::start(plan, crowd, &self.states, bodies)?);
        Ok(())
    }

    /// How the blocks carry the tangents, for the tests that compare the ways.
    #[cfg(test)]
    pub(crate) fn carry_tangents_by(&mut self, by: crate::backends::cpu::tangents::CarryBy) {
        if let Some(tangents) = &mut self.tangents {
            tangents.carry_by = by;
        }
    }

    /// The tangents carried, if any.
    #[cfg(test)]
    pub(crate) fn tangents(&self) -> Option<&CpuTangents> {
        self.tangents.as_ref()
    }

    /// Replaces every body's carried block with `columns` (of the carried plan's length).
    pub fn set_tangents(&mut self, columns: &[f64]) {
        if let Some(tangents) = &mut self.tangents {
            tangents.carried.set(columns);
        }
    }

    /// Copies columns `columns` of every body's carried block into `out` (`13 x
    /// columns.len()` per body, row-major, in crowd order), widened from f32.
    pub fn read_tangents(&self, columns: std::ops::Range<usize>, out: &mut [f64]) {
        if let Some(tangents) = &self.tangents {
            tangents.carried.read(columns, out);
        }
    }

    /// Hands every body's index, mass properties and state (widened to f64) to `visit`, in
    /// crowd order.
    pub fn visit_states(&self, mut visit: impl FnMut(usize, &MassProperties, &BodyState)) {
        self.masses.for_each(|i, mass| {
            visit(i, mass, &self.states[i / LANES].state(i % LANES));
        });
    }
}

/// The masses and shapes of a block's bodies, as contact resolution needs them. A short last
/// block repeats its first body, as `pack_block` does.
fn contact_block(bodies: &[Body]) -> ContactBlock {
    ContactBlock {
        lanes: std::array::from_fn(|lane| {
            let body = &bodies[if lane < bodies.len() { lane } else { 0 }];
            // `Crowd::validate_bodies` guarantees a shape on every body when there are planes.
            let shape = body
                .mass
                .shape()
                .expect("validated: bodies touching planes have shapes");
            ContactBlock::lane(&body.mass, &shape)
        }),
    }
}

/// `len` default values, or an error saying the crowd of `bodies` does not fit in memory.
fn zeroed_vec<T: Clone + Default>(len: usize, bodies: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| crate::model::error::Error::too_many_bodies(bodies))?;
    v.resize(len, T::default());
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assembly::body_source::BodySource;
    use crate::backends::cpu::block_run::run_baseline;
    use crate::model::plane::Plane;
    use crate::verify::check_crowd::cross_check_crowd;

    /// The clone this machine runs (AVX2 on x86-64 CPUs that have it) and the baseline give
    /// the same bits: the same IEEE operations in the same order, in other instructions.
    #[test]
    fn every_clone_computes_the_same_bits() {
        for integrator in Integrator::ALL {
            let crowd = cross_check_crowd(203, 7, integrator, 1e-3)
                .unwrap()
                .with_plane(Plane::ground(0.5, 0.3));
            let source = BodySource::given(&crowd.bodies);
            let mut baseline = CpuSimulation::new(&crowd, &source, 0).unwrap();
            let mut widest = baseline.clone();
            baseline.step_with(run_baseline, 300);
            widest.step_with(widest_clone(), 300);
            let bits = |sim: &CpuSimulation| -> Vec<u32> {
                let states = sim.states.iter();
                states
                    .flat_map(|s| {
                        let q = s.orientation;
                        [s.position, s.linear_momentum, s.angular_momentum]
                            .into_iter()
                            .flat_map(|v| [v.x, v.y, v.z])
                            .chain([q.w, q.x, q.y, q.z])
                    })
                    .flat_map(|lanes| lanes.0.map(f32::to_bits))
                    .collect()
            };
            let (a, b) = (bits(&baseline), bits(&widest));
            let differing = a.iter().zip(&b).filter(|(a, b)| a != b).count();
            assert_eq!(
                differing,
                0,
                "{integrator}: {differing} of {} numbers differ",
                a.len()
            );
        }
    }
}
