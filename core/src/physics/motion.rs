//! One body's state, the auxiliary quantities derived from it and its time derivative
//! (Baraff 2-42, 2-43, 4-2).

use super::algebra::{Mat3, Quat, SymMat3, Vec3};
use super::scalar::{Carried, Scalar, carried_struct};

/// Momentum-form state `Y = (x, q, P, L)`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct State<R> {
    /// Centre-of-mass position `x`.
    pub position: Vec3<R>,
    /// Orientation `q` (unit, up to what a step makes of it before renormalization).
    pub orientation: Quat<R>,
    /// Linear momentum `P`.
    pub linear_momentum: Vec3<R>,
    /// Angular momentum `L` about the centre of mass.
    pub angular_momentum: Vec3<R>,
}

impl<R: Scalar> Carried<R> for State<R> {
    #[inline(always)]
    fn push_scalars(&self, out: &mut Vec<R>) {
        self.position.push_scalars(out);
        self.orientation.push_scalars(out);
        self.linear_momentum.push_scalars(out);
        self.angular_momentum.push_scalars(out);
    }
    #[inline(always)]
    fn from_scalars(s: &mut impl Iterator<Item = R>) -> Self {
        Self {
            position: Vec3::from_scalars(s),
            orientation: Quat::from_scalars(s),
            linear_momentum: Vec3::from_scalars(s),
            angular_momentum: Vec3::from_scalars(s),
        }
    }
}

carried_struct!(MassConstants {
    mass,
    inv_mass,
    inv_inertia
});
carried_struct!(Auxiliaries {
    velocity,
    rotation,
    angular_velocity
});
carried_struct!(Derivative {
    velocity,
    spin,
    force,
    torque
});
carried_struct!(Load { force, torque });

/// The constants of one body the physics reads.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MassConstants<R> {
    /// `M`.
    pub mass: R,
    /// `1 / M`.
    pub inv_mass: R,
    /// `Ibody^-1`.
    pub inv_inertia: SymMat3<R>,
}

/// Auxiliary quantities, recomputed from the state at every evaluation (Baraff 2-42).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Auxiliaries<R> {
    /// `v = P / M`.
    pub velocity: Vec3<R>,
    /// `R`, the rotation of the normalized `q`.
    pub rotation: Mat3<R>,
    /// `omega = R Ibody^-1 R^T L`.
    pub angular_velocity: Vec3<R>,
}

/// `dY/dt = (v, dq/dt, F, tau)`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Derivative<R> {
    /// `dx/dt = v`.
    pub velocity: Vec3<R>,
    /// `dq/dt = 1/2 [0, omega] q`.
    pub spin: Quat<R>,
    /// `dP/dt = F`, the total force.
    pub force: Vec3<R>,
    /// `dL/dt = tau`, the total torque about the centre of mass.
    pub torque: Vec3<R>,
}

/// A force and a torque about the centre of mass.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Load<R> {
    /// World-frame force through the centre of mass.
    pub force: Vec3<R>,
    /// World-frame torque about the centre of mass.
    pub torque: Vec3<R>,
}

impl<R: Copy> State<R> {
    /// Each number through `f`: the state in another number type.
    #[inline(always)]
    pub fn map<S>(&self, f: impl Fn(R) -> S + Copy) -> State<S> {
        State {
            position: self.position.map(f),
            orientation: self.orientation.map(f),
            linear_momentum: self.linear_momentum.map(f),
            angular_momentum: self.angular_momentum.map(f),
        }
    }
}

impl<R> MassConstants<R> {
    /// The eight numbers in the order their derivatives are seeded in: `M`, `1/M`, then
    /// `Ibody^-1`'s `xx, yy, zz, xy, xz, yz`.
    #[inline(always)]
    pub fn numbers_mut(&mut self) -> [&mut R; 8] {
        let i = &mut self.inv_inertia;
        [
            &mut self.mass,
            &mut self.inv_mass,
            &mut i.xx,
            &mut i.yy,
            &mut i.zz,
            &mut i.xy,
            &mut i.xz,
            &mut i.yz,
        ]
    }
}

impl<R: Copy> MassConstants<R> {
    /// Each number through `f`: the constants in another number type.
    #[inline(always)]
    pub fn map<S>(&self, f: impl Fn(R) -> S + Copy) -> MassConstants<S> {
        MassConstants {
            mass: f(self.mass),
            inv_mass: f(self.inv_mass),
            inv_inertia: self.inv_inertia.map(f),
        }
    }
}

impl<R: Copy> Load<R> {
    /// Each number through `f`: the load in another number type.
    #[inline(always)]
    pub fn map<S>(&self, f: impl Fn(R) -> S + Copy) -> Load<S> {
        Load {
            force: self.force.map(f),
            torque: self.torque.map(f),
        }
    }
}

/// `v = P / M` (as `P (1/M)`), `R = R(normalize(q))`, `omega = R (Ibody^-1 (R^T L))`.
#[inline(always)]
pub fn auxiliaries<R: Scalar>(state: &State<R>, mass: &MassConstants<R>) -> Auxiliaries<R> {
    let rotation = state.orientation.normalize().to_rotation();
    let body_momentum = rotation.transpose_mul_vec(state.angular_momentum);
    Auxiliaries {
        velocity: state.linear_momentum * mass.inv_mass,
        rotation,
        angular_velocity: rotation.mul_vec(mass.inv_inertia.mul_vec(body_momentum)),
    }
}

/// `dq/dt = 1/2 [0, omega] q`. It multiplies the state's own `q` (not its normalized copy),
/// so it stays linear in `q` inside the stages of a step.
#[inline(always)]
pub fn spin<R: Scalar>(angular_velocity: Vec3<R>, orientation: Quat<R>) -> Quat<R> {
    Quat::pure_product(angular_velocity, orientation) * R::constant(0.5)
}

/// The derivative of a state whose auxiliaries are `aux` and on which the forces sum to `load`.
#[inline(always)]
pub fn derivative<R: Scalar>(
    state: &State<R>,
    aux: &Auxiliaries<R>,
    load: Load<R>,
) -> Derivative<R> {
    Derivative {
        velocity: aux.velocity,
        spin: spin(aux.angular_velocity, state.orientation),
        force: load.force,
        torque: load.torque,
    }
}

/// `Y + h k`: the state advanced along a derivative.
#[inline(always)]
pub fn advance<R: Scalar>(state: &State<R>, k: &Derivative<R>, h: R) -> State<R> {
    State {
        position: state.position + k.velocity * h,
        orientation: state.orientation + k.spin * h,
        linear_momentum: state.linear_momentum + k.force * h,
        angular_momentum: state.angular_momentum + k.torque * h,
    }
}

impl From<&crate::model::body::BodyState> for State<f64> {
    #[inline(always)]
    fn from(s: &crate::model::body::BodyState) -> Self {
        Self {
            position: s.position.into(),
            orientation: s.orientation.into(),
            linear_momentum: s.linear_momentum.into(),
            angular_momentum: s.angular_momentum.into(),
        }
    }
}

impl From<State<f64>> for crate::model::body::BodyState {
    #[inline(always)]
    fn from(s: State<f64>) -> Self {
        Self {
            position: s.position.into(),
            orientation: s.orientation.into(),
            linear_momentum: s.linear_momentum.into(),
            angular_momentum: s.angular_momentum.into(),
        }
    }
}

impl From<&crate::model::mass::MassProperties> for MassConstants<f64> {
    /// The inverse inertia's six entries as the GPU's body constants take them
    /// (`MassProperties::inv_inertia_entries`), so every backend reads the same numbers.
    #[inline(always)]
    fn from(m: &crate::model::mass::MassProperties) -> Self {
        Self {
            mass: m.mass(),
            inv_mass: m.inv_mass(),
            inv_inertia: SymMat3::from_entries(m.inv_inertia_entries()),
        }
    }
}
