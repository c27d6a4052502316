//! The renderer draws every shape where its GPU state says it is, on lavapipe, and
//! `rigid-crowd render` writes PNG frames that show the crowd moving.

use crate::common;

use std::path::Path;

use common::{gpu, rigid_crowd};
use rigid_crowd::glam::{DQuat, DVec3, Vec3};
use rigid_crowd::render::{CAPTURE_FORMAT, Camera, FrameCapture, Image, Renderer, base_color};
use rigid_crowd::{Body, Crowd, MassProperties, Shape, Simulation};

const WIDTH: u32 = 256;
const HEIGHT: u32 = 144;
/// Every body slides along +x at this speed (m/s); no forces act.
const SPEED: f64 = 3.0;

/// One body of each kind drawn (five shapes and a body given by its inertia, drawn as its
/// proxy box) in a row along y, 3 m apart, all sliding along +x and spinning.
fn row_of_shapes() -> Crowd {
    let shapes = [
        Some(Shape::Box {
            size: DVec3::new(1.2, 0.8, 1.0),
        }),
        Some(Shape::Sphere { radius: 0.6 }),
        Some(Shape::Cylinder {
            radius: 0.5,
            height: 1.2,
        }),
        Some(Shape::Capsule {
            radius: 0.4,
            length: 0.8,
        }),
        Some(Shape::Ellipsoid {
            semi_axes: DVec3::new(0.7, 0.5, 0.6),
        }),
        None,
    ];
    let bodies = shapes
        .iter()
        .enumerate()
        .map(|(i, shape)| {
            let mass = match *shape {
                Some(shape) => MassProperties::from_shape(2.0, shape, "body").unwrap(),
                None => {
                    MassProperties::from_principal(2.0, DVec3::new(0.4, 0.5, 0.6), "body").unwrap()
                }
            };
            Body::from_kinematics(
                mass,
                DVec3::new(0.0, 3.0 * i as f64 - 7.5, 1.0),
                DQuat::from_rotation_z(0.3 * i as f64),
                DVec3::new(SPEED, 0.0, 0.0),
                DVec3::new(0.0, 0.0, 1.5),
            )
        })
        .collect();
    Crowd::new(bodies, 1e-3)
}

/// Linear-light chromaticity of an sRGB pixel: shading scales a colour, so this stays.
fn chromaticity(pixel: [u8; 4]) -> Vec3 {
    let linear = |c: u8| {
        let c = c as f32 / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let v = Vec3::new(linear(pixel[0]), linear(pixel[1]), linear(pixel[2]));
    v / v.element_sum().max(1e-6)
}

/// The body colour nearest in chromaticity to `pixel`, if any is near (floor grey and sky are
/// far from every body colour).
fn body_kind(pixel: [u8; 4], shapes: &[Option<Shape>]) -> Option<usize> {
    let c = chromaticity(pixel);
    let (best, distance) = shapes
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let base = Vec3::from(base_color(s));
            (i, (base / base.element_sum() - c).length())
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    (distance < 0.06).then_some(best)
}

/// Pixel under the world point `p`.
fn pixel_of(camera: &Camera, scene_radius: f32, p: DVec3) -> (u32, u32) {
    let ndc = camera
        .view_projection(WIDTH as f32 / HEIGHT as f32, scene_radius)
        .project_point3(p.as_vec3());
    assert!(ndc.x.abs() < 1.0 && ndc.y.abs() < 1.0, "{p} is off screen");
    (
        ((ndc.x + 1.0) * 0.5 * WIDTH as f32) as u32,
        ((1.0 - ndc.y) * 0.5 * HEIGHT as f32) as u32,
    )
}

/// Pixels showing a body colour, as a mask.
fn body_mask(image: &Image, shapes: &[Option<Shape>]) -> Vec<bool> {
    (0..image.height)
        .flat_map(|y| (0..image.width).map(move |x| (x, y)))
        .map(|(x, y)| body_kind(image.pixel(x, y), shapes).is_some())
        .collect()
}

#[test]
fn every_shape_is_drawn_where_its_gpu_state_puts_it_and_moves_with_it() {
    let crowd = row_of_shapes();
    let shapes: Vec<Option<Shape>> = crowd.bodies.iter().map(|b| b.mass.shape()).collect();
    let mut sim = Simulation::gpu(&crowd, gpu()).unwrap();
    let renderer = Renderer::new(&sim, &crowd, CAPTURE_FORMAT).unwrap();
    let capture = FrameCapture::new(&renderer, WIDTH, HEIGHT).unwrap();
    let camera = renderer.default_camera();
    let radius = renderer.stage().radius;

    let steps = 1000;
    let first = capture.capture(&renderer, &camera).unwrap();
    sim.step(steps).unwrap();
    let second = capture.capture(&renderer, &camera).unwrap();
    let shift = DVec3::new(SPEED * steps as f64 * crowd.dt, 0.0, 0.0);

    for (frame, image, offset) in [(0, &first, DVec3::ZERO), (1, &second, shift)] {
        // Not blank: the sky does not fill the frame, and the floor shows under the crowd.
        let sky = image.pixel(0, 0);
        let sky_share =
            image.rgba.chunks(4).filter(|p| *p == sky).count() as f64 / (WIDTH * HEIGHT) as f64;
        assert!(
            sky_share < 0.8,
            "frame {frame}: {sky_share:.2} of it is sky"
        );
        let below = pixel_of(&camera, radius, DVec3::new(0.0, 0.0, -3.0) + offset);
        let floor = image.pixel(below.0, below.1);
        assert!(
            body_kind(floor, &shapes).is_none() && floor != sky,
            "frame {frame}: floor {floor:?}"
        );
        // Each body shows its own colour at the pixel of its (moved) centre.
        for (i, body) in crowd.bodies.iter().enumerate() {
            let (x, y) = pixel_of(&camera, radius, body.state.position + offset);
            let got = body_kind(image.pixel(x, y), &shapes);
            assert_eq!(
                got,
                Some(i),
                "frame {frame}, body {i} at ({x}, {y}): {:?}",
                image.pixel(x, y)
            );
        }
    }

    // The bodies moved: their pixels changed, and the centroid of the body pixels moved by
    // the projection of the shift (within a tenth of it, for the bodies' spin and outlines).
    let (a, b) = (body_mask(&first, &shapes), body_mask(&second, &shapes));
    let body_pixels = a.iter().filter(|&&m| m).count();
    let changed = a.iter().zip(&b).filter(|(p, q)| p != q).count();
    assert!(body_pixels > 200, "only {body_pixels} body pixels");
    assert!(
        changed * 4 > body_pixels,
        "{changed} of {body_pixels} body pixels changed"
    );
    let centroid = |mask: &[bool]| {
        let (mut sum, mut n) = (Vec3::ZERO, 0.0);
        for (i, _) in mask.iter().enumerate().filter(|(_, m)| **m) {
            sum += Vec3::new((i as u32 % WIDTH) as f32, (i as u32 / WIDTH) as f32, 0.0);
            n += 1.0;
        }
        sum / n
    };
    let moved = centroid(&b) - centroid(&a);
    let centre: DVec3 = crowd.bodies.iter().map(|b| b.state.position).sum::<DVec3>() / 6.0;
    let (x0, y0) = pixel_of(&camera, radius, centre);
    let (x1, y1) = pixel_of(&camera, radius, centre + shift);
    let expected = Vec3::new(x1 as f32 - x0 as f32, y1 as f32 - y0 as f32, 0.0);
    assert!(
        expected.length() > 10.0,
        "the shift is too small to see: {expected}"
    );
    assert!(
        (moved - expected).length() < 0.1 * expected.length() + 1.5,
        "body pixels moved by {moved}, expected {expected}"
    );
}

#[test]
fn a_capture_rejects_sizes_the_device_cannot_hold() {
    let crowd = row_of_shapes();
    let sim = Simulation::gpu(&crowd, gpu()).unwrap();
    let renderer = Renderer::new(&sim, &crowd, CAPTURE_FORMAT).unwrap();
    let error = FrameCapture::new(&renderer, 0, 10).unwrap_err().to_string();
    assert!(
        error.starts_with("--width: must be between 1 and"),
        "{error}"
    );
    let error = FrameCapture::new(&renderer, 10, u32::MAX)
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("--height: "), "{error}");
}

fn decode(path: &Path) -> Image {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut rgba = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut rgba).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    rgba.truncate(info.buffer_size());
    Image {
        width: info.width,
        height: info.height,
        rgba,
    }
}

#[test]
fn the_render_command_writes_frames_that_change_and_a_sheet() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("frames/new");
    let scene = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/example.json");
    let output = rigid_crowd(
        &[
            "render",
            scene.to_str().unwrap(),
            "--frames",
            "3",
            "--every",
            "150",
            "--width",
            "96",
            "--height",
            "64",
            "--sheet",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    let frames: Vec<Image> = (0..3)
        .map(|i| decode(&out.join(format!("frame_{i:04}.png"))))
        .collect();
    for (i, frame) in frames.iter().enumerate() {
        assert_eq!((frame.width, frame.height), (96, 64));
        let first = frame.pixel(0, 0);
        let other = frame.rgba.chunks(4).filter(|p| *p != first).count();
        assert!(
            other > 96 * 64 / 20,
            "frame {i} is nearly blank ({other} other pixels)"
        );
    }
    for pair in frames.windows(2) {
        let changed = pair[0]
            .rgba
            .chunks(4)
            .zip(pair[1].rgba.chunks(4))
            .filter(|(a, b)| a != b)
            .count();
        assert!(
            changed > 20,
            "consecutive frames differ in only {changed} pixels"
        );
    }
    let sheet = decode(&out.join("sheet.png"));
    assert_eq!((sheet.width, sheet.height), (2 * 96 + 4, 2 * 64 + 4));
    assert_eq!(sheet.pixel(5, 64 + 4 + 5), frames[2].pixel(5, 5));
    assert_eq!(sheet.pixel(96 + 4 + 5, 5), frames[1].pixel(5, 5));
    assert!(!out.join("frame_0003.png").exists());
}

#[test]
fn the_render_command_rejects_bad_flags_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("frames");
    let scene = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/example.json");
    for (flag, value) in [
        ("--frames", "0"),
        ("--every", "0"),
        ("--width", "0"),
        ("--height", "0"),
        ("--sheet", "0"),
        ("--frames", "many"),
    ] {
        let output = rigid_crowd(
            &[
                "render",
                scene.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                flag,
                value,
            ],
            &[],
        );
        let line = common::error_line(&output);
        assert!(line.contains(flag), "{flag} {value}: {line}");
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "a bad flag wrote files"
    );
}
