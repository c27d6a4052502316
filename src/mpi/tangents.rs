//! Tangents over the ranks: named in the crowd's numbering, carried by each rank's shard
//! under the names its own settings give them, and gathered to rank 0 in crowd order.
//!
//! A shard renumbers the forces it holds (`Crowd::shard_settings`) and holds none that acts
//! only on another rank's bodies. A number of such a force moves none of the shard's
//! bodies: its columns are zero there, which the shard does not carry and the gather fills
//! in. One process carries such a column too and computes it from a zero seed; every update
//! of a column adds to it, so it stays `+0.0` there as well (the MPI tests compare the
//! bytes on every integrator).

use super::gather::bytes_to_root;
use super::simulation::MpiSimulation;
use super::tangent_names::RankTangents;
use crate::assembly::crowd::Crowd;
use crate::model::error::{Error, Result};
use crate::model::tangent::{STATE_COMPONENTS, TangentPlan};
use crate::simulation::tangent_refusal;
use ::mpi::traits::*;

impl<C: Communicator> MpiSimulation<C> {
    /// Starts carrying the derivatives `names` names (in `crowd`'s numbering, as
    /// [`Simulation::start_tangents`](crate::Simulation::start_tangents) takes them) from every
    /// body's state now; `crowd` is the one every rank built this simulation from. Collective:
    /// a bad name, or tangents a rank's device cannot hold, fail every rank alike.
    pub fn start_tangents(&mut self, crowd: &Crowd, names: &[&str]) -> Result<()> {
        if names.is_empty() {
            return Err(Error::invalid("tangents", "name at least one"));
        }
        let plan = TangentPlan::parse(
            names,
            &crowd.forces,
            &crowd.planes,
            &crowd.keyframes,
            "tangents",
        )?;
        self.carry_tangents(&plan, crowd)
    }

    /// [`start_tangents`](Self::start_tangents) of a plan checked against `crowd`.
    pub(crate) fn carry_tangents(&mut self, plan: &TangentPlan, crowd: &Crowd) -> Result<()> {
        if let Some(why) = tangent_refusal(crowd) {
            return Err(Error::invalid("tangents", why));
        }
        let carried = RankTangents::of(plan, crowd, self.shards());
        let mine = carried.shard_names(self.rank());
        let mine: Vec<&str> = mine.iter().map(String::as_str).collect();
        let started = match mine.is_empty() {
            true => Ok(()),
            false => self.local_mut().start_tangents(&mine),
        };
        self.agree(started)?;
        self.tangents = Some(carried);
        Ok(())
    }

    /// The names of the tangents carried (in the crowd's numbering) and their widths, in
    /// the order named; empty if none are.
    pub fn tangent_names(&self) -> Vec<(String, usize)> {
        self.tangents
            .iter()
            .flat_map(|t| &t.carried)
            .map(|t| (t.name.clone(), t.width))
            .collect()
    }

    /// The columns of the tangents `name` names over the whole crowd, on rank 0 (`None` on
    /// the others): shape `(bodies, 13, k)` row-major, in crowd order, as
    /// [`Simulation::read_tangents`](crate::Simulation::read_tangents) gives one process's.
    /// Collective.
    pub fn tangents_on_root(&mut self, name: &str) -> Result<Option<Vec<f64>>> {
        let Some(carried) = &self.tangents else {
            return Err(Error::invalid(
                "tangents",
                "none are carried: start them with start_tangents",
            ));
        };
        let Some(at) = carried.carried.iter().position(|t| t.name == name) else {
            let names: Vec<&str> = carried.carried.iter().map(|t| t.name.as_str()).collect();
            return Err(Error::invalid(
                "tangents",
                format!("`{name}` is not carried (carried: {})", names.join(", ")),
            ));
        };
        let width = carried.carried[at].width;
        let mine = carried.shards[self.rank()][at].clone();
        let mut columns = vec![0.0; self.local().body_count() * STATE_COMPONENTS * width];
        let read = match mine {
            Some(name) => self.local_mut().read_tangents(&name, &mut columns),
            None => Ok(()),
        };
        let bytes: Vec<u8> = columns.iter().flat_map(|v| v.to_le_bytes()).collect();
        drop(columns);
        let mut all = Vec::new();
        let sent = bytes_to_root(self.comm(), &mut all, |out| out.write_all(&bytes));
        let sent = sent.map_err(|e| Error::Mpi(format!("gathering the tangents {name}: {e}")));
        self.agree(read.and(sent))?;
        Ok(self.is_root().then(|| {
            all.chunks_exact(8)
                .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
                .collect()
        }))
    }
}
