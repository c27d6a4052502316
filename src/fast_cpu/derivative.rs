//! Auxiliary quantities, force and torque accumulation and the state derivative of eight
//! bodies at once, in f32. Twin of `shaders/derivative.wgsl`: keep the three in step.

use crate::fast_cpu::block::{ConstantBlock, ForceF32, LaneForce, StateBlock};
use crate::fast_cpu::lanes::{Mat3Lanes, QuatLanes, Vec3Lanes};

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

/// Adds one force source's force and torque (about the centre of mass) to the totals of
/// every lane.
#[inline(always)]
fn accumulate_force(
    f: &ForceF32,
    s: &StateBlock,
    c: &ConstantBlock,
    aux: &Auxiliaries,
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
    }
}

/// dY/dt of a block under the forces acting on every body plus each body's own.
/// A body's own force is evaluated across the block and kept in that body's lane only:
/// own forces are rare, and one code path keeps the arithmetic identical to the globals'.
#[inline(always)]
pub(crate) fn derivative(
    s: &StateBlock,
    c: &ConstantBlock,
    global: &[ForceF32],
    own: &[LaneForce],
) -> Derivative {
    let aux = auxiliaries(s, c);
    let mut force = Vec3Lanes::default();
    let mut torque = Vec3Lanes::default();
    for f in global {
        accumulate_force(f, s, c, &aux, &mut force, &mut torque);
    }
    for f in own {
        let (mut one_force, mut one_torque) = (Vec3Lanes::default(), Vec3Lanes::default());
        accumulate_force(&f.force, s, c, &aux, &mut one_force, &mut one_torque);
        force += one_force.only(f.lane);
        torque += one_torque.only(f.lane);
    }
    Derivative {
        velocity: aux.velocity,
        spin: QuatLanes::pure_mul(aux.angular_velocity, s.orientation) * 0.5,
        force,
        torque,
    }
}
