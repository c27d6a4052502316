//! The stage the crowd is drawn on: which way is up, the sphere the camera frames, and the
//! floor (the crowd's planes, cut to the space the crowd lives in, or a ground plane under it).

use glam::{DVec3, Vec3};

use crate::assembly::crowd::Crowd;
use crate::model::force::ForceKind;
use crate::render::instances::equivalent_box;
use crate::render::mesh::MeshVertex;

/// Where the crowd is, and what it stands on.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    /// Centre of the sphere that holds every body at the start.
    pub centre: Vec3,
    /// Radius of that sphere (at least a small positive number).
    pub radius: f32,
    /// Up: against gravity if the crowd has a global gravity force, else along the first
    /// plane's normal, else +z.
    pub up: Vec3,
    /// Floor triangles (counter-clockwise seen from the side the bodies are on).
    pub(crate) floor: Vec<MeshVertex>,
    /// Edge length of the floor's checker squares.
    pub checker: f32,
}

impl Stage {
    /// The stage of `crowd` as it is now (normally its starting state).
    pub fn of(crowd: &Crowd) -> Self {
        let (low, high) = bounds(crowd);
        let centre = 0.5 * (low + high);
        let radius = (0.5 * (high - low).length()).max(1e-3);
        let gravity: DVec3 = crowd
            .forces
            .iter()
            .filter(|f| f.body.is_none())
            .filter_map(|f| match f.kind {
                ForceKind::Gravity { acceleration } => Some(acceleration),
                _ => None,
            })
            .sum();
        let up = (-gravity)
            .try_normalize()
            .or_else(|| crowd.planes.first().map(|p| p.normal.normalize()))
            .unwrap_or(DVec3::Z);
        let planes: Vec<(DVec3, f64)> = if crowd.planes.is_empty() {
            // A ground plane just under the lowest body.
            vec![(up, lowest(crowd, up).unwrap_or(centre.dot(up) - radius))]
        } else {
            crowd
                .planes
                .iter()
                .map(|p| (p.normal.normalize(), p.offset))
                .collect()
        };
        let mut floor = Vec::new();
        for (index, &(normal, offset)) in planes.iter().enumerate() {
            let others: Vec<(DVec3, f64)> = planes
                .iter()
                .enumerate()
                .filter(|&(other, _)| other != index)
                .map(|(_, &p)| p)
                .collect();
            floor.extend(plane_triangles(
                normal,
                offset,
                centre,
                1.5 * radius,
                &others,
            ));
        }
        let checker = 10f64.powf((radius / 6.0).log10().round()) as f32;
        Self {
            centre: centre.as_vec3(),
            radius: radius as f32,
            up: up.as_vec3(),
            floor,
            checker,
        }
    }
}

/// Lowest point of any body along `up` (its centre less its extent); `None` without bodies.
fn lowest(crowd: &Crowd, up: DVec3) -> Option<f64> {
    crowd
        .bodies
        .iter()
        .map(|b| b.state.position.dot(up) - extent(&b.mass))
        .reduce(f64::min)
}

/// Radius of a sphere about the centre of mass that holds the body as drawn.
fn extent(mass: &crate::model::mass::MassProperties) -> f64 {
    match mass.shape() {
        Some(shape) => shape.half_extents().length(),
        None => equivalent_box(mass.mass(), mass.inertia_body()).0.length(),
    }
}

/// Corners of the box holding every body (the origin's unit box for an empty crowd).
fn bounds(crowd: &Crowd) -> (DVec3, DVec3) {
    if crowd.bodies.is_empty() {
        return (-DVec3::ONE, DVec3::ONE);
    }
    let mut low = DVec3::splat(f64::INFINITY);
    let mut high = DVec3::splat(f64::NEG_INFINITY);
    for body in &crowd.bodies {
        let r = extent(&body.mass);
        low = low.min(body.state.position - r);
        high = high.max(body.state.position + r);
    }
    (low, high)
}

/// The part of the plane `normal . p = offset` inside the cube `centre ± half` and on the inner
/// side of every other plane, as a fan of triangles facing along `normal`.
fn plane_triangles(
    normal: DVec3,
    offset: f64,
    centre: DVec3,
    half: f64,
    others: &[(DVec3, f64)],
) -> Vec<MeshVertex> {
    // A square on the plane, large enough to cover the cube, then cut down.
    let foot = centre - normal * (normal.dot(centre) - offset);
    let a = normal.any_orthonormal_vector();
    let b = normal.cross(a);
    let big = 4.0 * half;
    let mut polygon = vec![
        foot + big * (-a - b),
        foot + big * (a - b),
        foot + big * (a + b),
        foot + big * (-a + b),
    ];
    let mut cuts: Vec<(DVec3, f64)> = others.to_vec();
    for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
        cuts.push((axis, axis.dot(centre) - half));
        cuts.push((-axis, -axis.dot(centre) - half));
    }
    for (n, d) in cuts {
        polygon = clip(&polygon, n, d);
    }
    let vertex = |p: DVec3| MeshVertex {
        position: p.as_vec3().to_array(),
        cap: 0.0,
        normal: normal.as_vec3().to_array(),
        _pad: 0.0,
    };
    let mut triangles = Vec::new();
    for i in 1..polygon.len().saturating_sub(1) {
        triangles.extend([polygon[0], polygon[i], polygon[i + 1]].map(vertex));
    }
    triangles
}

/// Sutherland–Hodgman: the part of the convex polygon where `n . p >= d`.
fn clip(polygon: &[DVec3], n: DVec3, d: f64) -> Vec<DVec3> {
    let mut kept = Vec::with_capacity(polygon.len() + 1);
    for (i, &p) in polygon.iter().enumerate() {
        let q = polygon[(i + 1) % polygon.len()];
        let (dp, dq) = (n.dot(p) - d, n.dot(q) - d);
        if dp >= 0.0 {
            kept.push(p);
        }
        if (dp >= 0.0) != (dq >= 0.0) {
            kept.push(p + (q - p) * (dp / (dp - dq)));
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assembly::generate::CrowdSpec;
    use crate::model::plane::Plane;

    /// A pit of a floor and four walls: every floor vertex lies on its plane and inside the
    /// others, the triangles face the bodies' side, and the floor under the crowd is covered.
    #[test]
    fn planes_are_cut_to_the_pit_and_face_the_crowd() {
        let mut spec = CrowdSpec::new(50, 2);
        spec.region = [[-4.0, -4.0, 1.0], [4.0, 4.0, 9.0]];
        let mut crowd = Crowd::new(spec.generate().unwrap(), 1e-3);
        crowd.planes = vec![
            Plane::through(DVec3::ZERO, DVec3::Z, 0.5, 0.5),
            Plane::through(DVec3::new(-5.0, 0.0, 0.0), DVec3::X, 0.5, 0.5),
            Plane::through(DVec3::new(5.0, 0.0, 0.0), -DVec3::X, 0.5, 0.5),
        ];
        let stage = Stage::of(&crowd);
        assert_eq!(stage.up, Vec3::Z);
        assert!(!stage.floor.is_empty() && stage.floor.len().is_multiple_of(3));
        for t in stage.floor.chunks(3) {
            let p = [0, 1, 2].map(|k| Vec3::from(t[k].position));
            let n = Vec3::from(t[0].normal);
            assert!((p[1] - p[0]).cross(p[2] - p[0]).dot(n) > 0.0);
            for q in p {
                for plane in &crowd.planes {
                    let d = plane.normal.as_vec3().dot(q) - plane.offset as f32;
                    assert!(d > -1e-3, "{q} outside {plane:?}");
                }
            }
        }
        let floor_area: f32 = stage
            .floor
            .chunks(3)
            .filter(|t| t[0].normal == [0.0, 0.0, 1.0])
            .map(|t| {
                let p = [0, 1, 2].map(|k| Vec3::from(t[k].position));
                0.5 * (p[1] - p[0]).cross(p[2] - p[0]).length()
            })
            .sum();
        // 10 m between the walls, at least the crowd's 8 m (plus body sizes) the other way.
        assert!(floor_area > 10.0 * 8.0, "{floor_area}");
    }

    #[test]
    fn without_planes_the_ground_is_under_the_lowest_body_and_up_opposes_gravity() {
        let mut crowd = Crowd::new(CrowdSpec::new(20, 3).generate().unwrap(), 1e-3);
        crowd.forces.push(crate::model::force::Force {
            kind: ForceKind::Gravity {
                acceleration: DVec3::new(0.0, -9.8, 0.0),
            },
            body: None,
        });
        let stage = Stage::of(&crowd);
        assert_eq!(stage.up, Vec3::Y);
        let lowest = crowd
            .bodies
            .iter()
            .map(|b| b.state.position.y - extent(&b.mass))
            .fold(f64::INFINITY, f64::min) as f32;
        assert!(!stage.floor.is_empty());
        for v in &stage.floor {
            assert!((v.position[1] - lowest).abs() < 1e-3 * lowest.abs().max(1.0));
            assert_eq!(v.normal, [0.0, 1.0, 0.0]);
        }
    }
}
