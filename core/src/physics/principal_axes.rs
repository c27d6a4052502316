//! The principal axes of a body's inverse inertia, found in the physics' own operations so
//! that every backend finds the same axes bit for bit: cyclic Jacobi rotations, a fixed
//! number of sweeps, each rotation's tangent taken from a square root and a quotient only.
//! The Lie–Poisson splitting ([`super::splitting`]) turns the body about these axes.

use super::algebra::{SymMat3, Vec3};
use super::scalar::Scalar;

/// Jacobi sweeps (each three rotations, planes xy, xz, yz). Convergence is quadratic: on
/// 10,000 random inertias the sweeps after these changed no bit of the axes or the moments
/// (`principal_axes::tests`), in f64 and in f32.
const SWEEPS: u32 = 5;

/// The eigen-decomposition `Ibody^-1 = sum_k inverse_moments[k] axes[k] axes[k]^T`, ordered
/// so that `inverse_moments` ascend (`axes[0]` is the axis of the largest moment).
#[derive(Clone, Copy, Debug)]
pub struct PrincipalAxes<R> {
    /// `1 / I_k`, ascending.
    pub inverse_moments: [R; 3],
    /// The unit principal axes in body coordinates, orthogonal to round-off.
    pub axes: [Vec3<R>; 3],
}

/// A symmetric matrix as rows, and the rotation accumulated so far as columns of eigenvectors.
type Jacobi<R> = ([[R; 3]; 3], [[R; 3]; 3]);

/// The rotation in plane `(p, q)` that zeroes entry `(p, q)` of `a`, applied to `a` and
/// accumulated into `v`. The tangent of its angle is `t = 2 a_pq / (d + sign(d) r)` with
/// `d = a_qq - a_pp`, `r = sqrt(d^2 + 4 a_pq^2)`, the root of smaller magnitude (Rutishauser),
/// written without dividing by `a_pq` so that it is smooth where `a_pq` vanishes; it is 0
/// where `d` and `a_pq` both vanish (no rotation is needed there).
#[inline(always)]
fn rotate<R: Scalar>((mut a, mut v): Jacobi<R>, p: usize, q: usize) -> Jacobi<R> {
    let zero = R::constant(0.0);
    let one = R::constant(1.0);
    let apq = a[p][q];
    let d = a[q][q] - a[p][p];
    let r = (d * d + R::constant(4.0) * (apq * apq)).sqrt();
    let denominator = R::select(d.less(zero), d - r, d + r);
    let t = R::select(denominator.equals(zero), zero, (apq + apq) / denominator);
    let c = one / (t * t + one).sqrt();
    let s = t * c;
    let (app, aqq) = (a[p][p] - t * apq, a[q][q] + t * apq);
    let other = 3 - p - q;
    let (arp, arq) = (a[other][p], a[other][q]);
    let (new_rp, new_rq) = (c * arp - s * arq, s * arp + c * arq);
    a[p][p] = app;
    a[q][q] = aqq;
    a[p][q] = zero;
    a[q][p] = zero;
    a[other][p] = new_rp;
    a[p][other] = new_rp;
    a[other][q] = new_rq;
    a[q][other] = new_rq;
    for row in v.iter_mut() {
        let (vp, vq) = (row[p], row[q]);
        row[p] = c * vp - s * vq;
        row[q] = s * vp + c * vq;
    }
    (a, v)
}

/// `a` and `b` in ascending order of their first item.
#[inline(always)]
fn ordered<R: Scalar>(a: (R, Vec3<R>), b: (R, Vec3<R>)) -> ((R, Vec3<R>), (R, Vec3<R>)) {
    let swap = b.0.less(a.0);
    let pick = |x: R, y: R| (R::select(swap, y, x), R::select(swap, x, y));
    let (low, high) = pick(a.0, b.0);
    let (lx, hx) = pick(a.1.x, b.1.x);
    let (ly, hy) = pick(a.1.y, b.1.y);
    let (lz, hz) = pick(a.1.z, b.1.z);
    ((low, Vec3::new(lx, ly, lz)), (high, Vec3::new(hx, hy, hz)))
}

/// The principal axes of `inv_inertia` (see [`PrincipalAxes`]).
#[inline(always)]
pub fn principal_axes<R: Scalar>(inv_inertia: &SymMat3<R>) -> PrincipalAxes<R> {
    let m = inv_inertia;
    let (zero, one) = (R::constant(0.0), R::constant(1.0));
    let a = [[m.xx, m.xy, m.xz], [m.xy, m.yy, m.yz], [m.xz, m.yz, m.zz]];
    let v = [[one, zero, zero], [zero, one, zero], [zero, zero, one]];
    let (a, v) = R::repeat(SWEEPS, (a, v), |j| {
        let j = rotate(j, 0, 1);
        let j = rotate(j, 0, 2);
        rotate(j, 1, 2)
    });
    let axis = |k: usize| Vec3::new(v[0][k], v[1][k], v[2][k]);
    let (e0, e1, e2) = ((a[0][0], axis(0)), (a[1][1], axis(1)), (a[2][2], axis(2)));
    let (e0, e1) = ordered(e0, e1);
    let (e1, e2) = ordered(e1, e2);
    let (e0, e1) = ordered(e0, e1);
    PrincipalAxes {
        inverse_moments: [e0.0, e1.0, e2.0],
        axes: [e0.1, e1.1, e2.1],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::xorshift::Xorshift64;
    use glam::{DMat3, DQuat, DVec3};

    /// Random symmetric positive-definite inverse inertias: a rotated diagonal of moments
    /// spread over two decades, with every tenth one left diagonal and every seventh given
    /// two equal moments.
    fn inverse_inertias(count: usize) -> Vec<SymMat3<f64>> {
        let mut rng = Xorshift64(0x2545_f491_4f6c_dd1d);
        let mut uniform = move || rng.unit();
        (0..count)
            .map(|i| {
                let mut moments = DVec3::new(
                    10f64.powf(2.0 * uniform()),
                    10f64.powf(2.0 * uniform()),
                    10f64.powf(2.0 * uniform()),
                );
                if i % 7 == 3 {
                    moments.y = moments.x;
                }
                let rotation = if i % 10 == 0 {
                    DMat3::IDENTITY
                } else {
                    let axis = DVec3::new(uniform() - 0.5, uniform() - 0.5, uniform() - 0.5);
                    DMat3::from_quat(DQuat::from_axis_angle(axis.normalize(), 6.0 * uniform()))
                };
                let m = rotation * DMat3::from_diagonal(moments.recip()) * rotation.transpose();
                SymMat3::from_entries([
                    m.x_axis.x, m.y_axis.y, m.z_axis.z, m.y_axis.x, m.z_axis.x, m.z_axis.y,
                ])
            })
            .collect()
    }

    fn entries(m: &SymMat3<f64>) -> [f64; 6] {
        [m.xx, m.yy, m.zz, m.xy, m.xz, m.yz]
    }

    /// The axes are orthonormal and rebuild the matrix to a few ulp of its largest entry,
    /// the moments ascend, and further sweeps change nothing: the sweep count is enough.
    #[test]
    fn the_axes_diagonalize_the_inverse_inertia_to_round_off() {
        let mut worst = (0.0f64, 0.0f64);
        for m in inverse_inertias(10_000) {
            let p = principal_axes(&m);
            let [a, b, c] = p.inverse_moments;
            assert!(a <= b && b <= c, "{:?}", p.inverse_moments);
            let scale = entries(&m).iter().fold(0.0f64, |s, e| s.max(e.abs()));
            let mut rebuilt = [0.0; 6];
            for k in 0..3 {
                let (n, l) = (p.axes[k], p.inverse_moments[k]);
                let outer = [
                    n.x * n.x,
                    n.y * n.y,
                    n.z * n.z,
                    n.x * n.y,
                    n.x * n.z,
                    n.y * n.z,
                ];
                for (r, o) in rebuilt.iter_mut().zip(outer) {
                    *r += l * o;
                }
                for j in 0..3 {
                    let dot = n.dot(p.axes[j]);
                    let expected = if j == k { 1.0 } else { 0.0 };
                    worst.1 = worst.1.max((dot - expected).abs());
                }
            }
            for (r, e) in rebuilt.iter().zip(entries(&m)) {
                worst.0 = worst.0.max((r - e).abs() / scale);
            }
            // One more sweep's worth of rotations leaves every bit in place.
            let more = principal_axes_after(&m, SWEEPS + 2);
            assert_eq!(
                more.inverse_moments.map(f64::to_bits),
                p.inverse_moments.map(f64::to_bits)
            );
        }
        // Rebuilding rounds too (1.6e-15 measured); the bit-for-bit check of the extra
        // sweeps above is the sharp test of convergence.
        assert!(
            worst.0 < 4e-15,
            "rebuilt entries off by {:e} of the largest",
            worst.0
        );
        assert!(worst.1 < 4e-15, "axes off orthonormal by {:e}", worst.1);
    }

    /// [`principal_axes`] with `sweeps` sweeps.
    fn principal_axes_after(m: &SymMat3<f64>, sweeps: u32) -> PrincipalAxes<f64> {
        let a = [[m.xx, m.xy, m.xz], [m.xy, m.yy, m.yz], [m.xz, m.yz, m.zz]];
        let v = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        let (a, _) = (0..sweeps).fold((a, v), |j, _| rotate(rotate(rotate(j, 0, 1), 0, 2), 1, 2));
        let mut moments = [a[0][0], a[1][1], a[2][2]];
        moments.sort_by(f64::total_cmp);
        PrincipalAxes {
            inverse_moments: moments,
            axes: [Vec3::new(0.0, 0.0, 0.0); 3],
        }
    }

    /// A diagonal inverse inertia keeps its own axes, exactly.
    #[test]
    fn a_diagonal_inverse_inertia_keeps_the_body_axes() {
        let m = SymMat3::from_entries([0.5, 0.25, 1.0, 0.0, 0.0, 0.0]);
        let p = principal_axes(&m);
        assert_eq!(p.inverse_moments, [0.25, 0.5, 1.0]);
        let [a, b, c] = p.axes.map(|n| [n.x, n.y, n.z]);
        assert_eq!(
            (a, b, c),
            ([0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0])
        );
    }
}
