//! The `cpu` backend's tangents eight bodies at a time: a block's steps over `Dual<L, N>`,
//! `L` the lane type of the block loop's clone, so the chain rule runs on eight bodies per
//! SIMD instruction as the values do. Each lane starts from its own body's inputs, seeded as
//! the per-body steps seed them (`BodyInputs::seeded_along`), gathered into lanes; the
//! derivative is the block loop's own (`derivative`), with the force records' seeded
//! parameters; each lane takes exactly the steps its lane took in the plain run; contacts,
//! per-lane branches there too, are resolved lane by lane over `Dual<f32, N>`.
//!
//! A custom force is a force law's instance over `Dual<Lanes, N>` (tangents through a custom
//! force are refused unless it is a law).

use crate::backends::cpu::block::LaneForce;
use crate::backends::cpu::block_run::{BlockOutcome, BlockRun};
use crate::backends::cpu::derivative::{BlockConstants, BlockForces, DerivativeFn, derivative};
use crate::body_steps::tangents::{BodyInputs, components, from_components};
use crate::model::tangent::STATE_COMPONENTS;
use crate::physics::algebra::{SymMat3, Vec3};
use crate::physics::contact::resolve_contacts;
use crate::physics::dual::Dual;
use crate::physics::forces::Parameters;
use crate::physics::lanes::{LANES, LaneType, Lanes};
use crate::physics::motion::{Derivative, MassConstants, State};
use crate::physics::scalar::{Carried, Scalar};
use crate::physics::splitting::SplitAxes;

#[cfg(target_arch = "x86_64")]
use crate::physics::avx::AvxLanes;

/// A number of eight lanes, each with its `N` tangents.
type LaneDual<const N: usize> = Dual<Lanes, N>;

/// What a block's dual run starts from: its lanes' own inputs over `Dual<f32, N>` (the
/// spare lanes of a short last block repeat lane 0's), gathered.
pub(crate) struct LaneInputs<'a, const N: usize> {
    pub lanes: Vec<BodyInputs<'a, Dual<f32, N>>>,
    state: State<LaneDual<N>>,
    constants: MassConstants<LaneDual<N>>,
    /// The block's force records' parameters, the global ones then its own.
    parameters: Vec<Parameters<LaneDual<N>>>,
}

/// Lane `l` of every number of `lane(l)`, gathered.
fn gather<const N: usize>(lane: impl Fn(usize) -> Dual<f32, N>) -> LaneDual<N> {
    let duals: [Dual<f32, N>; LANES] = std::array::from_fn(lane);
    Dual {
        value: Lanes(duals.map(|d| d.value)),
        tangent: std::array::from_fn(|i| Lanes(duals.map(|d| d.tangent[i]))),
    }
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
    /// The inputs of a block whose lane `l` starts from `lanes[l]`, under the force records
    /// `global` and `own` (a record of `own` acts on its lane only, in the order of that
    /// lane's forces after the global ones).
    pub(crate) fn gather(
        lanes: Vec<BodyInputs<'a, Dual<f32, N>>>,
        global: usize,
        own: &[LaneForce],
    ) -> Self {
        let numbers: [[Dual<f32, N>; STATE_COMPONENTS]; LANES] =
            std::array::from_fn(|l| components(&lanes[l].state));
        let state = from_components(std::array::from_fn(|r| gather(|l| numbers[l][r])));
        let mass = |f: fn(&MassConstants<Dual<f32, N>>) -> Dual<f32, N>| {
            gather(|l| f(&lanes[l].constants))
        };
        let constants = MassConstants {
            mass: mass(|m| m.mass),
            inv_mass: mass(|m| m.inv_mass),
            inv_inertia: SymMat3 {
                xx: mass(|m| m.inv_inertia.xx),
                yy: mass(|m| m.inv_inertia.yy),
                zz: mass(|m| m.inv_inertia.zz),
                xy: mass(|m| m.inv_inertia.xy),
                xz: mass(|m| m.inv_inertia.xz),
                yz: mass(|m| m.inv_inertia.yz),
            },
        };
        let record = |of_lane: &dyn Fn(usize) -> [Dual<f32, N>; 10]| {
            let lanes: [[Dual<f32, N>; 10]; LANES] = std::array::from_fn(of_lane);
            let numbers: [LaneDual<N>; 10] = std::array::from_fn(|j| gather(|l| lanes[l][j]));
            parameters_of(numbers)
        };
        let mut parameters: Vec<Parameters<LaneDual<N>>> = (0..global)
            .map(|g| record(&|l| parameter_numbers(&lanes[l].forces[g].parameters)))
            .collect();
        let mut nth_own = [0; LANES];
        for o in own {
            let at = global + nth_own[o.lane];
            nth_own[o.lane] += 1;
            // Every lane holds the record's lane's numbers; the others never keep its share.
            let numbers = parameter_numbers(&lanes[o.lane].forces[at].parameters);
            parameters.push(record(&|_| numbers));
        }
        Self {
            lanes,
            state,
            constants,
            parameters,
        }
    }
}

/// A block's run over lanes of duals: the plain run's steps, contacts and rules.
#[derive(Clone, Copy)]
pub(crate) struct LaneRun<'a> {
    /// The plain run's settings; its forces have no custom force.
    pub block: BlockRun<'a>,
    /// Whether to run the baseline clone whatever the CPU (the tests compare the clones).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub baseline: bool,
}

impl LaneRun<'_> {
    /// The block's run from `inputs` over `Dual<L, N>`: the state it ended on and its
    /// outcome, whose values are the plain run's. Written once, inlined into each clone
    /// below; `derivative` is the same clone's.
    #[inline(always)]
    fn run<L: LaneType, const N: usize>(
        &self,
        inputs: &LaneInputs<N>,
        derivative: DerivativeFn<Dual<L, N>>,
    ) -> (State<LaneDual<N>>, BlockOutcome) {
        let to_lanes = |d: LaneDual<N>| Dual::<L, N> {
            value: L::from(d.value),
            tangent: std::array::from_fn(|i| L::from(d.tangent[i])),
        };
        let from_lanes = |d: Dual<L, N>| LaneDual::<N> {
            value: d.value.into(),
            tangent: std::array::from_fn(|i| d.tangent[i].into()),
        };
        let parameters: Vec<Parameters<Dual<L, N>>> = inputs
            .parameters
            .iter()
            .map(|p| parameters_of(parameter_numbers(p).map(to_lanes)))
            .collect();
        let run = &self.block;
        let mass = inputs.constants.map(to_lanes);
        let constants = BlockConstants {
            axes: SplitAxes::for_integrator(run.integrator, &mass.inv_inertia),
            mass,
            load: run.forces.load.map(Dual::<L, N>::from),
            block: run.constants,
            parameters: &parameters,
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
        let mut components = next.to_scalars();
        for (l, lane) in inputs.lanes.iter().enumerate() {
            let Some(shape) = lane.shape else { continue };
            let resolved = resolve_contacts(
                &start.map(|d| lane_of(d, l)),
                next.map(|d| lane_of(d, l)),
                &lane.constants,
                &shape,
                &lane.planes,
                Dual::fixed(self.block.dt),
            );
            for (c, d) in components.iter_mut().zip(resolved.to_scalars()) {
                c.value.0[l] = d.value;
                for (t, v) in c.tangent.iter_mut().zip(d.tangent) {
                    t.0[l] = v;
                }
            }
        }
        State::from_scalars(&mut components.into_iter())
    }

    /// [`run`](Self::run) on the widest clone this CPU runs.
    pub(crate) fn carry<const N: usize>(
        &self,
        inputs: &LaneInputs<N>,
    ) -> (State<LaneDual<N>>, BlockOutcome) {
        #[cfg(target_arch = "x86_64")]
        if !self.baseline && std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { carry_avx2(self, inputs) };
        }
        self.run::<Lanes, N>(inputs, derivative_baseline)
    }
}

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
