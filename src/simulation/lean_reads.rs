//! Lean reads: the states into caller-owned arrays, one per quantity (core/src/model/states.rs), with
//! no per-body objects and no allocation that grows with the crowd.

use super::facade::Simulation;
use crate::model::error::Result;
use crate::model::states::{Scalar, StatesMut};

use super::tickets::StatesTicket;

impl Simulation {
    /// Writes the current states into `out`'s arrays (waiting for queued GPU steps), each
    /// holding one entry per body. On the GPU the states cross to the host once, into a
    /// staging buffer kept between reads, and are written from there straight into `out`:
    /// nothing allocated grows with the crowd. Faults are reported as by
    /// [`bodies`](Self::bodies); an array of the wrong length is an error naming it.
    ///
    /// ```
    /// use rigid_crowd::{Backend, Crowd, CrowdSpec, Simulation, StateArrays};
    ///
    /// let crowd = Crowd::new(CrowdSpec::new(100, 1).generate()?, 1e-3);
    /// let mut sim = Simulation::new(&crowd, Backend::FastCpu)?; // or Backend::Gpu
    /// let mut states = StateArrays::<f32>::state(sim.body_count()).with_velocities();
    /// sim.step(10)?;
    /// sim.read_states(states.as_mut())?; // reuse `states` for every read
    /// let [w, x, y, z] = states.orientation[0];
    /// assert!((w * w + x * x + y * y + z * z - 1.0).abs() < 1e-5);
    /// # Ok::<(), rigid_crowd::Error>(())
    /// ```
    pub fn read_states<T: Scalar>(&mut self, mut out: StatesMut<'_, T>) -> Result<()> {
        out.check_lengths(self.body_count)?;
        self.visit_states(|i, mass, state| out.put(i, mass, state))
    }

    /// Positions and orientations (`w, x, y, z`) only, for drawing:
    /// [`read_states`](Self::read_states) with [`StatesMut::poses`].
    pub fn read_poses<T: Scalar>(
        &mut self,
        position: &mut [[T; 3]],
        orientation: &mut [[T; 4]],
    ) -> Result<()> {
        self.read_states(StatesMut::poses(position, orientation))
    }

    /// The states of `ticket` (from [`request_states`](Self::request_states)) written into
    /// `out`, waiting for the GPU's copy if needed: the lean twin of
    /// [`wait_states`](Self::wait_states).
    pub fn wait_states_into<T: Scalar>(
        &mut self,
        ticket: StatesTicket,
        mut out: StatesMut<'_, T>,
    ) -> Result<()> {
        out.check_lengths(self.body_count)?;
        self.check(&ticket)?;
        match self.engine.gpu_mut() {
            Some(sim) => sim.visit_request(ticket.id(), |i, mass, state| out.put(i, mass, state)),
            None => {
                let bodies = self.readbacks.take(ticket.id())?;
                for (i, body) in bodies.iter().enumerate() {
                    out.put(i, &body.mass, &body.state);
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::backends::gpu::GpuContext;
    use crate::{Crowd, CrowdSpec, Simulation, StateArrays};

    #[test]
    fn a_gpu_crowd_split_into_chunks_is_read_in_crowd_order() {
        let ctx = GpuContext::new().expect("the lean-read test needs a GPU adapter (see README)");
        // 64-byte records: at most 64 bodies per binding, so 300 bodies take five chunks.
        let ctx = ctx.with_max_binding_bytes(64 * 64);
        let crowd = Crowd::new(CrowdSpec::new(300, 8).generate().unwrap(), 1e-3);
        let mut sim = Simulation::gpu(&crowd, &ctx).unwrap();
        sim.step(3).unwrap();
        let mut arrays = StateArrays::<f64>::state(sim.body_count());
        sim.read_states(arrays.as_mut()).unwrap();
        let bodies = sim.bodies().unwrap();
        for (i, body) in bodies.iter().enumerate() {
            let (s, pose) = (&body.state, body.model_pose());
            assert_eq!(arrays.position[i], pose.position.to_array(), "position {i}");
            let q = pose.orientation;
            assert_eq!(
                arrays.orientation[i],
                [q.w, q.x, q.y, q.z],
                "orientation {i}"
            );
            let p = s.linear_momentum.to_array();
            assert_eq!(arrays.linear_momentum[i], p, "P {i}");
            let l = s.angular_momentum.to_array();
            assert_eq!(arrays.angular_momentum[i], l, "L {i}");
        }
    }
}
