//! The force kinds (Baraff 2.8): each adds a force and a torque about the centre of mass to
//! a body's totals. A kind's parameters arrive in the order of `ForceParameters`: two
//! vectors and four scalars, of which it reads what its arity says.

use super::algebra::Vec3;
use super::force_law::{ForceInput, Parameters};
use super::motion::{Auxiliaries, Load, MassConstants, State};
use super::scalar::Scalar;
use super::trig::sin_cos;
use crate::model::force::ForceType;

/// What a force acting on one body sees: its state, constants and auxiliaries, and the time.
#[derive(Clone, Copy, Debug)]
pub struct Body<'a, R> {
    pub state: &'a State<R>,
    pub mass: &'a MassConstants<R>,
    pub aux: &'a Auxiliaries<R>,
    pub time: R,
}

impl<R: Scalar> Body<'_, R> {
    /// What a force law sees of this body: its orientation normalized, `index` its crowd
    /// index as a number, `parameters` the force's numbers.
    #[inline(always)]
    pub fn law_input(&self, index: R, parameters: Parameters<R>) -> ForceInput<R> {
        ForceInput {
            position: self.state.position,
            orientation: self.state.orientation.normalize(),
            velocity: self.aux.velocity,
            angular_velocity: self.aux.angular_velocity,
            mass: self.mass.mass,
            time: self.time,
            body: index,
            parameters,
        }
    }
}

/// `offset + amplitude sin(2 pi frequency t + phase)`.
#[inline(always)]
pub fn sinusoid_scale<R: Scalar>(offset: R, amplitude: R, frequency: R, phase: R, t: R) -> R {
    let (sin, _) = sin_cos(R::constant(std::f64::consts::TAU) * frequency * t + phase);
    offset + amplitude * sin
}

/// The value at `t` on the keyframe segment from `(t0, v0)` to `(t1, v1)`.
#[inline(always)]
pub fn keyframe_lerp<R: Scalar>([t0, v0]: [R; 2], [t1, v1]: [R; 2], t: R) -> R {
    v0 + (v1 - v0) * ((t - t0) / (t1 - t0))
}

/// Adds `scale` times a world force and torque: the sinusoidal and keyframed kinds, once
/// their scale is known.
#[inline(always)]
pub fn add_scaled<R: Scalar>(force: Vec3<R>, torque: Vec3<R>, scale: R, total: &mut Load<R>) {
    total.force = total.force + force * scale;
    total.torque = total.torque + torque * scale;
}

/// Adds the force and torque of a force of kind `kind` with parameters `p` on `body` to
/// `total`. The keyframed kind's scale comes from its table (`keyframe_scale`), found by the
/// caller; the custom kind is the user's own code, called by the caller.
#[inline(always)]
pub fn add_force<R: Scalar>(
    kind: ForceType,
    p: &Parameters<R>,
    body: &Body<R>,
    total: &mut Load<R>,
) {
    let [u, w] = p.vectors;
    let [s0, s1, s2, s3] = p.scalars;
    let (state, aux) = (body.state, body.aux);
    match kind {
        // F = M g.
        ForceType::Gravity => total.force = total.force + u * body.mass.mass,
        // F = -c v, tau = -k omega.
        ForceType::LinearDrag => {
            total.force = total.force - aux.velocity * s0;
            total.torque = total.torque - aux.angular_velocity * s1;
        }
        // F = -c |v| v, tau = -k |omega| omega.
        ForceType::QuadraticDrag => {
            let speed = aux.velocity.length();
            let spin = aux.angular_velocity.length();
            total.force = total.force - aux.velocity * (s0 * speed);
            total.torque = total.torque - aux.angular_velocity * (s1 * spin);
        }
        // F at the body point p: tau = (R p) x F.
        ForceType::PointForce => {
            let arm = aux.rotation.mul_vec(w);
            total.force = total.force + u;
            total.torque = total.torque + arm.cross(u);
        }
        // F = -k (x + R p - anchor) - d (v + omega x R p), at R p.
        ForceType::Spring => {
            let arm = aux.rotation.mul_vec(w);
            let stretch = state.position + arm - u;
            let attach_velocity = aux.velocity + aux.angular_velocity.cross(arm);
            let applied = -(stretch * s0) - attach_velocity * s1;
            total.force = total.force + applied;
            total.torque = total.torque + arm.cross(applied);
        }
        // F = -M mu r / (|r|^2 + eps^2)^(3/2), r = x - centre.
        ForceType::Attractor => {
            let r = state.position - u;
            let d2 = r.length_squared() + s1 * s1;
            total.force = total.force - r * (body.mass.mass * s0 / (d2 * d2.sqrt()));
        }
        // F = R f_body, tau = R tau_body.
        ForceType::Thrust => {
            total.force = total.force + aux.rotation.mul_vec(u);
            total.torque = total.torque + aux.rotation.mul_vec(w);
        }
        ForceType::Sinusoidal => {
            let scale = sinusoid_scale(s0, s1, s2, s3, body.time);
            add_scaled(u, w, scale, total);
        }
        ForceType::Keyframed | ForceType::Custom | ForceType::Law => {
            unreachable!("the caller evaluates keyframed, custom and law forces")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sinusoid_starts_at_its_phase() {
        assert_eq!(sinusoid_scale(1.0_f64, 2.0, 3.0, 0.0, 0.0), 1.0);
        let quarter = sinusoid_scale(1.0_f64, 2.0, 0.25, 0.0, 1.0);
        assert!((quarter - 3.0).abs() < 1e-15);
    }
}
