//! The state derivative of eight bodies at once, in f32: the definition in `core/src/physics` on a
//! lane type ([`LaneType`]), with the crowd's force records, keyframe tables and custom force.

use glam::{DQuat, DVec3};

use crate::backends::cpu::block::{ConstantBlock, ForceF32, LaneForce, LoadBlock};
use crate::model::force::ForceType;
use crate::model::integrator::Integrator;
use crate::physics::algebra::Vec3;
use crate::physics::custom_force::CustomForce;
use crate::physics::force_law::Parameters;
use crate::physics::force_law::{CustomForceInput, ForceInput};
use crate::physics::forces::{Body, add_force, add_scaled};
use crate::physics::lanes::{LANES, LaneType, Lanes};
use crate::physics::motion::{self, Derivative, Load, MassConstants, State};
use crate::physics::profile::{KeyframeSeeds, record_scale};
use crate::physics::splitting::SplitAxes;

/// Everything a block's derivative reads besides its state, its constants and the time.
#[derive(Clone, Copy)]
pub(crate) struct BlockForces<'a> {
    /// Forces on every body.
    pub global: &'a [ForceF32],
    /// The block's own per-body forces.
    pub own: &'a [LaneForce],
    /// The block's external loads.
    pub load: &'a LoadBlock,
    /// Every keyframe table, flattened (see `flatten_keyframes`).
    pub keyframes: &'a [[f32; 2]],
    /// The crowd's custom force.
    pub custom_force: Option<&'a CustomForce>,
    /// The crowd index of the simulation's body 0 (not 0 for an MPI rank's shard): the
    /// custom force sees crowd indices.
    pub first_body: usize,
}

/// A block's constants and loads in the lane type a run computes in, converted once a run.
#[derive(Clone, Copy)]
pub(crate) struct BlockConstants<'a, L> {
    pub mass: MassConstants<L>,
    /// The lanes' principal axes as the splittings read them, found once a run.
    pub axes: SplitAxes<L>,
    pub load: Load<L>,
    /// The block's body indices and own-force span.
    pub block: &'a ConstantBlock,
    /// The parameters of the block's force records (the global ones, then its own), when
    /// tangents move them; empty when each record's f32 parameters are taken as they are.
    pub parameters: &'a [Parameters<L>],
    /// The columns taken along numbers of each record's keyframe table, in the same order;
    /// empty when no column is.
    pub keyframe_seeds: &'a [KeyframeSeeds],
}

impl<'a, L: LaneType> BlockConstants<'a, L> {
    #[inline(always)]
    pub fn new(block: &'a ConstantBlock, load: &LoadBlock, integrator: Integrator) -> Self {
        let mass = block.mass.map(L::from);
        Self {
            axes: SplitAxes::for_integrator(integrator, &mass.inv_inertia),
            mass,
            load: load.map(L::from),
            block,
            parameters: &[],
            keyframe_seeds: &[],
        }
    }
}

/// A custom force that is not a law: its Rust twin, called once per lane in f64.
#[inline(never)]
fn custom_twin_loads(
    custom: &CustomForce,
    first_body: usize,
    c: &ConstantBlock,
    input: &ForceInput<Lanes>,
    total: &mut Load<Lanes>,
) {
    let v3 =
        |v: &Vec3<Lanes>, l: usize| DVec3::new(v.x.0[l] as f64, v.y.0[l] as f64, v.z.0[l] as f64);
    let q = input.orientation;
    for lane in 0..LANES {
        let load = custom.evaluate(&CustomForceInput {
            position: v3(&input.position, lane),
            orientation: DQuat::from_xyzw(
                q.x.0[lane] as f64,
                q.y.0[lane] as f64,
                q.z.0[lane] as f64,
                q.w.0[lane] as f64,
            ),
            velocity: v3(&input.velocity, lane),
            angular_velocity: v3(&input.angular_velocity, lane),
            mass: input.mass.0[lane] as f64,
            time: input.time.0[lane] as f64,
            body: first_body + c.bodies[lane] as usize,
        });
        for (sum, value) in [
            (&mut total.force, load.force),
            (&mut total.torque, load.torque),
        ] {
            sum.x.0[lane] += value.x as f32;
            sum.y.0[lane] += value.y as f32;
            sum.z.0[lane] += value.z as f32;
        }
    }
}

/// The custom force's share on every lane: its law's instance on [`LaneType::OnLanes`]
/// (lanes, or duals over lanes, tangents kept), or its Rust twin lane by lane on the values.
/// Inlined, so that the conversions compile with the clone's instruction set (out of line,
/// each AVX operation is a call).
#[inline(always)]
fn add_custom<L: LaneType>(
    custom: &CustomForce,
    c: &BlockConstants<L>,
    body: &Body<L>,
    first_body: usize,
    total: &mut Load<L>,
) {
    let bodies = Lanes(c.block.bodies.map(|b| (first_body + b as usize) as f32));
    let input = body.law_input(L::from(bodies), Parameters::zero());
    match custom.law_on::<L::OnLanes>() {
        Some(law) => {
            let load = law(&input.map(L::to_lanes)).map(L::from_lanes);
            total.force = total.force + load.force;
            total.torque = total.torque + load.torque;
        }
        None => {
            // A twin has no derivatives: tangents through it are refused before any step.
            assert!(
                std::any::TypeId::of::<L::OnLanes>() == std::any::TypeId::of::<Lanes>(),
                "tangents through a custom force that is not a ForceLaw"
            );
            let to_lanes = |v: L| -> Lanes { v.into() };
            let input = input.map(to_lanes);
            let mut on_lanes = total.map(to_lanes);
            custom_twin_loads(custom, first_body, c.block, &input, &mut on_lanes);
            *total = on_lanes.map(L::from);
        }
    }
}

/// Adds one force record's force and torque (about the centre of mass) to the totals of
/// every lane: `add_force` of the definition, or the keyframed and custom kinds' callers.
#[inline(always)]
fn accumulate_force<L: LaneType>(
    f: &ForceF32,
    seeded: Option<&Parameters<L>>,
    keyframe_seeds: Option<&KeyframeSeeds>,
    c: &BlockConstants<L>,
    body: &Body<L>,
    env: &BlockForces,
    total: &mut Load<L>,
) {
    let splat = |v: Vec3<f32>| Vec3::new(L::splat(v.x), L::splat(v.y), L::splat(v.z));
    // Written out: `[T; N]::map` is not inlined into the SIMD clones, and each call there
    // costs an AVX state transition.
    let parameters = match seeded {
        Some(p) => *p,
        None => {
            let [u, w] = f.parameters.vectors;
            let [s0, s1, s2, s3] = f.parameters.scalars;
            Parameters {
                vectors: [splat(u), splat(w)],
                scalars: [L::splat(s0), L::splat(s1), L::splat(s2), L::splat(s3)],
            }
        }
    };
    // A match, not a function taking the keyframed and custom cases as closures: those are
    // not inlined into the SIMD clones, and out of line every lane operation in them is a
    // call (the every-force crowd ran 3x slower).
    let [u, w] = parameters.vectors;
    match f.kind {
        ForceType::Keyframed => {
            let (first, count) = (f.keyframes.0 as usize, f.keyframes.1 as usize);
            // A block's bodies share the clock: one search serves every lane.
            let time: Lanes = body.time.into();
            let table = (&env.keyframes[first..first + count], time.0[0]);
            let scale = record_scale(table, body.time, keyframe_seeds, L::splat, L::seeded);
            add_scaled(u, w, scale, total);
        }
        ForceType::Custom => {
            if let Some(custom) = env.custom_force {
                add_custom(custom, c, body, env.first_body, total);
            }
        }
        ForceType::Law => {
            // The record's law number is `keyframes.0` (`ForceF32::new`).
            let law = (env.custom_force)
                .and_then(|custom| custom.law(f.keyframes.0 as usize).law_on::<L::OnLanes>())
                .expect("a law's force runs in a crowd that runs its law");
            let bodies = Lanes(c.block.bodies.map(|b| (env.first_body + b as usize) as f32));
            let input = body.law_input(L::from(bodies), parameters);
            let load = law(&input.map(L::to_lanes)).map(L::from_lanes);
            total.force = total.force + load.force;
            total.torque = total.torque + load.torque;
        }
        kind => add_force(kind, &parameters, body, total),
    }
}

/// `a` in the lanes where `condition` holds, else `b`.
#[inline(always)]
fn select3<L: LaneType>(condition: L::Bool, a: Vec3<L>, b: Vec3<L>) -> Vec3<L> {
    Vec3::new(
        L::select(condition, a.x, b.x),
        L::select(condition, a.y, b.y),
        L::select(condition, a.z, b.z),
    )
}

/// A SIMD clone of [`derivative`], called out of line by the integrators. Inlining every
/// force kind into every stage of every integrator made one function so large that a
/// release build of the crate took minutes; one call per stage costs little beside the
/// derivative's own work.
pub type DerivativeFn<L> = fn(&State<L>, &BlockConstants<L>, &BlockForces, L) -> Derivative<L>;

/// dY/dt of a block at time `t` under its external loads, the forces acting on every body
/// and each body's own: the load first, then the forces in order. A body's own force is
/// evaluated across the block and kept in that body's lane only, so each lane adds exactly
/// what the kernel adds for its body.
#[inline(always)]
pub(crate) fn derivative<L: LaneType>(
    s: &State<L>,
    c: &BlockConstants<L>,
    f: &BlockForces,
    t: L,
) -> Derivative<L> {
    let aux = motion::auxiliaries(s, &c.mass);
    let body = Body {
        state: s,
        mass: &c.mass,
        aux: &aux,
        time: t,
    };
    let mut total = c.load;
    for (r, g) in f.global.iter().enumerate() {
        let keyframe_seeds = c.keyframe_seeds.get(r);
        accumulate_force(
            g,
            c.parameters.get(r),
            keyframe_seeds,
            c,
            &body,
            f,
            &mut total,
        );
    }
    for (r, o) in f.own.iter().enumerate() {
        let mut with = total;
        let at = f.global.len() + r;
        let (seeded, keyframe_seeds) = (c.parameters.get(at), c.keyframe_seeds.get(at));
        accumulate_force(&o.force, seeded, keyframe_seeds, c, &body, f, &mut with);
        let only = L::lane_is(o.lane);
        total = Load {
            force: select3(only, with.force, total.force),
            torque: select3(only, with.torque, total.torque),
        };
    }
    motion::derivative(s, &aux, total)
}
