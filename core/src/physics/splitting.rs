//! The Lie–Poisson splitting integrators: the free body's energy split into pieces whose
//! flows are exact rotations, composed symmetrically, with the forces entering as half kicks
//! (McLachlan 1993; Reich 1994; Touma & Wisdom 1994; Dullweber, Leimkuhler & McLachlan 1997).
//!
//! With `Pi = R^T L` the body angular momentum and `a_k = 1/I_k` the inverse principal
//! moments in ascending order (axes `n_k`), the rotational energy is split about the middle
//! one:
//!
//! `E = 1/2 a_1 |Pi|^2 + 1/2 (a_0 - a_1) (n_0 . Pi)^2 + 1/2 (a_2 - a_1) (n_2 . Pi)^2`.
//!
//! Each piece's flow turns the body about a fixed body axis at a constant rate while world
//! `L` stays put: the first about `Pi` itself by `h a_1 |Pi|` (`|Pi|^2` is a Casimir: it
//! commutes with the other two), the others about `n_k` by `h (a_k - a_1) (n_k . Pi)`. So
//! `|L|` and `L` are kept exactly by the rotation, a sphere and a symmetric top are turned
//! exactly (their pieces commute), and splitting about the middle moment gives the two
//! non-commuting pieces the smallest coefficients, whose product sets the leading error.
//! The piece of the largest coefficient is split in halves outside (`A(h/2) B(h) A(h/2)`
//! with the Casimir's rotation beside `B(h)`, with which it commutes), which measured the
//! smaller energy error of the two orders (`splitting::tests`).

use super::algebra::{Quat, SymMat3, Vec3};
use super::exp_map::exp_series_below;
use super::motion::{Derivative, MassConstants, State};
use super::principal_axes::principal_axes;
use super::scalar::Scalar;
use super::trig::sin_cos;
use crate::model::integrator::Integrator;

/// The turn `e = exp(theta)` about a body axis, less the identity: `e - 1`, its scalar part
/// `cos(a/2) - 1 = -2 sin^2(a/4)` computed without cancellation. A step composes its turns
/// and moves `q` in this form (`q + q (e - 1)`), so `q` takes one rounding of a small
/// increment a step, not one of a whole product per turn: the energy's round-off then grows
/// like f32's or f64's unit over the steps, as `rk4`'s does.
#[inline(always)]
fn turn_increment<R: Scalar>(theta: Vec3<R>) -> Quat<R> {
    let c = |v: f64| R::constant(v);
    let angle = theta.length();
    let a2 = angle * angle;
    let series_cos_less_one = a2 * a2 / c(384.0) - a2 / c(8.0);
    let series_sin = c(0.5) - a2 / c(48.0) + a2 * a2 / c(3840.0);
    let (sin, cos) = sin_cos(c(0.25) * angle);
    // At angle 0 the quotient is NaN, and the series is selected (as in `exp_rotation`).
    let small = angle.less(exp_series_below());
    let cos_less_one = R::select(small, series_cos_less_one, -(c(2.0) * (sin * sin)));
    let sin_half = c(2.0) * (sin * cos);
    let sin_half_over_angle = R::select(small, series_sin, sin_half * (c(1.0) / angle));
    let v = theta * sin_half_over_angle;
    Quat::new(cos_less_one, v.x, v.y, v.z)
}

/// `(1 + a)(1 + b) - 1 = a + b + a b`: two turns in the form of [`turn_increment`], composed.
#[inline(always)]
fn compose<R: Scalar>(a: Quat<R>, b: Quat<R>) -> Quat<R> {
    a + b + a.product(b)
}

/// `R(e)^T pi` for the turn `e - 1 = d`: the body angular momentum after the body turned by
/// `e` (world `L` held), `pi - 2 w (u x pi) + 2 u x (u x pi)` with `e = (w, u)`.
#[inline(always)]
fn turned<R: Scalar>(pi: Vec3<R>, d: Quat<R>) -> Vec3<R> {
    let u = d.vector();
    let two_w = R::constant(2.0) * (R::constant(1.0) + d.w);
    let u_pi = u.cross(pi);
    pi - u_pi * two_w + u.cross(u_pi) * R::constant(2.0)
}

/// `Pi = R(q)^T L`, the angular momentum in body coordinates.
#[inline(always)]
fn body_momentum<R: Scalar>(q: Quat<R>, l: Vec3<R>) -> Vec3<R> {
    q.to_rotation().transpose_mul_vec(l)
}

/// What the splitting needs of a body's inertia, fixed while the body moves, so found once
/// per body and run rather than once per step: the Casimir's rate `a_1`, and the outer and
/// inner pieces' coefficients `a_k - a_1` and body axes `n_k` (outer: larger magnitude).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SplitAxes<R> {
    /// `a_1`, the middle inverse moment: the rate of the turn about `Pi` per unit `|Pi|`.
    pub casimir_rate: R,
    /// `a_k - a_1` of the outer piece.
    pub outer_rate: R,
    /// `a_k - a_1` of the inner piece.
    pub inner_rate: R,
    /// `n_k` of the outer piece, a unit body axis.
    pub outer_axis: Vec3<R>,
    /// `n_k` of the inner piece, a unit body axis.
    pub inner_axis: Vec3<R>,
}

/// The numbers of [`SplitAxes`], in the order of [`SplitAxes::to_scalars`].
pub const SPLIT_AXES_NUMBERS: usize = 9;

impl<R: Scalar> SplitAxes<R> {
    /// The split of the body of inverse inertia `inv_inertia` (see the module's notes).
    #[inline(always)]
    pub fn of(inv_inertia: &SymMat3<R>) -> Self {
        let frame = principal_axes(inv_inertia);
        let [a0, a1, a2] = frame.inverse_moments;
        let [n0, _, n2] = frame.axes;
        let (c0, c2) = (a0 - a1, a2 - a1);
        // The outer piece is the one of larger coefficient.
        let outer_is_0 = c2.less(-c0);
        let pick = |x: R, y: R| (R::select(outer_is_0, x, y), R::select(outer_is_0, y, x));
        let (outer_rate, inner_rate) = pick(c0, c2);
        let (ox, ix) = pick(n0.x, n2.x);
        let (oy, iy) = pick(n0.y, n2.y);
        let (oz, iz) = pick(n0.z, n2.z);
        Self {
            casimir_rate: a1,
            outer_rate,
            inner_rate,
            outer_axis: Vec3::new(ox, oy, oz),
            inner_axis: Vec3::new(ix, iy, iz),
        }
    }

    /// The split a step of `integrator` reads: [`SplitAxes::of`] for the splittings, zeros
    /// (never read) for the others, which need no principal axes.
    #[inline(always)]
    pub fn for_integrator(integrator: Integrator, inv_inertia: &SymMat3<R>) -> Self {
        if integrator.splits_the_rotation() {
            Self::of(inv_inertia)
        } else {
            Self::from_scalars(&mut std::iter::repeat(R::constant(0.0)))
        }
    }
}

impl<R: Copy> SplitAxes<R> {
    /// `casimir_rate, outer_rate, inner_rate, outer_axis, inner_axis`.
    pub fn to_scalars(self) -> [R; SPLIT_AXES_NUMBERS] {
        let (o, i) = (self.outer_axis, self.inner_axis);
        [
            self.casimir_rate,
            self.outer_rate,
            self.inner_rate,
            o.x,
            o.y,
            o.z,
            i.x,
            i.y,
            i.z,
        ]
    }

    /// The inverse of [`SplitAxes::to_scalars`].
    pub fn from_scalars(s: &mut impl Iterator<Item = R>) -> Self {
        let mut next = || s.next().expect("a SplitAxes has nine numbers");
        let (casimir_rate, outer_rate, inner_rate) = (next(), next(), next());
        let (x, y, z) = (next(), next(), next());
        let outer_axis = Vec3 { x, y, z };
        let (x, y, z) = (next(), next(), next());
        let inner_axis = Vec3 { x, y, z };
        Self {
            casimir_rate,
            outer_rate,
            inner_rate,
            outer_axis,
            inner_axis,
        }
    }
}

/// The free body's exact-piece splitting over `h`: the orientation `q` after the torque-free
/// motion with world angular momentum `l` (which it keeps), the body split as `axes` says.
/// Each turn's angle reads the body momentum the turns before it left (`turned`); the
/// turns are composed as increments and applied to `q` once.
#[inline(always)]
pub fn free_rotation<R: Scalar>(q: Quat<R>, l: Vec3<R>, axes: &SplitAxes<R>, h: R) -> Quat<R> {
    let (outer, inner) = (axes.outer_axis, axes.inner_axis);
    let half = R::constant(0.5) * h;
    let pi = body_momentum(q, l);
    let first = turn_increment(outer * (axes.outer_rate * outer.dot(pi) * half));
    let pi = turned(pi, first);
    // The Casimir's turn is about `pi` itself, which it leaves as it is.
    let casimir = turn_increment(pi * (axes.casimir_rate * h));
    let middle = turn_increment(inner * (axes.inner_rate * inner.dot(pi) * h));
    let pi = turned(pi, middle);
    let last = turn_increment(outer * (axes.outer_rate * outer.dot(pi) * half));
    let step = compose(compose(compose(first, casimir), middle), last);
    q + q.product(step)
}

/// `lie_poisson`: half kick of `P`, `L` by the forces at `(y, t)`, the free rotation and the
/// drift `x += h P / M` over `h`, and a half kick by the forces at the moved state and
/// `t + h`. Second order, symplectic and time-reversible for forces that depend on the
/// position, the orientation and the time; a force that depends on the velocities (drag,
/// contact friction) is kicked explicitly at each end, first order in that dependence.
#[inline(always)]
pub fn lie_poisson<R: Scalar>(
    y: &State<R>,
    mass: &MassConstants<R>,
    axes: &SplitAxes<R>,
    t: R,
    h: R,
    f: &mut impl FnMut(&State<R>, R) -> Derivative<R>,
) -> State<R> {
    let half = R::constant(0.5) * h;
    let k0 = f(y, t);
    let linear_momentum = y.linear_momentum + k0.force * half;
    let angular_momentum = y.angular_momentum + k0.torque * half;
    let moved = State {
        position: y.position + linear_momentum * mass.inv_mass * h,
        orientation: free_rotation(y.orientation, angular_momentum, axes, h),
        linear_momentum,
        angular_momentum,
    };
    let k1 = f(&moved, t + h);
    State {
        linear_momentum: moved.linear_momentum + k1.force * half,
        angular_momentum: moved.angular_momentum + k1.torque * half,
        ..moved
    }
}

/// The weights of Yoshida's fourth-order triple jump, `w1 = 1 / (2 - 2^(1/3))` outside and
/// `w0 = 1 - 2 w1` (negative) inside, in f64 (rounded to the precision where used).
pub const YOSHIDA_WEIGHTS: [f64; 3] = {
    const W1: f64 = 1.351_207_191_959_657_6;
    [W1, 1.0 - 2.0 * W1, W1]
};

/// `lie_poisson4`: Yoshida's symmetric triple jump of [`lie_poisson`],
/// `Phi(w1 h) Phi(w0 h) Phi(w1 h)`: fourth order, symplectic and time-reversible (same terms
/// as `lie_poisson`), six force evaluations a step.
#[inline(always)]
pub fn lie_poisson4<R: Scalar>(
    y: &State<R>,
    mass: &MassConstants<R>,
    axes: &SplitAxes<R>,
    t: R,
    h: R,
    f: &mut impl FnMut(&State<R>, R) -> Derivative<R>,
) -> State<R> {
    // A loop, not three inlined copies: every instance (the lanes, the duals, the traced
    // kernels) then compiles one `lie_poisson`, which keeps release builds small and quick.
    // The times are `t`, `t + h1`, `(t + h1) + h0` either way.
    let (mut y, mut at) = (*y, t);
    for weight in YOSHIDA_WEIGHTS {
        let jump = R::constant(weight) * h;
        y = lie_poisson(&y, mass, axes, at, jump, f);
        at = at + jump;
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::exp_map::exp_rotation;
    use crate::verify::xorshift::Xorshift64;

    /// The body turned about body axis `axis` (unit) by `angle`: `q exp(axis angle)`, one
    /// whole product per turn (the plain form [`free_rotation`] improves on).
    fn turn<R: Scalar>(q: Quat<R>, axis: Vec3<R>, angle: R) -> Quat<R> {
        q.product(exp_rotation(axis * angle))
    }

    /// [`free_rotation`] with its two non-commuting pieces in the order `outer_larger`
    /// says (the coefficient of larger magnitude outside, or inside).
    fn ordered_rotation(
        q: Quat<f64>,
        l: Vec3<f64>,
        mass: &MassConstants<f64>,
        h: f64,
        outer_larger: bool,
    ) -> Quat<f64> {
        let frame = principal_axes(&mass.inv_inertia);
        let [a0, a1, a2] = frame.inverse_moments;
        let [n0, _, n2] = frame.axes;
        let (first, second) = ((a0 - a1, n0), (a2 - a1, n2));
        let larger_is_first = -first.0 > second.0;
        let ((oc, outer), (ic, inner)) = if larger_is_first == outer_larger {
            (first, second)
        } else {
            (second, first)
        };
        let q = turn(q, outer, oc * outer.dot(body_momentum(q, l)) * 0.5 * h);
        let pi = body_momentum(q, l);
        let q = turn(q, pi, a1 * h);
        let q = turn(q, inner, ic * inner.dot(pi) * h);
        turn(q, outer, oc * outer.dot(body_momentum(q, l)) * 0.5 * h)
    }

    fn energy(q: Quat<f64>, l: Vec3<f64>, mass: &MassConstants<f64>) -> f64 {
        let pi = body_momentum(q, l);
        0.5 * pi.dot(mass.inv_inertia.mul_vec(pi))
    }

    /// Random asymmetric bodies (principal moments 1 to 4, triangle inequality kept) and
    /// angular momenta of magnitude 5.
    fn bodies(count: usize) -> Vec<(MassConstants<f64>, Vec3<f64>)> {
        let mut rng = Xorshift64(0x9e37_79b9_7f4a_7c15);
        let mut uniform = move || rng.unit();
        (0..count)
            .map(|_| {
                let (i1, i2) = (1.0 + 3.0 * uniform(), 1.0 + 3.0 * uniform());
                let i3 = (i1 - i2).abs() + (i1 + i2 - (i1 - i2).abs()) * uniform();
                let inv = SymMat3::from_entries([1.0 / i1, 1.0 / i2, 1.0 / i3, 0.0, 0.0, 0.0]);
                let mass = MassConstants {
                    mass: 1.0,
                    inv_mass: 1.0,
                    inv_inertia: inv,
                };
                let l = Vec3::new(uniform() - 0.5, uniform() - 0.5, uniform() - 0.5);
                (mass, l * (5.0 / l.length()))
            })
            .collect()
    }

    /// The largest relative energy error of each order over `steps` steps of `h`.
    fn worst_energy_errors(
        mass: &MassConstants<f64>,
        l: Vec3<f64>,
        h: f64,
        steps: usize,
    ) -> [f64; 3] {
        let q0 = Quat::new(1.0, 0.0, 0.0, 0.0);
        let e0 = energy(q0, l, mass);
        let mut q = [q0; 3];
        let mut worst = [0.0f64; 3];
        for _ in 0..steps {
            q[0] = ordered_rotation(q[0], l, mass, h, true).normalize();
            q[1] = ordered_rotation(q[1], l, mass, h, false).normalize();
            q[2] = free_rotation(q[2], l, &SplitAxes::of(&mass.inv_inertia), h).normalize();
            for k in 0..3 {
                worst[k] = worst[k].max(((energy(q[k], l, mass) - e0) / e0).abs());
            }
        }
        worst
    }

    /// Over 40 asymmetric bodies, 20,000 steps of h |omega| up to 0.05 each: the larger
    /// coefficient outside gave the smaller energy error on average (mean log10 -6.47
    /// against -6.33 when measured), and `free_rotation` is that order.
    #[test]
    fn the_larger_piece_outside_measures_the_smaller_energy_error() {
        let mut log_mean = [0.0; 3];
        let bodies = bodies(40);
        for (mass, l) in &bodies {
            let worst = worst_energy_errors(mass, *l, 0.01, 20_000);
            // The same map as the plain form with the larger piece outside, to round-off.
            assert!((worst[2] - worst[0]).abs() <= 1e-6 * worst[0], "{worst:?}");
            for k in 0..3 {
                log_mean[k] += worst[k].log10() / bodies.len() as f64;
            }
        }
        println!(
            "mean log10 of the energy error: larger outside {:.2}, inside {:.2}",
            log_mean[0], log_mean[1]
        );
        assert!(log_mean[0] < log_mean[1] - 0.1, "{log_mean:?}");
    }

    /// [`free_rotation`]'s pieces in its order, each a whole product `q exp(theta)` and each
    /// angle read from `R(q)^T L` afresh: the plain form, which rounds `q` four times a step.
    fn plain_rotation<R: Scalar>(q: Quat<R>, l: Vec3<R>, axes: &SplitAxes<R>, h: R) -> Quat<R> {
        let (outer, inner) = (axes.outer_axis, axes.inner_axis);
        let half = R::constant(0.5) * h;
        let q1 = turn(
            q,
            outer,
            axes.outer_rate * outer.dot(body_momentum(q, l)) * half,
        );
        let pi = body_momentum(q1, l);
        let q2 = turn(q1, pi, axes.casimir_rate * h);
        let q3 = turn(q2, inner, axes.inner_rate * inner.dot(pi) * h);
        turn(
            q3,
            outer,
            axes.outer_rate * outer.dot(body_momentum(q3, l)) * half,
        )
    }

    /// The f64 rotational energy of an f32 orientation (normalized in f64).
    fn f64_energy(q: Quat<f32>, l: Vec3<f64>, inv: &SymMat3<f64>) -> f64 {
        let q = q.map(f64::from).normalize();
        let pi = body_momentum(q, l);
        0.5 * pi.dot(inv.mul_vec(pi))
    }

    /// In f32, at h = 0.01 on the tumbling top's inertia: the increments keep the energy's
    /// round-off to 8.4e-6 after 1e6 steps, growing like the square root of the steps
    /// (2.4e-6, 4.4e-6, 8.4e-6 after 1e4, 1e5, 1e6 when measured); the plain form grows
    /// linearly (1.3e-5, 1.3e-4, 1.2e-3), as Vilmart (2008) finds of careless splittings.
    #[test]
    fn the_increments_keep_f32_round_off_growing_like_the_square_root_of_the_steps() {
        let inv64 = SymMat3::from_entries([0.5, 1.0 / 3.0, 0.25, 0.0, 0.0, 0.0]);
        let inv = inv64.map(|x| x as f32);
        let axes = SplitAxes::of(&inv);
        let l64 = Vec3::new(1.6, 3.3, 5.2);
        let l = l64.map(|x| x as f32);
        let h = 0.01f32;
        let mut q = [Quat::new(1.0f32, 0.0, 0.0, 0.0); 2];
        let e0 = f64_energy(q[0], l64, &inv64);
        let mut worst = [0.0f64; 2];
        let mut at = Vec::new();
        for n in 1..=1_000_000u32 {
            q[0] = free_rotation(q[0], l, &axes, h).normalize();
            q[1] = plain_rotation(q[1], l, &axes, h).normalize();
            for k in 0..2 {
                worst[k] = worst[k].max(((f64_energy(q[k], l64, &inv64) - e0) / e0).abs());
            }
            if [10_000, 100_000, 1_000_000].contains(&n) {
                at.push(worst);
            }
        }
        println!("|dE/E| after 1e4, 1e5, 1e6 steps (increments, plain): {at:?}");
        let growth = |k: usize| (at[2][k] / at[0][k]).log10() / 2.0;
        assert!(at[2][0] < 1e-5, "{at:?}");
        assert!(growth(0) < 0.65, "increments grew as N^{}", growth(0));
        // The plain form's linear growth: what this test would catch.
        assert!(growth(1) > 0.85, "plain form grew as N^{}", growth(1));
    }

    /// In f64, on symmetric tops (which the splitting turns exactly, so that their energy
    /// error is round-off alone): the mean of `log10 |dE/E|` over 16 tops after 1e4 and 1e6
    /// steps of h = 0.01 grows by 0.5 +- 0.15 per decade of steps, a random walk's square
    /// root, not round-off's linear drift.
    #[test]
    fn f64_round_off_grows_like_the_square_root_of_the_steps() {
        let tops = 16;
        let mut mean_log = [0.0f64; 3];
        for k in 0..tops {
            let (transverse, axial) = (1.0 + 0.2 * k as f64, 2.5 - 0.1 * k as f64);
            let inv = SymMat3::from_entries([
                1.0 / transverse,
                1.0 / transverse,
                1.0 / axial,
                0.0,
                0.0,
                0.0,
            ]);
            let axes = SplitAxes::of(&inv);
            let l = Vec3::new(0.3 + 0.1 * k as f64, -0.8, 2.0 - 0.05 * k as f64);
            let energy = |q: Quat<f64>| {
                let pi = body_momentum(q, l);
                0.5 * pi.dot(inv.mul_vec(pi))
            };
            let mut q = Quat::new(1.0, 0.0, 0.0, 0.0);
            let e0 = energy(q);
            let mut worst = 0.0f64;
            let mut sample = 0;
            for n in 1..=1_000_000u32 {
                q = free_rotation(q, l, &axes, 0.01).normalize();
                worst = worst.max(((energy(q) - e0) / e0).abs());
                if [10_000, 100_000, 1_000_000].contains(&n) {
                    mean_log[sample] += worst.log10() / tops as f64;
                    sample += 1;
                }
            }
        }
        let per_decade = (mean_log[2] - mean_log[0]) / 2.0;
        println!(
            "mean log10 |dE/E| after 1e4, 1e5, 1e6 steps: {mean_log:?}; growth N^{per_decade:.2}"
        );
        assert!((0.35..0.65).contains(&per_decade), "N^{per_decade}");
    }
}
