//! The `cpu` backend's tangents eight bodies at a time: a block's steps over `Dual<L, N>`,
//! `L` the lane type of the block loop's clone, so the chain rule runs on eight bodies per
//! SIMD instruction as the values do. The lanes start from the plain run's own inputs, each
//! lane seeded as the per-body steps seed its body (`BodyInputs::seeded_block`); the
//! derivative is the block loop's own (`derivative`), with the force records' seeded
//! parameters; each lane takes exactly the steps its lane took in the plain run; contacts,
//! per-lane branches there too, are resolved lane by lane over `Dual<f32, N>`.
//!
//! A custom force is a force law's instance over `Dual<Lanes, N>` (tangents through a custom
//! force are refused unless it is a law).

use crate::backends::cpu::block::StateBlock;
use crate::backends::cpu::block_run::{BlockOutcome, BlockRun};
use crate::backends::cpu::derivative::{BlockConstants, BlockForces, DerivativeFn, derivative};
use crate::body_steps::tangents::{Block, BodyInputs, components, constant_seeds, from_components};
use crate::model::mass::MassProperties;
use crate::model::tangent::{Direction, STATE_COMPONENTS};
use crate::physics::algebra::Vec3;
use crate::physics::contact::{clear_of_planes, resolve_contacts};
use crate::physics::dual::Dual;
use crate::physics::force_law::Parameters;
use crate::physics::lanes::{LANES, LaneType, Lanes};
use crate::physics::motion::{Derivative, MassConstants, State};
use crate::physics::profile::KeyframeSeeds;
use crate::physics::scalar::Scalar;
use crate::physics::splitting::SplitAxes;
use smallvec::SmallVec;

#[cfg(target_arch = "x86_64")]
use crate::physics::avx::AvxLanes;

/// A number of eight lanes, each with its `N` tangents.
type LaneDual<const N: usize> = Dual<Lanes, N>;

/// What a block's dual run starts from: the plain run's own inputs (its values), seeded
/// along the block's directions lane by lane, as each body's steps seed them
/// (`BodyInputs::seeded_block`).
pub(crate) struct LaneInputs<'a, const N: usize> {
    /// Each lane's inputs over `Dual<f32, N>`, over which its contacts are resolved: only
    /// when the crowd has planes (a plane's numbers are seeded there alone).
    pub lanes: Vec<BodyInputs<'a, Dual<f32, N>>>,
    state: State<LaneDual<N>>,
    constants: MassConstants<LaneDual<N>>,
    /// The block's force records' parameters, the global ones then its own.
    parameters: Vec<Parameters<LaneDual<N>>>,
    /// The columns taken along numbers of each record's keyframe table, in the same order;
    /// empty when no column is.
    keyframe_seeds: Vec<KeyframeSeeds>,
}

/// What seeds a block of lanes' directions, besides the run's values.
pub(crate) struct LaneSeeds<'b> {
    /// The directions of each lane's body (a spare lane's are never seeded).
    pub directions: [&'b [Option<Direction>]; LANES],
    /// Each lane's mass properties, which the inertia's seeds are taken from; empty when
    /// no direction moves the inertia and the crowd has no planes.
    pub masses: &'b [MassProperties],
    /// The lanes that hold a body: the first `used`.
    pub used: usize,
}

/// Lane `l` of `d`.
fn lane_of<const N: usize>(d: LaneDual<N>, l: usize) -> Dual<f32, N> {
    Dual {
        value: d.value.0[l],
        tangent: d.tangent.map(|t| t.0[l]),
    }
}

/// The ten numbers of a force's parameters, in `Parameters` order.
fn parameter_numbers<R: Copy>(p: &Parameters<R>) -> [R; 10] {
    let [u, w] = p.vectors;
    let [s0, s1, s2, s3] = p.scalars;
    [u.x, u.y, u.z, w.x, w.y, w.z, s0, s1, s2, s3]
}

fn parameters_of<R: Scalar>(n: [R; 10]) -> Parameters<R> {
    let [ux, uy, uz, wx, wy, wz, s0, s1, s2, s3] = n;
    Parameters {
        vectors: [Vec3::new(ux, uy, uz), Vec3::new(wx, wy, wz)],
        scalars: [s0, s1, s2, s3],
    }
}

impl<'a, const N: usize> LaneInputs<'a, N> {
    /// The inputs of `block`'s run of the plain run `run` from `start`: the state's tangents
    /// are the block's columns of each used lane's carried ones (`columns`, the used lanes'
    /// `13 x k` each in crowd order; zero in a spare lane), the mass constants and force
    /// parameters are seeded along the block's directions; `lanes` are each lane's own
    /// inputs, for its contacts.
    pub(crate) fn seeded(
        run: &BlockRun,
        start: &StateBlock,
        seeds: &LaneSeeds,
        block: Block,
        columns: &[f32],
        lanes: Vec<BodyInputs<'a, Dual<f32, N>>>,
    ) -> Self {
        let block_columns = block.columns();
        let k = seeds.directions[0].len();
        let body_len = k * STATE_COMPONENTS;
        let mut numbers = components(start).map(Dual::<Lanes, N>::fixed);
        for (l, own) in columns.chunks(body_len).take(seeds.used).enumerate() {
            for (r, number) in numbers.iter_mut().enumerate() {
                for (j, &c) in block_columns.iter().enumerate() {
                    number.tangent[j].0[l] = own[r * k + c];
                }
            }
        }
        let state = from_components(numbers);
        let fixed = Dual::<Lanes, N>::fixed;
        let splat = |v: f32| fixed(Lanes([v; LANES]));
        let mass = run.constants.mass;
        let mut constants = mass.map(fixed);
        let forces = &run.forces;
        let records = forces
            .global
            .iter()
            .chain(forces.own.iter().map(|o| &o.force));
        let mut records: Vec<[LaneDual<N>; 10]> = records
            .map(|f| parameter_numbers(&f.parameters).map(splat))
            .collect();
        let mut keyframe_seeds = Vec::new();
        // The record of the lane's `force`-th force: an own record's numbers are its lane's
        // in every lane; the others never keep its share.
        let record = |force: usize, l: usize| match force.checked_sub(forces.global.len()) {
            None => (force, false),
            Some(nth) => {
                let at = (forces.own.iter().enumerate())
                    .filter(|(_, o)| o.lane == l)
                    .nth(nth)
                    .map(|(i, _)| forces.global.len() + i)
                    .expect("a lane's own force");
                (at, true)
            }
        };
        for (j, &c) in block_columns.iter().enumerate() {
            for (l, directions) in seeds.directions.iter().enumerate().take(seeds.used) {
                match directions[c] {
                    None | Some(Direction::State(_) | Direction::Plane { .. }) => {}
                    Some(d @ (Direction::Mass | Direction::Inertia(_))) => {
                        let inv_inertia = || seeds.masses[l].inv_inertia_body();
                        let seeded = constant_seeds(inv_inertia, mass.mass.0[l], d);
                        for (number, seed) in constants.numbers_mut().into_iter().zip(seeded) {
                            number.tangent[j].0[l] = seed;
                        }
                    }
                    Some(Direction::Force { force, slot }) => {
                        let (at, own) = record(force, l);
                        let number = &mut records[at][slot.place()];
                        match own {
                            true => number.tangent[j] = Lanes([1.0; LANES]),
                            false => number.tangent[j].0[l] = 1.0,
                        }
                    }
                    // A table is seeded in every lane: only the lanes its record acts on
                    // keep what it adds.
                    Some(Direction::Keyframe { force, number }) => {
                        keyframe_seeds.resize(records.len(), KeyframeSeeds::default());
                        keyframe_seeds[record(force, l).0].seed(j, number);
                    }
                }
            }
        }
        Self {
            lanes,
            state,
            constants,
            parameters: records.into_iter().map(parameters_of).collect(),
            keyframe_seeds,
        }
    }
}

/// `d` in another lane type. Loops, not `array::from_fn`: its closures stay out of line, and
/// out of the AVX2 clone, where the conversions cost most of a short run's set-up.
#[inline(always)]
fn converted<A: Copy + Into<B>, B: Copy, const N: usize>(d: Dual<A, N>) -> Dual<B, N> {
    let value: B = d.value.into();
    let mut tangent = [value; N];
    for (to, &from) in tangent.iter_mut().zip(&d.tangent) {
        *to = from.into();
    }
    Dual { value, tangent }
}

/// A block's run over lanes of duals: the plain run's steps, contacts and rules.
#[derive(Clone, Copy)]
pub(crate) struct LaneRun<'a> {
    /// The plain run's settings; its forces have no custom force.
    pub block: BlockRun<'a>,
}

impl LaneRun<'_> {
    /// Whether this CPU runs the lanes' clone: on x86-64 the AVX2 clone alone is compiled
    /// (see `CarryBy::Bodies`), elsewhere the one clone every CPU runs.
    pub(crate) fn runs_here() -> bool {
        #[cfg(target_arch = "x86_64")]
        return std::is_x86_feature_detected!("avx2");
        #[cfg(not(target_arch = "x86_64"))]
        true
    }

    /// The block's run from `inputs` over `Dual<L, N>`: the state it ended on and its
    /// outcome, whose values are the plain run's. Written once, inlined into each clone
    /// below; `derivative` is the same clone's.
    #[inline(always)]
    fn run<L: LaneType, const N: usize>(
        &self,
        inputs: &LaneInputs<N>,
        derivative: DerivativeFn<Dual<L, N>>,
    ) -> (State<LaneDual<N>>, BlockOutcome) {
        let to_lanes = converted::<Lanes, L, N>;
        let from_lanes = converted::<L, Lanes, N>;
        // A loop, not a closure: this runs inside the clone (see `converted`). Held inline
        // for the usual few records: a heap block of their size, aligned for the clone's
        // lanes, made glibc consolidate its free lists at every block of a one-step call
        // (one direction's call 6.9 ms -> 5.4 ms at 1e5 bodies).
        let mut parameters: SmallVec<[Parameters<Dual<L, N>>; 2]> =
            SmallVec::with_capacity(inputs.parameters.len());
        for p in &inputs.parameters {
            let mut numbers = [Dual::<L, N>::fixed(L::constant(0.0)); 10];
            for (to, &from) in numbers.iter_mut().zip(&parameter_numbers(p)) {
                *to = to_lanes(from);
            }
            parameters.push(parameters_of(numbers));
        }
        let run = &self.block;
        let mass = inputs.constants.map(to_lanes);
        let constants = BlockConstants {
            axes: SplitAxes::for_integrator(run.integrator, &mass.inv_inertia),
            mass,
            load: run.forces.load.map(Dual::<L, N>::from),
            block: run.constants,
            parameters: &parameters,
            keyframe_seeds: &inputs.keyframe_seeds,
        };
        let contacts = |start: &State<Dual<L, N>>, next: State<Dual<L, N>>| match run.contacts {
            Some(_) => self
                .resolved(inputs, start.map(from_lanes), next.map(from_lanes))
                .map(to_lanes),
            None => next,
        };
        let start = inputs.state.map(to_lanes);
        let (y, outcome) = run.run_from(start, &constants, derivative, contacts);
        (y.map(from_lanes), outcome)
    }

    /// `next`, the block after a step from `start`, with each lane's contacts resolved over
    /// its own inputs.
    fn resolved<const N: usize>(
        &self,
        inputs: &LaneInputs<N>,
        start: State<LaneDual<N>>,
        next: State<LaneDual<N>>,
    ) -> State<LaneDual<N>> {
        // Arrays, not `to_scalars`: two `Vec`s a lane a step were a fifth of a contact run.
        // A lane clear of every plane is left as it is, as resolving it would leave it.
        let mut numbers = components(&next);
        for (l, lane) in inputs.lanes.iter().enumerate() {
            let Some(shape) = lane.shape else { continue };
            let lane_next = next.map(|d| lane_of(d, l));
            if clear_of_planes(&shape, &lane.planes, lane_next.position) {
                continue;
            }
            let resolved = resolve_contacts(
                &start.map(|d| lane_of(d, l)),
                lane_next,
                &lane.constants,
                &shape,
                &lane.planes,
                Dual::fixed(self.block.dt),
            );
            for (number, d) in numbers.iter_mut().zip(components(&resolved)) {
                number.value.0[l] = d.value;
                for (t, v) in number.tangent.iter_mut().zip(d.tangent) {
                    t.0[l] = v;
                }
            }
        }
        from_components(numbers)
    }

    /// [`run`](Self::run) on the clone this CPU runs ([`runs_here`](Self::runs_here)).
    pub(crate) fn carry<const N: usize>(
        &self,
        inputs: &LaneInputs<N>,
    ) -> (State<LaneDual<N>>, BlockOutcome) {
        #[cfg(target_arch = "x86_64")]
        {
            assert!(Self::runs_here(), "the AVX2 clone on a CPU without AVX2");
            // SAFETY: the CPU has AVX2, checked just above.
            unsafe { carry_avx2(self, inputs) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        self.run::<Lanes, N>(inputs, derivative_baseline)
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(never)]
fn derivative_baseline<const N: usize>(
    s: &State<LaneDual<N>>,
    c: &BlockConstants<LaneDual<N>>,
    f: &BlockForces,
    t: LaneDual<N>,
) -> Derivative<LaneDual<N>> {
    derivative(s, c, f, t)
}

/// The AVX2 clone: as the plain block loop's (`simulation.rs`), no FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
fn derivative_avx2<const N: usize>(
    s: &State<Dual<AvxLanes, N>>,
    c: &BlockConstants<Dual<AvxLanes, N>>,
    f: &BlockForces,
    t: Dual<AvxLanes, N>,
) -> Derivative<Dual<AvxLanes, N>> {
    derivative(s, c, f, t)
}

/// The AVX2 clone's entry, which calls the clone out of line: with the run compiled into
/// the function that [`LaneRun::carry`] calls, blocks of 4 directions ran 2x slower with the
/// same derivative code (`rigid-crowd bench --tangents inertia,state`, 2-core AMD EPYC).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn carry_avx2<const N: usize>(
    run: &LaneRun,
    inputs: &LaneInputs<N>,
) -> (State<LaneDual<N>>, BlockOutcome) {
    run_avx2(run, inputs)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline(never)]
fn run_avx2<const N: usize>(
    run: &LaneRun,
    inputs: &LaneInputs<N>,
) -> (State<LaneDual<N>>, BlockOutcome) {
    run.run::<AvxLanes, N>(inputs, |s, c, f, t| derivative_avx2(s, c, f, t))
}
