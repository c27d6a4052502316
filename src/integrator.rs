//! The time-integration schemes a crowd can use.

use std::fmt;
use std::str::FromStr;

/// Time integrator for the state `Y = (x, q, P, L)`; `q` is renormalized after every step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Integrator {
    /// Explicit (forward) Euler: `Y += h f(Y)`. First order.
    Euler,
    /// Classic fourth-order Runge–Kutta. Error O(h^4).
    #[default]
    Rk4,
}

impl Integrator {
    /// Every integrator, in the order the docs list them.
    pub const ALL: [Integrator; 2] = [Integrator::Euler, Integrator::Rk4];

    /// The name used in scene files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Integrator::Euler => "euler",
            Integrator::Rk4 => "rk4",
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
        Integrator::ALL
            .into_iter()
            .find(|i| i.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Integrator::ALL.iter().map(|i| i.name()).collect();
                format!(
                    "unknown integrator `{s}` (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}
