//! The fast CPU backend: f32, eight bodies per block, blocks spread over every core.

use rayon::prelude::*;

use crate::body::{Body, BodyState};
use crate::body_masses::{BodyMasses, MassChunk};
use crate::body_source::{BodySource, SOURCE_CHUNK};
use crate::cpu::block::{ConstantBlock, ForceF32, LaneForce, LoadBlock, StateBlock, pack_block};
use crate::cpu::contact::{ContactBlock, resolve_contacts};
use crate::cpu::derivative::{BlockForces, Derivative, DerivativeFn, derivative};
use crate::cpu::integrate::{integrate_step, step_time};
use crate::cpu::lanes::LANES;
use crate::crowd::Crowd;
use crate::custom_force::{CustomForce, ExternalLoad};
use crate::error::Result;
use crate::force_table::{ForceTable, flatten_keyframes};
use crate::integrator::Integrator;
use crate::mass::MassProperties;
use crate::plane::Plane;

/// Everything one block's `step(n)` needs besides its state.
#[derive(Clone, Copy)]
struct BlockRun<'a> {
    integrator: Integrator,
    constants: &'a ConstantBlock,
    forces: BlockForces<'a>,
    dt: f32,
    /// The clock's step count at the start of the run.
    first_step: u64,
    steps: u64,
    /// The block's shapes and the planes, when the crowd has planes.
    contacts: Option<(&'a ContactBlock, &'a [Plane])>,
}

impl BlockRun<'_> {
    /// The lane code, written once and inlined into each SIMD clone below; `derivative` is
    /// the same clone's derivative. A step that leaves any lane non-finite is not taken:
    /// the block stops at its last finite state, and the lane and step are returned.
    #[inline(always)]
    fn run(&self, state: &StateBlock, derivative: DerivativeFn) -> BlockOutcome {
        let mut s = *state;
        for step in self.first_step..self.first_step + self.steps {
            let t = step_time(step, self.dt);
            let mut next = integrate_step(
                self.integrator,
                derivative,
                &s,
                self.constants,
                self.forces,
                t,
                self.dt,
            );
            if let Some((block, planes)) = self.contacts {
                resolve_contacts(&s, &mut next, block, planes, self.dt as f64);
            }
            if let Some(lane) = next.first_non_finite_lane() {
                return (s, Some((lane, step)));
            }
            s = next;
        }
        (s, None)
    }
}

/// A block's state after a run, and the lane and clock step of a non-finite state if the
/// run stopped at one.
type BlockOutcome = (StateBlock, Option<(usize, u64)>);

/// A clone of [`BlockRun::run`] compiled for one instruction set.
type BlockClone = fn(&BlockRun, &StateBlock) -> BlockOutcome;

#[inline(never)]
fn derivative_baseline(s: &StateBlock, c: &ConstantBlock, f: &BlockForces, t: f32) -> Derivative {
    derivative(s, c, f, t)
}

fn run_baseline(run: &BlockRun, state: &StateBlock) -> BlockOutcome {
    run.run(state, derivative_baseline)
}

/// Eight f32 lanes fill one 256-bit register. No FMA: Rust never contracts `a * b + c`,
/// so the clones perform the same IEEE operations as the baseline.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
fn derivative_avx2(s: &StateBlock, c: &ConstantBlock, f: &BlockForces, t: f32) -> Derivative {
    derivative(s, c, f, t)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn run_avx2(run: &BlockRun, state: &StateBlock) -> BlockOutcome {
    // The closure inherits this function's AVX2, so the call needs no `unsafe`.
    run.run(state, |s, c, f, t| derivative_avx2(s, c, f, t))
}

/// The widest clone this CPU runs; x86-64 without AVX2 gets the baseline (SSE2).
fn widest_clone() -> BlockClone {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return |run, state| unsafe { run_avx2(run, state) };
    }
    run_baseline
}

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
    masses: BodyMasses,
    /// One per block when the crowd has planes, else empty.
    contacts: Vec<ContactBlock>,
    planes: Vec<Plane>,
    integrator: Integrator,
    dt: f32,
    /// `start_step` plus the steps taken.
    step: u64,
}

impl CpuSimulation {
    /// Takes a validated crowd; fails on a custom force without a Rust twin.
    pub(crate) fn new(crowd: &Crowd, source: &BodySource) -> Result<Self> {
        if let Some(custom) = &crowd.custom_force {
            custom.closure()?;
        }
        let table = ForceTable::new(crowd, source.len());
        let (keyframes, spans) = flatten_keyframes(&crowd.keyframes, |v| v as f32);
        let blocks = source.len().div_ceil(LANES);
        let mut states = zeroed_vec::<StateBlock>(blocks, source.len())?;
        let mut constants = zeroed_vec::<ConstantBlock>(blocks, source.len())?;
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
                .map(|kind| ForceF32::new(kind, &spans))
                .collect(),
            own,
            keyframes,
            custom_force: crowd.custom_force.clone(),
            masses: BodyMasses::from_chunks(masses),
            contacts: contacts.concat(),
            planes: crowd.planes.clone(),
            integrator: crowd.integrator,
            dt: crowd.dt as f32,
            step: crowd.start_step,
        })
    }

    /// Replaces the external loads (one per body, already validated), in f32.
    pub(crate) fn set_external_loads(&mut self, loads: &[ExternalLoad]) {
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
    /// A block whose state would turn NaN or infinite stops at its last finite state; the
    /// lowest such body and the clock step of its last finite state are returned.
    pub fn step(&mut self, steps: u64) -> Option<(usize, u64)> {
        let (global, own) = (&self.global[..], &self.own[..]);
        let (contacts, planes) = (&self.contacts[..], &self.planes[..]);
        let (keyframes, custom_force) = (&self.keyframes[..], self.custom_force.as_ref());
        let (integrator, dt, first_step) = (self.integrator, self.dt, self.step);
        let loads = &self.loads[..];
        let clone = widest_clone();
        let fault = self
            .states
            .par_iter_mut()
            .zip(&self.constants)
            .enumerate()
            .with_min_len(BLOCKS_PER_TASK)
            .filter_map(|(block, (state, constants))| {
                let load = loads.get(block).unwrap_or(&LoadBlock::ZERO);
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
                    },
                    dt,
                    first_step,
                    steps,
                    contacts: contacts.get(block).map(|c| (c, planes)),
                };
                let (end, fault) = clone(&run, state);
                *state = end;
                fault.map(|(lane, step)| (constants.bodies[lane] as usize, step))
            })
            .min();
        self.step += steps;
        fault
    }

    /// Replaces body `i`'s state (validated by the caller). A short last block repeats its
    /// first body in the unused lanes (`pack_block`); they follow it, so a state left there
    /// can never fault on the body's behalf.
    pub fn set_state(&mut self, i: usize, state: &BodyState) {
        let (block, lane) = (i / LANES, i % LANES);
        let used = (self.masses.len() - block * LANES).min(LANES);
        self.states[block].set(lane, state);
        if lane == 0 {
            for padding in used..LANES {
                self.states[block].set(padding, state);
            }
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
            (body.mass, shape)
        }),
    }
}

/// `len` default values, or an error saying the crowd of `bodies` does not fit in memory.
fn zeroed_vec<T: Clone + Default>(len: usize, bodies: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| crate::Error::too_many_bodies(bodies))?;
    v.resize(len, T::default());
    Ok(v)
}
