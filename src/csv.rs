//! The final-state CSV: one row per body, world frame, full precision.

use std::io::{self, Write};

use crate::body::Body;

/// Header of the state CSV; quaternions are `w, x, y, z` (scalar first).
pub const CSV_HEADER: &str = "body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,px,py,pz,lx,ly,lz";

/// Writes the header and one row per body. Numbers use the shortest text that reads back
/// to the same f64, so nothing is lost.
pub fn write_states_csv(out: &mut impl Write, bodies: &[Body]) -> io::Result<()> {
    writeln!(out, "{CSV_HEADER}")?;
    for (i, body) in bodies.iter().enumerate() {
        let s = &body.state;
        let (x, q, v, w) = (
            s.position,
            s.orientation,
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
