//! Derivatives of one body's steps: the same steps run over `Dual<P, N>`, each
//! [`Direction`] seeded in the body's inputs, in the precision `P` of the backend they
//! follow: f64 for `cpu-ref`, f32 for `cpu` (whose lanes take the same f32 steps).
//!
//! Sensitivities to the mass or the inertia hold the initial state `(x, q, P, L)` fixed: a
//! heavier body keeps its momentum, not its velocity.

use glam::DMat3;

#[cfg(test)]
use crate::body_steps::derivative::Reference;
use crate::body_steps::derivative::{ForceEnv, ForceTerm, Primal};
use crate::body_steps::stepper::BodyStepper;
use crate::model::body::BodyState;
use crate::model::force::ForceKind;
use crate::model::integrator::Integrator;
use crate::model::mass::MassProperties;
use crate::model::plane::Plane;

use crate::model::tangent::{
    Direction, INERTIA_ENTRIES, ParameterSlot, PlaneNumber, STATE_COMPONENTS, Tangent, TangentPlan,
    parameter_slots,
};
#[cfg(test)]
use crate::physics::algebra::SymMat3;
use crate::physics::algebra::Vec3;
use crate::physics::contact::{PlaneConstants, ShapeConstants};
use crate::physics::dual::{Dual, WIDEST_DUAL};
use crate::physics::motion::{MassConstants, State};
use crate::physics::scalar::{Carried, Scalar};

/// The symmetric unit tensor that [`Direction::Inertia`]`(entry)` moves the inertia along.
fn inertia_unit(entry: usize) -> DMat3 {
    let (i, j) = [(0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)][entry];
    let mut unit = DMat3::ZERO;
    unit.col_mut(j)[i] = 1.0;
    unit.col_mut(i)[j] = 1.0;
    unit
}

fn sym_entries(m: DMat3) -> [f64; 6] {
    [
        m.x_axis.x, m.y_axis.y, m.z_axis.z, m.y_axis.x, m.z_axis.x, m.z_axis.y,
    ]
}

/// What one body's steps start from, at precision `R`.
pub(crate) struct BodyInputs<'a, R> {
    pub state: State<R>,
    pub constants: MassConstants<R>,
    pub forces: Vec<ForceTerm<'a, R>>,
    pub shape: Option<ShapeConstants<R>>,
    pub planes: Vec<PlaneConstants<R>>,
    /// The crowd's planes the steps' `planes` hold, whose numbers a direction moves.
    pub given_planes: &'a [Plane],
}

impl<'a, P: Primal> BodyInputs<'a, P> {
    /// The inputs of a body of `mass` in `state` under `forces`, meeting `planes`, each
    /// number rounded to `P` from the f64 the crowd holds (as every `P` backend rounds it).
    pub(crate) fn of(
        state: &BodyState,
        mass: &MassProperties,
        forces: &[&'a ForceKind],
        planes: &'a [Plane],
    ) -> Self {
        Self {
            state: State::<f64>::from(state).map(P::constant),
            constants: MassConstants::<f64>::from(mass).map(P::constant),
            forces: forces.iter().map(|kind| ForceTerm::of(kind)).collect(),
            shape: mass.shape().map(|shape| ShapeConstants::of(&shape).to()),
            planes: planes.iter().map(PlaneConstants::of).collect(),
            given_planes: planes,
        }
    }
}

#[cfg(test)]
impl<'a> BodyInputs<'a, f64> {
    /// The same inputs with the one `direction` moves changed by `delta`; `mass` is the
    /// body's, whose inertia an inertia direction moves.
    pub(crate) fn nudged(&self, mass: &MassProperties, direction: Direction, delta: f64) -> Self {
        let mut out = Self {
            forces: self.forces.clone(),
            planes: self.planes.clone(),
            ..*self
        };
        match direction {
            Direction::State(c) => {
                let mut y = self.state.to_scalars();
                y[c] += delta;
                out.state = State::from_scalars(&mut y.into_iter());
            }
            Direction::Mass => {
                let m = self.constants.mass + delta;
                out.constants.mass = m;
                out.constants.inv_mass = 1.0 / m;
            }
            Direction::Inertia(entry) => {
                let inertia = mass.inertia_body() + inertia_unit(entry) * delta;
                out.constants.inv_inertia = SymMat3::from_entries(sym_entries(inertia.inverse()));
            }
            Direction::Force { force, slot } => {
                *slot_of(&mut out.forces[force].parameters, slot) += delta;
            }
            Direction::Keyframe { .. } => {
                unreachable!(
                    "a keyframe table is not an input of the body: `differences` nudges it"
                )
            }
            Direction::Plane { plane, number } => {
                let p = self.given_planes[plane];
                let axis = |j: usize| glam::DVec3::AXES[j] * delta;
                let nudged = match number {
                    PlaneNumber::Point(j) => {
                        Plane::through(p.point + axis(j), p.normal, p.restitution, p.friction)
                    }
                    PlaneNumber::Normal(j) => {
                        Plane::through(p.point, p.normal + axis(j), p.restitution, p.friction)
                    }
                    PlaneNumber::Restitution => Plane {
                        restitution: p.restitution + delta,
                        ..p
                    },
                    PlaneNumber::Friction => Plane {
                        friction: p.friction + delta,
                        ..p
                    },
                };
                out.planes[plane] = PlaneConstants::of(&nudged);
            }
        }
        out
    }
}

impl<'a, P: Primal> BodyInputs<'a, P> {
    /// The inputs of `block` of a body's columns over `Dual<P, N>`, the body's directions
    /// being `directions`: a parameter's direction is seeded in the parameter, the state's
    /// tangents are the block's columns of the body's `13 x k` block `columns`, or zero
    /// without it.
    pub(crate) fn seeded_block<const N: usize>(
        &self,
        mass: &MassProperties,
        directions: &[Option<Direction>],
        block: Block,
        columns: Option<&[P]>,
    ) -> BodyInputs<'a, Dual<P, N>> {
        let k = directions.len();
        let seeds = block
            .columns()
            .iter()
            .enumerate()
            .filter_map(|(j, &c)| match directions[c] {
                Some(Direction::State(_)) | None => None,
                Some(d) => Some((j, d)),
            });
        let mut inputs = self.seeded_along::<N>(mass, seeds);
        if let Some(columns) = columns {
            let mut y = components(&inputs.state);
            for (r, component) in y.iter_mut().enumerate() {
                for (j, &c) in block.columns().iter().enumerate() {
                    component.tangent[j] = columns[r * k + c];
                }
            }
            inputs.state = from_components(y);
        }
        inputs
    }

    /// The inputs over `Dual<P, N>`, each tangent `i` of `seeds` seeded along its
    /// direction; the others stay zero. A seed is the derivative of the input along the
    /// direction: 1 for the number itself, `-1/m^2` for `1/m`, `-I^-1 dI I^-1` (in f64,
    /// rounded to `P`) for the inverse inertia.
    pub(crate) fn seeded_along<const N: usize>(
        &self,
        mass: &MassProperties,
        seeds: impl IntoIterator<Item = (usize, Direction)>,
    ) -> BodyInputs<'a, Dual<P, N>> {
        let fixed = Dual::<P, N>::fixed;
        let mut out = BodyInputs {
            state: self.state.map(fixed),
            constants: self.constants.map(fixed),
            forces: self
                .forces
                .iter()
                .map(|term| ForceTerm {
                    kind: term.kind,
                    keyframe_seeds: term.keyframe_seeds,
                    parameters: crate::physics::force_law::Parameters {
                        vectors: term.parameters.vectors.map(|v| v.map(fixed)),
                        scalars: term.parameters.scalars.map(fixed),
                    },
                })
                .collect(),
            shape: self.shape.map(|s| ShapeConstants {
                kind: s.kind,
                dims: s.dims.map(fixed),
                bounding_radius: fixed(s.bounding_radius),
            }),
            planes: self
                .planes
                .iter()
                .map(|p| PlaneConstants {
                    normal: p.normal.map(fixed),
                    offset: fixed(p.offset),
                    restitution: fixed(p.restitution),
                    friction: fixed(p.friction),
                })
                .collect(),
            given_planes: self.given_planes,
        };
        let one = P::constant(1.0);
        for (i, direction) in seeds {
            match direction {
                Direction::State(c) => {
                    let mut y = out.state.to_scalars();
                    y[c].tangent[i] = one;
                    out.state = State::from_scalars(&mut y.into_iter());
                }
                Direction::Mass | Direction::Inertia(_) => {
                    let seeds =
                        constant_seeds(|| mass.inv_inertia_body(), self.constants.mass, direction);
                    for (number, seed) in out.constants.numbers_mut().into_iter().zip(seeds) {
                        number.tangent[i] = seed;
                    }
                }
                Direction::Force { force, slot } => {
                    slot_of(&mut out.forces[force].parameters, slot).tangent[i] = one;
                }
                Direction::Keyframe { force, number } => {
                    out.forces[force].keyframe_seeds.seed(i, number);
                }
                Direction::Plane { plane, number } => {
                    let p = &mut out.planes[plane];
                    let held = [
                        &mut p.normal.x,
                        &mut p.normal.y,
                        &mut p.normal.z,
                        &mut p.offset,
                        &mut p.restitution,
                        &mut p.friction,
                    ];
                    let seeds = number.seeds(&self.given_planes[plane]);
                    for (number, seed) in held.into_iter().zip(seeds) {
                        number.tangent[i] = P::constant(seed);
                    }
                }
            }
        }
        out
    }
}

/// The derivatives of a body's mass constants `(mass, inv_mass, Ibody^-1 xx, yy, zz, xy, xz,
/// yz)` along `direction` (zero unless it is the mass or an inertia entry), for a body whose
/// mass the steps hold as `m` and whose `Ibody^-1` is `inv_inertia_body()` (asked for an
/// inertia direction alone): 1 for the mass and `-1/m^2` for `1/m`, and `-I^-1 dI I^-1` (in
/// f64, rounded to `P`) for the inverse inertia.
pub fn constant_seeds<P: Primal>(
    inv_inertia_body: impl FnOnce() -> DMat3,
    m: P,
    direction: Direction,
) -> [P; 8] {
    let zero = P::constant(0.0);
    let one = P::constant(1.0);
    match direction {
        Direction::Mass => [one, -one / (m * m), zero, zero, zero, zero, zero, zero],
        Direction::Inertia(entry) => {
            // d(I^-1) = -I^-1 dI I^-1.
            let inv_inertia = inv_inertia_body();
            let moved = -(inv_inertia * inertia_unit(entry) * inv_inertia);
            let [xx, yy, zz, xy, xz, yz] = sym_entries(moved).map(P::constant);
            [zero, zero, xx, yy, zz, xy, xz, yz]
        }
        _ => [zero; 8],
    }
}

/// The number `slot` names among `parameters`.
fn slot_of<R>(
    parameters: &mut crate::physics::force_law::Parameters<R>,
    slot: ParameterSlot,
) -> &mut R {
    match slot {
        ParameterSlot::Vector { vector, component } => {
            let v: &mut Vec3<R> = &mut parameters.vectors[vector];
            [&mut v.x, &mut v.y, &mut v.z]
                .into_iter()
                .nth(component)
                .expect("a component of a 3-vector")
        }
        ParameterSlot::Scalar(index) => &mut parameters.scalars[index],
    }
}

#[cfg(test)]
impl<'a, R: Reference> BodyInputs<'a, R> {
    /// The state after `steps` steps of `dt` from clock step `first_step`.
    pub(crate) fn run(
        &self,
        integrator: Integrator,
        env: ForceEnv<'a, R::Primal>,
        first_step: u64,
        steps: u64,
        dt: f64,
    ) -> State<R> {
        let stepper =
            BodyStepper::with_constants(integrator, self.constants, self.forces.clone(), env);
        let stepper = match self.shape {
            Some(shape) => stepper.meeting(shape, &self.planes),
            None => stepper,
        };
        let mut state = self.state;
        for step in first_step..first_step + steps {
            state = stepper.advance(&state, R::Primal::step_time(step, dt), dt);
        }
        state
    }
}

/// The cost of one direction of a dual block, in plain runs: a dual operation is the value's
/// operation and, per direction, about one more (`rigid-crowd bench --tangents` on `cpu-ref`
/// measured a block of 1 at 2.2 plain runs and one of 4 at about 3.8; over lanes on `cpu`,
/// 2.5 and 6.5).
const COST_PER_DIRECTION: f64 = 0.9;

/// The widths of the blocks of the widths `widths` (compiled) that carry `k` directions at
/// the least cost, by that model, the widest first: among 1 and 4, `[4, 4, 4, 1]` for the
/// state's 13, `[1]` for one number, `[4, 1, 1]` for the inertia's 6; among 1, 2 and 4,
/// `[4, 4, 2]` for ten and `[4, 2]` for six.
pub fn block_widths_among(k: usize, widths: &[usize]) -> Vec<usize> {
    let cost = |w: usize| 1.0 + COST_PER_DIRECTION * w as f64;
    // best[n] = (cost, first block's width) for n directions.
    let mut best: Vec<(f64, usize)> = vec![(0.0, 0)];
    for n in 1..=k {
        let choice = widths
            .iter()
            .map(|&w| (cost(w) + best[n.saturating_sub(w)].0, w))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .expect("widths");
        best.push(choice);
    }
    let mut widths = Vec::new();
    let mut n = k;
    while n > 0 {
        let w = best[n].1;
        widths.push(w);
        n = n.saturating_sub(w);
    }
    widths.sort_unstable_by(|a, b| b.cmp(a));
    widths
}

/// The directions of `plan` for a body whose forces came from the crowd's forces `origins`
/// (in the order its steps take them): `None` for a number of a force that does not act on
/// it, whose derivative is zero.
pub fn directions_of(
    plan: &TangentPlan,
    forces: &[&ForceKind],
    origins: &[usize],
) -> Vec<Option<Direction>> {
    let mut out = Vec::new();
    for tangent in plan.tangents() {
        match tangent {
            Tangent::State => out.extend((0..STATE_COMPONENTS).map(|c| Some(Direction::State(c)))),
            Tangent::Mass => out.push(Some(Direction::Mass)),
            Tangent::Inertia => {
                out.extend((0..INERTIA_ENTRIES).map(|e| Some(Direction::Inertia(e))))
            }
            Tangent::Keyframes { force, .. } => {
                let at = origins.iter().position(|origin| origin == force);
                out.extend(
                    (0..tangent.width())
                        .map(|number| at.map(|force| Direction::Keyframe { force, number })),
                );
            }
            Tangent::Force { force, field, .. } => {
                let width = tangent.width();
                match origins.iter().position(|origin| origin == force) {
                    Some(at) => {
                        let slots = parameter_slots(&forces[at].numeric_fields());
                        let (_, slots) = slots
                            .into_iter()
                            .find(|(name, _)| name == field)
                            .expect("a parsed field");
                        out.extend(
                            slots
                                .into_iter()
                                .map(|slot| Some(Direction::Force { force: at, slot })),
                        );
                    }
                    None => out.extend(std::iter::repeat_n(None, width)),
                }
            }
            // Every body meets every plane (a crowd with planes gives each body a shape).
            Tangent::Plane { plane, field } => {
                out.extend(PlaneNumber::of_field(field).iter().map(|&number| {
                    Some(Direction::Plane {
                        plane: *plane,
                        number,
                    })
                }))
            }
        }
    }
    out
}

/// One body's steps with its tangents: `columns` holds its `13 x k` block (row-major) of
/// derivatives of the state so far along `directions`, and is carried on with the state, in
/// runs over duals of its `blocks`. The state's values are the steps' in `P`
/// bit for bit.
pub(crate) struct TangentSteps<'a, P> {
    pub base: BodyInputs<'a, P>,
    pub mass: &'a MassProperties,
    pub directions: &'a [Option<Direction>],
    /// The blocks its columns run in (`tangent_blocks::cpu_blocks`); the columns of none
    /// stay as they are.
    pub blocks: &'a [Block],
    pub integrator: Integrator,
    pub env: ForceEnv<'a, P>,
}

impl<P: Primal> TangentSteps<'_, P> {
    /// Takes the steps `steps` from clock step `first_step`, each of `dt`, updating the
    /// body's state `state` and its `columns`. `stop(step, next)` judges each new state: at
    /// the first it refuses, the state and the columns stay those before that step, and the
    /// step and its verdict are returned.
    ///
    /// Each block runs all its steps in turn: the values are the same in every block, so the
    /// first judges the steps and the others take as many as it completed.
    pub(crate) fn run<F>(
        &self,
        state: &mut State<P>,
        columns: &mut [P],
        (first_step, steps, dt): (u64, u64, f64),
        mut stop: impl FnMut(u64, &State<P>) -> Option<F>,
    ) -> Option<(u64, F)> {
        let mut verdict = None;
        let mut taken = steps;
        for (b, &block) in self.blocks.iter().enumerate() {
            let span = (first_step, taken, dt);
            if b == 0 {
                verdict = match block.dual_width {
                    1 => self.run_block::<1, F>(block, state, columns, span, &mut stop),
                    _ => self.run_block::<4, F>(block, state, columns, span, &mut stop),
                };
                if let Some((step, _)) = verdict {
                    taken = step - first_step;
                }
            } else {
                match block.dual_width {
                    1 => self.follow::<1>(block, columns, span),
                    _ => self.follow::<4>(block, columns, span),
                }
            }
        }
        verdict
    }

    /// A block after the first: its columns taken the steps the first completed.
    fn follow<const N: usize>(&self, block: Block, columns: &mut [P], span: (u64, u64, f64)) {
        let mut state = self.base.state;
        self.run_block::<N, ()>(block, &mut state, columns, span, &mut |_, _| None);
    }

    /// The steps of one block of `N`-wide duals, its columns read from and written back to
    /// `columns`, and `state` to the values, unless `stop` refuses a step.
    fn run_block<const N: usize, F>(
        &self,
        block: Block,
        state: &mut State<P>,
        columns: &mut [P],
        (first_step, steps, dt): (u64, u64, f64),
        stop: &mut dyn FnMut(u64, &State<P>) -> Option<F>,
    ) -> Option<(u64, F)> {
        let inputs = self.block_inputs::<N>(block, columns);
        let stepper =
            BodyStepper::with_constants(self.integrator, inputs.constants, inputs.forces, self.env);
        let stepper = match inputs.shape {
            Some(shape) => stepper.meeting(shape, &inputs.planes),
            None => stepper,
        };
        let mut y = inputs.state;
        let mut verdict = None;
        for step in first_step..first_step + steps {
            let next = stepper.advance(&y, P::step_time(step, dt), dt);
            if let Some(fault) = stop(step, &next.map(|c| c.value)) {
                verdict = Some((step, fault));
                break;
            }
            y = next;
        }
        *state = y.map(|c| c.value);
        let k = self.directions.len();
        for (r, component) in components(&y).iter().enumerate() {
            for (j, &c) in block.columns().iter().enumerate() {
                columns[r * k + c] = component.tangent[j];
            }
        }
        verdict
    }

    /// The inputs of `block`: the state's tangents are the block's columns, a parameter's
    /// direction is seeded in the parameter.
    fn block_inputs<const N: usize>(
        &self,
        block: Block,
        columns: &[P],
    ) -> BodyInputs<'_, Dual<P, N>> {
        self.base
            .seeded_block::<N>(self.mass, self.directions, block, Some(columns))
    }
}

/// Which of a body's columns one dual block carries, in the order of its directions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Block {
    /// The width of its duals (one of the widths compiled).
    pub dual_width: usize,
    columns: [usize; WIDEST_DUAL],
    /// The columns it carries, at most `dual_width`.
    carried: usize,
}

impl Block {
    /// A block of duals of width `dual_width` carrying the columns `columns`.
    pub fn new(dual_width: usize, columns: &[usize]) -> Self {
        assert!(columns.len() <= dual_width && dual_width <= WIDEST_DUAL);
        let mut at = [0; WIDEST_DUAL];
        at[..columns.len()].copy_from_slice(columns);
        Self {
            dual_width,
            columns: at,
            carried: columns.len(),
        }
    }

    /// The columns it carries, in order; tangent `j` of its duals is column `columns()[j]`.
    pub fn columns(&self) -> &[usize] {
        &self.columns[..self.carried]
    }
}

/// The 13 numbers of a state, in the order of `y` (`x, q, P, L`).
pub(crate) fn components<R: Copy>(y: &State<R>) -> [R; STATE_COMPONENTS] {
    let (x, q) = (y.position, y.orientation);
    let (p, l) = (y.linear_momentum, y.angular_momentum);
    [
        x.x, x.y, x.z, q.w, q.x, q.y, q.z, p.x, p.y, p.z, l.x, l.y, l.z,
    ]
}

/// The state of 13 numbers in the order of `y`.
pub(crate) fn from_components<R: Scalar>(c: [R; STATE_COMPONENTS]) -> State<R> {
    let [x, y, z, qw, qx, qy, qz, px, py, pz, lx, ly, lz] = c;
    State {
        position: Vec3::new(x, y, z),
        orientation: crate::physics::algebra::Quat::new(qw, qx, qy, qz),
        linear_momentum: Vec3::new(px, py, pz),
        angular_momentum: Vec3::new(lx, ly, lz),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use glam::{DQuat, DVec3};

    use super::*;
    use crate::model::body::Body;
    use crate::model::shape::Shape;
    use crate::physics::dual::{DUAL_WIDTHS, LANE_DUAL_WIDTHS};
    use crate::verify::test_crowds::{Tether, tumbling_brick};

    /// Directions the tests seed together in one run of their own.
    /// (A width tangents run in, which a force law has an instance for.)
    const BLOCK: usize = 4;

    #[test]
    fn block_widths_cover_the_count_with_the_compiled_widths() {
        assert_eq!(block_widths_among(0, &DUAL_WIDTHS), Vec::<usize>::new());
        assert_eq!(block_widths_among(1, &DUAL_WIDTHS), [1]);
        assert_eq!(block_widths_among(3, &DUAL_WIDTHS), [4]);
        assert_eq!(block_widths_among(6, &DUAL_WIDTHS), [4, 1, 1]);
        assert_eq!(block_widths_among(13, &DUAL_WIDTHS), [4, 4, 4, 1]);
        assert_eq!(block_widths_among(10, &LANE_DUAL_WIDTHS), [4, 4, 2]);
        assert_eq!(block_widths_among(6, &LANE_DUAL_WIDTHS), [4, 2]);
        for k in 0..=40 {
            let widths = block_widths_among(k, &DUAL_WIDTHS);
            assert!(
                widths.iter().all(|w| DUAL_WIDTHS.contains(w)),
                "{k}: {widths:?}"
            );
            let covered: usize = widths.iter().sum();
            let last = widths.last().copied().unwrap_or(0);
            assert!(covered >= k && covered - last < k.max(1), "{k}: {widths:?}");
        }
    }

    #[test]
    fn components_are_the_state_in_the_order_of_y() {
        let y = State::from_scalars(&mut (0..13).map(|i| i as f64));
        assert_eq!(components(&y).to_vec(), y.to_scalars());
        assert_eq!(from_components(components(&y)), y);
    }

    /// Every kind but custom, with numbers in every parameter it reads.
    fn every_force() -> Vec<ForceKind> {
        let v = DVec3::new;
        vec![
            ForceKind::Gravity {
                acceleration: v(0.1, -0.3, -9.81),
            },
            ForceKind::LinearDrag {
                linear: 0.4,
                angular: 0.3,
            },
            ForceKind::QuadraticDrag {
                linear: 0.2,
                angular: 0.1,
            },
            ForceKind::PointForce {
                force: v(0.5, 1.0, -0.7),
                point: v(0.2, -0.4, 0.9),
            },
            ForceKind::Spring {
                anchor: v(0.0, 1.0, 2.0),
                attach: v(0.3, 0.2, -0.5),
                stiffness: 5.0,
                damping: 0.4,
            },
            ForceKind::Attractor {
                centre: v(3.0, 1.0, -1.0),
                strength: 8.0,
                softening: 0.5,
            },
            ForceKind::Thrust {
                force: v(0.2, 0.0, 1.0),
                torque: v(0.1, -0.2, 0.05),
            },
            ForceKind::Sinusoidal {
                force: v(1.0, 0.5, 0.0),
                torque: v(0.0, 0.3, 0.2),
                offset: 0.2,
                amplitude: 0.7,
                frequency: 1.3,
                phase: 0.4,
            },
            ForceKind::Keyframed {
                force: v(0.0, 0.0, 2.0),
                torque: v(0.4, 0.0, 0.0),
                table: 0,
            },
        ]
    }

    /// Every number each force reads.
    fn parameter_directions(forces: &[&ForceKind]) -> Vec<Direction> {
        let mut out = Vec::new();
        for (force, kind) in forces.iter().enumerate() {
            for (_, slots) in parameter_slots(&kind.numeric_fields()) {
                out.extend(
                    slots
                        .into_iter()
                        .map(|slot| Direction::Force { force, slot }),
                );
            }
        }
        out
    }

    /// The steps every check runs.
    #[derive(Clone, Copy)]
    struct Run<'a> {
        integrator: Integrator,
        env: ForceEnv<'a>,
        steps: u64,
        dt: f64,
    }

    impl Run<'_> {
        fn end<R: Reference<Primal = f64>>(&self, inputs: &BodyInputs<R>) -> State<R> {
            inputs.run(self.integrator, self.env, 0, self.steps, self.dt)
        }
    }

    /// `d y(end) / d direction` by central differences at `h` and `h/2`, Richardson
    /// extrapolated: error O(h^4), plus round-off of order 1e-16 / h.
    fn differences(
        base: &BodyInputs<f64>,
        mass: &MassProperties,
        direction: Direction,
        h: f64,
        run: Run,
    ) -> Vec<f64> {
        let end = |delta: f64| -> Vec<f64> {
            let Direction::Keyframe { force, number } = direction else {
                return run.end(&base.nudged(mass, direction, delta)).to_scalars();
            };
            let ForceKind::Keyframed { table, .. } = *base.forces[force].kind else {
                panic!("a keyframe direction of a force that is not keyframed")
            };
            let mut keyframes = run.env.keyframes.to_vec();
            keyframes[table][number / 2][number % 2] += delta;
            let env = ForceEnv {
                keyframes: &keyframes,
                ..run.env
            };
            Run { env, ..run }.end(base).to_scalars()
        };
        let central = |h: f64| -> Vec<f64> {
            let (plus, minus) = (end(h), end(-h));
            plus.iter()
                .zip(&minus)
                .map(|(p, m)| (p - m) / (2.0 * h))
                .collect()
        };
        let (coarse, fine) = (central(h), central(h / 2.0));
        coarse
            .iter()
            .zip(&fine)
            .map(|(c, f)| (4.0 * f - c) / 3.0)
            .collect()
    }

    /// Checks the dual run's tangents along `directions` (a block of `N`) against differences
    /// with nudges `h` and `h/2`, each column to `tolerance` of its largest entry; returns the
    /// worst relative error.
    fn check_block(
        base: &BodyInputs<f64>,
        mass: &MassProperties,
        directions: &[Direction],
        run: Run,
        h: f64,
        tolerance: f64,
        what: &str,
    ) -> f64 {
        if directions.len() > BLOCK {
            let (first, rest) = directions.split_at(BLOCK);
            let worst = check_block(base, mass, first, run, h, tolerance, what);
            return worst.max(check_block(base, mass, rest, run, h, tolerance, what));
        }
        let seeds = directions.iter().copied().enumerate();
        let end = run
            .end(&base.seeded_along::<BLOCK>(mass, seeds))
            .to_scalars();
        let primal: Vec<f64> = end.iter().map(|d| d.value).collect();
        assert_eq!(
            primal,
            run.end(base).to_scalars(),
            "{what}: values are the f64 run's bits"
        );
        let mut worst: f64 = 0.0;
        for (i, &direction) in directions.iter().enumerate() {
            let expected = differences(base, mass, direction, h, run);
            let scale = expected.iter().fold(1e-300_f64, |m, e| m.max(e.abs()));
            for (r, want) in expected.iter().enumerate() {
                let got = end[r].tangent[i];
                let error = (got - want).abs() / scale;
                worst = crate::verify::compare::largest(worst, error);
                assert!(
                    error <= tolerance,
                    "{what}: d y[{r}] / d {direction:?} = {got:e}, differences give {want:e} ({error:.1e} of the column)"
                );
            }
        }
        worst
    }

    const STATE: [Direction; STATE_COMPONENTS] = {
        let mut d = [Direction::Mass; STATE_COMPONENTS];
        let mut c = 0;
        while c < STATE_COMPONENTS {
            d[c] = Direction::State(c);
            c += 1;
        }
        d
    };
    const MASS_AND_INERTIA: [Direction; 7] = [
        Direction::Mass,
        Direction::Inertia(0),
        Direction::Inertia(1),
        Direction::Inertia(2),
        Direction::Inertia(3),
        Direction::Inertia(4),
        Direction::Inertia(5),
    ];

    #[test]
    fn tangents_match_richardson_differences_for_every_force_and_integrator() {
        let (state, mass) = tumbling_brick();
        let kinds = every_force();
        // Its times lie between the RK4 stages' (multiples of dt / 2) by more than the
        // largest nudge: a nudge across a stage's time would cross a kink of the profile.
        let keyframes = vec![vec![[0.0123, 0.5], [0.0731, 1.5], [0.2017, -0.5]]];
        let env = ForceEnv {
            keyframes: &keyframes,
            ..ForceEnv::default()
        };
        let (steps, dt) = (25, 0.01);
        let mut report = Vec::new();
        for integrator in Integrator::ALL {
            for kind in &kinds {
                let forces = [kind];
                let base = BodyInputs::of(&state, &mass, &forces, &[]);
                let run = Run {
                    integrator,
                    env,
                    steps,
                    dt,
                };
                let what = format!("{integrator}, {:?}", kind.force_type());
                let mut worst = check_block(&base, &mass, &STATE, run, 1e-3, 1e-8, &what);
                worst = worst.max(check_block(
                    &base,
                    &mass,
                    &MASS_AND_INERTIA,
                    run,
                    1e-3,
                    1e-8,
                    &what,
                ));
                for direction in parameter_directions(&forces) {
                    worst = worst.max(check_block(
                        &base,
                        &mass,
                        &[direction],
                        run,
                        1e-3,
                        1e-8,
                        &what,
                    ));
                }
                // Nudged by less: the profile's keyframes are a few hundredths of a second
                // apart, so differences at 1e-3 carry their O(h^4) error into the 1e-8s.
                if let ForceKind::Keyframed { .. } = kind {
                    let table: Vec<Direction> = (0..2 * keyframes[0].len())
                        .map(|number| Direction::Keyframe { force: 0, number })
                        .collect();
                    worst = worst.max(check_block(&base, &mass, &table, run, 1e-4, 1e-8, &what));
                }
                report.push(format!("{what}: {worst:.1e}"));
            }
        }
        println!(
            "worst error of a tangent, relative to its column:\n{}",
            report.join("\n")
        );
    }

    #[test]
    fn tangents_through_a_resting_and_sliding_contact_match_differences() {
        // A box sliding along a floor under gravity and friction, rocking slightly on its
        // corners: the derivative of the piecewise-smooth step, checked where no nudge
        // crosses a contact event.
        let size = DVec3::new(1.0, 0.8, 0.6);
        let mass = MassProperties::from_shape(2.0, Shape::Box { size }, "box").unwrap();
        let body = Body::from_kinematics(
            mass,
            DVec3::new(0.0, 0.0, 0.3 - 1e-4),
            DQuat::IDENTITY,
            DVec3::new(1.5, 0.4, 0.0),
            DVec3::ZERO,
        );
        let floor = Plane::through(DVec3::ZERO, DVec3::Z, 0.0, 0.3);
        let planes = [floor];
        let gravity = ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        };
        let forces = [&gravity];
        let env = ForceEnv::default();
        let (steps, dt) = (40, 0.01);
        let base = BodyInputs::of(&body.state, &mass, &forces, &planes);
        let run = |integrator| Run {
            integrator,
            env,
            steps,
            dt,
        };
        for integrator in Integrator::ALL {
            let what = format!("{integrator}, sliding box");
            let plane = |number| Direction::Plane { plane: 0, number };
            check_block(
                &base,
                &mass,
                &[
                    Direction::State(7),
                    Direction::State(8),
                    Direction::Mass,
                    plane(PlaneNumber::Point(2)),
                    plane(PlaneNumber::Friction),
                ],
                run(integrator),
                // The box rocks on its corners: a nudge of 1e-3 makes a corner lift or land
                // on another step within the run (the differences then see the jump); one of
                // 1e-5 stays on the same side of every such event.
                1e-5,
                1e-8,
                &what,
            );
        }
        // Nudges of 1e-3 do cross an event under some integrator: the differences then jump
        // away from the derivative of the steps that were taken.
        let across = [Direction::State(7), Direction::State(8), Direction::Mass];
        let mut worst: f64 = 0.0;
        for integrator in Integrator::ALL {
            let error = check_block(
                &base,
                &mass,
                &across,
                run(integrator),
                1e-3,
                f64::INFINITY,
                "across",
            );
            println!("{integrator}: nudges of 1e-3 differ by {error:.3} of a column");
            worst = worst.max(error);
        }
        assert!(worst > 0.1, "{worst}");
    }

    /// A custom force written once as a law gets its tangents from its dual instance: the
    /// state, mass and inertia columns through it match differences of the reference, which
    /// runs the law's f64 instance, under every integrator.
    #[test]
    fn a_force_laws_tangents_come_from_its_one_definition() {
        let (state, mass) = tumbling_brick();
        let custom = crate::physics::custom_force::CustomForce::from_law(Tether);
        let env = ForceEnv {
            body: 3,
            custom_force: Some(&custom),
            ..ForceEnv::default()
        };
        let kind = ForceKind::Custom;
        let forces = [&kind];
        for integrator in Integrator::ALL {
            let base = BodyInputs::of(&state, &mass, &forces, &[]);
            let run = Run {
                integrator,
                env,
                steps: 25,
                dt: 0.01,
            };
            let what = format!("{integrator}, a force law");
            let mut worst = check_block(&base, &mass, &STATE, run, 1e-3, 1e-8, &what);
            let others = check_block(&base, &mass, &MASS_AND_INERTIA, run, 1e-3, 1e-8, &what);
            worst = worst.max(others);
            println!("{what}: worst {worst:.1e} of a column");
        }
    }

    /// A spinning ball dropped on a tilted, springy, rough floor bounces once in the run: the
    /// plane's numbers (its point, normal, restitution and friction) as directions, against
    /// differences of the reference, under every integrator.
    #[test]
    fn a_bounce_differentiates_along_the_planes_numbers() {
        let mass = MassProperties::from_shape(1.5, Shape::Sphere { radius: 0.25 }, "ball").unwrap();
        let body = Body::from_kinematics(
            mass,
            DVec3::new(0.1, -0.2, 0.6),
            DQuat::from_rotation_x(0.3),
            DVec3::new(3.0, 2.0, -1.0),
            DVec3::new(4.0, -2.0, 1.0),
        );
        // Friction too weak to stop the slip in one bounce, so its coefficient matters.
        let floor = Plane::through(
            DVec3::new(0.2, -0.1, 0.05),
            DVec3::new(0.1, -0.05, 1.0),
            0.6,
            0.1,
        );
        let planes = [floor];
        let gravity = ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        };
        let forces = [&gravity];
        let plane = |number| Direction::Plane { plane: 0, number };
        let directions = [
            plane(PlaneNumber::Point(0)),
            plane(PlaneNumber::Point(1)),
            plane(PlaneNumber::Point(2)),
            plane(PlaneNumber::Normal(0)),
            plane(PlaneNumber::Normal(1)),
            plane(PlaneNumber::Normal(2)),
            plane(PlaneNumber::Restitution),
            plane(PlaneNumber::Friction),
            Direction::State(9),
        ];
        for integrator in Integrator::ALL {
            let base = BodyInputs::of(&body.state, &mass, &forces, &planes);
            let run = Run {
                integrator,
                env: ForceEnv::default(),
                steps: 40,
                dt: 0.01,
            };
            let what = format!("{integrator}, bouncing ball");
            let worst = check_block(&base, &mass, &directions, run, 1e-5, 1e-8, &what);
            println!("{what}: worst {worst:.1e} of a column");
            // The ball did bounce: every number of the plane moved its end state. (The
            // normal is tilted, so its own component moves it too.)
            for &direction in &directions[..8] {
                let column = differences(&base, &mass, direction, 1e-5, run);
                let largest = column.iter().fold(0.0_f64, |m, d| m.max(d.abs()));
                assert!(
                    largest > 1e-2,
                    "{what}: {direction:?} moved nothing ({largest:e})"
                );
            }
        }
    }

    #[test]
    fn a_long_torque_free_jacobian_passes_a_difference_check_and_grows_linearly() {
        let (body, _) = crate::verify::analytic::tumbling_top();
        let base = BodyInputs::of(&body.state, &body.mass, &[], &[]);
        let (env, dt, integrator) = (ForceEnv::default(), 0.01, Integrator::Rk4);
        let mut squares = [0.0; 3];
        for block in STATE.chunks(BLOCK) {
            let seeds = block.iter().copied().enumerate();
            let mut seeded = base.seeded_along::<BLOCK>(&body.mass, seeds);
            let mut done = 0;
            for (at, end) in [1_000_u64, 10_000, 100_000].into_iter().enumerate() {
                seeded.state = seeded.run(integrator, env, done, end - done, dt);
                done = end;
                let entries = seeded.state.to_scalars();
                squares[at] += entries
                    .iter()
                    .flat_map(|d| d.tangent)
                    .map(|t| t * t)
                    .sum::<f64>();
            }
        }
        let norms = squares.map(f64::sqrt);
        // Away from the separatrix a nudge changes the tumbling's period, so the phase error,
        // and |J|, grow in proportion to time: a factor 10 a decade, not an exponential.
        let exponent = (norms[2] / norms[0]).log10() / 2.0;
        println!("|J| after 1e3, 1e4, 1e5 steps: {norms:.3?}; |J| ~ t^{exponent:.3}");
        assert!((0.8..1.2).contains(&exponent), "|J| grows as t^{exponent}");
        let run = Run {
            integrator,
            env,
            steps: 100_000,
            dt,
        };
        // Nudges of 1e-5: the second derivative grows like t^2, which larger ones see, and
        // smaller ones drown in the round-off of positions 130 m out (1e-6 gave 1.1e-6).
        let worst = check_block(&base, &body.mass, &STATE, run, 1e-5, 1e-6, "long top");
        println!("after 1e5 steps the worst entry is {worst:.1e} of its column");
    }
}
