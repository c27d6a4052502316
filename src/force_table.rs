//! Forces grouped the way both backends read them: the forces that act on every body first,
//! then each body's own forces in one contiguous run, found through a per-body range.

use crate::crowd::Crowd;
use crate::force::ForceKind;

/// The crowd's forces ordered for per-body lookup (shared by the CPU and GPU backends).
#[derive(Clone, Debug, Default)]
pub(crate) struct ForceTable {
    /// Global forces in `[0, global_count)`, then targeted forces grouped by body.
    pub forces: Vec<ForceKind>,
    /// How many forces at the start act on every body.
    pub global_count: usize,
    /// For each body, `(first, count)` of its own forces in `forces`.
    pub ranges: Vec<(u32, u32)>,
}

impl ForceTable {
    /// Groups the crowd's forces; the order within each group keeps the scene's order.
    pub fn new(crowd: &Crowd) -> Self {
        let mut forces: Vec<ForceKind> = crowd
            .forces
            .iter()
            .filter(|f| f.body.is_none())
            .map(|f| f.kind)
            .collect();
        let global_count = forces.len();
        let mut targeted: Vec<(usize, ForceKind)> = crowd
            .forces
            .iter()
            .filter_map(|f| f.body.map(|b| (b, f.kind)))
            .collect();
        targeted.sort_by_key(|&(body, _)| body); // stable: keeps scene order per body
        let mut ranges = vec![(0u32, 0u32); crowd.bodies.len()];
        for (body, kind) in targeted {
            let range = &mut ranges[body];
            if range.1 == 0 {
                range.0 = forces.len() as u32;
            }
            range.1 += 1;
            forces.push(kind);
        }
        Self {
            forces,
            global_count,
            ranges,
        }
    }

    /// The forces acting on body `index`.
    pub fn acting_on(&self, index: usize) -> impl Iterator<Item = &ForceKind> {
        let (first, count) = self.ranges[index];
        let own = &self.forces[first as usize..(first + count) as usize];
        self.forces[..self.global_count].iter().chain(own)
    }
}
