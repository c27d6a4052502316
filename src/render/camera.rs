//! An orbit camera: it looks at a target from a direction given by yaw and pitch about the
//! scene's up axis, and can frame a bounding sphere by itself.

use glam::{Mat4, Vec3, Vec4};

/// Smallest distance from the target, so the camera never sits on it.
const MIN_DISTANCE: f32 = 1e-3;
/// Pitch stays short of the poles, where yaw is undefined.
const MAX_PITCH: f32 = 1.5;

/// A perspective camera orbiting `target`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// The point looked at.
    pub target: Vec3,
    /// The scene's up direction (unit); the horizon stays level about it.
    pub up: Vec3,
    /// Angle of the eye about `up`, radians, seen from the target (see [`Camera::eye`]).
    pub yaw: f32,
    /// Elevation above the plane normal to `up`, radians (clamped to about ±86°).
    pub pitch: f32,
    /// Distance from the target to the eye.
    pub distance: f32,
    /// Vertical field of view, radians.
    pub fov_y: f32,
}

impl Camera {
    /// A camera that sees the whole sphere `(centre, radius)` from 30° above the horizon, at an
    /// angle to the axes so that boxes show three faces.
    pub fn framing(centre: Vec3, radius: f32, up: Vec3) -> Self {
        let fov_y = 40f32.to_radians();
        let radius = radius.max(MIN_DISTANCE);
        Self {
            target: centre,
            up: up.try_normalize().unwrap_or(Vec3::Z),
            yaw: 35f32.to_radians(),
            pitch: 30f32.to_radians(),
            // The sphere fits the narrower (vertical) field of view, with a little margin.
            distance: 1.05 * radius / (0.5 * fov_y).sin(),
            fov_y,
        }
    }

    /// Two unit vectors spanning the horizontal plane (normal to `up`), right-handed with it.
    fn horizontal_axes(&self) -> (Vec3, Vec3) {
        let reference = if self.up.x.abs() < 0.9 {
            Vec3::X
        } else {
            Vec3::Y
        };
        let a = (reference - self.up * reference.dot(self.up)).normalize();
        (a, self.up.cross(a))
    }

    /// Where the eye is: `distance` from the target, in the direction set by yaw and pitch.
    pub fn eye(&self) -> Vec3 {
        let (a, b) = self.horizontal_axes();
        let pitch = self.pitch.clamp(-MAX_PITCH, MAX_PITCH);
        let horizontal = a * self.yaw.cos() + b * self.yaw.sin();
        let direction = horizontal * pitch.cos() + self.up * pitch.sin();
        self.target + direction * self.distance.max(MIN_DISTANCE)
    }

    /// Turns the camera about the target by the given angles (radians).
    pub fn orbit(&mut self, yaw: f32, pitch: f32) {
        self.yaw = (self.yaw + yaw).rem_euclid(std::f32::consts::TAU);
        self.pitch = (self.pitch + pitch).clamp(-MAX_PITCH, MAX_PITCH);
    }

    /// Moves the eye towards the target (`factor < 1`) or away from it (`factor > 1`).
    pub fn zoom(&mut self, factor: f32) {
        if factor.is_finite() && factor > 0.0 {
            self.distance = (self.distance * factor).max(MIN_DISTANCE);
        }
    }

    /// World-to-clip matrix for an image of the given aspect ratio (width / height), with
    /// wgpu's depth range 0..1. The clip planes bracket a scene of `scene_radius` about the
    /// target.
    pub fn view_projection(&self, aspect: f32, scene_radius: f32) -> Mat4 {
        let eye = self.eye();
        let distance = self.distance.max(MIN_DISTANCE);
        let far = distance + 4.0 * scene_radius.max(distance);
        let near = (far * 1e-4).max(distance - 4.0 * scene_radius).max(1e-4);
        let view = look_at(eye, self.target, self.up);
        perspective(self.fov_y, aspect.max(1e-6), near, far) * view
    }
}

/// Right-handed view matrix: the eye at the origin looking down -z, `up` towards +y.
fn look_at(eye: Vec3, target: Vec3, up: Vec3) -> Mat4 {
    let forward = (target - eye).normalize();
    let side = forward.cross(up).normalize();
    let up = side.cross(forward);
    Mat4::from_cols(
        Vec4::new(side.x, up.x, -forward.x, 0.0),
        Vec4::new(side.y, up.y, -forward.y, 0.0),
        Vec4::new(side.z, up.z, -forward.z, 0.0),
        Vec4::new(-side.dot(eye), -up.dot(eye), forward.dot(eye), 1.0),
    )
}

/// Right-handed perspective projection onto wgpu's clip space: view depths `-near .. -far`
/// map to `0 .. 1`.
fn perspective(fov_y: f32, aspect: f32, near: f32, far: f32) -> Mat4 {
    let h = 1.0 / (0.5 * fov_y).tan();
    let depth = far / (near - far);
    Mat4::from_cols(
        Vec4::new(h / aspect, 0.0, 0.0, 0.0),
        Vec4::new(0.0, h, 0.0, 0.0),
        Vec4::new(0.0, 0.0, depth, -1.0),
        Vec4::new(0.0, 0.0, depth * near, 0.0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The framed sphere's surface projects inside the image, and the target projects to the
    /// centre, for several up axes.
    #[test]
    fn framing_keeps_the_sphere_in_view() {
        for up in [Vec3::Z, Vec3::Y, Vec3::new(1.0, 1.0, 1.0).normalize()] {
            let centre = Vec3::new(3.0, -2.0, 7.0);
            let camera = Camera::framing(centre, 5.0, up);
            let clip = camera.view_projection(1.0, 5.0);
            let ndc = clip.project_point3(centre);
            assert!(ndc.x.abs() < 1e-5 && ndc.y.abs() < 1e-5, "{ndc}");
            assert!((camera.eye() - centre).length() > 5.0);
            let (a, b) = camera.horizontal_axes();
            for direction in [a, b, up, -a, -b, -up] {
                let p = clip.project_point3(centre + 5.0 * direction);
                assert!(p.x.abs() < 1.0 && p.y.abs() < 1.0, "{up} {direction}: {p}");
                assert!(p.z > 0.0 && p.z < 1.0, "{up} {direction}: depth {}", p.z);
            }
        }
    }

    #[test]
    fn near_and_far_map_to_the_ends_of_the_depth_range() {
        let p = perspective(1.0, 2.0, 0.5, 10.0);
        assert!(p.project_point3(Vec3::new(0.0, 0.0, -0.5)).z.abs() < 1e-6);
        assert!((p.project_point3(Vec3::new(0.0, 0.0, -10.0)).z - 1.0).abs() < 1e-6);
        let v = look_at(Vec3::new(1.0, 2.0, 3.0), Vec3::new(1.0, 2.0, 0.0), Vec3::Y);
        assert!(
            (v.transform_point3(Vec3::new(1.0, 2.0, 0.0)) - Vec3::new(0.0, 0.0, -3.0)).length()
                < 1e-6
        );
        assert!((v.transform_point3(Vec3::new(1.0, 3.0, 3.0)) - Vec3::Y).length() < 1e-6);
    }

    #[test]
    fn the_horizon_stays_level_and_up_stays_up() {
        let camera = Camera::framing(Vec3::ZERO, 1.0, Vec3::Z);
        let clip = camera.view_projection(16.0 / 9.0, 1.0);
        let above = clip.project_point3(Vec3::Z * 0.5);
        let below = clip.project_point3(-Vec3::Z * 0.5);
        assert!(above.y > below.y);
        assert!((above.x - below.x).abs() < 1e-5);
    }
}
