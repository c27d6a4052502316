//! Mass properties of closed-form shapes and OBJ meshes, the model frame a mesh body is
//! reported in, and the scene-file syntax for both, with its errors.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::{BACKENDS, assert_close, rigid_crowd, run};
use rigid_crowd::glam::{DMat3, DQuat, DVec3, EulerRot};
use rigid_crowd::{Body, Crowd, Integrator, MassProperties, Scene, Shape, TriangleMesh};

fn manifest(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn data(name: &str) -> PathBuf {
    manifest("tests/data").join(name)
}

fn load(path: &Path) -> TriangleMesh {
    TriangleMesh::load_obj(path, "m").unwrap()
}

/// Largest entry of `a - b`, relative to the largest entry of `b`.
fn matrix_error(a: DMat3, b: DMat3) -> f64 {
    let scale = b.to_cols_array().iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let diff = (a - b).to_cols_array();
    diff.iter().fold(0.0f64, |m, x| m.max(x.abs())) / scale
}

/// The inertia tensor in model axes: `Rm Ibody Rm^T`.
fn inertia_in_model_axes(mass: &MassProperties) -> DMat3 {
    let r = DMat3::from_quat(mass.model_frame().rotation);
    r * mass.inertia_body() * r.transpose()
}

/// `mesh` with every vertex moved by `rotation` then `offset`.
fn moved(mesh: &TriangleMesh, rotation: DQuat, offset: DVec3, stretch: DVec3) -> TriangleMesh {
    TriangleMesh::new(
        "moved",
        mesh.vertices()
            .iter()
            .map(|&v| offset + rotation * (v * stretch))
            .collect(),
        mesh.triangles().to_vec(),
    )
}

// Round-off of sums over a dozen triangles with coordinates of order 10: far below 1e-12.
const MESH_ROUND_OFF: f64 = 1e-12;

#[test]
fn a_moved_unit_cube_mesh_has_the_box_mass_properties() {
    let cube = load(&data("cube.obj"));
    let rotation = DQuat::from_euler(EulerRot::ZXY, 0.7, -1.9, 2.4);
    let offset = DVec3::new(3.0, -7.0, 11.0);
    let mesh = moved(&cube, rotation, offset, DVec3::ONE);
    let mass = MassProperties::from_mesh(3.0, &mesh, "cube").unwrap();
    assert_eq!(mass.mass(), 3.0);
    assert!(mass.shape().is_none());
    // The cube file's corner is at the origin, so its centre is at (0.5, 0.5, 0.5).
    let centre = offset + rotation * DVec3::splat(0.5);
    assert_close("centre", mass.model_frame().offset, centre, MESH_ROUND_OFF);
    let expected = Shape::Box { size: DVec3::ONE }.inertia(3.0);
    let error = matrix_error(inertia_in_model_axes(&mass), expected);
    assert!(error < MESH_ROUND_OFF, "inertia error {error:.2e}");
}

#[test]
fn a_rotated_box_mesh_finds_its_principal_axes() {
    let cube = load(&data("cube.obj"));
    let size = DVec3::new(1.0, 2.0, 3.0);
    let rotation = DQuat::from_euler(EulerRot::XYZ, 0.4, 1.2, -2.2);
    let offset = DVec3::new(-4.0, 2.0, 9.0);
    // Centre the stretched cube on the origin before moving it.
    let centred = TriangleMesh::new(
        "box",
        cube.vertices().iter().map(|&v| v - 0.5).collect(),
        cube.triangles().to_vec(),
    );
    let mesh = moved(&centred, rotation, offset, size);
    let mass = MassProperties::from_mesh(5.0, &mesh, "box").unwrap();
    let frame = mass.model_frame();
    assert_close("centre", frame.offset, offset, MESH_ROUND_OFF);
    // Body axes are principal: the body inertia is diagonal, with the box's moments.
    let body = mass.inertia_body();
    let moments = DVec3::new(body.x_axis.x, body.y_axis.y, body.z_axis.z);
    let off_diagonal = body.x_axis.y.abs() + body.x_axis.z.abs() + body.y_axis.z.abs();
    assert!(off_diagonal < MESH_ROUND_OFF * moments.max_element());
    let exact = Shape::Box { size }.principal_moments(5.0);
    let mut sorted = exact.to_array();
    sorted.sort_by(f64::total_cmp);
    assert_close("moments", moments, DVec3::from(sorted), MESH_ROUND_OFF);
    // Each body axis is a box edge direction (up to sign), and the frame is right-handed.
    let axes = DMat3::from_quat(frame.rotation);
    assert!((axes.determinant() - 1.0).abs() < MESH_ROUND_OFF);
    for (i, moment) in moments.to_array().into_iter().enumerate() {
        let edge = (0..3).find(|&k| (exact[k] - moment).abs() < 1e-9).unwrap();
        let box_axis = rotation * DVec3::AXES[edge];
        let alignment = axes.col(i).dot(box_axis).abs();
        assert!(
            (alignment - 1.0).abs() < MESH_ROUND_OFF,
            "axis {i}: {alignment}"
        );
    }
    let error = matrix_error(
        inertia_in_model_axes(&mass),
        DMat3::from_quat(rotation)
            * Shape::Box { size }.inertia(5.0)
            * DMat3::from_quat(rotation).transpose(),
    );
    assert!(error < MESH_ROUND_OFF, "inertia error {error:.2e}");
}

#[test]
fn a_tetrahedron_matches_its_closed_form() {
    // tetrahedron.obj: the corner tetrahedron x/a + y/b + z/c <= 1 with (a, b, c) = (1, 2, 3),
    // moved by (10, -20, 5). With u = x/a etc., integrals over the unit corner tetrahedron
    // are Dirichlet integrals: 1/6 for 1, 1/60 for u^2, 1/120 for u v.
    let (a, b, c) = (1.0, 2.0, 3.0);
    let corner = DVec3::new(10.0, -20.0, 5.0);
    let volume = a * b * c / 6.0;
    let abc = a * b * c;
    let (xx, yy, zz) = (abc * a * a / 60.0, abc * b * b / 60.0, abc * c * c / 60.0);
    let (xy, xz, yz) = (
        abc * a * b / 120.0,
        abc * a * c / 120.0,
        abc * b * c / 120.0,
    );
    let about_corner = DMat3::from_cols(
        DVec3::new(yy + zz, -xy, -xz),
        DVec3::new(-xy, xx + zz, -yz),
        DVec3::new(-xz, -yz, xx + yy),
    );
    let d = DVec3::new(a, b, c) / 4.0; // centroid from the corner
    // Parallel axis theorem back to the centroid (density 1, so mass = volume).
    let shift = DMat3::from_diagonal(DVec3::splat(d.length_squared()))
        - DMat3::from_cols(d * d.x, d * d.y, d * d.z);
    let about_centroid = about_corner - shift * volume;

    let mesh = load(&data("tetrahedron.obj"));
    let integrals = mesh.integrals("m").unwrap();
    assert!((integrals.volume - volume).abs() < MESH_ROUND_OFF);
    assert_close("centroid", integrals.centroid, corner + d, MESH_ROUND_OFF);
    let error = matrix_error(integrals.inertia_per_density, about_centroid);
    assert!(error < MESH_ROUND_OFF, "inertia error {error:.2e}");
    // Through MassProperties with a density: mass = density x volume.
    let mass = MassProperties::from_mesh_density(2.5, &mesh, "tet").unwrap();
    assert!((mass.mass() - 2.5 * volume).abs() < MESH_ROUND_OFF);
    let error = matrix_error(inertia_in_model_axes(&mass), about_centroid * 2.5);
    assert!(error < 1e-11, "inertia error {error:.2e}");
}

/// An icosahedron subdivided `levels` times, vertices pushed onto the sphere of `radius`.
fn icosphere(radius: f64, levels: usize) -> TriangleMesh {
    let t = (1.0 + 5f64.sqrt()) / 2.0;
    let mut vertices: Vec<DVec3> = [
        (-1.0, t, 0.0),
        (1.0, t, 0.0),
        (-1.0, -t, 0.0),
        (1.0, -t, 0.0),
        (0.0, -1.0, t),
        (0.0, 1.0, t),
        (0.0, -1.0, -t),
        (0.0, 1.0, -t),
        (t, 0.0, -1.0),
        (t, 0.0, 1.0),
        (-t, 0.0, -1.0),
        (-t, 0.0, 1.0),
    ]
    .iter()
    .map(|&(x, y, z)| DVec3::new(x, y, z).normalize() * radius)
    .collect();
    let mut triangles: Vec<[usize; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..levels {
        let mut midpoints = HashMap::new();
        let mut midpoint = |i: usize, j: usize, vertices: &mut Vec<DVec3>| {
            *midpoints.entry((i.min(j), i.max(j))).or_insert_with(|| {
                vertices.push((vertices[i] + vertices[j]).normalize() * radius);
                vertices.len() - 1
            })
        };
        triangles = triangles
            .iter()
            .flat_map(|&[a, b, c]| {
                let ab = midpoint(a, b, &mut vertices);
                let bc = midpoint(b, c, &mut vertices);
                let ca = midpoint(c, a, &mut vertices);
                [[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]
            })
            .collect();
    }
    TriangleMesh::new("icosphere", vertices, triangles)
}

/// A prism over the regular `sides`-gon inscribed in the circle of `radius`, z in [0, height].
fn polygon_prism(radius: f64, height: f64, sides: usize) -> TriangleMesh {
    let mut vertices = vec![DVec3::ZERO, DVec3::new(0.0, 0.0, height)];
    for k in 0..sides {
        let angle = std::f64::consts::TAU * k as f64 / sides as f64;
        let (s, c) = angle.sin_cos();
        vertices.push(DVec3::new(radius * c, radius * s, 0.0));
        vertices.push(DVec3::new(radius * c, radius * s, height));
    }
    let mut triangles = Vec::new();
    for k in 0..sides {
        let (bottom, top) = (2 + 2 * k, 3 + 2 * k);
        let (next_bottom, next_top) = (2 + 2 * ((k + 1) % sides), 3 + 2 * ((k + 1) % sides));
        triangles.push([0, next_bottom, bottom]);
        triangles.push([1, top, next_top]);
        triangles.push([bottom, next_bottom, next_top]);
        triangles.push([bottom, next_top, top]);
    }
    TriangleMesh::new("prism", vertices, triangles)
}

/// Relative errors in volume and in moments per unit mass against a closed-form shape.
fn errors_against(mesh: &TriangleMesh, shape: Shape) -> (f64, f64) {
    let mass = MassProperties::from_mesh(1.0, mesh, "mesh").unwrap();
    let volume = mesh.integrals("mesh").unwrap().volume;
    let error = matrix_error(inertia_in_model_axes(&mass), shape.inertia(1.0));
    ((volume - shape.volume()).abs() / shape.volume(), error)
}

/// Bounds on the errors of a convex inscribed polyhedron: it lies between the solid scaled
/// by `inner` (the face planes' least distance from the axis or centre, relative to the
/// radius) and the solid itself. Its volume is short by at most `1 - inner^d` (d = 3 for the
/// ball, 2 for the cylinder's cross-section); its moment per unit mass lies between
/// `inner^(d+2)` and `inner^-d` times the solid's (moments scale as volume x radius^2).
fn inscribed_bounds(inner: f64, d: i32) -> (f64, f64) {
    (
        1.0 - inner.powi(d),
        (inner.powi(-d) - 1.0).max(1.0 - inner.powi(d + 2)),
    )
}

#[test]
fn refined_meshes_converge_to_the_sphere_and_the_cylinder() {
    // Inscribed polyhedra miss the solid by a layer as thick as the chords' sagitta, which
    // shrinks with the square of the edge length: each halving of the edges (one icosphere
    // subdivision, twice the prism's sides) divides the errors by about 4. Demand at least 3,
    // and each error within the bounds the polyhedron's inscribed radius gives.
    let radius = 0.7;
    let sphere = Shape::Sphere { radius };
    let mut previous = (f64::INFINITY, f64::INFINITY);
    for level in 0..=4 {
        let mesh = icosphere(radius, level);
        let (volume, inertia) = errors_against(&mesh, sphere);
        let nearest_plane = mesh
            .triangles()
            .iter()
            .map(|&[a, b, c]| {
                let [a, b, c] = [a, b, c].map(|i| mesh.vertices()[i]);
                (b - a).cross(c - a).normalize().dot(a).abs()
            })
            .fold(f64::INFINITY, f64::min);
        let bounds = inscribed_bounds(nearest_plane / radius, 3);
        eprintln!(
            "icosphere level {level}: volume error {volume:.2e} (bound {:.2e}), inertia error \
             {inertia:.2e} (bound {:.2e})",
            bounds.0, bounds.1
        );
        assert!(volume <= bounds.0 && inertia <= bounds.1);
        assert!(volume < previous.0 / 3.0 && inertia < previous.1 / 3.0);
        previous = (volume, inertia);
    }

    let (radius, height) = (0.4, 1.5);
    let mut previous = (f64::INFINITY, f64::INFINITY);
    for sides in [8, 16, 32, 64, 128] {
        // The prism spans z in [0, height]; the closed form is about the centre.
        let prism = polygon_prism(radius, height, sides);
        let cylinder = Shape::Cylinder { radius, height };
        let (volume, inertia) = errors_against(&prism, cylinder);
        let bounds = inscribed_bounds((std::f64::consts::PI / sides as f64).cos(), 2);
        eprintln!(
            "{sides}-gon prism: volume error {volume:.2e} (bound {:.2e}), inertia error \
             {inertia:.2e} (bound {:.2e})",
            bounds.0, bounds.1
        );
        assert!(volume <= bounds.0 && inertia <= bounds.1);
        assert!(volume < previous.0 / 3.0 && inertia < previous.1 / 3.0);
        previous = (volume, inertia);
        let centre = MassProperties::from_mesh(1.0, &prism, "p")
            .unwrap()
            .model_frame()
            .offset;
        assert_close(
            "prism centre",
            centre,
            DVec3::new(0.0, 0.0, 0.5 * height),
            MESH_ROUND_OFF,
        );
    }
}

fn mesh_error(name: &str) -> String {
    let path = data(name);
    match TriangleMesh::load_obj(&path, "m").and_then(|mesh| mesh.integrals("m")) {
        Ok(_) => panic!("accepted the bad mesh {name}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn each_bad_mesh_gets_an_error_naming_the_file_and_what_is_wrong() {
    let cases = [
        (
            "open.obj",
            ": edge 5-6 belongs to 1 face (the mesh must be closed)",
        ),
        (
            "inconsistent.obj",
            ": edge 6-7 is traversed in the same direction by the face on line 11 and the face \
             on line 15 (inconsistent winding",
        ),
        (
            "bowtie.obj",
            ": edge 1-2 belongs to 4 faces (the mesh must be a closed manifold",
        ),
        (
            "zero_area.obj",
            ": the face on line 8 has zero area (degenerate triangle)",
        ),
        (
            "out_of_range.obj",
            ":7: vertex index 9 is out of range (the file has 4 vertices)",
        ),
        (
            "too_few_vertices.obj",
            ": has 3 vertices; a solid needs at least 4",
        ),
        ("flat.obj", ": encloses zero volume"),
        ("missing.obj", ": "),
    ];
    for (name, expected) in cases {
        let message = mesh_error(name);
        let expected = format!("m: {}{expected}", data(name).display());
        assert!(
            message.starts_with(&expected),
            "got `{message}`, expected `{expected}...`"
        );
        assert!(!message.contains('\n'), "one line: {message}");
    }
    let inverted = mesh_error("inverted.obj");
    assert!(
        inverted.contains("< 0: the winding is inside-out"),
        "{inverted}"
    );
}

/// The bracket from the example scene, with density 100.
fn bracket() -> (TriangleMesh, MassProperties) {
    let mesh = load(&manifest("scenes/meshes/bracket.obj"));
    let mass = MassProperties::from_mesh_density(100.0, &mesh, "bracket").unwrap();
    (mesh, mass)
}

#[test]
fn the_bracket_body_frame_is_off_its_model_frame() {
    // The L of area 4 (a 3 x 1 bar and a 1 x 1 square) by 0.5 high: volume 2, centre of
    // mass at the area-weighted mean of (1.5, 0.5) and (0.5, 1.5), half-way up.
    let (_, mass) = bracket();
    assert!((mass.mass() - 200.0).abs() < 1e-12 * 200.0);
    let frame = mass.model_frame();
    let centre = DVec3::new(1.25, 0.75, 0.25);
    assert_close("centre", frame.offset, centre, MESH_ROUND_OFF);
    // Independently: the bar (mass 150) and the square (50) as boxes, each moved to the
    // common centre by the parallel axis theorem.
    let parts = [
        (150.0, DVec3::new(3.0, 1.0, 0.5), DVec3::new(1.5, 0.5, 0.25)),
        (50.0, DVec3::new(1.0, 1.0, 0.5), DVec3::new(0.5, 1.5, 0.25)),
    ];
    let expected = parts
        .iter()
        .map(|&(m, size, at)| {
            let d = at - centre;
            let shift = DMat3::from_diagonal(DVec3::splat(d.length_squared()))
                - DMat3::from_cols(d * d.x, d * d.y, d * d.z);
            Shape::Box { size }.inertia(m) + shift * m
        })
        .fold(DMat3::ZERO, |a, b| a + b);
    let error = matrix_error(inertia_in_model_axes(&mass), expected);
    assert!(error < MESH_ROUND_OFF, "inertia error {error:.2e}");
    // The L's product of inertia in xy turns its principal axes about z, and only about z:
    // one body axis stays along model z (the L is symmetric about its mid-plane).
    let axes = DMat3::from_quat(frame.rotation);
    assert!((0..3).any(|i| (axes.col(i).z.abs() - 1.0).abs() < MESH_ROUND_OFF));
    assert!(frame.rotation.angle_between(DQuat::IDENTITY) > 0.1);
}

#[test]
fn model_and_body_frames_place_a_vertex_at_the_same_world_point() {
    let (mesh, mass) = bracket();
    let model_position = DVec3::new(2.0, -1.0, 4.0);
    let model_orientation = DQuat::from_euler(EulerRot::YXZ, 0.3, 1.1, -0.6);
    let body = Body::from_model_kinematics(
        mass,
        model_position,
        model_orientation,
        DVec3::new(0.5, 0.0, 1.0),
        DVec3::new(1.0, -2.0, 0.5),
    );
    let pose = body.model_pose();
    assert_close(
        "model position round trip",
        pose.position,
        model_position,
        1e-14,
    );
    assert!(pose.orientation.angle_between(model_orientation) < 1e-7); // acos near 1: sqrt(eps)
    let frame = mass.model_frame();
    for &vertex in mesh.vertices() {
        let via_model = pose.position + pose.orientation * vertex;
        let via_body = body.state.position + body.rotation() * frame.to_body(vertex);
        assert_close("vertex", via_model, via_body, 1e-14);
    }
    // A closed-form shape has the identity model frame: the two constructors agree.
    let sphere = MassProperties::from_shape(1.0, Shape::Sphere { radius: 1.0 }, "s").unwrap();
    let q = DQuat::from_rotation_y(0.4);
    assert_eq!(
        Body::from_model_kinematics(sphere, DVec3::X, q, DVec3::Y, DVec3::Z),
        Body::from_kinematics(sphere, DVec3::X, q, DVec3::Y, DVec3::Z)
    );
}

#[test]
fn a_mesh_body_spun_about_a_principal_axis_reports_the_rigid_motion_of_its_vertices() {
    // Torque-free, spinning about its largest principal axis: the body turns uniformly at
    // omega about an axis through its centre of mass, which moves at v. Every vertex p of the
    // mesh must then be at x0 + v t + Rot(omega t) (X0 + Q0 p - x0), from the model pose.
    let (mesh, mass) = bracket();
    let frame = mass.model_frame();
    let model_position = DVec3::new(1.0, 2.0, -3.0);
    let model_orientation = DQuat::from_euler(EulerRot::XYZ, 0.5, -0.2, 1.3).normalize();
    let axis = (model_orientation * frame.rotation * DVec3::Z).normalize();
    let (spin, velocity) = (2.0, DVec3::new(0.3, -0.4, 0.2));
    let body = Body::from_model_kinematics(
        mass,
        model_position,
        model_orientation,
        velocity,
        axis * spin,
    );
    let centre0 = model_position + model_orientation * frame.offset;
    let (steps, dt) = (400, 2.5e-3);
    let crowd = Crowd::new(vec![body], dt).with_integrator(Integrator::Rk4);
    let t = steps as f64 * dt;
    let turn = DQuat::from_axis_angle(axis, spin * t);
    for (backend, tolerance) in BACKENDS {
        let after = run(&crowd, steps, backend)[0];
        let pose = after.model_pose();
        let worst = mesh
            .vertices()
            .iter()
            .map(|&vertex| {
                let expected = centre0
                    + velocity * t
                    + turn * (model_position + model_orientation * vertex - centre0);
                (pose.position + pose.orientation * vertex - expected).length()
                    / expected.length().max(1.0)
            })
            .fold(0.0, common::largest);
        eprintln!(
            "{backend:?}: worst relative vertex error {worst:.2e} (tolerance {tolerance:.0e})"
        );
        for &vertex in mesh.vertices() {
            let expected = centre0
                + velocity * t
                + turn * (model_position + model_orientation * vertex - centre0);
            let reported = pose.position + pose.orientation * vertex;
            assert_close(
                &format!("{backend:?} vertex {vertex}"),
                reported,
                expected,
                tolerance,
            );
        }
    }
}

fn scene_error(text: &str) -> String {
    match Scene::from_json(text) {
        Ok(_) => panic!("accepted a bad scene:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn one_body(body: &str) -> String {
    format!(r#"{{"dt": 0.01, "steps": 1, "bodies": [{body}]}}"#)
}

#[test]
fn scene_shapes_take_a_mass_or_a_density() {
    let scene = Scene::load(manifest("scenes/shapes.json")).unwrap();
    let bodies = &scene.crowd.bodies;
    assert_eq!(bodies.len(), 4);
    // The mesh path is relative to the scene file; density 100 x volume 2.
    assert!((bodies[0].mass.mass() - 200.0).abs() < 1e-12 * 200.0);
    let pose = bodies[0].model_pose();
    assert_close(
        "position as given",
        pose.position,
        DVec3::new(0.0, 0.0, 10.0),
        1e-14,
    );
    let given = DQuat::from_xyzw(0.0, 0.3826834, 0.0, 0.9238795).normalize();
    assert!(pose.orientation.angle_between(given) < 1e-7);
    assert_eq!(
        bodies[1].mass.shape(),
        Some(Shape::Cylinder {
            radius: 0.2,
            height: 1.5
        })
    );
    let capsule = Shape::Capsule {
        radius: 0.1,
        length: 0.6,
    };
    assert_eq!(bodies[2].mass.shape(), Some(capsule));
    assert!((bodies[2].mass.mass() - 1000.0 * capsule.volume()).abs() < 1e-12);
    assert_eq!(
        bodies[3].mass.shape(),
        Some(Shape::Ellipsoid {
            semi_axes: DVec3::new(0.3, 0.5, 0.8)
        })
    );

    // From text, a relative mesh path is relative to the current directory (the tests run
    // in the crate's root) or to the directory given.
    let text = one_body(r#"{"mass": 6, "shape": {"mesh": "tests/data/cube.obj"}}"#);
    let cube = Scene::from_json(&text).unwrap().crowd.bodies[0];
    assert_close("cube centre", cube.state.position, DVec3::splat(0.5), 1e-15);
    let text = one_body(r#"{"density": 2, "shape": {"mesh": "data/cube.obj"}}"#);
    let cube = Scene::from_json_in(&text, &manifest("tests"))
        .unwrap()
        .crowd
        .bodies[0];
    assert_eq!(cube.mass.mass(), 2.0);
    // A scaled mesh: the cube's vertices times 3 about the model origin, volume 27.
    let text = one_body(
        r#"{"density": 2, "shape": {"mesh": {"file": "tests/data/cube.obj", "scale": 3}},
            "position": [1, 0, 0]}"#,
    );
    let cube = Scene::from_json(&text).unwrap().crowd.bodies[0];
    assert!((cube.mass.mass() - 54.0).abs() < 1e-12 * 54.0);
    assert_close(
        "scaled centre",
        cube.state.position,
        DVec3::new(2.5, 1.5, 1.5),
        1e-15,
    );
}

#[test]
fn each_bad_shape_or_mass_value_is_named() {
    let cases = [
        (
            r#"{"mass": 1, "density": 2, "shape": {"sphere": 1}}"#,
            "bodies[0]: give either `mass` or `density`, not both",
        ),
        (
            r#"{"shape": {"sphere": 1}}"#,
            "bodies[0]: needs `mass` or `density`",
        ),
        (
            r#"{"density": 2, "inertia": [1, 1, 1]}"#,
            "bodies[0].density: needs a `shape` to give a volume",
        ),
        (
            r#"{"density": -1, "shape": {"sphere": 1}}"#,
            "bodies[0].density: must be a finite number > 0 (got -1)",
        ),
        (
            r#"{"density": 0, "shape": {"mesh": "tests/data/cube.obj"}}"#,
            "bodies[0].density: must be a finite number > 0 (got 0)",
        ),
        (
            r#"{"mass": 1, "shape": {"cylinder": {"radius": -1, "height": 2}}}"#,
            "bodies[0].shape.cylinder.radius: must be a finite number > 0 (got -1)",
        ),
        (
            r#"{"mass": 1, "shape": {"cylinder": {"radius": 1, "hieght": 2}}}"#,
            "bodies[0].shape.cylinder",
        ),
        (
            r#"{"mass": 1, "shape": {"capsule": {"radius": 1, "length": -0.5}}}"#,
            "bodies[0].shape.capsule.length: must be a finite number >= 0 (got -0.5)",
        ),
        (
            r#"{"mass": 1, "shape": {"ellipsoid": [1, 0, 1]}}"#,
            "bodies[0].shape.ellipsoid[1]: must be a finite number > 0 (got 0)",
        ),
        (
            r#"{"mass": 1, "shape": {"ellipsoid": [1, 1]}}"#,
            "bodies[0].shape.ellipsoid",
        ),
        (
            r#"{"mass": 1, "shape": {"mesh": "tests/data/open.obj"}}"#,
            "bodies[0].shape.mesh: tests/data/open.obj: edge 5-6 belongs to 1 face (the mesh must be closed)",
        ),
        (
            r#"{"mass": 1, "shape": {"mesh": "tests/data/inverted.obj"}}"#,
            "bodies[0].shape.mesh: tests/data/inverted.obj: signed volume is",
        ),
        (
            r#"{"mass": 1, "shape": {"mesh": "tests/data/out_of_range.obj"}}"#,
            "bodies[0].shape.mesh: tests/data/out_of_range.obj:7: vertex index 9 is out of range",
        ),
        (
            r#"{"mass": 1, "shape": {"mesh": "tests/data/missing.obj"}}"#,
            "bodies[0].shape.mesh: tests/data/missing.obj: ",
        ),
        (
            r#"{"mass": 1, "shape": {"mesh": 3}}"#,
            "bodies[0].shape.mesh: expected a path \"file.obj\" or {\"file\"",
        ),
        (
            r#"{"mass": 1, "shape": {"mesh": {"file": "tests/data/cube.obj", "scale": -2}}}"#,
            "bodies[0].shape.mesh.scale: must be a finite number > 0 (got -2)",
        ),
        (
            r#"{"mass": 1, "shape": {"mesh": {"path": "tests/data/cube.obj"}}}"#,
            "bodies[0].shape.mesh.path: unknown field, expected `file` or `scale`",
        ),
        (
            r#"{"mass": 1, "shape": {"mesh": {"scale": 2}}}"#,
            "bodies[0].shape.mesh.file: missing",
        ),
    ];
    for (body, expected) in cases {
        let message = scene_error(&one_body(body));
        assert!(
            message.starts_with(expected),
            "{body}: got `{message}`, expected `{expected}...`"
        );
        assert!(!message.contains('\n'), "one line: {message}");
    }
}

#[test]
fn a_generated_crowd_draws_the_new_shapes_within_its_ranges() {
    let text = r#"{"dt": 0.01, "steps": 1, "crowd": {"count": 300, "seed": 7,
                   "size": [0.2, 1.0], "mass": [1, 2],
                   "shapes": ["cylinder", "capsule", "ellipsoid"]}}"#;
    let scene = Scene::from_json(text).unwrap();
    let mut seen = [0usize; 3];
    for body in &scene.crowd.bodies {
        let within = |x: f64| (0.2..=1.0).contains(&x);
        match body.mass.shape().unwrap() {
            Shape::Cylinder { radius, height } => {
                assert!(within(2.0 * radius) && within(height));
                seen[0] += 1;
            }
            Shape::Capsule { radius, length } => {
                assert!(within(2.0 * radius) && within(length));
                seen[1] += 1;
            }
            Shape::Ellipsoid { semi_axes } => {
                assert!((semi_axes * 2.0).to_array().into_iter().all(within));
                seen[2] += 1;
            }
            other => panic!("not asked for: {other:?}"),
        }
        assert!((1.0..=2.0).contains(&body.mass.mass()));
    }
    // 300 uniform picks of 3: each count is 100 +- 8 (one standard deviation).
    assert!(seen.iter().all(|&n| n > 60), "{seen:?}");
}

fn read_rows(path: &Path) -> Vec<Vec<f64>> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .skip(1)
        .map(|line| line.split(',').map(|v| v.parse().unwrap()).collect())
        .collect()
}

fn run_shapes_scene(backend: &str, steps: &str) -> Vec<Vec<f64>> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("final.csv");
    let scene = manifest("scenes/shapes.json");
    let output = rigid_crowd(
        &[
            "run",
            scene.to_str().unwrap(),
            "--backend",
            backend,
            "--steps",
            steps,
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    read_rows(&out)
}

#[test]
fn the_cli_runs_a_mesh_scene_on_every_backend_and_reports_model_poses() {
    // Zero steps: the CSV gives the bracket's model pose exactly as the scene placed it.
    let initial = run_shapes_scene("cpu-ref", "0");
    let row = &initial[0];
    assert!(
        row[1..4]
            .iter()
            .zip([0.0, 0.0, 10.0])
            .all(|(a, b)| (a - b).abs() < 1e-14)
    );
    let norm = (0.9238795f64.powi(2) + 0.3826834f64.powi(2)).sqrt();
    let given = [0.9238795 / norm, 0.0, 0.3826834 / norm, 0.0];
    assert!(
        row[4..8]
            .iter()
            .zip(given)
            .all(|(a, b)| (a - b).abs() < 1e-12),
        "{row:?}"
    );

    // 300 steps under gravity, spinning: the f32 paths agree with the f64 reference within
    // the GPU_TOLERANCE that `rigid-crowd check` uses.
    let reference = run_shapes_scene("cpu-ref", "300");
    assert_eq!(reference.len(), 4);
    for backend in ["cpu", "gpu"] {
        let rows = run_shapes_scene(backend, "300");
        for (r, t) in reference.iter().zip(&rows) {
            for (column, (a, b)) in t.iter().zip(r).enumerate().skip(1) {
                assert!(
                    (a - b).abs() <= rigid_crowd::GPU_TOLERANCE * b.abs().max(1.0),
                    "body {} column {column}: {backend} {a} cpu-ref {b}",
                    r[0]
                );
            }
        }
    }
    // The bracket moved: it fell and turned.
    assert!((reference[0][3] - initial[0][3]).abs() > 0.1);
}

#[test]
fn the_cli_names_the_bad_mesh_field() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("scene.json");
    let open = data("open.obj");
    std::fs::write(
        &scene,
        one_body(&format!(
            r#"{{"mass": 1, "shape": {{"mesh": "{}"}}}}"#,
            open.display()
        )),
    )
    .unwrap();
    let out = dir.path().join("out.csv");
    let output = rigid_crowd(
        &[
            "run",
            scene.to_str().unwrap(),
            "--backend",
            "cpu-ref",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "bodies[0].shape.mesh: {}: edge 5-6 belongs to 1 face",
            open.display()
        )),
        "{stderr}"
    );
    assert!(!out.exists());
}
