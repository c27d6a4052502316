//! One block's run of `step(n)`: its steps, contacts and fault rules, written once over a
//! lane type and compiled for each instruction set; over lanes of numbers for the plain
//! run, over lanes of dual numbers when tangents are carried (`tangent_lanes`).

use std::cell::Cell;

use crate::backends::cpu::block::{ConstantBlock, StateBlock};
use crate::backends::cpu::contact::{ContactBlock, resolve_contacts};
use crate::backends::cpu::derivative::{BlockConstants, BlockForces, DerivativeFn, derivative};
use crate::backends::cpu::faults::{LaneMask, broken_lanes, lane_fault};
use crate::backends::cpu::integrate::integrate_step;
use crate::model::fault::Fault;
use crate::model::integrator::Integrator;
use crate::physics::algebra::{Quat, Vec3};
#[cfg(target_arch = "x86_64")]
use crate::physics::avx::AvxLanes;
use crate::physics::clock::step_time;
use crate::physics::contact::PlaneConstants;
use crate::physics::lanes::{LANES, LaneType, Lanes};
use crate::physics::motion::{Derivative, State};

/// Everything one block's `step(n)` needs besides its state.
#[derive(Clone, Copy)]
pub(crate) struct BlockRun<'a> {
    pub integrator: Integrator,
    pub constants: &'a ConstantBlock,
    pub forces: BlockForces<'a>,
    pub dt: f32,
    /// The clock's step count at the start of the run.
    pub first_step: u64,
    pub steps: u64,
    /// The block's shapes and the planes, when the crowd has planes.
    pub contacts: Option<(&'a ContactBlock, &'a [PlaneConstants<f32>])>,
    /// The squared envelope limits, when any is set.
    pub envelope_squared: Option<&'a [f32; 3]>,
    /// Whether a step reads nothing but the lanes' states (no force reads the clock): then a
    /// lane that a step leaves as it was is at rest (`physics::rest`). The plain run reads
    /// it; tangents move on at rest.
    pub settles: bool,
    /// Whether a lane that breaks a rule is frozen (else the block stops).
    pub freeze: bool,
    /// The lanes frozen before the run.
    pub frozen: LaneMask,
    /// The lanes at rest before the run (`physics::rest`, under `settles`): each step leaves
    /// them as they are. The plain run reads it; tangents take every step.
    pub resting: LaneMask,
}

/// A block's state after a run, its frozen lanes, and the clock step of the last good state
/// and the fault of each lane that broke a rule in the run.
pub(crate) struct BlockOutcome {
    pub state: StateBlock,
    pub frozen: LaneMask,
    pub faults: [Option<(u64, Fault)>; LANES],
    /// The lanes at rest when the run ended (none after a run carrying tangents).
    pub resting: LaneMask,
}

impl BlockRun<'_> {
    /// The plain run from `state`; `derivative` is the same clone's derivative.
    #[inline(always)]
    fn run<L: LaneType>(&self, state: &StateBlock, derivative: DerivativeFn<L>) -> BlockOutcome {
        let constants = BlockConstants::<L>::new(self.constants, self.forces.load, self.integrator);
        // A block whose every lane is at rest or frozen stays as it is.
        if self.resting | self.frozen == LaneMask::MAX >> (LaneMask::BITS as usize - LANES) {
            return BlockOutcome {
                state: *state,
                frozen: self.frozen,
                faults: [None; LANES],
                resting: self.resting,
            };
        }
        let near = (self.contacts).map(|(block, planes)| block.near_test::<L>(planes));
        // The lanes at rest (`physics::rest`): each step leaves them as they are.
        let resting: Cell<LaneMask> = Cell::new(self.resting);
        let contacts = |start: &State<L>, next: State<L>| match (self.contacts, &near) {
            // A block whose lanes are all clear of every plane is left as it is, as the
            // contact code would leave each lane.
            (Some(_), Some(near)) if resting.get() == 0 && near.near_lanes(next.position) == 0 => {
                next
            }
            (Some((block, planes)), _) => {
                let mut resolved = next.map(Into::into);
                let at_rest = resolve_contacts(
                    &start.map(Into::into),
                    &mut resolved,
                    block,
                    planes,
                    self.dt,
                    (self.settles, resting.get()),
                );
                resting.set(at_rest);
                resolved.map(L::from)
            }
            (None, _) => next,
        };
        let (_, outcome) = self.run_from(state.map(L::from), &constants, derivative, contacts);
        BlockOutcome {
            resting: resting.get(),
            ..outcome
        }
    }

    /// The lane code, written once and inlined into each SIMD clone: the run from `start`
    /// with `constants`, `derivative` the clone's derivative and `contacts(start, next)` a
    /// step's contacts. Under `stop`, a step that leaves any lane breaking a rule is not
    /// taken: the block stops at its last good state. Under `freeze` only those lanes stay at
    /// their last good state, for the rest of the run. Returns the state the run ended on
    /// and its outcome (the rules judge the values).
    #[inline(always)]
    pub(crate) fn run_from<L: LaneType>(
        &self,
        start: State<L>,
        constants: &BlockConstants<L>,
        derivative: DerivativeFn<L>,
        contacts: impl Fn(&State<L>, State<L>) -> State<L>,
    ) -> (State<L>, BlockOutcome) {
        let mut s = start;
        // The rules judge the values (with tangents, theirs would cost as much again).
        let mass = constants.mass.map(L::values);
        let mut outcome = BlockOutcome {
            state: StateBlock::default(),
            frozen: self.frozen,
            faults: [None; LANES],
            resting: 0,
        };
        for step in self.first_step..self.first_step + self.steps {
            let t = step_time(step, self.dt);
            let next = integrate_step(
                self.integrator,
                derivative,
                &s,
                constants,
                self.forces,
                t,
                self.dt,
            );
            let mut next = contacts(&s, next);
            let values = next.map(L::values);
            let broken = broken_lanes(&values, &mass, self.envelope_squared) & !outcome.frozen;
            if broken != 0 {
                for lane in (0..LANES).filter(|lane| broken & (1 << lane) != 0) {
                    let fault = lane_fault(&values, &mass, self.envelope_squared, lane);
                    outcome.faults[lane] = Some((step, fault));
                }
                if !self.freeze {
                    break;
                }
                outcome.frozen |= broken;
            }
            if outcome.frozen != 0 {
                next = kept_lanes(&next, &s, outcome.frozen);
            }
            s = next;
        }
        outcome.state = s.map(Into::into);
        (s, outcome)
    }

    /// How many steps lane `lane` took in the run that ended in `outcome`: none if it was
    /// frozen before; under `stop` as many as the block took (up to its first broken step);
    /// under `freeze` up to its own broken step. (The body-by-body carry reads it.)
    pub(crate) fn steps_taken(&self, outcome: &BlockOutcome, lane: usize) -> u64 {
        let broken_at = |fault: &Option<(u64, Fault)>| fault.map(|(step, _)| step);
        let last = match self.freeze {
            _ if self.frozen & (1 << lane) != 0 => Some(self.first_step),
            true => broken_at(&outcome.faults[lane]),
            false => outcome.faults.iter().filter_map(broken_at).min(),
        };
        last.map_or(self.steps, |step| step - self.first_step)
    }
}

/// `next` with the lanes of `lanes` put back to `previous`'s: frozen bodies stay where they
/// were while the rest of the block moves on.
#[inline(always)]
fn kept_lanes<L: LaneType>(next: &State<L>, previous: &State<L>, lanes: LaneMask) -> State<L> {
    let flags = Lanes(std::array::from_fn(|l| ((lanes >> l) & 1) as f32));
    let kept = L::splat(0.5).less(L::from(flags));
    let pick = |now: L, before: L| L::select(kept, before, now);
    let vector = |now: Vec3<L>, before: Vec3<L>| {
        Vec3::new(
            pick(now.x, before.x),
            pick(now.y, before.y),
            pick(now.z, before.z),
        )
    };
    let (q, p) = (next.orientation, previous.orientation);
    State {
        position: vector(next.position, previous.position),
        orientation: Quat::new(
            pick(q.w, p.w),
            pick(q.x, p.x),
            pick(q.y, p.y),
            pick(q.z, p.z),
        ),
        linear_momentum: vector(next.linear_momentum, previous.linear_momentum),
        angular_momentum: vector(next.angular_momentum, previous.angular_momentum),
    }
}

/// A clone of [`BlockRun::run`] compiled for one instruction set.
pub(crate) type BlockClone = fn(&BlockRun, &StateBlock) -> BlockOutcome;

#[inline(never)]
fn derivative_baseline(
    s: &State<Lanes>,
    c: &BlockConstants<Lanes>,
    f: &BlockForces,
    t: Lanes,
) -> Derivative<Lanes> {
    derivative(s, c, f, t)
}

pub(crate) fn run_baseline(run: &BlockRun, state: &StateBlock) -> BlockOutcome {
    run.run(state, derivative_baseline)
}

/// Eight f32 lanes fill one 256-bit register, one AVX instruction per operation
/// ([`AvxLanes`]). No FMA: Rust never contracts `a * b + c`, so the clones perform the same
/// IEEE operations as the baseline.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
fn derivative_avx2(
    s: &State<AvxLanes>,
    c: &BlockConstants<AvxLanes>,
    f: &BlockForces,
    t: AvxLanes,
) -> Derivative<AvxLanes> {
    derivative(s, c, f, t)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn run_avx2(run: &BlockRun, state: &StateBlock) -> BlockOutcome {
    // The closure inherits this function's AVX2, so the call needs no `unsafe`.
    run.run::<AvxLanes>(state, |s, c, f, t| derivative_avx2(s, c, f, t))
}

/// The widest clone this CPU runs; x86-64 without AVX2 gets the baseline (SSE2).
pub(crate) fn widest_clone() -> BlockClone {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return |run, state| unsafe { run_avx2(run, state) };
    }
    run_baseline
}
