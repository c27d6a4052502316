//! Operations per body-step of an integration kernel, counted in its own generated source
//! (naga's IR, the form every backend compiles from): what `rigid-crowd bench` prints beside
//! the hand-counted FLOP, for every workload, so a change that makes a crowd's kernel longer
//! shows as a number before any timing.
//!
//! The count follows the longest path: a call counts its callee's operations, a loop as many
//! iterations as it runs where the code says how many (`for (var i = 0u; i < 8u; i++)`, as
//! the tracer prints a loop over a contact's points) and one otherwise (the step loop of
//! `integrate`, in the plain kernel and in each block of a body's tangent directions, is
//! the per-step part: one of its iterations), an `if` its longer branch,
//! except where the condition is a constant the driver folds (`KERNEL_CONTACTS`,
//! `KERNEL_ENVELOPE` false), whose dead branch counts nothing. An operation is one IR
//! expression or store: arithmetic (binary, unary, built-in math, select, comparisons,
//! conversions) or memory (loads, stores, atomics, `arrayLength`); a vector operation counts
//! once, addressing, swizzles and constructors not at all. It is a static measure of the
//! generated code, not of any driver's machine code.

use std::collections::HashMap;

use serde::Serialize;
use wgpu::naga;

/// Operations of one kind and another.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OpTally {
    /// Binary, unary, built-in math, select, relational and conversion expressions.
    pub arithmetic: u64,
    /// Loads, stores, atomics and `arrayLength`.
    pub memory: u64,
}

impl OpTally {
    /// Every operation.
    pub fn total(self) -> u64 {
        self.arithmetic + self.memory
    }

    fn add(self, other: Self) -> Self {
        Self {
            arithmetic: self.arithmetic + other.arithmetic,
            memory: self.memory + other.memory,
        }
    }

    fn times(self, count: u64) -> Self {
        Self {
            arithmetic: self.arithmetic * count,
            memory: self.memory * count,
        }
    }

    fn longer(self, other: Self) -> Self {
        if other.total() > self.total() {
            other
        } else {
            self
        }
    }
}

/// The operations of `integrate`: those of each step of its fused loop, and those around it
/// (once per dispatch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KernelOps {
    /// One iteration of the step loop.
    pub per_step: OpTally,
    /// Everything outside it: the state read and written, the early returns.
    pub per_dispatch: OpTally,
}

impl KernelOps {
    /// Operations per body-step when `steps_per_dispatch` steps are fused.
    pub fn per_body_step(&self, steps_per_dispatch: u32) -> f64 {
        self.per_step.total() as f64
            + self.per_dispatch.total() as f64 / steps_per_dispatch.max(1) as f64
    }
}

/// The operations of the kernel `options` build for `crowd` (specialized to it or general,
/// in `options`' precision), as [`count_integrate`] counts them.
pub(crate) fn crowd_kernel_ops(
    crowd: &crate::assembly::crowd::Crowd,
    options: &crate::backends::gpu::GpuOptions,
) -> Result<KernelOps, String> {
    let spec = crowd_spec(crowd, options);
    let custom = crowd.custom_force.as_ref();
    let (source, _) = crate::backends::gpu::kernel::shader::kernel_source(options, &spec, custom);
    count_integrate(&source)
}

/// The kernel spec `options` build for the whole of `crowd`, as a simulation of it does.
fn crowd_spec(
    crowd: &crate::assembly::crowd::Crowd,
    options: &crate::backends::gpu::GpuOptions,
) -> crate::backends::gpu::kernel::kernel_spec::KernelSpec {
    let table = crate::assembly::force_table::ForceTable::new(crowd, crowd.bodies.len());
    crate::backends::gpu::kernel::kernel_spec::KernelSpec::for_crowd(
        crowd,
        &table,
        options.specialized,
        options.steps_per_dispatch,
    )
}

/// The operations per body-step of the tangent kernels that carry the directions of `plan`
/// for the crowd's bodies in blocks no wider than `widest` (as `GpuTangents` compiles them),
/// summed over the blocks, each counted as [`count_integrate`] counts the plain kernel.
pub(crate) fn crowd_tangent_ops(
    crowd: &crate::assembly::crowd::Crowd,
    options: &crate::backends::gpu::GpuOptions,
    (plan, widest): (&crate::model::tangent::TangentPlan, usize),
) -> Result<f64, String> {
    use crate::backends::gpu::kernel::tangent_kernel::{ENTRY_POINT, crowd_blocks, tangent_source};
    let spec = crowd_spec(crowd, options).for_shapes_of(&crowd.bodies);
    let custom = crowd.custom_force.as_ref();
    crowd_blocks(plan, crowd, widest, (options.precision, &spec, custom))
        .into_iter()
        .map(|block| {
            let arithmetic = (options.precision, options.divides_in_f64());
            let source = tangent_source(arithmetic, &spec, (block.width, block.moving), custom);
            let ops = count_entry(&source, ENTRY_POINT)?;
            Ok(ops.per_body_step(options.steps_per_dispatch))
        })
        .sum()
}

/// Counts the `integrate` entry point of the kernel `source`. Errors if it does not parse
/// or has no such entry point or step loop.
pub(crate) fn count_integrate(source: &str) -> Result<KernelOps, String> {
    count_entry(source, "integrate")
}

/// Counts the entry point `entry` of `source`, whose step loop is its longest loop at the
/// top level (the tangent kernel's loops over the rows come before it).
fn count_entry(source: &str, entry: &str) -> Result<KernelOps, String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    let entry_point = module
        .entry_points
        .iter()
        .find(|e| e.name == entry)
        .ok_or(format!("the kernel has no `{entry}` entry point"))?;
    let mut counter = Counter {
        module: &module,
        functions: HashMap::new(),
    };
    let function = &entry_point.function;
    let (per_step, trips) = top_level_loops(&function.body)
        .into_iter()
        .map(|(before, body, continuing)| {
            let mut known = HashMap::new();
            let once = counter
                .block(function, body, &mut known)
                .add(counter.block(function, continuing, &mut known));
            (
                once,
                trip_count(function, before, body, continuing).unwrap_or(1),
            )
        })
        .max_by_key(|(tally, _)| tally.total())
        .ok_or(format!("`{entry}` has no step loop"))?;
    // The whole function counts the step loop as often as it runs where its bound is written.
    let whole = counter.block(function, &function.body, &mut HashMap::new());
    Ok(KernelOps {
        per_step,
        per_dispatch: OpTally {
            arithmetic: whole.arithmetic - trips * per_step.arithmetic,
            memory: whole.memory - trips * per_step.memory,
        },
    })
}

/// The loops at the top level of `block` (or in plain blocks there): each one's statement
/// before it (other than an `Emit`), body and continuing blocks.
type TopLoop<'b> = (
    Option<&'b naga::Statement>,
    &'b naga::Block,
    &'b naga::Block,
);

fn top_level_loops(block: &naga::Block) -> Vec<TopLoop<'_>> {
    let mut before = None;
    let mut loops = Vec::new();
    for statement in block.iter() {
        match statement {
            naga::Statement::Loop {
                body, continuing, ..
            } => loops.push((before, body, continuing)),
            naga::Statement::Block(inner) => loops.extend(top_level_loops(inner)),
            _ => {}
        }
        if !matches!(statement, naga::Statement::Emit(_)) {
            before = Some(statement);
        }
    }
    loops
}

/// The local variables known to hold a constant `bool` at a point of a function: how naga
/// lowers `a && b` (a variable set in an `if a`, then tested).
type Known = HashMap<naga::Handle<naga::LocalVariable>, bool>;

struct Counter<'m> {
    module: &'m naga::Module,
    /// Each function's count, once counted.
    functions: HashMap<naga::Handle<naga::Function>, OpTally>,
}

impl Counter<'_> {
    fn function(&mut self, handle: naga::Handle<naga::Function>) -> OpTally {
        if let Some(&tally) = self.functions.get(&handle) {
            return tally;
        }
        let function = &self.module.functions[handle];
        let tally = self.block(function, &function.body, &mut Known::new());
        self.functions.insert(handle, tally);
        tally
    }

    fn block(
        &mut self,
        function: &naga::Function,
        block: &naga::Block,
        known: &mut Known,
    ) -> OpTally {
        use naga::Statement as S;
        let mut tally = OpTally::default();
        let mut before = None;
        for statement in block.iter() {
            let more = match statement {
                S::Emit(range) => range
                    .clone()
                    .map(|h| expression_ops(&function.expressions[h]))
                    .fold(OpTally::default(), OpTally::add),
                S::Block(inner) => self.block(function, inner, known),
                S::If {
                    condition,
                    accept,
                    reject,
                } => match self.bool_of(&function.expressions, *condition, known) {
                    Some(true) => self.block(function, accept, known),
                    Some(false) => self.block(function, reject, known),
                    None => {
                        let accept = self.block(function, accept, &mut known.clone());
                        let reject = self.block(function, reject, &mut known.clone());
                        known.clear();
                        accept.longer(reject)
                    }
                },
                S::Switch { cases, .. } => {
                    let longest = cases
                        .iter()
                        .map(|case| self.block(function, &case.body, &mut known.clone()))
                        .fold(OpTally::default(), OpTally::longer);
                    known.clear();
                    longest
                }
                S::Loop {
                    body, continuing, ..
                } => {
                    known.clear();
                    let once = self
                        .block(function, body, known)
                        .add(self.block(function, continuing, known));
                    known.clear();
                    once.times(trip_count(function, before, body, continuing).unwrap_or(1))
                }
                S::Call {
                    function: callee, ..
                } => self.function(*callee),
                S::Store { pointer, value } => {
                    let arena = &function.expressions;
                    if let naga::Expression::LocalVariable(variable) = arena[*pointer] {
                        match self.bool_of(arena, *value, known) {
                            Some(b) => known.insert(variable, b),
                            None => known.remove(&variable),
                        };
                    }
                    OpTally {
                        arithmetic: 0,
                        memory: 1,
                    }
                }
                S::Atomic { .. } | S::ImageStore { .. } => OpTally {
                    arithmetic: 0,
                    memory: 1,
                },
                _ => OpTally::default(),
            };
            tally = tally.add(more);
            if !matches!(statement, S::Emit(_)) {
                before = Some(statement);
            }
        }
        tally
    }

    /// The value of `handle` where the driver knows it: a `const` or literal `bool`, a local
    /// variable last set to one (`known`), its negation, or an `&&` / `||` that one constant
    /// side decides.
    fn bool_of(
        &self,
        arena: &naga::Arena<naga::Expression>,
        handle: naga::Handle<naga::Expression>,
        known: &Known,
    ) -> Option<bool> {
        use naga::{BinaryOperator as B, Expression as E};
        match &arena[handle] {
            E::Literal(naga::Literal::Bool(value)) => Some(*value),
            E::Constant(constant) => {
                let init = self.module.constants[*constant].init;
                self.bool_of(&self.module.global_expressions, init, &Known::new())
            }
            E::Load { pointer } => match arena[*pointer] {
                E::LocalVariable(variable) => known.get(&variable).copied(),
                _ => None,
            },
            E::Unary {
                op: naga::UnaryOperator::LogicalNot,
                expr,
            } => self.bool_of(arena, *expr, known).map(|b| !b),
            E::Binary { op, left, right } => {
                let (l, r) = (
                    self.bool_of(arena, *left, known),
                    self.bool_of(arena, *right, known),
                );
                match op {
                    B::LogicalAnd if l == Some(false) || r == Some(false) => Some(false),
                    B::LogicalAnd => l.zip(r).map(|(l, r)| l && r),
                    B::LogicalOr if l == Some(true) || r == Some(true) => Some(true),
                    B::LogicalOr => l.zip(r).map(|(l, r)| l || r),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// How many times the loop with `body` and `continuing` runs, where naga lowered it from
/// `for (var i = 0u; i < N; i++)` with a literal `N`: its body opens with `if i < N {} else
/// { break; }` on a local whose first value is 0, and its continuing block adds 1 to that
/// local (`before`, the statement before the loop, may be where it is set to 0). `None` for
/// any other loop (the step loop's bound is a uniform).
fn trip_count(
    function: &naga::Function,
    before: Option<&naga::Statement>,
    body: &naga::Block,
    continuing: &naga::Block,
) -> Option<u64> {
    use naga::{BinaryOperator as B, Expression as E, Statement as S};
    let arena = &function.expressions;
    let literal = |handle: naga::Handle<naga::Expression>| match arena[handle] {
        E::Literal(naga::Literal::U32(value)) => Some(u64::from(value)),
        E::Literal(naga::Literal::I32(value)) => u64::try_from(value).ok(),
        _ => None,
    };
    let local = |handle: naga::Handle<naga::Expression>| match arena[handle] {
        E::LocalVariable(variable) => Some(variable),
        _ => None,
    };
    let loaded = |handle: naga::Handle<naga::Expression>| match arena[handle] {
        E::Load { pointer } => local(pointer),
        _ => None,
    };
    let exit = body.iter().find(|s| !matches!(s, S::Emit(_)))?;
    let S::If {
        condition,
        accept,
        reject,
    } = exit
    else {
        return None;
    };
    let breaks = matches!(reject.iter().collect::<Vec<_>>()[..], [S::Break]);
    let E::Binary {
        op: B::Less,
        left,
        right,
    } = arena[*condition]
    else {
        return None;
    };
    let counter = loaded(left)?;
    let bound = literal(right)?;
    let starts_at_zero = match before {
        Some(&S::Store { pointer, value }) if local(pointer) == Some(counter) => {
            literal(value) == Some(0)
        }
        _ => function.local_variables[counter].init.and_then(literal) == Some(0),
    };
    let adds_one = continuing.iter().any(|statement| match *statement {
        S::Store { pointer, value } => {
            local(pointer) == Some(counter)
                && matches!(arena[value], E::Binary { op: B::Add, left, right }
                    if loaded(left) == Some(counter) && literal(right) == Some(1))
        }
        _ => false,
    });
    (accept.is_empty() && breaks && starts_at_zero && adds_one).then_some(bound)
}

/// What evaluating `expression` costs.
fn expression_ops(expression: &naga::Expression) -> OpTally {
    use naga::Expression as E;
    match expression {
        E::Binary { .. }
        | E::Unary { .. }
        | E::Math { .. }
        | E::Select { .. }
        | E::Relational { .. }
        | E::As { .. } => OpTally {
            arithmetic: 1,
            memory: 0,
        },
        E::Load { .. } | E::ArrayLength(_) => OpTally {
            arithmetic: 0,
            memory: 1,
        },
        _ => OpTally::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KERNEL: &str = "
const FOLDED: bool = false;
@group(0) @binding(0) var<storage, read_write> data: array<f32>;
fn twice(x: f32) -> f32 { return x * 2.0 + 1.0; }
@compute @workgroup_size(1)
fn integrate(@builtin(global_invocation_id) id: vec3<u32>) {
    var s = data[id.x];
    for (var k = 0u; k < 4u; k++) {
        s = twice(s) * s;
        if FOLDED && s > 0.0 {
            s = sqrt(s) + sqrt(s) + sqrt(s) + sqrt(s);
        }
        if s > 3.0 {
            s = s - 1.0;
        }
    }
    data[id.x] = s;
}
";

    #[test]
    fn the_step_loop_counts_once_calls_count_their_callee_and_folded_branches_nothing() {
        let ops = count_integrate(KERNEL).unwrap();
        // Per step: `k < 4`, twice's `* 2.0` and `+ 1.0`, `* s`, `s > 3.0`, `s - 1.0`, `k + 1`;
        // nothing of the folded `if` (naga lowers its `&&` to a variable set in an `if`).
        assert_eq!(ops.per_step.arithmetic, 7, "{ops:?}");
        // The loads and stores of the locals `s` and `k`.
        assert_eq!(ops.per_step.memory, 11, "{ops:?}");
        // Around the loop: the storage read and write and the locals' first stores.
        assert_eq!(
            ops.per_dispatch,
            OpTally {
                arithmetic: 0,
                memory: 4
            }
        );
        assert_eq!(ops.per_body_step(4), 18.0 + 4.0 / 4.0);
        let unfolded = KERNEL.replace("const FOLDED: bool = false;", "const FOLDED: bool = true;");
        let more = count_integrate(&unfolded).unwrap();
        assert_eq!(
            more.per_step.arithmetic,
            ops.per_step.arithmetic + 8,
            "`s > 0.0`, four sqrt and three sums: {more:?}"
        );
    }

    /// A step loop whose bound is a uniform, holding a loop of a written bound (as the tracer
    /// prints a contact's points): the inner loop counts as often as it runs.
    #[test]
    fn a_loop_of_a_written_bound_counts_each_of_its_iterations() {
        let kernel = |bound: u32| {
            format!(
                "
@group(0) @binding(0) var<storage, read_write> data: array<f32>;
@group(0) @binding(1) var<uniform> steps: u32;
@compute @workgroup_size(1)
fn integrate(@builtin(global_invocation_id) id: vec3<u32>) {{
    var s = data[id.x];
    for (var k = 0u; k < steps; k++) {{
        for (var j = 0u; j < {bound}u; j++) {{
            s = s * 1.5;
        }}
        s = s + 1.0;
    }}
    data[id.x] = s;
}}
"
            )
        };
        let (three, six) = (
            count_integrate(&kernel(3)).unwrap(),
            count_integrate(&kernel(6)).unwrap(),
        );
        // One inner iteration: `j < N`, `s * 1.5` and `j + 1`; loads of `j` (twice) and `s`,
        // stores of `s` and `j`.
        assert_eq!(
            six.per_step.arithmetic - three.per_step.arithmetic,
            3 * 3,
            "{three:?} {six:?}"
        );
        assert_eq!(six.per_step.memory - three.per_step.memory, 3 * 5);
        assert_eq!(
            three.per_step.arithmetic,
            3 * 3 + 3,
            "and `k < steps`, `s + 1.0`, `k + 1`"
        );
        assert_eq!(six.per_dispatch, three.per_dispatch);
    }
}

#[cfg(test)]
mod kernel_tests {
    use super::*;
    use crate::backends::gpu::kernel::kernel_spec::KernelSpec;
    use crate::backends::gpu::{GpuOptions, Precision};
    use crate::model::integrator::Integrator;
    use crate::verify::test_crowds::gravity_drag;

    /// On the real kernels: a crowd using every force kind (with keyframes and a custom force)
    /// runs a longer kernel than gravity and drag, the general kernel a longer one than
    /// both, and fusing steps spreads the state's read and write over them.
    #[test]
    fn kernels_count_longer_with_more_force_kinds_and_shorter_fused() {
        let every = crate::cross_check_crowd(420, 3, Integrator::Rk4, 1e-3).unwrap();
        let plain = gravity_drag(420);
        for precision in [Precision::F32, Precision::F64] {
            let options = |fuse, specialized| GpuOptions {
                precision,
                steps_per_dispatch: fuse,
                specialized,
                ..GpuOptions::default()
            };
            let ops = |crowd, fuse, specialized| {
                crowd_kernel_ops(crowd, &options(fuse, specialized))
                    .unwrap()
                    .per_body_step(fuse)
            };
            let (plain_ops, every_ops) = (ops(&plain, 1, true), ops(&every, 1, true));
            let general = ops(&plain, 1, false);
            assert!(
                plain_ops < every_ops && every_ops < general,
                "{precision:?}: gravity-drag {plain_ops}, every force {every_ops}, general {general}"
            );
            assert!(ops(&plain, 8, true) < plain_ops);
            // A step of gravity and drag under RK4 is some hundreds of operations: four
            // derivatives (a quaternion to a matrix, two matrix products, the forces) and
            // the stage sums.
            assert!((200.0..1000.0).contains(&plain_ops), "{plain_ops}");
        }
    }

    /// The tangent kernels of the gravity-drag crowd: the step loop is found after the
    /// loops over the rows, and their operations grow with the directions. Over the plain
    /// kernel (fused 8, f32) one direction (the mass, a block of 1) counts 1.3 times its
    /// operations and the Jacobian's 13 (blocks of 4, one per group of state components,
    /// the position's not dispatched) 11.8 times, in 13 blocks of 1 19.6 times: each block's
    /// kernel computes the values and the derivatives of what its directions move (the mass
    /// and the momentum move no rotation here), and reads each force record's ten numbers
    /// and their seeds (loops of ten, each iteration counted) once a dispatch, as the plain
    /// kernel reads its records (2.7, 16.2 and 33 times when it read a body's own records at
    /// every stage). A
    /// block compiled for the inputs its directions move counts fewer operations than one
    /// compiled for every input, which each is (the general kernel's counts are printed
    /// beside).
    #[test]
    fn tangent_kernels_count_a_floor_over_the_plain_kernel() {
        use crate::backends::gpu::kernel::tangent_kernel::{ENTRY_POINT, tangent_source};
        use crate::physics::dual_wgsl::{MovingNumbers, Structure};
        let crowd = gravity_drag(64);
        let options = GpuOptions {
            precision: Precision::F32,
            steps_per_dispatch: 8,
            ..GpuOptions::default()
        };
        let plain = crowd_kernel_ops(&crowd, &options).unwrap().per_body_step(8);
        let ratio = |name: &str, widest| {
            let plan = crate::model::tangent::TangentPlan::parse(
                &[name],
                &crowd.forces,
                &[],
                &crowd.keyframes,
                "t",
            );
            crowd_tangent_ops(&crowd, &options, (&plan.unwrap(), widest)).unwrap() / plain
        };
        let (one, six, thirteen) = (ratio("mass", 4), ratio("inertia", 4), ratio("state", 4));
        let thirteen_ones = ratio("state", 1);
        let spec = KernelSpec::for_crowd(
            &crowd,
            &crate::assembly::force_table::ForceTable::new(&crowd, crowd.bodies.len()),
            true,
            8,
        )
        .for_shapes_of(&crowd.bodies);
        let block = |width, moving| {
            let source = tangent_source((Precision::F32, false), &spec, (width, moving), None);
            count_entry(&source, ENTRY_POINT).unwrap().per_body_step(8) / plain
        };
        let only_state = MovingNumbers::none(1).and(Structure::Motion, (1 << 13) - 1);
        let (general, state) = (block(1, MovingNumbers::ALL), block(1, only_state));
        println!(
            "tangent ops over plain: 1: {one:.2}, 6: {six:.2}, 13: {thirteen:.2}, \
             13 in blocks of 1: {thirteen_ones:.2}; a block of 1 moving every input \
             {general:.2}, the state only {state:.2}"
        );
        assert!((1.2..1.5).contains(&one), "{one}");
        assert!(six > 4.0 * one && thirteen > six, "{six} {thirteen}");
        assert!((10.5..13.0).contains(&thirteen), "{thirteen}");
        // Thirteen blocks of 1 each redo the step's values, and leave out the derivatives
        // of what their direction does not move: fewer than thirteen blocks moving the
        // whole state.
        assert!(
            thirteen < thirteen_ones && thirteen_ones < 0.85 * 13.0 * state,
            "{thirteen_ones}"
        );
        assert!(
            state < 0.95 * general && one < general,
            "{state} {one} {general}"
        );
    }
}
