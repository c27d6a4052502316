//! The final-state CSV: one row per body, world frame, full precision.
//!
//! Position and orientation are the pose of the body's model frame ([`Body::model_pose`]):
//! for a mesh body, where its OBJ origin is and how its OBJ axes are turned, so the rows
//! place the mesh as the user wrote it; for closed-form shapes that is the centre of mass
//! and the body axes. Velocity is the centre of mass's, angular velocity and the momenta
//! (angular about the centre of mass) are frame-independent.

use std::io::{self, Write};

use crate::body::Body;

/// Header of the state CSV; quaternions are `w, x, y, z` (scalar first). `x, y, z, q*` are
/// the model frame's pose, `v*` the centre of mass's velocity (see the module docs).
pub const CSV_HEADER: &str = "body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,px,py,pz,lx,ly,lz";

/// Writes the header and one row per body. Numbers use the shortest text that reads back
/// to the same f64, so nothing is lost.
pub fn write_states_csv(out: &mut impl Write, bodies: &[Body]) -> io::Result<()> {
    writeln!(out, "{CSV_HEADER}")?;
    for (i, body) in bodies.iter().enumerate() {
        let s = &body.state;
        let pose = body.model_pose();
        let (x, q, v, w) = (
            pose.position,
            pose.orientation,
            body.velocity(),
            body.angular_velocity(),
        );
        let (p, l) = (s.linear_momentum, s.angular_momentum);
        writeln!(
            out,
            "{i},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            x.x,
            x.y,
            x.z,
            q.w,
            q.x,
            q.y,
            q.z,
            v.x,
            v.y,
            v.z,
            w.x,
            w.y,
            w.z,
            p.x,
            p.y,
            p.z,
            l.x,
            l.y,
            l.z
        )?;
    }
    Ok(())
}
