//! What the renderer knows of each body besides its state: which unit mesh to draw, how to
//! scale it, and its colour. Built once from the mass properties; the state stays on the GPU.

use std::ops::Range;

use bytemuck::{Pod, Zeroable};
use glam::{DMat3, DQuat, DVec3};

use crate::model::eigen::symmetric_eigen;
use crate::model::mass::MassProperties;
use crate::model::shape::Shape;
use crate::render::mesh::UnitMesh;

/// One drawn body; kept in sync with `RenderBody` in shaders/render.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct RenderBodyGpu {
    /// xyz: per-axis scale of the unit mesh; w: capsule half length (0 otherwise).
    pub scale: [f32; 4],
    /// Rotation from mesh axes to body axes, (x, y, z, w); the identity except for proxies.
    pub mesh_to_body: [f32; 4],
    /// Linear RGB, alpha unused.
    pub color: [f32; 4],
    /// Index of the body's state in its chunk's state buffer.
    pub body: u32,
    pub _pad: [u32; 3],
}

/// How one body is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Appearance {
    pub mesh: UnitMesh,
    pub record: RenderBodyGpu,
}

/// Colours by shape, linear RGB: box, sphere, cylinder, capsule, ellipsoid, and the proxy box
/// of a body without a closed-form shape.
const BOX_COLOR: [f32; 3] = [0.90, 0.40, 0.12];
const SPHERE_COLOR: [f32; 3] = [0.15, 0.45, 0.90];
const CYLINDER_COLOR: [f32; 3] = [0.20, 0.70, 0.30];
const CAPSULE_COLOR: [f32; 3] = [0.65, 0.25, 0.80];
const ELLIPSOID_COLOR: [f32; 3] = [0.92, 0.75, 0.15];
const PROXY_COLOR: [f32; 3] = [0.20, 0.62, 0.66];

impl Appearance {
    /// The appearance of body `index` (chunk-local `body`) with mass properties `mass`.
    pub fn of(mass: &MassProperties, index: usize, body: u32) -> Self {
        let (mesh, scale, mesh_to_body) = match mass.shape() {
            Some(Shape::Box { size }) => (UnitMesh::Cube, 0.5 * size, DQuat::IDENTITY),
            Some(Shape::Sphere { radius }) => {
                (UnitMesh::Sphere, DVec3::splat(radius), DQuat::IDENTITY)
            }
            Some(Shape::Cylinder { radius, height }) => (
                UnitMesh::Cylinder,
                DVec3::new(radius, radius, 0.5 * height),
                DQuat::IDENTITY,
            ),
            Some(Shape::Capsule { radius, .. }) => {
                (UnitMesh::Capsule, DVec3::splat(radius), DQuat::IDENTITY)
            }
            Some(Shape::Ellipsoid { semi_axes }) => (UnitMesh::Sphere, semi_axes, DQuat::IDENTITY),
            // Meshes, bodies given by their inertia, and any shape added later.
            _ => {
                let (half_extents, rotation) = equivalent_box(mass.mass(), mass.inertia_body());
                (UnitMesh::Cube, half_extents, rotation)
            }
        };
        let half_length = match mass.shape() {
            Some(Shape::Capsule { length, .. }) => 0.5 * length,
            _ => 0.0,
        };
        let q = mesh_to_body.normalize();
        let shade = 0.85 + 0.3 * unit_hash(index as u64);
        let color = base_color(mass.shape()).map(|c| (c * shade).min(1.0));
        Self {
            mesh,
            record: RenderBodyGpu {
                scale: [
                    scale.x as f32,
                    scale.y as f32,
                    scale.z as f32,
                    half_length as f32,
                ],
                mesh_to_body: [q.x as f32, q.y as f32, q.z as f32, q.w as f32],
                color: [color[0], color[1], color[2], 1.0],
                body,
                _pad: [0; 3],
            },
        }
    }
}

/// The colour (linear RGB, before shading) bodies of `shape` are drawn in; `None` is a body
/// without a closed-form shape (a mesh, or one given by its inertia), drawn as its proxy box.
pub fn base_color(shape: Option<Shape>) -> [f32; 3] {
    match shape {
        Some(Shape::Box { .. }) => BOX_COLOR,
        Some(Shape::Sphere { .. }) => SPHERE_COLOR,
        Some(Shape::Cylinder { .. }) => CYLINDER_COLOR,
        Some(Shape::Capsule { .. }) => CAPSULE_COLOR,
        Some(Shape::Ellipsoid { .. }) => ELLIPSOID_COLOR,
        _ => PROXY_COLOR,
    }
}

/// The uniform box with the same mass and inertia tensor: half extents along its principal
/// axes, and the rotation from box axes to body axes. A solid box of half extents `a, b, c` has
/// `I_x = m (b^2 + c^2) / 3`, so `a^2 = 3 (I_y + I_z - I_x) / (2 m)`.
pub(crate) fn equivalent_box(mass: f64, inertia: DMat3) -> (DVec3, DQuat) {
    let eigen = symmetric_eigen(inertia);
    let [i_x, i_y, i_z] = eigen.values.to_array();
    let half = |own: f64, others: f64| (1.5 * (others - own) / mass).max(0.0).sqrt();
    let extents = DVec3::new(
        half(i_x, i_y + i_z),
        half(i_y, i_x + i_z),
        half(i_z, i_x + i_y),
    );
    // A thin plate has one zero extent; keep it visible.
    let extents = extents.max(DVec3::splat(1e-3 * extents.max_element()));
    let mut axes = eigen.vectors;
    if axes.determinant() < 0.0 {
        axes.z_axis = -axes.z_axis;
    }
    (extents, DQuat::from_mat3(&axes))
}

/// A number in `[0, 1)` that varies from body to body, so neighbours of one shape differ in
/// shade (splitmix64's finaliser).
fn unit_hash(index: u64) -> f32 {
    let mut z = index.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 40) as f32 / (1u64 << 24) as f32
}

/// The records of a chunk's bodies grouped by unit mesh (in [`UnitMesh::ALL`] order), and the
/// instance range of each mesh in them.
pub(crate) fn grouped_records(
    masses: &[MassProperties],
    first_body: usize,
) -> (Vec<RenderBodyGpu>, [Range<u32>; 4]) {
    let appearances: Vec<Appearance> = masses
        .iter()
        .enumerate()
        .map(|(local, mass)| Appearance::of(mass, first_body + local, local as u32))
        .collect();
    let mut records = Vec::with_capacity(appearances.len());
    let mut ranges: [Range<u32>; 4] = Default::default();
    for kind in UnitMesh::ALL {
        let start = records.len() as u32;
        records.extend(
            appearances
                .iter()
                .filter(|a| a.mesh == kind)
                .map(|a| a.record),
        );
        ranges[kind.index()] = start..records.len() as u32;
    }
    (records, ranges)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_equivalent_box_of_a_box_is_the_box() {
        let size = DVec3::new(6.0, 1.0, 4.0);
        let shape = Shape::Box { size };
        let mass = 24.0;
        let (half, rotation) = equivalent_box(mass, shape.inertia(mass));
        // Along its principal axes the box is the same up to a permutation of the axes.
        let world = (rotation * half).abs();
        let mut got = [world.x, world.y, world.z];
        got.sort_by(f64::total_cmp);
        assert!(
            (got[0] - 0.5).abs() < 1e-9 && (got[1] - 2.0).abs() < 1e-9,
            "{got:?}"
        );
        assert!((got[2] - 3.0).abs() < 1e-9, "{got:?}");
        // A tilted body: the box along its principal axes has the body's inertia tensor.
        let tilted = DQuat::from_euler(glam::EulerRot::XYZ, 0.3, -0.7, 1.1);
        let r = DMat3::from_quat(tilted);
        let inertia = r * shape.inertia(mass) * r.transpose();
        let (half_tilted, rotation) = equivalent_box(mass, inertia);
        let axes = DMat3::from_quat(rotation);
        let rebuilt = Shape::Box {
            size: 2.0 * half_tilted,
        }
        .inertia(mass);
        let rebuilt = axes * rebuilt * axes.transpose();
        for (a, b) in rebuilt.to_cols_array().iter().zip(inertia.to_cols_array()) {
            assert!((a - b).abs() < 1e-9 * 50.0, "{rebuilt} vs {inertia}");
        }
    }

    #[test]
    fn records_are_grouped_by_mesh_and_keep_their_body_index() {
        let shapes = [
            Shape::Sphere { radius: 1.0 },
            Shape::Box { size: DVec3::ONE },
            Shape::Capsule {
                radius: 0.5,
                length: 2.0,
            },
            Shape::Ellipsoid {
                semi_axes: DVec3::new(1.0, 2.0, 3.0),
            },
            Shape::Cylinder {
                radius: 1.0,
                height: 1.0,
            },
        ];
        let masses: Vec<MassProperties> = shapes
            .iter()
            .map(|&s| MassProperties::from_shape(1.0, s, "body").unwrap())
            .collect();
        let (records, ranges) = grouped_records(&masses, 10);
        let body_of = |range: &Range<u32>| -> Vec<u32> {
            records[range.start as usize..range.end as usize]
                .iter()
                .map(|r| r.body)
                .collect()
        };
        assert_eq!(body_of(&ranges[UnitMesh::Cube.index()]), vec![1]);
        assert_eq!(body_of(&ranges[UnitMesh::Sphere.index()]), vec![0, 3]);
        assert_eq!(body_of(&ranges[UnitMesh::Cylinder.index()]), vec![4]);
        assert_eq!(body_of(&ranges[UnitMesh::Capsule.index()]), vec![2]);
        let capsule = records[ranges[UnitMesh::Capsule.index()].start as usize];
        assert_eq!(capsule.scale, [0.5, 0.5, 0.5, 1.0]);
        let ellipsoid = records[ranges[UnitMesh::Sphere.index()].start as usize + 1];
        assert_eq!(ellipsoid.scale, [1.0, 2.0, 3.0, 0.0]);
    }
}
