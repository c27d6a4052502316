//! The numbers recorded per body: the columns of the state CSV, as one row of f64.

use crate::model::body::Body;

/// Columns of a recorded body state, in order: the model frame's position and orientation
/// (`w, x, y, z`), the centre of mass's velocity, angular velocity, linear and angular
/// momentum; world frame, SI units. The same columns as the state CSV after its `body`.
pub const TRAJECTORY_COLUMNS: [&str; 19] = [
    "x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz", "px", "py", "pz",
    "lx", "ly", "lz",
];

/// `body` as one row of [`TRAJECTORY_COLUMNS`].
pub(crate) fn state_row(body: &Body) -> [f64; 19] {
    let pose = body.model_pose();
    let (x, q) = (pose.position, pose.orientation);
    let (v, w) = (body.velocity(), body.angular_velocity());
    let (p, l) = (body.state.linear_momentum, body.state.angular_momentum);
    [
        x.x, x.y, x.z, q.w, q.x, q.y, q.z, v.x, v.y, v.z, w.x, w.y, w.z, p.x, p.y, p.z, l.x, l.y,
        l.z,
    ]
}
