//! The time-integration schemes a crowd can use.

use std::fmt;
use std::str::FromStr;

use crate::model::codes::Coded;
use crate::model::names::parse_name;

/// Time integrator for the state `Y = (x, q, P, L)`; `q` is renormalized after every step.
///
/// `h` is the step, `f(Y) = (v, 1/2 [0, omega] q, F, tau)` the derivative (Baraff 2-43).
/// docs/integrators.md compares them side by side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Integrator {
    /// Explicit (forward) Euler: `Y += h f(Y)`. First order.
    Euler,
    /// Semi-implicit (symplectic) Euler, what game engines do: kick the momenta with the
    /// force and torque of the old state, then drift with the new velocities:
    /// `P1 = P0 + h F`, `L1 = L0 + h tau`, `x1 = x0 + h P1 / M`,
    /// `omega1 = R0 Ibody^-1 R0^T L1`, `q1 = q0 + h/2 [0, omega1] q0`. First order.
    /// With no force and no torque the kick is zero and the step is explicit Euler's.
    SymplecticEuler,
    /// Classic fourth-order Runge–Kutta on `Y` as a vector in R^13. Error O(h^4).
    #[default]
    Rk4,
    /// Runge–Kutta–Munthe-Kaas of order 4 on R^9 x S^3: `x`, `P`, `L` take the classic RK4
    /// stages, while each orientation stage is `q_i = exp(u_i) q0` for a rotation vector
    /// `u_i` (`u1 = 0`, `u2 = k1/2`, `u3 = k2/2`, `u4 = k3`) with
    /// `k_i = dexpinv(u_i, h omega_i)`, `dexpinv(u, v) = v - 1/2 u x v + 1/12 u x (u x v)`,
    /// and `q1 = exp((k1 + 2 k2 + 2 k3 + k4) / 6) q0`. `exp(theta)` is the unit quaternion
    /// `(cos(|theta|/2), sin(|theta|/2) theta/|theta|)`, so `q` stays on the unit sphere to
    /// round-off. Error O(h^4).
    LieRk4,
    /// Lie–Poisson splitting (Strang): half kick `P += h/2 F`, `L += h/2 tau`; the free
    /// rotation as exact turns about body axes (the principal axes, split about the middle
    /// moment), which keep world `L`; the drift `x += h P/M`; half kick at the moved state.
    /// Second order, symplectic, time-reversible: `|L|` kept to round-off and the energy
    /// error bounded over long runs. Two force evaluations a step.
    LiePoisson,
    /// Yoshida's fourth-order triple jump of `lie_poisson`, `Phi(w1 h) Phi(w0 h) Phi(w1 h)`
    /// with `w1 = 1/(2 - 2^(1/3))`, `w0 = 1 - 2 w1`. Fourth order, symplectic,
    /// time-reversible. Six force evaluations a step.
    LiePoisson4,
}

impl Integrator {
    /// Every integrator, in the order the docs list them.
    pub const ALL: [Integrator; 6] = [
        Integrator::Euler,
        Integrator::SymplecticEuler,
        Integrator::Rk4,
        Integrator::LieRk4,
        Integrator::LiePoisson,
        Integrator::LiePoisson4,
    ];

    /// The name used in scene files and on the command line.
    pub fn name(self) -> &'static str {
        <Self as Coded>::name(self)
    }
    /// Whether a step turns the body about its principal axes (the Lie–Poisson
    /// splittings), which are then found once per body, not once per step.
    pub fn splits_the_rotation(self) -> bool {
        matches!(self, Integrator::LiePoisson | Integrator::LiePoisson4)
    }
    /// The order of accuracy `p` of the scheme: the global error is O(h^p).
    pub fn order(self) -> u32 {
        match self {
            Integrator::Euler | Integrator::SymplecticEuler => 1,
            Integrator::LiePoisson => 2,
            Integrator::Rk4 | Integrator::LieRk4 | Integrator::LiePoisson4 => 4,
        }
    }
}

impl Coded for Integrator {
    const ALL: &'static [Self] = &Integrator::ALL;
    const WGSL_PREFIX: &'static str = "INTEGRATOR";

    fn name(self) -> &'static str {
        match self {
            Integrator::Euler => "euler",
            Integrator::SymplecticEuler => "symplectic_euler",
            Integrator::Rk4 => "rk4",
            Integrator::LieRk4 => "lie_rk4",
            Integrator::LiePoisson => "lie_poisson",
            Integrator::LiePoisson4 => "lie_poisson4",
        }
    }
}

impl fmt::Display for Integrator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Integrator {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_name(&Integrator::ALL, Integrator::name, s)
            .map_err(|names| format!("unknown integrator `{s}` (expected one of: {names})"))
    }
}
