//! Volume, centre of mass and inertia of the solid a closed triangle mesh bounds.
//!
//! By the divergence theorem the integrals over the solid are sums over its surface: each
//! triangle spans a signed tetrahedron with a fixed apex, and the signed tetrahedra add up to
//! the solid (the parts outside cancel). The apex is the mean vertex, not the model origin,
//! so a mesh far from its origin does not lose digits to cancellation.

use std::collections::HashMap;

use glam::{DMat3, DQuat, DVec3};

use super::triangle_mesh::TriangleMesh;
use crate::model::eigen::symmetric_eigen;
use crate::model::error::{Error, Result};
use crate::model::validate::MAX_MAGNITUDE;

/// Mass integrals of a closed mesh for unit density, model frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshIntegrals {
    /// Volume (positive: the checks reject inside-out meshes).
    pub volume: f64,
    /// Centre of mass (centroid of the solid) in model coordinates.
    pub centroid: DVec3,
    /// Inertia tensor about the centroid, model axes, for density 1 (mass = volume).
    pub inertia_per_density: DMat3,
}

impl MeshIntegrals {
    /// Principal moments for density 1 and the rotation whose columns are the principal axes
    /// in model coordinates: a proper rotation (det +1), the identity when the model axes are
    /// already principal. Moments are in ascending order unless the rotation is the identity.
    pub fn principal_axes(&self) -> (DVec3, DQuat) {
        let m = self.inertia_per_density;
        let scale = m.to_cols_array().iter().fold(0.0f64, |a, x| a.max(x.abs()));
        let off_diagonal = m.x_axis.y.abs().max(m.x_axis.z.abs()).max(m.y_axis.z.abs());
        // NOTE: an already diagonal tensor keeps the model axes, rather than the permutation
        // that sorting the moments would give, so a mesh modelled along its axes stays so.
        if off_diagonal <= 1e-12 * scale {
            return (
                DVec3::new(m.x_axis.x, m.y_axis.y, m.z_axis.z),
                DQuat::IDENTITY,
            );
        }
        let eigen = symmetric_eigen(m);
        let mut axes = eigen.vectors;
        if axes.determinant() < 0.0 {
            axes.z_axis = -axes.z_axis;
        }
        (eigen.values, DQuat::from_mat3(&axes).normalize())
    }
}

impl TriangleMesh {
    /// Checks that the mesh bounds a solid and returns its mass integrals; errors are
    /// reported under `field` and start with the mesh's name.
    ///
    /// Rejects fewer than 4 vertices, out-of-range indices, zero-area triangles, open or
    /// non-manifold edges, inconsistent winding, inside-out winding and zero volume.
    pub fn integrals(&self, field: &str) -> Result<MeshIntegrals> {
        let fail = |message: String| Error::invalid(field, format!("{}: {message}", self.name));
        if self.vertices.len() < 4 {
            return Err(fail(format!(
                "has {} vertices; a solid needs at least 4",
                self.vertices.len()
            )));
        }
        // Within the f32 range, like every input number; beyond it the sums below overflow
        // and every later check would misreport.
        let in_range = |v: &DVec3| v.is_finite() && v.abs().max_element() <= MAX_MAGNITUDE;
        if let Some(v) = self.vertices.iter().position(|v| !in_range(v)) {
            return Err(fail(format!(
                "vertex {} ({:e}, {:e}, {:e}) is out of range (coordinates, after any `scale`, must be finite with magnitude <= {MAX_MAGNITUDE:e})",
                v + 1,
                self.vertices[v].x,
                self.vertices[v].y,
                self.vertices[v].z
            )));
        }
        for (t, triangle) in self.triangles.iter().enumerate() {
            if let Some(&bad) = triangle.iter().find(|&&i| i >= self.vertices.len()) {
                return Err(fail(format!(
                    "{} uses vertex {} but there are {} vertices",
                    self.describe_triangle(t),
                    bad + 1,
                    self.vertices.len()
                )));
            }
        }
        let apex = self.vertices.iter().sum::<DVec3>() / self.vertices.len() as f64;
        let size = self
            .vertices
            .iter()
            .fold(0.0f64, |m, v| m.max((*v - apex).abs().max_element()));
        for (t, &[a, b, c]) in self.triangles.iter().enumerate() {
            let (a, b, c) = (self.vertices[a], self.vertices[b], self.vertices[c]);
            // Twice the area, against the mesh's size squared: a sliver this thin is a
            // mistake in the file, and its normal would be noise.
            if (b - a).cross(c - a).length() <= 1e-12 * size * size {
                return Err(fail(format!(
                    "{} has zero area (degenerate triangle)",
                    self.describe_triangle(t)
                )));
            }
        }
        self.check_closed(&fail)?;

        let mut volume6 = 0.0; // six times the volume
        let mut first = DVec3::ZERO; // integral of r dV, times 24
        let mut second = DMat3::ZERO; // integral of r r^T dV, times 120
        for &[a, b, c] in &self.triangles {
            let (a, b, c) = (
                self.vertices[a] - apex,
                self.vertices[b] - apex,
                self.vertices[c] - apex,
            );
            // Tetrahedron (0, a, b, c): det = 6 V, its centroid is (a + b + c) / 4 and its
            // covariance integral is det/120 (a a^T + b b^T + c c^T + s s^T) with s = a + b + c.
            let det = a.dot(b.cross(c));
            let s = a + b + c;
            volume6 += det;
            first += det * s;
            second += (outer(a) + outer(b) + outer(c) + outer(s)) * det;
        }
        let volume = volume6 / 6.0;
        if volume <= 1e-12 * size * size * size {
            return Err(if volume < 0.0 {
                fail(format!(
                    "signed volume is {volume} < 0: the winding is inside-out (faces must be \
                     counter-clockwise seen from outside; reverse every face)"
                ))
            } else {
                fail(format!("encloses zero volume ({volume})"))
            });
        }
        let centroid_from_apex = first / 24.0 / volume;
        // Covariance about the centroid: C - V c c^T (parallel axis theorem for C).
        let covariance = second / 120.0 - outer(centroid_from_apex) * volume;
        let inertia = DMat3::from_diagonal(DVec3::splat(
            covariance.x_axis.x + covariance.y_axis.y + covariance.z_axis.z,
        )) - covariance;
        // Symmetrize: the sums above are symmetric up to round-off only.
        let inertia = (inertia + inertia.transpose()) * 0.5;
        Ok(MeshIntegrals {
            volume,
            centroid: apex + centroid_from_apex,
            inertia_per_density: inertia,
        })
    }

    /// Every edge must be used by exactly two triangles, once in each direction: then the
    /// surface is closed, manifold along its edges, and consistently wound.
    fn check_closed(&self, fail: &dyn Fn(String) -> Error) -> Result<()> {
        // Undirected edge (low, high) -> triangles using it forwards (low -> high) and back.
        let mut edges: HashMap<(usize, usize), (Vec<usize>, Vec<usize>)> = HashMap::new();
        for (t, &[a, b, c]) in self.triangles.iter().enumerate() {
            for (from, to) in [(a, b), (b, c), (c, a)] {
                let entry = edges.entry((from.min(to), from.max(to))).or_default();
                if from < to {
                    entry.0.push(t);
                } else {
                    entry.1.push(t);
                }
            }
        }
        // Report the first bad edge in file order, so the message is reproducible.
        let mut bad: Vec<_> = edges
            .into_iter()
            .filter(|(_, (forward, back))| forward.len() != 1 || back.len() != 1)
            .collect();
        bad.sort_by_key(|((low, high), (forward, back))| {
            (forward.iter().chain(back).min().copied(), *low, *high)
        });
        let Some(((low, high), (forward, back))) = bad.into_iter().next() else {
            return Ok(());
        };
        let edge = format!("edge {}-{}", low + 1, high + 1);
        let users = forward.len() + back.len();
        let message = match users {
            1 => format!("{edge} belongs to 1 face (the mesh must be closed)"),
            2 => {
                let (t1, t2) = if forward.len() == 2 {
                    (forward[0], forward[1])
                } else {
                    (back[0], back[1])
                };
                format!(
                    "{edge} is traversed in the same direction by {} and {} (inconsistent \
                     winding: neighbouring faces must run along a shared edge in opposite directions)",
                    self.describe_triangle(t1),
                    self.describe_triangle(t2)
                )
            }
            n => format!(
                "{edge} belongs to {n} faces (the mesh must be a closed manifold: 2 per edge)"
            ),
        };
        Err(fail(message))
    }
}

fn outer(v: DVec3) -> DMat3 {
    DMat3::from_cols(v * v.x, v * v.y, v * v.z)
}
