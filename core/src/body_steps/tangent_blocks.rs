//! Which of a body's tangent columns run together, and which need not run at all. What a
//! direction's column moves at the start (its seed), closed over the crowd's physics by
//! tracing it (`physics::dual_wgsl`), says which numbers a block of such columns moves and
//! whether a step can change its columns. The GPU compiles each block's kernel for what it
//! moves; every backend leaves out the columns no step changes (the position's, where no
//! force reads the position and no plane is met): they stay as they start, the bits a step
//! would have left them.

use crate::assembly::crowd::Crowd;
use crate::body_steps::tangents::{Block, block_widths_among, constant_seeds, directions_of};
use crate::model::codes::Coded;
use crate::model::force::{ForceKind, ForceType};
use crate::model::shape::ShapeKind;
use crate::model::tangent::{Direction, PLANE_NUMBERS, TangentPlan};
use crate::physics::dual_wgsl::{
    CustomTrace, MovingNumbers, PARAMETER_NUMBERS, Structure, TRACED_WIDTHS, TracedPhysics,
    changes_columns,
};

/// The directions of `plan` as they would be for a body under every force of `crowd`.
pub fn crowd_directions(plan: &TangentPlan, crowd: &Crowd) -> Vec<Option<Direction>> {
    let forces: Vec<&ForceKind> = crowd.forces.iter().map(|f| &f.kind).collect();
    let origins: Vec<usize> = (0..forces.len()).collect();
    directions_of(plan, &forces, &origins)
}

/// Which numbers a direction moves at the start: what its column is seeded with (the rows
/// `rows` of the state, the mass constants the mass or an inertia entry moves, the numbers
/// of a force record or a plane).
pub(crate) fn seed(direction: Option<Direction>, rows: u16) -> MovingNumbers {
    let every = |n: usize| (1u16 << n) - 1;
    let none = MovingNumbers::none(0).and(Structure::Motion, rows);
    match direction {
        None | Some(Direction::State(_)) => none,
        Some(d @ (Direction::Mass | Direction::Inertia(_))) => {
            none.and(Structure::Constants, seeded_constants(d))
        }
        Some(Direction::Force { .. }) => none.and(Structure::Parameters, every(PARAMETER_NUMBERS)),
        Some(Direction::Keyframe { .. }) => none.and(Structure::Keyframe, every(2)),
        Some(Direction::Plane { .. }) => none.and(Structure::Plane, every(PLANE_NUMBERS)),
    }
}

/// The mass constants `direction` moves at the start, a bit each: those `constant_seeds`
/// seeds for a body whose inverse inertia has no zero entry.
fn seeded_constants(direction: Direction) -> u16 {
    let inertia = glam::DMat3::from_cols_array(&[2.0, 0.1, 0.2, 0.1, 3.0, 0.3, 0.2, 0.3, 4.0]);
    (constant_seeds(|| inertia.inverse(), 1.0f64, direction)
        .iter()
        .enumerate())
    .filter(|(_, seed)| **seed != 0.0)
    .fold(0, |numbers, (i, _)| numbers | 1 << i)
}

/// What a direction moves, as far as grouping goes: the columns of a group of state
/// components (position, orientation, linear and angular momentum), of the mass, of the
/// inertia, of one force or of one plane tend to move the same numbers through a step, so a
/// block holds one group's columns only, and its kernel leaves out what they do not move.
pub(crate) fn group(direction: Option<Direction>) -> (u8, usize) {
    match direction {
        None => (0, 0),
        Some(Direction::State(c)) => (1, [3, 7, 10].iter().filter(|&&end| c >= end).count()),
        Some(Direction::Mass) => (2, 0),
        Some(Direction::Inertia(_)) => (3, 0),
        Some(Direction::Force { force, .. } | Direction::Keyframe { force, .. }) => (4, force),
        Some(Direction::Plane { plane, .. }) => (5, plane),
    }
}

/// The physics the steps of `crowd` run, as the traces over duals see it: its force kinds,
/// its integrator, every shape kind where it has planes (a trace of more than the steps run
/// can only find more moving), and its custom force.
pub(crate) fn traced_physics(crowd: &Crowd) -> TracedPhysics<'_> {
    let present = |kind: &ForceType| crowd.forces.iter().any(|f| f.kind.force_type() == *kind);
    TracedPhysics {
        kinds: ForceType::ALL.iter().copied().filter(present).collect(),
        integrators: vec![crowd.integrator],
        contact_shapes: (!crowd.planes.is_empty()).then(|| ShapeKind::EVERY.to_vec()),
        custom_force: (crowd.custom_force.as_ref()).map(|custom| -> CustomTrace {
            Box::new(|precision, width, pass, kinds| {
                custom.dual_wgsl(pass, (precision, width), kinds)
            })
        }),
    }
}

/// A block of a body's columns with what they move at the start: the GPU compiles its
/// kernel for that; the CPU traces it to know whether a step can change them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeededBlock {
    /// The block's dual width.
    pub width: usize,
    /// The columns it carries (at most `width`).
    pub columns: std::ops::Range<usize>,
    /// What its columns move at the start.
    pub moving: MovingNumbers,
}

/// The blocks of the columns `directions` (as [`crowd_directions`] gives them; `rows` the
/// state rows each is seeded in): if `grouped`, each group's columns (see `group`) apart,
/// else all of them, in blocks of the widths [`block_widths_among`] picks among `widths`,
/// each with what its columns move at the start.
pub fn seeded_blocks(
    directions: &[Option<Direction>],
    rows: &[u16],
    widths: &[usize],
    grouped: bool,
) -> Vec<SeededBlock> {
    let group = |c: usize| grouped.then(|| group(directions[c]));
    let mut blocks = Vec::new();
    let mut first = 0;
    while first < directions.len() {
        let end = (first..directions.len())
            .find(|&c| group(c) != group(first))
            .unwrap_or(directions.len());
        for width in block_widths_among(end - first, widths) {
            let columns = first..(first + width).min(end);
            first = columns.end;
            let moving = (columns.clone())
                .map(|c| seed(directions[c], rows[c]))
                .fold(MovingNumbers::none(columns.len()), |all, one| {
                    all.union(&one)
                });
            blocks.push(SeededBlock {
                width,
                columns,
                moving,
            });
        }
    }
    blocks
}

/// Whether a step of `physics` can change each of the columns `directions`, seeded in the
/// state rows `rows`: traced a block of a group's columns at a time ([`seeded_blocks`]).
pub(crate) fn changing_columns(
    directions: &[Option<Direction>],
    rows: &[u16],
    physics: &TracedPhysics,
) -> Vec<bool> {
    let mut changing = vec![true; directions.len()];
    for block in seeded_blocks(directions, rows, &TRACED_WIDTHS, true) {
        changing[block.columns].fill(changes_columns(physics, block.moving));
    }
    changing
}

/// The blocks a CPU backend carries `plan`'s columns of the bodies of `crowd` in, of the
/// dual widths `widths`: the columns a step can change ([`changing_columns`]), in order, in
/// the blocks [`block_widths_among`] picks for their count. Where no step changes any
/// column, the first alone, whose block steps the values.
pub(crate) fn cpu_blocks(plan: &TangentPlan, crowd: &Crowd, widths: &[usize]) -> Vec<Block> {
    let directions = crowd_directions(plan, crowd);
    let changing = changing_columns(&directions, &plan.seeded_rows(), &traced_physics(crowd));
    let mut run: Vec<usize> = (0..directions.len()).filter(|&c| changing[c]).collect();
    if run.is_empty() && !directions.is_empty() {
        run.push(0);
    }
    let mut blocks = Vec::new();
    let mut rest = &run[..];
    for width in block_widths_among(run.len(), widths) {
        let (columns, after) = rest.split_at(width.min(rest.len()));
        blocks.push(Block::new(width, columns));
        rest = after;
    }
    blocks
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::force::Force;
    use crate::model::plane::Plane;
    use crate::physics::dual::DUAL_WIDTHS;
    use crate::verify::test_crowds::{gravity_drag, with_spring};
    use glam::DVec3;

    /// The position's columns run only where a force reads the position or a plane is met;
    /// the other columns run in the widths the cost model picks for their count.
    #[test]
    fn cpu_blocks_leave_out_the_columns_no_step_changes() {
        let drag = gravity_drag(8);
        let spring = with_spring(drag.clone());
        let floor = drag
            .clone()
            .with_plane(Plane::through(DVec3::ZERO, DVec3::Z, 0.5, 0.3));
        let run = |crowd: &Crowd, names: &[&str]| -> Vec<Vec<usize>> {
            let plan =
                TangentPlan::parse(names, &crowd.forces, &crowd.planes, &crowd.keyframes, "t")
                    .unwrap();
            let blocks = cpu_blocks(&plan, crowd, &DUAL_WIDTHS);
            let widths: Vec<usize> = blocks.iter().map(|b| b.dual_width).collect();
            let count = blocks.iter().map(|b| b.columns().len()).sum();
            assert_eq!(widths, block_widths_among(count, &DUAL_WIDTHS), "{names:?}");
            blocks.iter().map(|b| b.columns().to_vec()).collect()
        };
        let columns = |blocks: Vec<Vec<usize>>| blocks.concat();
        assert_eq!(columns(run(&drag, &["state"])), (3..13).collect::<Vec<_>>());
        assert_eq!(
            columns(run(&drag, &["mass", "state"])),
            [0].into_iter().chain(4..14).collect::<Vec<_>>()
        );
        assert_eq!(
            columns(run(&spring, &["state"])),
            (0..13).collect::<Vec<_>>()
        );
        assert_eq!(
            columns(run(&floor, &["state"])),
            (0..13).collect::<Vec<_>>()
        );
        assert_eq!(
            run(&drag, &["state"]),
            [vec![3, 4, 5, 6], vec![7, 8, 9, 10], vec![11], vec![12]]
        );
    }

    /// The columns left out hold the bits the steps would have left them: every column of a
    /// position-free crowd carried in every block equals, bit for bit, the columns carried in
    /// `cpu_blocks`' blocks, under every integrator, state and values alike.
    #[test]
    fn columns_left_out_hold_the_bits_a_step_would_leave_them() {
        use crate::body_steps::derivative::ForceEnv;
        use crate::body_steps::tangents::{BodyInputs, TangentSteps};
        use crate::model::integrator::Integrator;
        use crate::physics::motion::State;
        use crate::physics::scalar::Carried;
        let bodies = crate::assembly::generate::CrowdSpec::new(4, 7)
            .generate()
            .unwrap();
        for integrator in Integrator::ALL {
            let crowd = Crowd::new(bodies.clone(), 1e-2)
                .with_force(Force::on_all(ForceKind::Gravity {
                    acceleration: DVec3::new(0.3, 0.0, -9.81),
                }))
                .with_force(Force::on_all(ForceKind::LinearDrag {
                    linear: 0.3,
                    angular: 0.05,
                }))
                .with_integrator(integrator);
            let plan = TangentPlan::parse(
                &["state", "mass"],
                &crowd.forces,
                &[],
                &crowd.keyframes,
                "t",
            )
            .unwrap();
            let directions = crowd_directions(&plan, &crowd);
            let left_out = cpu_blocks(&plan, &crowd, &DUAL_WIDTHS);
            let all: Vec<usize> = (0..directions.len()).collect();
            let every: Vec<Block> = all.chunks(4).map(|c| Block::new(4, c)).collect();
            let carried = left_out.iter().map(|b| b.columns().len()).sum::<usize>();
            // The Lie-Poisson splittings' traces do not hand the position's derivatives back
            // as they took them, so they keep every column; the others leave three out.
            if !integrator.splits_the_rotation() {
                assert_eq!(carried, all.len() - 3, "{integrator}: {left_out:?}");
            }
            let forces: Vec<&ForceKind> = crowd.forces.iter().map(|f| &f.kind).collect();
            for body in &crowd.bodies {
                let carry = |blocks: &[Block]| {
                    let q = body.state.orientation;
                    let mut columns = vec![0.0; plan.body_len()];
                    plan.initial_block([q.w, q.x, q.y, q.z], &mut columns);
                    let steps = TangentSteps {
                        base: BodyInputs::of(&body.state, &body.mass, &forces, &[]),
                        mass: &body.mass,
                        directions: &directions,
                        blocks,
                        integrator,
                        env: ForceEnv::default(),
                    };
                    let mut state = State::from(&body.state);
                    let stop = |_: u64, _: &State<f64>| None::<()>;
                    steps.run(&mut state, &mut columns, (0, 300, crowd.dt), stop);
                    let bits = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect::<Vec<u64>>();
                    (bits(&state.to_scalars()), bits(&columns))
                };
                assert_eq!(carry(&left_out), carry(&every), "{integrator}");
            }
        }
    }
}
