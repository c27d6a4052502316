//! The kernels that carry tangents: the plain kernel over dual numbers of a block's width
//! (`shader::integrate_source`), with the block's bindings and hooks
//! (`shaders/tangent_block.wgsl` and the reads and writes of its tangents generated here);
//! and which blocks a crowd's columns take, and which of them share a kernel.

use crate::assembly::crowd::Crowd;
use crate::backends::gpu::kernel::kernel_spec::KernelSpec;
use crate::backends::gpu::kernel::shader::{TANGENT_BLOCK, integrate_source, kernel_physics};
use crate::body_steps::tangent_blocks::{SeededBlock, crowd_directions, seeded_blocks};
use crate::model::precision::Precision;
use crate::model::tangent::{Direction, TangentPlan};
use crate::physics::custom_force::CustomForce;
use crate::physics::dual_wgsl::{
    BlockClosure, CONSTANT_NUMBERS, MOTION_NUMBERS, MovingNumbers, Structure, TRACED_WIDTHS,
    close_block,
};
use crate::physics::trace::Tracer;

/// The widths of the GPU's dual blocks: those the physics over duals is traced in.
pub(crate) const GPU_WIDTHS: [usize; 2] = TRACED_WIDTHS;

/// The widths a tangent kernel's blocks take, none wider than `widest`
/// (`GpuOptions::widest_tangent_block`).
fn gpu_widths(widest: usize) -> Vec<usize> {
    GPU_WIDTHS.into_iter().filter(|&w| w <= widest).collect()
}

/// The blocks that carry `plan`'s columns for the bodies of `crowd`, none wider than
/// `widest`, in the tangent kernel of `spec` (with the custom force `custom_force`) in
/// `precision`: of the blocks of one group each and the blocks of consecutive columns
/// ([`gpu_blocks_of`]), those whose running blocks ([`running`]) trace fewer statements. A
/// group's blocks move less where the physics keeps the groups apart (the momentum's no
/// rotation under gravity and drag); where it couples them all (contacts) the consecutive
/// columns fill their blocks better. Each block's `moving` is what its columns move over the
/// run, closed over the physics ([`Closed`]): what its kernel is compiled from, so blocks
/// whose closures agree (every block of a crowd on a floor) share one kernel, and blocks
/// whose closures are close share the kernel of their union (`share_kernels`).
pub(crate) fn crowd_blocks(
    plan: &TangentPlan,
    crowd: &Crowd,
    widest: usize,
    arithmetic: (Precision, &KernelSpec, Option<&CustomForce>),
) -> Vec<SeededBlock> {
    let (directions, rows) = (crowd_directions(plan, crowd), plan.seeded_rows());
    let traced = |grouped| {
        let blocks = running(
            gpu_blocks_of(&directions, &rows, widest, grouped),
            arithmetic,
        );
        let statements: usize = blocks.iter().map(|(_, statements)| statements).sum();
        (statements, blocks)
    };
    let (grouped, consecutive) = (traced(true), traced(false));
    let chosen = match grouped.0 <= consecutive.0 {
        true => grouped.1,
        false => consecutive.1,
    };
    share_kernels(chosen, arithmetic)
}

/// How many more statements than its own a block's kernel may trace to be shared with other
/// blocks: a shared kernel is compiled once (on lavapipe a width-4 kernel over every force
/// kind takes seconds), at a cost of at most this much more work a step for each block.
const SHARED_KERNEL_GROWTH: f64 = 1.05;

/// `blocks` (each with the statements its own kernel traces), those of one width whose
/// closures are close merged into one kernel: each block in turn joins the first kernel of
/// its width whose closure, taken with its own, traces at most [`SHARED_KERNEL_GROWTH`] times
/// the statements of every block it would carry. Blocks whose closures part (the groups of
/// the state under drag, which the grouped blocks keep apart) keep their own kernels; blocks
/// along a crowd's several numbers (the mass, the inertia, a force's parameters, each moving
/// the state too) share one.
fn share_kernels(
    blocks: Vec<(SeededBlock, usize)>,
    (precision, spec, custom_force): (Precision, &KernelSpec, Option<&CustomForce>),
) -> Vec<SeededBlock> {
    let physics = kernel_physics(spec, custom_force);
    // Each shared kernel: its width, its closure, its statements and the fewest statements
    // of a block it carries.
    let mut kernels: Vec<(usize, MovingNumbers, usize, usize)> = Vec::new();
    let mut chosen = Vec::with_capacity(blocks.len());
    for (block, own) in blocks {
        let shared = kernels.iter().position(|&(width, moving, _, fewest)| {
            width == block.width && {
                let fewest = fewest.min(own);
                let union = block_statements(&close_block(
                    precision,
                    &physics,
                    (width, moving.union(&block.moving)),
                ));
                union as f64 <= SHARED_KERNEL_GROWTH * fewest as f64
            }
        });
        let at = match shared {
            Some(at) => {
                let (width, moving, _, fewest) = kernels[at];
                let closure =
                    close_block(precision, &physics, (width, moving.union(&block.moving)));
                kernels[at] = (
                    width,
                    closure.closed.moving,
                    block_statements(&closure),
                    fewest.min(own),
                );
                at
            }
            None => {
                kernels.push((block.width, block.moving, own, own));
                kernels.len() - 1
            }
        };
        chosen.push((block, at));
    }
    chosen
        .into_iter()
        .map(|(block, at)| SeededBlock {
            moving: kernels[at].1,
            ..block
        })
        .collect()
}

/// The statements a block's kernel traces (none for the contact stub of a crowd without
/// planes), counted on the traces' IR.
fn block_statements(closure: &BlockClosure) -> usize {
    let (dual, contact, custom) = closure.statements;
    dual + contact.unwrap_or(0) + custom.unwrap_or(0)
}

/// The blocks of the columns `directions` (`rows` the state rows each is seeded in), none
/// wider than `widest`, in the widths the CPU's cost model picks: each group's apart if
/// `grouped` ([`seeded_blocks`]).
pub(crate) fn gpu_blocks_of(
    directions: &[Option<Direction>],
    rows: &[u16],
    widest: usize,
    grouped: bool,
) -> Vec<SeededBlock> {
    seeded_blocks(directions, rows, &gpu_widths(widest), grouped)
}

/// The blocks of `blocks` whose columns a step of the tangent kernel of `spec` (with the
/// custom force `custom_force`) in `precision` can change, each with the statements its
/// dual functions trace and its `moving` closed over them. The others' columns stay as they
/// start (the position's, where no force reads the position or meets a plane), so they are
/// not dispatched. The last that runs writes the states: if none would, the last runs.
fn running(
    blocks: Vec<SeededBlock>,
    (precision, spec, custom_force): (Precision, &KernelSpec, Option<&CustomForce>),
) -> Vec<(SeededBlock, usize)> {
    let physics = kernel_physics(spec, custom_force);
    let traced: Vec<(SeededBlock, usize, bool)> = blocks
        .into_iter()
        .map(|block| {
            let closure = close_block(precision, &physics, (block.width, block.moving));
            let statements = block_statements(&closure);
            let block = SeededBlock {
                moving: closure.closed.moving,
                ..block
            };
            (block, statements, closure.closed.changes_columns)
        })
        .collect();
    let last = traced
        .last()
        .map(|(block, statements, _)| (block.clone(), *statements));
    let mut running: Vec<(SeededBlock, usize)> = traced
        .into_iter()
        .filter(|(_, _, changes)| *changes)
        .map(|(block, statements, _)| (block, statements))
        .collect();
    if running.is_empty() {
        running.extend(last);
    }
    running
}

/// The entry point of the tangent kernel: the plain kernel's.
pub(crate) const ENTRY_POINT: &str = "integrate";

/// The tangent kernel's source in `precision` for blocks of `width` directions (one of
/// [`GPU_WIDTHS`]): the plain kernel of `spec` over duals of that width, with the block's
/// bindings and hooks (tangent_block.wgsl, [`block_storage_wgsl`]). A crowd's custom force
/// comes in as its law traced over duals; one that is not a law has no case (the host
/// refuses it). Its f32 divisions and square roots are taken in f64 if `divisions_in_f64`
/// (`GpuOptions::f32_divisions_in_f64`); the inputs its block does not move are read as
/// fixed (`moving`).
pub(crate) fn tangent_source(
    (precision, divisions_in_f64): (Precision, bool),
    spec: &KernelSpec,
    (width, moving): (usize, MovingNumbers),
    custom_force: Option<&CustomForce>,
) -> String {
    let tracer = Tracer {
        f32_divisions_in_f64: divisions_in_f64,
    };
    // The block's reads and writes of its tangents, for what its closure moves.
    let hooks =
        |moving: &MovingNumbers| [TANGENT_BLOCK, &block_storage_wgsl(width, moving)].join("\n");
    let block = ((width, moving), hooks);
    let custom_law = custom_force.filter(|custom| custom.is_law());
    integrate_source((tracer, precision), spec, block, custom_law).0
}

/// `read_block_tangents`, `write_block_tangents` and `read_block_constant_seeds`: the
/// derivatives of the state rows and of the mass constants that a block of `width` whose
/// closed moving numbers are `moving` can move, read from and written to storage once a
/// dispatch; the others stay zero. lavapipe loads and stores a storage number lane by lane,
/// so reading all 13 + 8 rows cost its Jacobian a third of its instructions. A block of a
/// known count of directions reads those; one of any count (`MovingNumbers::ALL`) reads
/// the columns `block.width` says. The buffers are number-major across the piece's bodies
/// (`GpuTangents`' layout): number `r` of column `c` of body `i` is at
/// `(r * block.columns + c) * block.body_count + i`, so neighbouring invocations read
/// neighbouring words and a block touches only its own columns' words.
fn block_storage_wgsl(width: usize, moving: &MovingNumbers) -> String {
    let known = moving.directions() <= width;
    // One statement for each number of `structure` (of `numbers`) that moves along a column.
    let each = |structure, numbers, access: &dyn Fn(String, usize, usize) -> String| {
        let mut out = String::new();
        for r in 0..numbers {
            for j in (0..width).filter(|&j| moving.moves(structure, r, j)) {
                let statement = access(format!("{r}u * DUAL_STRIDE + {}u", 1 + j), r, j);
                out += &match known {
                    true => format!("    {statement}\n"),
                    false => format!("    if {j}u < block.width {{ {statement} }}\n"),
                };
            }
        }
        out
    };
    let reads = each(Structure::Motion, MOTION_NUMBERS, &|place, r, j| {
        format!("s[{place}] = tangents[first + {r}u * row + {j}u * n];")
    });
    let writes = each(Structure::Motion, MOTION_NUMBERS, &|place, r, j| {
        format!("tangents[first + {r}u * row + {j}u * n] = s[{place}];")
    });
    let seeds = each(Structure::Constants, CONSTANT_NUMBERS, &|place, r, j| {
        format!("c[{place}] = constant_seeds[first + {r}u * row + {j}u * n];")
    });
    // `first`: the block's first column's first number of the body; `row`, `n`: the
    // strides of a row and of a column.
    let strides = "    let first = block_first(index);\n    let n = block.body_count;\n    let row = block.columns * n;\n";
    format!(
        "/// The block's derivatives of the state rows it can move, from the body's `first`.\n\
         fn read_block_tangents(index: u32) -> DualMotion {{\n{strides}    var s: DualMotion;\n\
         {reads}    return s;\n}}\n\n\
         /// The block's derivatives of the state rows it can move, to the body's `first`.\n\
         fn write_block_tangents(index: u32, s: DualMotion) {{\n{strides}{writes}}}\n\n\
         /// The block's derivatives of the mass constants it moves, from the body's `first`.\n\
         fn read_block_constant_seeds(index: u32) -> DualConstants {{\n{strides}    \
         var c: DualConstants;\n{seeds}    return c;\n}}\n\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::gpu::device::exact_spirv::{self, Checks};

    /// The widths of the blocks that carry `k` directions, none wider than `widest`.
    fn gpu_blocks(k: usize, widest: usize) -> Vec<usize> {
        crate::body_steps::tangents::block_widths_among(k, &gpu_widths(widest))
    }

    /// Every width compiles in both precisions to SPIR-V with exact arithmetic, from the
    /// general kernel's source (every integrator and force kind).
    #[test]
    fn every_width_compiles_in_both_precisions() {
        for precision in [Precision::F32, Precision::F64] {
            for width in GPU_WIDTHS {
                let source = tangent_source(
                    (precision, false),
                    &KernelSpec::general(),
                    (width, MovingNumbers::ALL),
                    None,
                );
                let compiled = exact_spirv::compile(
                    &source,
                    ENTRY_POINT,
                    &[("workgroup_size", 64.0)],
                    Checks::Bounded,
                );
                assert!(
                    compiled.is_ok(),
                    "{precision:?} width {width}: {compiled:?}"
                );
            }
        }
    }

    /// Under `f32_divisions_in_f64` every division and square root of the f32 tangent kernel,
    /// on values and on derivatives, is taken in f64, and the kernel still compiles.
    #[test]
    fn f32_tangent_kernels_divide_in_f64_when_asked() {
        for width in GPU_WIDTHS {
            let source = tangent_source(
                (Precision::F32, true),
                &KernelSpec::general(),
                (width, MovingNumbers::ALL),
                None,
            );
            let divisions: Vec<&str> = source
                .lines()
                .filter(|l| l.trim_start().starts_with("let "))
                .filter(|l| l.contains(" / ") || l.contains("sqrt("))
                .collect();
            assert!(divisions.len() > 100, "width {width}: {}", divisions.len());
            for line in &divisions {
                let widened = line.contains("f32(f64(") || line.contains("f32(sqrt(f64(");
                assert!(widened, "width {width}: {line}");
            }
            let compiled = exact_spirv::compile(
                &source,
                ENTRY_POINT,
                &[("workgroup_size", 64.0)],
                Checks::Bounded,
            );
            assert!(compiled.is_ok(), "width {width}: {compiled:?}");
        }
    }

    /// What each block of the Jacobian's columns moves, closed over a step by tracing it:
    /// under gravity and drag the position's columns move the position alone, the linear
    /// momentum's the position and the linear momentum, the orientation's and the angular
    /// momentum's those two alone (drag's torque reads the angular velocity, not the
    /// velocity); a spring, which reads the position and turns the body, couples them all.
    /// On a floor the blocks of consecutive columns are chosen.
    #[test]
    fn blocks_move_what_the_physics_couples() {
        use crate::verify::test_crowds::{gravity_drag, with_spring};
        let drag = gravity_drag(8);
        let spring = with_spring(drag.clone());
        let rows = |range: std::ops::Range<usize>| range.fold(0u16, |b, r| b | 1 << r);
        let (x, q, p, l) = (rows(0..3), rows(3..7), rows(7..10), rows(10..13));
        let blocks = |crowd: &Crowd, widest| {
            let plan =
                TangentPlan::parse(&["state"], &crowd.forces, &[], &crowd.keyframes, "t").unwrap();
            let table = crate::assembly::force_table::ForceTable::new(crowd, crowd.bodies.len());
            let spec = KernelSpec::for_crowd(crowd, &table, true, 8).for_shapes_of(&crowd.bodies);
            let blocks = gpu_blocks_of(
                &crowd_directions(&plan, crowd),
                &plan.seeded_rows(),
                widest,
                true,
            );
            let physics = kernel_physics(&spec, None);
            let closed: Vec<_> = (blocks.iter())
                .map(|block| {
                    let block = (block.width, block.moving);
                    close_block(Precision::F32, &physics, block).closed
                })
                .collect();
            let chosen = crowd_blocks(&plan, crowd, widest, (Precision::F32, &spec, None));
            (blocks, closed, chosen)
        };
        let moved = |crowd: &Crowd, widest| -> Vec<u16> {
            let (_, closed, _) = blocks(crowd, widest);
            closed
                .iter()
                .map(|c| c.moving.of(Structure::Motion))
                .collect()
        };
        assert_eq!(moved(&drag, 4), [x, q | l, x | p, q | l]);
        assert_eq!(moved(&spring, 4), [rows(0..13); 4]);
        // In blocks of one direction, drag (diagonal) keeps each axis of the translation
        // apart.
        let ones = moved(&drag, 1);
        assert_eq!(ones.len(), 13);
        assert_eq!(ones[..3], [1, 2, 4]);
        assert_eq!(ones[7..10], [1 | 1 << 7, 2 | 1 << 8, 4 | 1 << 9]);
        assert!(ones[3..7].iter().chain(&ones[10..]).all(|&m| m == q | l));
        // A step leaves the position's columns as they are under drag: their blocks are
        // not dispatched. A spring changes them.
        for widest in [4, 1] {
            let (all, closed, running) = blocks(&drag, widest);
            let position = |b: &SeededBlock| b.columns.end <= 3;
            for (block, closed) in all.iter().zip(&closed) {
                assert_eq!(closed.changes_columns, !position(block), "{block:?}");
            }
            assert_eq!(running.len(), all.iter().filter(|b| !position(b)).count());
            let columns = |b: Option<&SeededBlock>| b.map(|b| b.columns.clone());
            assert_eq!(columns(running.last()), columns(all.last()));
            // Each running block is compiled for its closure.
            for block in &running {
                let at = all.iter().position(|b| b.columns == block.columns).unwrap();
                assert_eq!(block.moving, closed[at].moving);
            }
        }
        // Where a floor couples every group (its contacts carry every lane through their
        // branches), the consecutive columns fill their blocks better: 4, 4, 4 and 1
        // rather than a block of 4 for each group.
        let floor = drag.with_plane(crate::model::plane::Plane::ground(0.5, 0.3));
        let (_, _, chosen) = blocks(&floor, 4);
        let widths: Vec<usize> = chosen.iter().map(|b| b.columns.len()).collect();
        assert_eq!(widths, [4, 4, 4, 1]);
        // Their closures agree: the three blocks of 4 share one kernel.
        assert!(chosen[..3].iter().all(|b| b.moving == chosen[0].moving));
    }

    /// Blocks along numbers that each move the state too (a spring's stiffness and damping,
    /// the mass) share a kernel whose closure holds each one's and traces at most
    /// `SHARED_KERNEL_GROWTH` times its statements; blocks whose closures part (the state's
    /// groups under drag) keep their own.
    #[test]
    fn blocks_with_close_closures_share_a_kernel() {
        use crate::verify::test_crowds::gravity_drag;
        let kernels = |crowd: &Crowd, names: &[&str]| {
            let plan =
                TangentPlan::parse(names, &crowd.forces, &[], &crowd.keyframes, "t").unwrap();
            let table = crate::assembly::force_table::ForceTable::new(crowd, crowd.bodies.len());
            let spec = KernelSpec::for_crowd(crowd, &table, true, 8).for_shapes_of(&crowd.bodies);
            let (directions, rows) = (crowd_directions(&plan, crowd), plan.seeded_rows());
            // The layout `crowd_blocks` picks: the one whose blocks trace fewer statements.
            let own = [true, false]
                .map(|grouped| {
                    let blocks = gpu_blocks_of(&directions, &rows, 4, grouped);
                    running(blocks, (Precision::F32, &spec, None))
                })
                .into_iter()
                .min_by_key(|blocks| blocks.iter().map(|(_, n)| n).sum::<usize>())
                .unwrap();
            let shared = share_kernels(own.clone(), (Precision::F32, &spec, None));
            let physics = kernel_physics(&spec, None);
            let statements = |block: &SeededBlock| {
                block_statements(&close_block(
                    Precision::F32,
                    &physics,
                    (block.width, block.moving),
                ))
            };
            for ((block, own_statements), kernel) in own.iter().zip(&shared) {
                assert_eq!(
                    (block.width, &block.columns),
                    (kernel.width, &kernel.columns)
                );
                assert_eq!(
                    block.moving.union(&kernel.moving),
                    kernel.moving,
                    "{block:?}"
                );
                let grown = statements(kernel) as f64 / *own_statements as f64;
                assert!(grown <= SHARED_KERNEL_GROWTH, "{block:?}: {grown}");
            }
            let distinct = |kernels: Vec<(usize, MovingNumbers)>| {
                let mut seen = Vec::new();
                for kernel in kernels {
                    if !seen.contains(&kernel) {
                        seen.push(kernel);
                    }
                }
                seen.len()
            };
            (
                distinct(own.iter().map(|(b, _)| (b.width, b.moving)).collect()),
                distinct(shared.iter().map(|b| (b.width, b.moving)).collect()),
            )
        };
        // The cross-check crowd (its custom force left out) along the state, the mass, the
        // inertia and every number of the first force of each kind: four closures, three
        // kernels.
        let mut every_kind =
            crate::cross_check_crowd(45, 11, crate::model::integrator::Integrator::Rk4, 1e-2)
                .unwrap();
        every_kind
            .forces
            .retain(|f| f.kind != crate::ForceKind::Custom);
        every_kind.custom_force = None;
        let mut names = vec!["state".to_string(), "mass".into(), "inertia".into()];
        let mut kinds = Vec::new();
        for (i, force) in every_kind.forces.iter().enumerate() {
            let kind = (force.type_name(), force.body.is_some());
            if kinds.contains(&kind) {
                continue;
            }
            kinds.push(kind);
            for field in crate::Tangent::force_numbers(force, &every_kind.keyframes) {
                names.push(format!("forces[{i}].{field}"));
            }
        }
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let (own, shared) = kernels(&every_kind, &names);
        println!("{} names: {own} closures, {shared} kernels", names.len());
        assert!(shared < own, "{own} closures, {shared} kernels");
        // The state under drag: its groups' blocks move apart, each kernel its own.
        let (own, shared) = kernels(&gravity_drag(8), &["state"]);
        assert_eq!(shared, own);
        assert!(own > 1, "{own}");
    }

    /// A block reads and writes the derivatives of the rows it can move and of those
    /// columns alone: the linear momentum's 3 columns under drag, the position's and the
    /// momentum's rows (18 numbers), no mass constant, no test of the width. A kernel for
    /// any block reads every row and constant, each column behind `block.width`.
    #[test]
    fn blocks_read_and_write_only_what_they_can_move() {
        let rows = |range: std::ops::Range<usize>| range.fold(0u16, |b, r| b | 1 << r);
        let momentum = MovingNumbers::none(3).and(Structure::Motion, rows(0..3) | rows(7..10));
        let source = block_storage_wgsl(4, &momentum);
        let count = |s: &str, pattern: &str| s.matches(pattern).count();
        assert_eq!(count(&source, "= tangents[first"), 18);
        assert_eq!(
            count(
                &source,
                "tangents[first + 7u * row + 2u * n] = s[7u * DUAL_STRIDE + 3u]"
            ),
            1
        );
        assert_eq!(count(&source, "] = tangents[first + 3u"), 0);
        assert_eq!(count(&source, "constant_seeds["), 0);
        assert_eq!(count(&source, "block.width"), 0);
        let any = block_storage_wgsl(4, &MovingNumbers::ALL);
        assert_eq!(count(&any, "= tangents[first"), 13 * 4);
        assert_eq!(count(&any, "= constant_seeds[first"), 8 * 4);
        assert_eq!(count(&any, "if 3u < block.width"), (13 + 13 + 8));
    }

    /// The Jacobian's 13 directions go in blocks of 4 and a 1 by default, in 13 blocks of 1
    /// when no block may be wider; every direction is carried once either way.
    #[test]
    fn blocks_are_no_wider_than_asked() {
        let fours = gpu_blocks(13, 4);
        assert!(fours.contains(&4) && fours.iter().all(|w| GPU_WIDTHS.contains(w)));
        assert!(fours.iter().sum::<usize>() >= 13 && fours.len() < 13);
        assert_eq!(gpu_blocks(13, 1), vec![1; 13]);
        assert_eq!(gpu_blocks(1, 4), vec![1]);
    }
}
