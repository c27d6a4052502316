//! Auxiliary quantities, force and torque accumulation and the state derivative of eight
//! bodies at once, in f32. Twin of `shaders/derivative.wgsl`: keep the three in step.

use glam::{DQuat, DVec3};

use crate::cpu::block::{ConstantBlock, ForceF32, LaneForce, LoadBlock, StateBlock};
use crate::cpu::lanes::{LANES, Lanes, Mat3Lanes, QuatLanes, Vec3Lanes};
use crate::custom_force::{CustomForce, CustomForceInput};

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

/// `offset + amplitude sin(2 pi frequency t + phase)`; twin of `sinusoid_scale` in
/// shaders/derivative.wgsl.
#[inline(always)]
pub(crate) fn sinusoid_scale(
    offset: f32,
    amplitude: f32,
    frequency: f32,
    phase: f32,
    t: f32,
) -> f32 {
    offset + amplitude * (std::f32::consts::TAU * frequency * t + phase).sin()
}

/// Piecewise-linear keyframes held at both ends; twin of `keyframe_scale` in
/// shaders/derivative.wgsl (and of the f64 one in src/profile.rs).
#[inline(always)]
pub(crate) fn keyframe_scale(keyframes: &[[f32; 2]], t: f32) -> f32 {
    let [first_time, first_value] = keyframes[0];
    if t <= first_time {
        return first_value;
    }
    for i in 1..keyframes.len() {
        let ([t0, v0], [t1, v1]) = (keyframes[i - 1], keyframes[i]);
        if t < t1 {
            return v0 + (v1 - v0) * ((t - t0) / (t1 - t0));
        }
    }
    keyframes[keyframes.len() - 1][1]
}

/// The Rust twin of the custom force, called once per lane in f64.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn custom_loads(
    custom: &CustomForce,
    first_body: usize,
    s: &StateBlock,
    c: &ConstantBlock,
    aux: &Auxiliaries,
    t: f32,
    force: &mut Vec3Lanes,
    torque: &mut Vec3Lanes,
) {
    let q = s.orientation.normalize();
    let v3 =
        |v: &Vec3Lanes, l: usize| DVec3::new(v.x.0[l] as f64, v.y.0[l] as f64, v.z.0[l] as f64);
    for lane in 0..LANES {
        let load = custom.evaluate(&CustomForceInput {
            position: v3(&s.position, lane),
            orientation: DQuat::from_xyzw(
                q.x.0[lane] as f64,
                q.y.0[lane] as f64,
                q.z.0[lane] as f64,
                q.w.0[lane] as f64,
            ),
            velocity: v3(&aux.velocity, lane),
            angular_velocity: v3(&aux.angular_velocity, lane),
            mass: c.mass.0[lane] as f64,
            time: t as f64,
            body: first_body + c.bodies[lane] as usize,
        });
        for (sum, value) in [(&mut *force, load.force), (&mut *torque, load.torque)] {
            sum.x.0[lane] += value.x as f32;
            sum.y.0[lane] += value.y as f32;
            sum.z.0[lane] += value.z as f32;
        }
    }
}

/// dY/dt of eight bodies: `(v, dq/dt, F, tau)`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Derivative {
    pub velocity: Vec3Lanes,
    pub spin: QuatLanes,
    pub force: Vec3Lanes,
    pub torque: Vec3Lanes,
}

pub(crate) struct Auxiliaries {
    pub velocity: Vec3Lanes,
    rotation: Mat3Lanes,
    pub angular_velocity: Vec3Lanes,
}

/// `Ibody^-1 v` for the symmetric inverse inertia stored as six entries.
#[inline(always)]
fn inv_inertia_mul(c: &ConstantBlock, v: Vec3Lanes) -> Vec3Lanes {
    let [xx, yy, zz, xy, xz, yz] = c.inv_inertia;
    Vec3Lanes {
        x: xx * v.x + xy * v.y + xz * v.z,
        y: xy * v.x + yy * v.y + yz * v.z,
        z: xz * v.x + yz * v.y + zz * v.z,
    }
}

/// `v = P / M`, `R = R(normalize(q))`, `omega = R (Ibody^-1 (R^T L))`.
#[inline(always)]
pub(crate) fn auxiliaries(s: &StateBlock, c: &ConstantBlock) -> Auxiliaries {
    let rotation = s.orientation.normalize().to_mat3();
    let body_momentum = rotation.transpose_mul_vec(s.angular_momentum);
    Auxiliaries {
        velocity: s.linear_momentum.scale(c.inv_mass),
        rotation,
        angular_velocity: rotation.mul_vec(inv_inertia_mul(c, body_momentum)),
    }
}

/// Adds one force source's force and torque (about the centre of mass) at time `t` to the
/// totals of every lane.
#[allow(clippy::too_many_arguments)] // the twin of the WGSL function, argument for argument
#[inline(always)]
fn accumulate_force(
    f: &ForceF32,
    s: &StateBlock,
    c: &ConstantBlock,
    aux: &Auxiliaries,
    t: f32,
    env: &BlockForces,
    force: &mut Vec3Lanes,
    torque: &mut Vec3Lanes,
) {
    match *f {
        ForceF32::Gravity { acceleration } => {
            *force += Vec3Lanes::splat(acceleration).scale(c.mass);
        }
        ForceF32::LinearDrag { linear, angular } => {
            *force -= aux.velocity * linear;
            *torque -= aux.angular_velocity * angular;
        }
        // The lanes' twin of src/physics/forces.rs, operation for operation.
        ForceF32::QuadraticDrag { linear, angular } => {
            let length = |v: &Vec3Lanes| (v.x * v.x + v.y * v.y + v.z * v.z).sqrt();
            let speed = length(&aux.velocity);
            let spin = length(&aux.angular_velocity);
            *force -= aux.velocity.scale(Lanes::splat(linear) * speed);
            *torque -= aux.angular_velocity.scale(Lanes::splat(angular) * spin);
        }
        ForceF32::PointForce {
            force: applied,
            point,
        } => {
            let applied = Vec3Lanes::splat(applied);
            let arm = aux.rotation.mul_vec(Vec3Lanes::splat(point));
            *force += applied;
            *torque += arm.cross(applied);
        }
        ForceF32::Spring {
            anchor,
            attach,
            stiffness,
            damping,
        } => {
            let arm = aux.rotation.mul_vec(Vec3Lanes::splat(attach));
            let stretch = s.position + arm - Vec3Lanes::splat(anchor);
            let attach_velocity = aux.velocity + aux.angular_velocity.cross(arm);
            let applied = -stretch * stiffness - attach_velocity * damping;
            *force += applied;
            *torque += arm.cross(applied);
        }
        ForceF32::Attractor {
            centre,
            strength,
            softening,
        } => {
            let r = s.position - Vec3Lanes::splat(centre);
            let d2 = r.x * r.x + r.y * r.y + r.z * r.z + Lanes::splat(softening * softening);
            let pull = c.mass * strength * (d2 * d2.sqrt()).recip();
            *force -= r.scale(pull);
        }
        ForceF32::Thrust {
            force: body_force,
            torque: body_torque,
        } => {
            *force += aux.rotation.mul_vec(Vec3Lanes::splat(body_force));
            *torque += aux.rotation.mul_vec(Vec3Lanes::splat(body_torque));
        }
        ForceF32::Sinusoidal {
            force: applied,
            torque: turning,
            offset,
            amplitude,
            frequency,
            phase,
        } => {
            let scale = sinusoid_scale(offset, amplitude, frequency, phase, t);
            *force += Vec3Lanes::splat(applied) * scale;
            *torque += Vec3Lanes::splat(turning) * scale;
        }
        ForceF32::Keyframed {
            force: applied,
            torque: turning,
            first,
            count,
        } => {
            let scale = keyframe_scale(&env.keyframes[first as usize..(first + count) as usize], t);
            *force += Vec3Lanes::splat(applied) * scale;
            *torque += Vec3Lanes::splat(turning) * scale;
        }
        ForceF32::Custom => {
            if let Some(custom) = env.custom_force {
                custom_loads(custom, env.first_body, s, c, aux, t, force, torque);
            }
        }
    }
}

/// A SIMD clone of [`derivative`], called out of line by the integrators. Inlining every
/// force kind into every stage of every integrator made one function so large that a
/// release build of the crate took minutes; one call per stage costs little beside the
/// derivative's own work.
pub(crate) type DerivativeFn = fn(&StateBlock, &ConstantBlock, &BlockForces, f32) -> Derivative;

/// dY/dt of a block at time `t` under its external loads, the forces acting on every body
/// and each body's own. A body's own force is evaluated across the block and kept in that
/// body's lane only: own forces are rare, and one code path keeps the arithmetic identical
/// to the globals'.
#[inline(always)]
pub(crate) fn derivative(s: &StateBlock, c: &ConstantBlock, f: &BlockForces, t: f32) -> Derivative {
    let aux = auxiliaries(s, c);
    let mut force = f.load.force;
    let mut torque = f.load.torque;
    for g in f.global {
        accumulate_force(g, s, c, &aux, t, f, &mut force, &mut torque);
    }
    for o in f.own {
        let (mut one_force, mut one_torque) = (Vec3Lanes::default(), Vec3Lanes::default());
        accumulate_force(&o.force, s, c, &aux, t, f, &mut one_force, &mut one_torque);
        force += one_force.only(o.lane);
        torque += one_torque.only(o.lane);
    }
    Derivative {
        velocity: aux.velocity,
        spin: QuatLanes::pure_mul(aux.angular_velocity, s.orientation) * 0.5,
        force,
        torque,
    }
}
