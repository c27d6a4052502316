//! Torque-free tops in closed form: the symmetric top (steady precession) and Euler's
//! asymmetric top in Jacobi elliptic functions (Landau & Lifshitz, Mechanics, §33 and §37).

use glam::{DQuat, DVec3};

use crate::model::body::Body;
use crate::model::error::{Error, Result};
use crate::model::mass::MassProperties;
use crate::verify::analytic::elliptic::{complete_elliptic_k, jacobi_elliptic};

/// A torque-free body with principal moments `(I1, I1, I3)` along its body axes, symmetric
/// about body `z`.
///
/// With `Omega = (I3 - I1) / I1 omega3`, the body-frame angular velocity turns about the
/// symmetry axis at `Omega` (`omega3` stays constant), and the symmetry axis precesses about
/// the fixed `L` at `|L| / I1` in the world. The whole motion is
/// `q(t) = exp(t L / I1) q0 exp(-t Omega z)` (rotation vectors, `exp` as in [`Integrator::LieRk4`](crate::model::integrator::Integrator::LieRk4)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SymmetricTop {
    transverse_moment: f64,
    axial_moment: f64,
    orientation: DQuat,
    body_angular_velocity: DVec3,
}

impl SymmetricTop {
    /// A top with moments `I1 = I2 = transverse_moment`, `I3 = axial_moment`, starting at the
    /// unit quaternion `orientation` with body-frame angular velocity `body_angular_velocity`.
    pub fn new(
        transverse_moment: f64,
        axial_moment: f64,
        orientation: DQuat,
        body_angular_velocity: DVec3,
    ) -> Self {
        Self {
            transverse_moment,
            axial_moment,
            orientation: orientation.normalize(),
            body_angular_velocity,
        }
    }

    /// `Omega = (I3 - I1) / I1 omega3`: the rate at which the body-frame angular velocity
    /// turns about the symmetry axis (rad/s).
    pub fn body_rate(&self) -> f64 {
        (self.axial_moment - self.transverse_moment) / self.transverse_moment
            * self.body_angular_velocity.z
    }

    /// The (constant) world-frame angular momentum `L = R0 Ibody omega0`.
    pub fn angular_momentum(&self) -> DVec3 {
        let w = self.body_angular_velocity;
        let body = DVec3::new(
            self.transverse_moment * w.x,
            self.transverse_moment * w.y,
            self.axial_moment * w.z,
        );
        self.orientation * body
    }

    /// `|L| / I1`: the rate at which the symmetry axis precesses about `L` (rad/s).
    pub fn precession_rate(&self) -> f64 {
        self.angular_momentum().length() / self.transverse_moment
    }

    /// Body-frame angular velocity at time `t`: `(omega1, omega2)` turned by `Omega t`.
    pub fn body_angular_velocity(&self, t: f64) -> DVec3 {
        let w = self.body_angular_velocity;
        let (sin, cos) = (self.body_rate() * t).sin_cos();
        DVec3::new(w.x * cos - w.y * sin, w.x * sin + w.y * cos, w.z)
    }

    /// Orientation at time `t`: `exp(t L / I1) q0 exp(-t Omega z)`.
    pub fn orientation(&self, t: f64) -> DQuat {
        let precession = self.angular_momentum() * (t / self.transverse_moment);
        let spin = DVec3::Z * (-t * self.body_rate());
        rotation(precession) * self.orientation * rotation(spin)
    }

    /// World direction of the body's symmetry axis at time `t`: `R(t) z`, which is
    /// `R0 z` turned about `L` by `|L| t / I1`.
    pub fn symmetry_axis(&self, t: f64) -> DVec3 {
        let precession = self.angular_momentum() * (t / self.transverse_moment);
        rotation(precession) * (self.orientation * DVec3::Z)
    }
}

/// The unit quaternion of a rotation vector (any length; zero is the identity).
fn rotation(theta: DVec3) -> DQuat {
    let angle = theta.length();
    if angle == 0.0 {
        DQuat::IDENTITY
    } else {
        DQuat::from_axis_angle(theta / angle, angle)
    }
}

/// Relative distance from `|L|^2 = 2 E I2` below which a top counts as on the separatrix.
const SEPARATRIX_SLACK: f64 = 1e-12;

/// Euler's torque-free asymmetric top, principal moments `I1 < I2 < I3` along body `x, y, z`,
/// in Jacobi elliptic functions (Landau & Lifshitz §37).
///
/// From the energy `E` and `M = |L|`, with `tau = rate (t + phase)`:
/// - if `M^2 > 2 E I2` (rotation about the `I3` side): `omega = (A1 cn, A2 sn, A3 dn)(tau)`,
///   `A1^2 = (2 E I3 - M^2) / (I1 (I3 - I1))`, `A2^2 = (2 E I3 - M^2) / (I2 (I3 - I2))`,
///   `A3^2 = (M^2 - 2 E I1) / (I3 (I3 - I1))`, `rate^2 = (I3 - I2)(M^2 - 2 E I1) / (I1 I2 I3)`,
///   `m = (I2 - I1)(2 E I3 - M^2) / ((I3 - I2)(M^2 - 2 E I1))`;
/// - if `M^2 < 2 E I2`: the same with the indices 1 and 3 swapped, so `omega1` carries `dn`
///   and `omega3` carries `cn`.
///
/// `omega2`, the intermediate component, changes sign every half period `2 K(m) / rate`:
/// near `M^2 = 2 E I2` (spun close to the intermediate axis) these are the flips of the
/// Dzhanibekov effect.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AsymmetricTop {
    /// Amplitudes of the body-frame components `(omega1, omega2, omega3)`.
    amplitudes: DVec3,
    /// `true` when `omega3` carries `dn` (`M^2 > 2 E I2`), `false` when `omega1` does.
    about_major_axis: bool,
    rate: f64,
    parameter: f64,
    phase: f64,
}

impl AsymmetricTop {
    /// The top with principal `moments` (strictly increasing), kinetic `energy` and angular
    /// momentum magnitude `angular_momentum`, at phase zero (`omega2 = 0` at `t = 0`).
    ///
    /// Fails unless `2 E I1 < M^2 < 2 E I3` and `M^2` differs from `2 E I2` by more than round-off (the
    /// separatrix, where the period is infinite).
    pub fn new(moments: DVec3, energy: f64, angular_momentum: f64) -> Result<Self> {
        let [i1, i2, i3] = moments.to_array();
        if !(0.0 < i1 && i1 < i2 && i2 < i3) {
            return Err(Error::invalid(
                "moments",
                format!("must satisfy 0 < I1 < I2 < I3 (got {i1}, {i2}, {i3})"),
            ));
        }
        let m2 = angular_momentum * angular_momentum;
        let (low, mid, high) = (2.0 * energy * i1, 2.0 * energy * i2, 2.0 * energy * i3);
        // Within round-off of the separatrix the period is infinite in all but name.
        if !(low < m2 && m2 < high) || (m2 - mid).abs() <= SEPARATRIX_SLACK * mid {
            return Err(Error::invalid(
                "angular_momentum",
                format!(
                    "|L|^2 = {m2} must lie strictly between 2 E I1 = {low} and 2 E I3 = {high}, \
                     and differ from 2 E I2 = {mid}"
                ),
            ));
        }
        let about_major_axis = m2 > mid;
        let (amplitudes, rate2, parameter) = if about_major_axis {
            (
                DVec3::new(
                    (high - m2) / (i1 * (i3 - i1)),
                    (high - m2) / (i2 * (i3 - i2)),
                    (m2 - low) / (i3 * (i3 - i1)),
                ),
                (i3 - i2) * (m2 - low) / (i1 * i2 * i3),
                (i2 - i1) * (high - m2) / ((i3 - i2) * (m2 - low)),
            )
        } else {
            (
                DVec3::new(
                    (high - m2) / (i1 * (i3 - i1)),
                    (m2 - low) / (i2 * (i2 - i1)),
                    (m2 - low) / (i3 * (i3 - i1)),
                ),
                (i2 - i1) * (high - m2) / (i1 * i2 * i3),
                (i3 - i2) * (m2 - low) / ((i2 - i1) * (high - m2)),
            )
        };
        Ok(Self {
            amplitudes: DVec3::new(
                amplitudes.x.sqrt(),
                amplitudes.y.sqrt(),
                amplitudes.z.sqrt(),
            ),
            about_major_axis,
            rate: rate2.sqrt(),
            parameter,
            phase: 0.0,
        })
    }

    /// The same top shifted in time: `omega(t)` becomes `omega(t + phase)`.
    pub fn with_phase(self, phase: f64) -> Self {
        Self { phase, ..self }
    }

    /// The elliptic parameter `m = k^2` in `(0, 1)`; it approaches 1 near the separatrix.
    pub fn parameter(&self) -> f64 {
        self.parameter
    }

    /// `d tau / d t`, the rate at which the elliptic argument advances.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// `2 K(m) / rate`: the time between sign changes of `omega2`.
    pub fn half_period(&self) -> f64 {
        2.0 * complete_elliptic_k(self.parameter) / self.rate
    }

    /// `K(m) / rate`: the phase at which `omega2` peaks (`sn = 1`), the body then turning
    /// closest to its intermediate axis.
    pub fn quarter_period(&self) -> f64 {
        0.5 * self.half_period()
    }

    /// Body-frame angular velocity at time `t`.
    pub fn body_angular_velocity(&self, t: f64) -> DVec3 {
        let e = jacobi_elliptic(self.rate * (t + self.phase), self.parameter);
        let a = self.amplitudes;
        if self.about_major_axis {
            DVec3::new(a.x * e.cn, a.y * e.sn, a.z * e.dn)
        } else {
            DVec3::new(a.x * e.dn, a.y * e.sn, a.z * e.cn)
        }
    }
}

/// Principal moments of the test top: any distinct triple obeying the triangle inequality.
const TOP_MOMENTS: DVec3 = DVec3::new(2.0, 3.0, 4.0);

/// A torque-free asymmetric top and its closed form, ready to measure an integrator with:
/// tumbling well away from its axes and from the separatrix, moving, at a non-trivial
/// orientation. `rigid-crowd integrators` measures every integrator on it.
pub fn tumbling_top() -> (Body, AsymmetricTop) {
    let body_omega = DVec3::new(0.8, 1.1, 1.3);
    let momentum = (TOP_MOMENTS * body_omega).length();
    let energy = 0.5 * (TOP_MOMENTS * body_omega).dot(body_omega);
    let top = AsymmetricTop::new(TOP_MOMENTS, energy, momentum).expect("valid top");
    let start = top.body_angular_velocity(0.0);
    let mass = MassProperties::from_principal(1.5, TOP_MOMENTS, "top").expect("valid moments");
    let orientation = DQuat::from_rotation_y(0.6) * DQuat::from_rotation_x(-0.4);
    let body = Body::from_kinematics(
        mass,
        DVec3::new(1.0, 2.0, -0.5),
        orientation,
        DVec3::new(0.3, -0.2, 0.1),
        orientation * start,
    );
    (body, top)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn energy_and_momentum(moments: DVec3, w: DVec3) -> (f64, f64) {
        let l = moments * w;
        (0.5 * l.dot(w), l.length())
    }

    /// `I w' - (I w) x w` by central differences, relative to `|I w| |w|`.
    fn euler_residual(moments: DVec3, w: impl Fn(f64) -> DVec3, t: f64) -> f64 {
        let d = 1e-5;
        let slope = (w(t + d) - w(t - d)) / (2.0 * d);
        let at = w(t);
        let residual = moments * slope - (moments * at).cross(at);
        residual.length() / ((moments * at).length() * at.length())
    }

    #[test]
    fn asymmetric_top_satisfies_eulers_equations_on_both_sides_of_the_separatrix() {
        let moments = DVec3::new(2.0, 3.0, 4.0);
        // Near the intermediate axis on either side, and far from it on either side.
        for start in [
            DVec3::new(0.0, 1.0, 0.05),
            DVec3::new(0.05, 1.0, 0.0),
            DVec3::new(0.3, 0.2, 2.0),
            DVec3::new(2.0, 0.4, 0.1),
        ] {
            let (energy, momentum) = energy_and_momentum(moments, start);
            let top = AsymmetricTop::new(moments, energy, momentum).unwrap();
            for i in 0..200 {
                let t = 0.137 * i as f64;
                // Central differences: truncation O(d^2 |w'''|) ~ 1e-10, round-off
                // ~ 1e-16 / d ~ 1e-11, relative to |I w| |w| of order 1.
                let r = euler_residual(moments, |s| top.body_angular_velocity(s), t);
                assert!(r < 1e-8, "start {start}, t {t}: residual {r:.3e}");
            }
            // E and |L| are those it was built from, at any time.
            for t in [0.0, 1.3, 17.0] {
                let (e, l) = energy_and_momentum(moments, top.body_angular_velocity(t));
                assert!((e - energy).abs() < 1e-13 * energy, "energy at {t}");
                assert!((l - momentum).abs() < 1e-13 * momentum, "|L| at {t}");
            }
        }
    }

    #[test]
    fn asymmetric_top_flips_every_half_period() {
        let moments = DVec3::new(2.0, 3.0, 4.0);
        let (energy, momentum) = energy_and_momentum(moments, DVec3::new(0.0, 1.0, 0.05));
        let top = AsymmetricTop::new(moments, energy, momentum).unwrap();
        let half = top.half_period();
        for n in 1..4 {
            let t = n as f64 * half;
            let w = |s: f64| top.body_angular_velocity(s).y;
            // omega2 = A2 sn: zero at multiples of the half period, changing sign there.
            assert!(w(t).abs() < 1e-12, "omega2({t}) = {}", w(t));
            assert!(w(t - 0.1 * half) * w(t + 0.1 * half) < 0.0);
        }
        let peak = top
            .with_phase(top.quarter_period())
            .body_angular_velocity(0.0);
        assert!(
            (peak - DVec3::new(0.0, 1.0, 0.05)).length() < 1e-12,
            "{peak}"
        );
    }

    #[test]
    fn asymmetric_top_rejects_impossible_inputs_by_field() {
        let moments = DVec3::new(2.0, 3.0, 4.0);
        let err = AsymmetricTop::new(DVec3::new(3.0, 2.0, 4.0), 1.0, 1.0).unwrap_err();
        assert!(
            err.to_string().starts_with("moments: must satisfy"),
            "{err}"
        );
        let err = AsymmetricTop::new(moments, 1.0, 10.0).unwrap_err();
        assert!(err.to_string().starts_with("angular_momentum:"), "{err}");
        assert!(AsymmetricTop::new(moments, 1.0, 6.0f64.sqrt()).is_err());
    }

    #[test]
    fn symmetric_top_satisfies_eulers_equations_and_its_own_kinematics() {
        let moments = DVec3::new(2.0, 2.0, 3.0);
        let q0 = DQuat::from_rotation_x(0.7) * DQuat::from_rotation_y(-0.3);
        let top = SymmetricTop::new(2.0, 3.0, q0, DVec3::new(0.5, 0.2, 3.0));
        for i in 0..100 {
            let t = 0.173 * i as f64;
            let r = euler_residual(moments, |s| top.body_angular_velocity(s), t);
            assert!(r < 1e-8, "t {t}: residual {r:.3e}");
            // L = R(t) I omega(t) stays put, and the symmetry axis is R(t) z.
            let q = top.orientation(t);
            let l = q * (moments * top.body_angular_velocity(t));
            assert!((l - top.angular_momentum()).length() < 1e-13);
            assert!((q * DVec3::Z - top.symmetry_axis(t)).length() < 1e-13);
            // dq/dt = 1/2 [0, omega] q with omega = R omega_body, by central differences.
            let d = 1e-5;
            let dq = (top.orientation(t + d) - top.orientation(t - d)) * (0.5 / d);
            let w = q * top.body_angular_velocity(t);
            let expected = DQuat::from_xyzw(w.x, w.y, w.z, 0.0) * q * 0.5;
            assert!((dq - expected).length() < 1e-9, "t {t}");
        }
    }
}
