//! Operations per body-step of an integration kernel, read off the IR its physics is traced
//! into (`physics::dual_wgsl::physics_sizes`, nothing printed): what `rigid-crowd bench`
//! prints beside the hand-counted FLOP, for every workload, so a change that makes a crowd's
//! kernel longer shows as a number before any timing.
//!
//! A step of a body is its integrator's step (the stage sums), each derivative it takes
//! (the auxiliaries, each of the body's force records, the state derivative), the
//! renormalization and, where the crowd has planes, the step's acceleration and one contact
//! per plane; as the kernel's plumbing calls the traced functions. The arithmetic is each
//! function's along its longest path ([`TraceSize`]); where the kernel holds several
//! integrators, the longest step. The memory is what the layout says a body moves: its state
//! (with the block's derivatives) read and written, its constants and its records' numbers
//! read, once a dispatch, and each plane's numbers read each step. Not counted: the
//! plumbing's own code (the fault checks, the clock, the record loops, the keyframe search)
//! and a custom force written in WGSL, which no trace records. It is a static measure of the
//! physics the kernel runs, not of any driver's machine code.

use serde::Serialize;

use crate::assembly::crowd::Crowd;
use crate::assembly::force_table::ForceTable;
use crate::backends::gpu::GpuOptions;
use crate::backends::gpu::kernel::kernel_spec::KernelSpec;
use crate::backends::gpu::kernel::shader::kernel_physics;
use crate::model::force::ForceType;
use crate::model::precision::Precision;
use crate::model::tangent::PLANE_NUMBERS;
use crate::physics::custom_force::CustomForce;
use crate::physics::dual_wgsl::{
    CONSTANT_NUMBERS, MOTION_NUMBERS, MovingNumbers, PARAMETER_NUMBERS, TracedFunction,
    physics_sizes,
};
use crate::physics::trace::TraceSize;

/// Operations of one kind and another.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct OpTally {
    /// The traced physics' arithmetic.
    pub arithmetic: f64,
    /// Numbers read or written in storage.
    pub memory: f64,
}

impl OpTally {
    /// Every operation.
    pub fn total(self) -> f64 {
        self.arithmetic + self.memory
    }
}

/// The operations of a body's dispatch: those of each of its fused steps and those around
/// them (once per dispatch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct KernelOps {
    /// One step.
    pub per_step: OpTally,
    /// Once a dispatch: the state read and written, the constants and records read, the
    /// principal axes found.
    pub per_dispatch: OpTally,
}

impl KernelOps {
    /// Operations per body-step when `steps_per_dispatch` steps are fused.
    pub fn per_body_step(&self, steps_per_dispatch: u32) -> f64 {
        self.per_step.total() + self.per_dispatch.total() / f64::from(steps_per_dispatch.max(1))
    }
}

/// The operations of the plain kernel `options` build for `crowd` (specialized to it or
/// general, in `options`' precision).
pub(crate) fn crowd_kernel_ops(crowd: &Crowd, options: &GpuOptions) -> KernelOps {
    let (spec, table) = crowd_spec(crowd, options);
    let custom = crowd.custom_force.as_ref();
    let block = (0, MovingNumbers::none(0));
    kernel_ops((options.precision, &spec, custom), (crowd, &table), block)
}

/// The kernel spec `options` build for the whole of `crowd`, as a simulation of it does, and
/// the force table it is built from.
fn crowd_spec(crowd: &Crowd, options: &GpuOptions) -> (KernelSpec, ForceTable) {
    let table = ForceTable::new(crowd, crowd.bodies.len());
    let spec = KernelSpec::for_crowd(
        crowd,
        &table,
        options.specialized,
        options.steps_per_dispatch,
    );
    (spec, table)
}

/// The operations per body-step of the tangent kernels that carry the directions of `plan`
/// for the crowd's bodies in blocks no wider than `widest` (as `GpuTangents` compiles them),
/// summed over the blocks, each counted as the plain kernel is at its width and with what
/// its directions move.
pub(crate) fn crowd_tangent_ops(
    crowd: &Crowd,
    options: &GpuOptions,
    (plan, widest): (&crate::model::tangent::TangentPlan, usize),
) -> f64 {
    use crate::backends::gpu::kernel::tangent_kernel::crowd_blocks;
    let (spec, table) = crowd_spec(crowd, options);
    let spec = spec.for_shapes_of(&crowd.bodies);
    let custom = crowd.custom_force.as_ref();
    crowd_blocks(plan, crowd, widest, (options.precision, &spec, custom))
        .into_iter()
        .map(|block| {
            let kernel = (options.precision, &spec, custom);
            kernel_ops(kernel, (crowd, &table), (block.width, block.moving))
                .per_body_step(options.steps_per_dispatch)
        })
        .sum()
}

/// The operations of a kernel of `spec` over duals of `width` whose block moves `moving`, for
/// a body of `crowd` (whose records `table` holds: each kind counted as often as a body of
/// the crowd has it on average).
pub(crate) fn kernel_ops(
    (precision, spec, custom): (Precision, &KernelSpec, Option<&CustomForce>),
    (crowd, table): (&Crowd, &ForceTable),
    (width, moving): (usize, MovingNumbers),
) -> KernelOps {
    let sizes = physics_sizes(precision, &kernel_physics(spec, custom), (width, moving));
    let size = |function| {
        sizes
            .iter()
            .filter(|(traced, _)| *traced == function)
            .map(|&(_, size)| size)
            .max_by_key(|size: &TraceSize| size.arithmetic)
    };
    let arithmetic = |function| size(function).map_or(0, |size| size.arithmetic) as f64;
    let record = |kind: ForceType| match kind {
        ForceType::Keyframed => {
            let scale = arithmetic(TracedFunction::KeyframeLerp)
                .max(arithmetic(TracedFunction::KeyframeValue));
            scale + arithmetic(TracedFunction::AddKeyframed)
        }
        ForceType::Custom => arithmetic(TracedFunction::CustomForce),
        ForceType::Law => arithmetic(TracedFunction::ForceLaw),
        kind => arithmetic(TracedFunction::Force(kind)),
    };
    let bodies = crowd.bodies.len().max(1) as f64;
    let (global, own) = table.forces.split_at(table.global_count);
    let records = global.len() as f64 + own.len() as f64 / bodies;
    let forces: f64 = global.iter().map(|f| record(f.force_type())).sum::<f64>()
        + own.iter().map(|f| record(f.force_type())).sum::<f64>() / bodies;
    let derivative = arithmetic(TracedFunction::Auxiliaries)
        + forces
        + arithmetic(TracedFunction::StateDerivative);
    let step = (spec.integrators().iter())
        .filter_map(|&integrator| size(TracedFunction::Step(integrator)))
        .map(|step| step.arithmetic as f64 + step.calls as f64 * derivative)
        .fold(0.0, f64::max);
    let planes = match spec.contacts() {
        true => crowd.planes.len() as f64,
        false => 0.0,
    };
    let contact = (sizes.iter())
        .filter(|(traced, _)| matches!(traced, TracedFunction::ResolvePlane(_)))
        .map(|(_, size)| size.arithmetic as f64)
        .fold(0.0, f64::max);
    let contacts = match planes > 0.0 {
        true => arithmetic(TracedFunction::StepAcceleration) + planes * contact,
        false => 0.0,
    };
    let stride = (width + 1) as f64;
    KernelOps {
        per_step: OpTally {
            arithmetic: step + arithmetic(TracedFunction::Renormalize) + contacts,
            memory: planes * PLANE_NUMBERS as f64,
        },
        per_dispatch: OpTally {
            arithmetic: arithmetic(TracedFunction::SplitAxes),
            memory: 2.0 * MOTION_NUMBERS as f64 * stride
                + CONSTANT_NUMBERS as f64
                + records * PARAMETER_NUMBERS as f64,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::gpu::{GpuOptions, Precision};
    use crate::model::force::{Force, ForceKind};
    use crate::model::integrator::Integrator;
    use crate::model::plane::Plane;
    use crate::physics::dual_wgsl::physics_sizes;
    use crate::verify::test_crowds::gravity_drag;
    use glam::DVec3;

    fn options(precision: Precision, fuse: u32, specialized: bool) -> GpuOptions {
        GpuOptions {
            precision,
            steps_per_dispatch: fuse,
            specialized,
            ..GpuOptions::default()
        }
    }

    /// The arithmetic of `function` traced for `crowd`'s plain kernel.
    fn traced(crowd: &Crowd, precision: Precision, function: TracedFunction) -> f64 {
        let (spec, _) = crowd_spec(crowd, &options(precision, 1, true));
        let physics = kernel_physics(&spec, None);
        let sizes = physics_sizes(precision, &physics, (0, MovingNumbers::none(0)));
        let found = sizes.iter().find(|(traced, _)| *traced == function);
        found
            .map(|(_, size)| size.arithmetic as f64)
            .expect("traced")
    }

    /// The count follows the crowd: one more gravity record on every body adds its load
    /// once per derivative the step takes (four under RK4, one under Euler), a record on half
    /// the bodies half that; the first plane adds the step's acceleration and a contact, each
    /// further plane a contact and its numbers read.
    #[test]
    fn a_kernel_counts_each_record_per_derivative_and_each_plane_per_step() {
        let gravity = ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -1.0),
        };
        for (integrator, derivatives) in [(Integrator::Rk4, 4.0), (Integrator::Euler, 1.0)] {
            for precision in [Precision::F32, Precision::F64] {
                let crowd = gravity_drag(64).with_integrator(integrator);
                let ops = |crowd: &Crowd| crowd_kernel_ops(crowd, &options(precision, 1, true));
                let load = traced(&crowd, precision, TracedFunction::Force(ForceType::Gravity));
                assert!(load > 0.0);
                let before = ops(&crowd);
                let more = ops(&crowd.clone().with_force(Force::on_all(gravity)));
                assert_eq!(
                    more.per_step.arithmetic - before.per_step.arithmetic,
                    derivatives * load,
                    "{integrator:?} {precision:?}"
                );
                assert_eq!(
                    more.per_dispatch.memory - before.per_dispatch.memory,
                    PARAMETER_NUMBERS as f64
                );
                let mut half = crowd.clone();
                for body in 0..32 {
                    half = half.with_force(Force::on_body(body, gravity));
                }
                let half = ops(&half);
                assert_eq!(
                    half.per_step.arithmetic - before.per_step.arithmetic,
                    derivatives * load / 2.0
                );
                let floor = crowd.clone().with_plane(Plane::ground(0.5, 0.3));
                let wall = Plane::through(DVec3::new(5.0, 0.0, 0.0), -DVec3::X, 0.5, 0.3);
                let pit = floor.clone().with_plane(wall);
                let (one, two) = (ops(&floor), ops(&pit));
                let contact = two.per_step.arithmetic - one.per_step.arithmetic;
                let acceleration = traced(&floor, precision, TracedFunction::StepAcceleration);
                assert!(contact > 0.0 && acceleration > 0.0);
                assert_eq!(
                    one.per_step.arithmetic - before.per_step.arithmetic,
                    acceleration + contact
                );
                assert_eq!(two.per_step.memory, 2.0 * PLANE_NUMBERS as f64);
            }
        }
    }

    /// On the real crowds: every force kind (keyframes and a custom force) counts more than
    /// gravity and drag; the general kernel counts what the specialized one does (its other
    /// cases are code no body of the crowd runs); fusing steps spreads the state's read and
    /// write and the records' read over them.
    #[test]
    fn kernels_count_more_with_more_force_kinds_and_less_fused() {
        let every = crate::cross_check_crowd(420, 3, Integrator::Rk4, 1e-3).unwrap();
        let plain = gravity_drag(420);
        for precision in [Precision::F32, Precision::F64] {
            let ops = |crowd, fuse, specialized| {
                crowd_kernel_ops(crowd, &options(precision, fuse, specialized)).per_body_step(fuse)
            };
            let (plain_ops, every_ops) = (ops(&plain, 1, true), ops(&every, 1, true));
            println!("{precision:?}: gravity-drag {plain_ops}, every force {every_ops}");
            assert!(plain_ops < every_ops, "{plain_ops} {every_ops}");
            assert_eq!(ops(&plain, 1, false), plain_ops);
            assert_eq!(ops(&every, 1, false), every_ops);
            assert!(ops(&plain, 8, true) < plain_ops);
            // A step of gravity and drag under RK4 is some hundreds of operations: four
            // derivatives (a quaternion to a matrix, two matrix products, the forces) and
            // the stage sums.
            assert!((200.0..1000.0).contains(&plain_ops), "{plain_ops}");
        }
    }

    /// The tangent kernels of the gravity-drag crowd: their operations grow with the
    /// directions. Over the plain kernel (fused 8, f32), one direction (the mass, a block of
    /// 1), the inertia's six and the Jacobian's 13 (blocks of 4, one per group of state
    /// components, the position's not dispatched) and the 13 in blocks of 1: each block's
    /// kernel computes the values and the derivatives of what its directions move (the mass
    /// and the momentum move no rotation here). A block compiled for the inputs its
    /// directions move counts fewer operations than one compiled for every input.
    #[test]
    fn tangent_kernels_count_a_floor_over_the_plain_kernel() {
        use crate::physics::dual_wgsl::Structure;
        let crowd = gravity_drag(64);
        let options = options(Precision::F32, 8, true);
        let plain = crowd_kernel_ops(&crowd, &options).per_body_step(8);
        let ratio = |name: &str, widest| {
            let plan = crate::model::tangent::TangentPlan::parse(
                &[name],
                &crowd.forces,
                &[],
                &crowd.keyframes,
                "t",
            );
            crowd_tangent_ops(&crowd, &options, (&plan.unwrap(), widest)) / plain
        };
        let (one, six, thirteen) = (ratio("mass", 4), ratio("inertia", 4), ratio("state", 4));
        let thirteen_ones = ratio("state", 1);
        let (spec, table) = crowd_spec(&crowd, &options);
        let spec = spec.for_shapes_of(&crowd.bodies);
        let block = |moving| {
            let kernel = (Precision::F32, &spec, None);
            kernel_ops(kernel, (&crowd, &table), (1, moving)).per_body_step(8) / plain
        };
        let only_state = MovingNumbers::none(1).and(Structure::Motion, (1 << 13) - 1);
        let (general, state) = (block(MovingNumbers::ALL), block(only_state));
        println!(
            "tangent ops over plain: 1: {one:.2}, 6: {six:.2}, 13: {thirteen:.2}, \
             13 in blocks of 1: {thirteen_ones:.2}; a block of 1 moving every input \
             {general:.2}, the state only {state:.2}"
        );
        assert!((1.2..2.0).contains(&one), "{one}");
        assert!(six > 4.0 * one && thirteen > six, "{six} {thirteen}");
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
