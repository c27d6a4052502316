//! The fast CPU backend: f32, eight bodies per block, blocks spread over every core.

use rayon::prelude::*;

use crate::body::Body;
use crate::crowd::Crowd;
use crate::fast_cpu::block::{ConstantBlock, ForceF32, LaneForce, StateBlock, pack_block};
use crate::fast_cpu::integrate::{BlockForces, integrate_step};
use crate::fast_cpu::lanes::LANES;
use crate::force_table::ForceTable;
use crate::integrator::Integrator;
use crate::mass::MassProperties;

/// Everything one block's `step(n)` needs besides its state.
#[derive(Clone, Copy)]
struct BlockRun<'a> {
    integrator: Integrator,
    constants: &'a ConstantBlock,
    forces: BlockForces<'a>,
    dt: f32,
    steps: u64,
}

impl BlockRun<'_> {
    /// The lane code, written once and inlined into each SIMD clone below.
    #[inline(always)]
    fn run(&self, state: &StateBlock) -> StateBlock {
        let mut s = *state;
        for _ in 0..self.steps {
            s = integrate_step(self.integrator, &s, self.constants, self.forces, self.dt);
        }
        s
    }
}

/// A clone of [`BlockRun::run`] compiled for one instruction set.
type BlockClone = fn(&BlockRun, &StateBlock) -> StateBlock;

fn run_baseline(run: &BlockRun, state: &StateBlock) -> StateBlock {
    run.run(state)
}

/// Eight f32 lanes fill one 256-bit register. No FMA: Rust never contracts `a * b + c`,
/// so the clone performs the same IEEE operations as the baseline.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn run_avx2(run: &BlockRun, state: &StateBlock) -> StateBlock {
    run.run(state)
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
pub struct FastCpuSimulation {
    states: Vec<StateBlock>,
    constants: Vec<ConstantBlock>,
    global: Vec<ForceF32>,
    own: Vec<LaneForce>,
    masses: Vec<MassProperties>,
    integrator: Integrator,
    dt: f32,
}

impl FastCpuSimulation {
    /// Takes a validated crowd.
    pub(crate) fn new(crowd: &Crowd) -> Self {
        let table = ForceTable::new(crowd);
        let mut own = Vec::new();
        let (states, constants) = crowd
            .bodies
            .chunks(LANES)
            .enumerate()
            .map(|(block, bodies)| pack_block(bodies, &table, block * LANES, &mut own))
            .unzip();
        Self {
            states,
            constants,
            global: table.forces[..table.global_count]
                .iter()
                .map(ForceF32::from)
                .collect(),
            own,
            masses: crowd.bodies.iter().map(|b| b.mass).collect(),
            integrator: crowd.integrator,
            dt: crowd.dt as f32,
        }
    }

    /// Advances every body by `steps` steps on the current rayon pool. Each block runs all
    /// its steps before the next starts, so its state stays in registers and L1.
    pub fn step(&mut self, steps: u64) {
        let (global, own) = (&self.global[..], &self.own[..]);
        let (integrator, dt) = (self.integrator, self.dt);
        let clone = widest_clone();
        self.states
            .par_iter_mut()
            .zip(&self.constants)
            .with_min_len(BLOCKS_PER_TASK)
            .for_each(|(state, constants)| {
                let (first, count) = constants.own_forces;
                let run = BlockRun {
                    integrator,
                    constants,
                    forces: BlockForces {
                        global,
                        own: &own[first as usize..(first + count) as usize],
                    },
                    dt,
                    steps,
                };
                *state = clone(&run, state);
            });
    }

    /// The bodies in their current state, widened to f64.
    pub fn bodies(&self) -> Vec<Body> {
        self.masses
            .iter()
            .enumerate()
            .map(|(i, &mass)| Body {
                mass,
                state: self.states[i / LANES].state(i % LANES),
            })
            .collect()
    }
}
