//! The names of the tangents a simulation over ranks carries: the crowd's, and every rank's
//! for the same groups in its shard's numbering of the forces (src/mpi/tangents.rs carries
//! them; the checkpoint manifest keeps them).

use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::assembly::crowd::Crowd;
use crate::model::tangent::{Tangent, TangentPlan};

/// The tangents a simulation over ranks carries, as its checkpoint manifest keeps them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct RankTangents {
    /// The groups in the crowd's numbering, in the order named.
    pub(super) carried: Vec<CrowdTangent>,
    /// Every rank's name of each group (in its shard's numbering), `None` where the group
    /// is a number of a force acting on none of the rank's bodies.
    pub(super) shards: Vec<Vec<Option<String>>>,
}

/// One group of directions as the crowd names it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct CrowdTangent {
    pub(super) name: String,
    /// Its columns: the `k` of its `(bodies, 13, k)` array.
    pub(super) width: usize,
}

impl RankTangents {
    /// The groups of `plan` (parsed against `crowd`), named by every shard of `shards`.
    pub(super) fn of(plan: &TangentPlan, crowd: &Crowd, shards: &[Range<usize>]) -> Self {
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
/// for a force's number or table, renumbered, or `None` where the force is not the shard's.
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
        Tangent::Keyframes { force, keyframes } => {
            numbers.iter().position(|&n| n == force).map(|at| {
                Tangent::Keyframes {
                    force: at,
                    keyframes,
                }
                .name()
            })
        }
        ref other => Some(other.name()),
    }
}
