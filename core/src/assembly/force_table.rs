//! Forces grouped the way every backend reads them: the forces that act on every body first,
//! then each body's own forces in one contiguous run, found through a per-body range. Within
//! each group the forces are ordered by kind, so a GPU kernel visits each kind in one loop of
//! its own instead of a switch whose every case a divergent group of invocations would run.

use std::ops::Range;

use crate::assembly::crowd::Crowd;
use crate::model::codes::Coded;
use crate::model::force::{ForceKind, LawDeclaration};

/// The crowd's forces ordered for per-body lookup (shared by the CPU and GPU backends).
#[derive(Clone, Debug, Default)]
pub struct ForceTable {
    /// Global forces in `[0, global_count)`, then targeted forces grouped by body.
    pub forces: Vec<ForceKind>,
    /// Each of `forces`' index in the crowd's list (the scene's `forces[i]`), for the
    /// tangents a force's numbers name.
    origins: Vec<u32>,
    /// How many forces at the start act on every body.
    pub global_count: usize,
    /// For each body, `(first, count)` of its own forces in `forces`; empty when no body has
    /// forces of its own (the common crowd), so the table costs nothing per body then.
    ranges: Vec<(u32, u32)>,
    /// Number of bodies.
    body_count: usize,
    /// The crowd's registered laws, in the order it numbers them (`CustomForce::laws`).
    laws: Vec<&'static LawDeclaration>,
}

impl ForceTable {
    /// Groups the crowd's forces, each group ordered by kind (`ForceType::ALL` order) and
    /// forces of one kind in the scene's order. Every backend sums them in this order.
    pub fn new(crowd: &Crowd, body_count: usize) -> Self {
        let kind_code = |kind: &ForceKind| kind.force_type().code();
        // (scene index, force), each group sorted stably: scene order within a kind.
        let mut global: Vec<(usize, ForceKind)> = (crowd.forces.iter().enumerate())
            .filter(|(_, f)| f.body.is_none())
            .map(|(i, f)| (i, f.kind))
            .collect();
        global.sort_by_key(|(_, kind)| kind_code(kind));
        let global_count = global.len();
        let mut targeted: Vec<(usize, usize, ForceKind)> = (crowd.forces.iter().enumerate())
            .filter_map(|(i, f)| f.body.map(|b| (b, i, f.kind)))
            .collect();
        targeted.sort_by_key(|(body, _, kind)| (*body, kind_code(kind)));
        let mut ranges = match targeted.is_empty() {
            true => Vec::new(),
            false => vec![(0u32, 0u32); body_count],
        };
        let mut ordered = global;
        for (body, index, kind) in targeted {
            let range = &mut ranges[body];
            if range.1 == 0 {
                range.0 = ordered.len() as u32;
            }
            range.1 += 1;
            ordered.push((index, kind));
        }
        Self {
            forces: ordered.iter().map(|&(_, kind)| kind).collect(),
            origins: ordered.iter().map(|&(index, _)| index as u32).collect(),
            global_count,
            ranges,
            body_count,
            laws: (crowd.custom_force.iter())
                .flat_map(|custom| custom.laws())
                .filter_map(|law| law.law_declaration())
                .collect(),
        }
    }

    /// The crowd's number of a law force's law, which its record holds (0 for a force of
    /// any other kind).
    pub fn law_number(&self, kind: &ForceKind) -> u32 {
        match kind {
            ForceKind::Law { law, .. } => {
                (self.laws.iter()).position(|have| have == law).unwrap_or(0) as u32
            }
            _ => 0,
        }
    }

    /// Number of bodies.
    pub fn body_count(&self) -> usize {
        self.body_count
    }

    /// `(first, count)` of body `index`'s own forces in `forces` (`(0, 0)` for none).
    pub fn range(&self, index: usize) -> (u32, u32) {
        self.ranges.get(index).copied().unwrap_or((0, 0))
    }

    /// Whether any body has forces of its own.
    pub fn has_own_forces(&self) -> bool {
        !self.ranges.is_empty()
    }

    /// Each body's `(first, count)`, in order; empty when no body has forces of its own.
    pub fn own_ranges(&self) -> &[(u32, u32)] {
        &self.ranges
    }

    /// The table of the bodies in `bodies` alone, their ranges counted from the new table's
    /// start: what one GPU buffer chunk holds. Targeted forces are grouped by body, so the
    /// range's own forces are one contiguous run.
    pub fn for_bodies(&self, bodies: Range<usize>) -> Self {
        let body_count = bodies.len();
        let ranges = self.ranges.get(bodies).unwrap_or(&[]);
        let run_start = ranges.iter().find(|r| r.1 > 0).map_or(0, |r| r.0);
        let run_end = ranges
            .iter()
            .rev()
            .find(|r| r.1 > 0)
            .map_or(0, |r| r.0 + r.1);
        let run = run_start as usize..run_end as usize;
        let mut forces = self.forces[..self.global_count].to_vec();
        forces.extend_from_slice(&self.forces[run.clone()]);
        let origins = [&self.origins[..self.global_count], &self.origins[run]].concat();
        let shift = self.global_count as u32;
        Self {
            forces,
            origins,
            global_count: self.global_count,
            ranges: ranges
                .iter()
                .map(|&(first, count)| match count {
                    0 => (0, 0),
                    _ => (first - run_start + shift, count),
                })
                .collect(),
            body_count,
            laws: self.laws.clone(),
        }
    }

    /// The kinds of body `index`'s own forces, one [`ForceType::bit`] each.
    ///
    /// [`ForceType::bit`]: crate::model::force::ForceType::bit
    pub fn own_kinds(&self, index: usize) -> u32 {
        let (first, count) = self.range(index);
        self.forces[first as usize..(first + count) as usize]
            .iter()
            .fold(0, |mask, f| mask | f.force_type().bit())
    }

    /// The forces acting on body `index`.
    pub fn acting_on(&self, index: usize) -> impl Iterator<Item = &ForceKind> {
        let (first, count) = self.range(index);
        let own = &self.forces[first as usize..(first + count) as usize];
        self.forces[..self.global_count].iter().chain(own)
    }

    /// The crowd's index of the force each record comes from, in record order.
    pub fn origins(&self) -> &[u32] {
        &self.origins
    }

    /// The crowd's index of each force acting on body `index`, in
    /// [`acting_on`](Self::acting_on)'s order.
    pub fn origins_of(&self, index: usize) -> impl Iterator<Item = usize> + '_ {
        let (first, count) = self.range(index);
        let own = &self.origins[first as usize..(first + count) as usize];
        (self.origins[..self.global_count].iter().chain(own)).map(|&i| i as usize)
    }
}

/// Every keyframe table, one after another, each `[t, value]` converted by `convert` (to the
/// precision of a backend), and where each table starts: `(first, count)`. What the fast CPU
/// path and the GPU's keyframe buffer hold.
pub fn flatten_keyframes<T>(
    tables: &[Vec<[f64; 2]>],
    convert: impl Fn(f64) -> T,
) -> (Vec<[T; 2]>, Vec<(u32, u32)>) {
    let mut flat = Vec::new();
    let mut spans = Vec::new();
    for table in tables {
        spans.push((flat.len() as u32, table.len() as u32));
        flat.extend(table.iter().map(|&[t, v]| [convert(t), convert(v)]));
    }
    (flat, spans)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assembly::generate::CrowdSpec;
    use crate::model::force::Force;

    #[test]
    fn a_sub_table_gives_each_body_the_same_forces() {
        let mut crowd = Crowd::new(CrowdSpec::new(10, 3).generate().unwrap(), 1e-3);
        let drag = |linear: f64| ForceKind::LinearDrag {
            linear,
            angular: 0.0,
        };
        crowd.forces.push(Force {
            kind: drag(1.0),
            body: None,
        });
        for (body, linear) in [(7, 2.0), (2, 3.0), (7, 4.0), (4, 5.0), (9, 6.0)] {
            crowd.forces.push(Force {
                kind: drag(linear),
                body: Some(body),
            });
        }
        // Later in the scene, earlier in kind order: the table reorders them.
        let gravity = ForceKind::Gravity {
            acceleration: glam::DVec3::new(0.0, 0.0, -9.81),
        };
        crowd.forces.push(Force::on_all(gravity));
        crowd.forces.push(Force::on_body(7, gravity));
        let table = ForceTable::new(&crowd, crowd.bodies.len());
        for range in [0..10, 0..3, 3..8, 5..6, 8..10, 5..5] {
            let sub = table.for_bodies(range.clone());
            assert_eq!(sub.body_count(), range.len());
            for (local, body) in range.enumerate() {
                let whole: Vec<_> = table.acting_on(body).collect();
                let part: Vec<_> = sub.acting_on(local).collect();
                assert_eq!(whole, part, "body {body}");
                let origins: Vec<usize> = sub.origins_of(local).collect();
                let named: Vec<_> = origins.iter().map(|&i| &crowd.forces[i].kind).collect();
                assert_eq!(named, whole, "body {body}: each force's origin is itself");
                let mut expected: Vec<usize> = (crowd.forces.iter().enumerate())
                    .filter(|(_, f)| f.body.is_none_or(|b| b == body))
                    .map(|(i, _)| i)
                    .collect();
                let mut sorted = origins.clone();
                expected.sort();
                sorted.sort();
                assert_eq!(
                    sorted, expected,
                    "body {body}: every force acting on it, once"
                );
            }
        }
    }
}
