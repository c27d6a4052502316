//! Unit meshes the renderer scales per body: a cube, a sphere, a cylinder and a capsule, all
//! centred on the origin with their axis of symmetry along body z (as `Shape` has them).

use bytemuck::{Pod, Zeroable};

/// One mesh vertex; kept in sync with `MeshVertex` in shaders/render.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct MeshVertex {
    /// Position on the unit solid.
    pub position: [f32; 3],
    /// Capsules only: +1 on the upper cap, -1 on the lower one; the shader moves the vertex by
    /// this times the half length along z, stretching a sphere into a capsule.
    pub cap: f32,
    /// Outward unit normal.
    pub normal: [f32; 3],
    pub _pad: f32,
}

/// The unit solids, in the order their meshes sit in the shared buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UnitMesh {
    /// `[-1, 1]^3`, drawn for boxes and for the proxy box of a body without a shape.
    Cube,
    /// The unit sphere, drawn for spheres and (scaled per axis) ellipsoids.
    Sphere,
    /// Radius 1, `z` in `[-1, 1]`.
    Cylinder,
    /// A unit sphere cut at its equator, the halves marked to move apart by the half length.
    Capsule,
}

impl UnitMesh {
    /// Every unit mesh, in buffer order.
    pub const ALL: [UnitMesh; 4] = [
        UnitMesh::Cube,
        UnitMesh::Sphere,
        UnitMesh::Cylinder,
        UnitMesh::Capsule,
    ];

    /// Position in [`UnitMesh::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Segments around the axis of the round solids; enough for a smooth silhouette at crowd scale.
const SLICES: u32 = 24;
/// Rings from pole to pole of the sphere (even, so the capsule can be cut at the equator).
const STACKS: u32 = 16;

/// Vertices and triangle indices (counter-clockwise seen from outside) of one solid.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Mesh {
    pub vertices: Vec<MeshVertex>,
    pub indices: Vec<u32>,
}

impl Mesh {
    /// The unit mesh of `kind`.
    pub fn unit(kind: UnitMesh) -> Self {
        match kind {
            UnitMesh::Cube => cube(),
            UnitMesh::Sphere => sphere(false),
            UnitMesh::Cylinder => cylinder(),
            UnitMesh::Capsule => sphere(true),
        }
    }

    fn push(&mut self, position: [f32; 3], normal: [f32; 3], cap: f32) -> u32 {
        self.vertices.push(MeshVertex {
            position,
            cap,
            normal,
            _pad: 0.0,
        });
        self.vertices.len() as u32 - 1
    }

    /// Two counter-clockwise triangles over the quad `a b c d` (in order around it).
    fn quad(&mut self, a: u32, b: u32, c: u32, d: u32) {
        self.indices.extend_from_slice(&[a, b, c, a, c, d]);
    }
}

fn cube() -> Mesh {
    let mut mesh = Mesh::default();
    // Each face by its normal axis and sign; (u, v) span the face with u x v = normal.
    for axis in 0..3 {
        for sign in [1.0f32, -1.0] {
            let mut normal = [0.0; 3];
            normal[axis] = sign;
            let (u_axis, v_axis) = ((axis + 1) % 3, (axis + 2) % 3);
            let corner = |u: f32, v: f32| {
                let mut p = [0.0; 3];
                p[axis] = sign;
                p[u_axis] = u;
                p[v_axis] = v * sign;
                p
            };
            let a = mesh.push(corner(-1.0, -1.0), normal, 0.0);
            let b = mesh.push(corner(1.0, -1.0), normal, 0.0);
            let c = mesh.push(corner(1.0, 1.0), normal, 0.0);
            let d = mesh.push(corner(-1.0, 1.0), normal, 0.0);
            mesh.quad(a, b, c, d);
        }
    }
    mesh
}

/// Point on the unit circle at slice `j`.
fn around(j: u32) -> (f32, f32) {
    let phi = std::f32::consts::TAU * j as f32 / SLICES as f32;
    (phi.cos(), phi.sin())
}

/// A UV sphere with poles on z. As a capsule, the equator ring is emitted twice, once with each
/// half, and the band between the two copies becomes the capsule's straight side.
fn sphere(capsule: bool) -> Mesh {
    let mut mesh = Mesh::default();
    let mut rings: Vec<u32> = Vec::new(); // first vertex of each ring
    for i in 0..=STACKS {
        let theta = std::f32::consts::PI * i as f32 / STACKS as f32;
        // Exact poles: sin(pi) in f32 is not 0, which would give the pole's triangles a
        // sliver of area facing anywhere.
        let (z, r) = match i {
            0 => (1.0, 0.0),
            _ if i == STACKS => (-1.0, 0.0),
            _ => (theta.cos(), theta.sin()),
        };
        let halves: &[f32] = match (capsule, 2 * i) {
            (false, _) => &[0.0],
            (true, twice) if twice < STACKS => &[1.0],
            (true, twice) if twice == STACKS => &[1.0, -1.0],
            (true, _) => &[-1.0],
        };
        for &cap in halves {
            rings.push(mesh.vertices.len() as u32);
            for j in 0..=SLICES {
                let (c, s) = around(j);
                let p = [r * c, r * s, z];
                mesh.push(p, p, cap);
            }
        }
    }
    let stride = SLICES + 1;
    for pair in rings.windows(2) {
        let (upper, lower) = (pair[0], pair[1]);
        for j in 0..SLICES {
            // Seen from outside, going down then around (+phi) is counter-clockwise.
            mesh.quad(upper + j, lower + j, lower + j + 1, upper + j + 1);
        }
    }
    debug_assert_eq!(mesh.vertices.len() as u32 % stride, 0);
    mesh
}

fn cylinder() -> Mesh {
    let mut mesh = Mesh::default();
    let top = mesh.vertices.len() as u32;
    for z in [1.0f32, -1.0] {
        for j in 0..=SLICES {
            let (c, s) = around(j);
            mesh.push([c, s, z], [c, s, 0.0], 0.0);
        }
    }
    let bottom = top + SLICES + 1;
    for j in 0..SLICES {
        mesh.quad(top + j, bottom + j, bottom + j + 1, top + j + 1);
    }
    for z in [1.0f32, -1.0] {
        let centre = mesh.push([0.0, 0.0, z], [0.0, 0.0, z], 0.0);
        let rim = mesh.vertices.len() as u32;
        for j in 0..=SLICES {
            let (c, s) = around(j);
            mesh.push([c, s, z], [0.0, 0.0, z], 0.0);
        }
        for j in 0..SLICES {
            // Counter-clockwise seen from +z on the top cap, from -z on the bottom one.
            let (a, b) = if z > 0.0 {
                (rim + j, rim + j + 1)
            } else {
                (rim + j + 1, rim + j)
            };
            mesh.indices.extend_from_slice(&[centre, a, b]);
        }
    }
    mesh
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    /// Every triangle faces outward: its geometric normal agrees with the vertex normals, and
    /// every normal is a unit vector; indices stay in range.
    #[test]
    fn unit_meshes_are_closed_outward_and_unit_normal() {
        for kind in UnitMesh::ALL {
            let mesh = Mesh::unit(kind);
            assert_eq!(mesh.indices.len() % 3, 0, "{kind:?}");
            let n = mesh.vertices.len() as u32;
            assert!(mesh.indices.iter().all(|&i| i < n), "{kind:?}");
            // A capsule of half length 0.5: the shader's displacement applied here.
            let place = |v: &MeshVertex| Vec3::from(v.position) + Vec3::Z * 0.5 * v.cap;
            let mut area = 0.0;
            for t in mesh.indices.chunks(3) {
                let [a, b, c] = [0, 1, 2].map(|k| &mesh.vertices[t[k] as usize]);
                let face = (place(b) - place(a)).cross(place(c) - place(a));
                let normal = Vec3::from(a.normal) + Vec3::from(b.normal) + Vec3::from(c.normal);
                assert!(face.dot(normal) >= 0.0, "{kind:?}: inward triangle {t:?}");
                area += 0.5 * face.length();
            }
            for v in &mesh.vertices {
                assert!(
                    (Vec3::from(v.normal).length() - 1.0).abs() < 1e-6,
                    "{kind:?}"
                );
            }
            // Surface areas of the exact solids; the polygonal ones are a little smaller.
            let pi = std::f32::consts::PI;
            let exact = match kind {
                UnitMesh::Cube => 24.0,
                UnitMesh::Sphere => 4.0 * pi,
                UnitMesh::Cylinder => 2.0 * pi * 2.0 + 2.0 * pi,
                UnitMesh::Capsule => 4.0 * pi + 2.0 * pi * 1.0,
            };
            assert!(
                area <= exact * 1.0001 && area >= exact * 0.97,
                "{kind:?}: area {area} vs {exact}"
            );
        }
    }
}
