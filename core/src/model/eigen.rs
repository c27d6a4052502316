//! Eigen-decomposition of a symmetric 3x3 matrix by cyclic Jacobi rotations.
//!
//! Small and unconditionally convergent for symmetric input; used to validate inertia
//! tensors (positive definiteness, the triangle inequality of the principal moments).

use glam::{DMat3, DVec3};

/// Eigenvalues (ascending) and the matching unit eigenvectors (columns) of a symmetric matrix.
#[derive(Clone, Copy, Debug)]
pub struct SymmetricEigen {
    /// Eigenvalues, smallest first.
    pub values: DVec3,
    /// Eigenvectors as columns, `vectors.col(i)` belongs to `values[i]`.
    pub vectors: DMat3,
}

/// Decomposes the symmetric matrix `m` (only its upper triangle is read).
pub fn symmetric_eigen(m: DMat3) -> SymmetricEigen {
    let mut a = m.to_cols_array_2d(); // a[col][row]; symmetric, so the order does not matter
    let mut v = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    for _sweep in 0..64 {
        let off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
        let diag = a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2];
        if off <= f64::EPSILON * f64::EPSILON * diag || off == 0.0 {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            if a[p][q] == 0.0 {
                continue;
            }
            // Rotation angle that zeroes a[p][q] (Golub & Van Loan, symmetric Schur).
            let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
            let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
            let t = if theta == 0.0 { 1.0 } else { t };
            let c = 1.0 / (t * t + 1.0).sqrt();
            let s = t * c;
            for row in &mut a {
                let (akp, akq) = (row[p], row[q]);
                row[p] = c * akp - s * akq;
                row[q] = s * akp + c * akq;
            }
            let (ap, aq) = (a[p], a[q]);
            a[p] = std::array::from_fn(|k| c * ap[k] - s * aq[k]);
            a[q] = std::array::from_fn(|k| s * ap[k] + c * aq[k]);
            for row in &mut v {
                let vp = row[p];
                let vq = row[q];
                row[p] = c * vp - s * vq;
                row[q] = s * vp + c * vq;
            }
        }
    }
    let mut order = [0usize, 1, 2];
    order.sort_by(|&i, &j| a[i][i].total_cmp(&a[j][j]));
    let values = DVec3::new(
        a[order[0]][order[0]],
        a[order[1]][order[1]],
        a[order[2]][order[2]],
    );
    let column = |i: usize| DVec3::new(v[0][i], v[1][i], v[2][i]);
    let vectors = DMat3::from_cols(column(order[0]), column(order[1]), column(order[2]));
    SymmetricEigen { values, vectors }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconstructs_a_rotated_diagonal_matrix() {
        let r = DMat3::from_quat(glam::DQuat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 2.0));
        let d = DMat3::from_diagonal(DVec3::new(3.0, 1.0, 2.5));
        let m = r * d * r.transpose();
        let e = symmetric_eigen(m);
        assert!((e.values - DVec3::new(1.0, 2.5, 3.0)).abs().max_element() < 1e-12);
        let rebuilt = e.vectors * DMat3::from_diagonal(e.values) * e.vectors.transpose();
        assert!(
            (rebuilt - m)
                .to_cols_array()
                .iter()
                .all(|x| x.abs() < 1e-12)
        );
    }
}
