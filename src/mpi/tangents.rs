//! Tangents over the ranks: named in the crowd's numbering, carried by each rank's shard
//! under the names its own settings give them, and gathered to rank 0 in crowd order.
//!
//! A shard renumbers the forces it holds (`Crowd::shard_settings`) and holds none that acts
//! only on another rank's bodies. A number of such a force moves none of the shard's
//! bodies: its columns are zero there, which the shard does not carry and the gather fills
//! in. One process carries such a column too and computes it from a zero seed; every update
//! of a column adds to it, so it stays `+0.0` there as well (the MPI tests compare the
//! bytes on every integrator).

use ::mpi::traits::*;
use serde::{Deserialize, Serialize};

use super::gather::bytes_to_root;
use super::simulation::MpiSimulation;
use crate::assembly::crowd::Crowd;
use crate::model::error::{Error, Result};
use crate::model::tangent::{STATE_COMPONENTS, Tangent, TangentPlan};
use crate::simulation::tangent_refusal;

/// The tangents a simulation over ranks carries, as its checkpoint manifest keeps them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct RankTangents {
    /// The groups in the crowd's numbering, in the order named.
    carried: Vec<CrowdTangent>,
    /// Every rank's name of each group (in its shard's numbering), `None` where the group
    /// is a number of a force acting on none of the rank's bodies.
    shards: Vec<Vec<Option<String>>>,
}

/// One group of directions as the crowd names it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct CrowdTangent {
    name: String,
    /// Its columns: the `k` of its `(bodies, 13, k)` array.
    width: usize,
}

impl RankTangents {
    /// The groups of `plan` (parsed against `crowd`), named by every shard of `shards`.
    fn of(plan: &TangentPlan, crowd: &Crowd, shards: &[std::ops::Range<usize>]) -> Self {
        let carried = plan
            .tangents()
            .iter()
            .map(|t| CrowdTangent {
                name: t.name(),
                width: t.width(),
            })
            .collect();
        let shards = shards
            .iter()
            .map(|bodies| {
                let numbers = crowd.shard_force_numbers(bodies.clone());
                plan.tangents()
                    .iter()
                    .map(|t| shard_name(t, &numbers))
                    .collect()
            })
            .collect();
        Self { carried, shards }
    }

    /// The names rank `rank`'s shard carries the groups under, in order.
    pub(crate) fn shard_names(&self, rank: usize) -> Vec<String> {
        self.shards[rank].iter().flatten().cloned().collect()
    }

    /// Whether it agrees with `ranks` ranks.
    pub(crate) fn fits(&self, ranks: usize) -> bool {
        self.shards.len() == ranks && self.shards.iter().all(|s| s.len() == self.carried.len())
    }
}

/// The name of `tangent` in a shard whose forces are the crowd's `numbers`: the same but
/// for a force's number, renumbered, or `None` where the force is not the shard's.
fn shard_name(tangent: &Tangent, numbers: &[usize]) -> Option<String> {
    match *tangent {
        Tangent::Force {
            force,
            field,
            vector,
        } => numbers.iter().position(|&n| n == force).map(|at| {
            Tangent::Force {
                force: at,
                field,
                vector,
            }
            .name()
        }),
        ref other => Some(other.name()),
    }
}

impl<C: Communicator> MpiSimulation<C> {
    /// Starts carrying the derivatives `names` names (in `crowd`'s numbering, as
    /// [`Simulation::start_tangents`](crate::Simulation::start_tangents) takes them) from every
    /// body's state now; `crowd` is the one every rank built this simulation from. Collective:
    /// a bad name, or tangents a rank's device cannot hold, fail every rank alike.
    pub fn start_tangents(&mut self, crowd: &Crowd, names: &[&str]) -> Result<()> {
        if names.is_empty() {
            return Err(Error::invalid("tangents", "name at least one"));
        }
        let plan = TangentPlan::parse(names, &crowd.forces, &crowd.planes, "tangents")?;
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
