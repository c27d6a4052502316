//! Which pairs of bodies may touch: a uniform grid of cells as wide as the largest bounding
//! sphere's diameter, each body in the cell of its centre, so two bodies that touch lie in
//! the same or adjacent cells. The answer is the candidate pairs `(a, b)`, `a < b`, sorted:
//! it depends on the positions alone, never on the order the work is done in.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use rayon::prelude::*;

/// A fast hash of cell numbers (a multiply and a rotate per word): the map only looks rows up,
/// so its order never shows.
#[derive(Default)]
struct CellHasher(u64);

impl Hasher for CellHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }
    fn write_i64(&mut self, word: i64) {
        self.write_u64(word as u64);
    }
    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// The cell of a coordinate: saturating at the ends of `i64`, so a body at a huge
/// coordinate shares a cell with more bodies (tested, never lost).
fn cell_of(coordinate: f64, width: f64) -> i64 {
    (coordinate / width).floor() as i64
}

/// The candidate pairs among bodies with centres `centres` and bounding radii `radii`
/// (bodies with `active[i]` false take no part), sorted. A body whose centre is not finite
/// takes no part either: it has faulted, and the run stops or freezes it first.
pub fn candidate_pairs(
    centres: &[[f64; 3]],
    radii: &[f64],
    active: &[bool],
) -> Vec<(usize, usize)> {
    pairs_within(centres, radii, active, 0.0)
}

/// [`candidate_pairs`] of bounding spheres grown by `margin / 2` each.
fn pairs_within(
    centres: &[[f64; 3]],
    radii: &[f64],
    active: &[bool],
    margin: f64,
) -> Vec<(usize, usize)> {
    let taking_part = |i: usize| active[i] && centres[i].iter().all(|c| c.is_finite());
    let largest = (0..centres.len())
        .filter(|&i| taking_part(i))
        .map(|i| radii[i])
        .fold(0.0_f64, f64::max);
    if largest <= 0.0 {
        return Vec::new();
    }
    let width = 2.0 * largest + margin;
    let mut cells: Vec<([i64; 3], usize)> = (0..centres.len())
        .into_par_iter()
        .filter(|&i| taking_part(i))
        .map(|i| (centres[i].map(|c| cell_of(c, width)), i))
        .collect();
    cells.par_sort_unstable();
    // Each row of cells (the same x and y cell) is a run of the sorted list, found by hash.
    let mut rows: HashMap<(i64, i64), (usize, usize), BuildHasherDefault<CellHasher>> =
        HashMap::default();
    for (k, &(cell, _)) in cells.iter().enumerate() {
        rows.entry((cell[0], cell[1])).or_insert((k, k)).1 = k + 1;
    }
    let touching = |a: usize, b: usize| {
        let reach = radii[a] + radii[b] + margin;
        let squared: f64 = (0..3)
            .map(|k| (centres[a][k] - centres[b][k]).powi(2))
            .sum();
        squared <= reach * reach
    };
    // Each pair of cells once: a body's own cell from the entry after its own on, and the
    // 13 cells after it (its row's next cell, and the cells of the rows after its row).
    let mut pairs: Vec<(usize, usize)> = (0..cells.len())
        .into_par_iter()
        .flat_map_iter(|k| {
            let (cell, a) = cells[k];
            let mut found = Vec::new();
            let mut take = |others: &[([i64; 3], usize)]| {
                for &(_, b) in others {
                    // A saturated row is its own neighbour: it holds `a` itself.
                    if a != b && touching(a, b) {
                        found.push((a.min(b), a.max(b)));
                    }
                }
            };
            let own_row = rows[&(cell[0], cell[1])];
            let next_z = cell[2].saturating_add(1);
            let row = &cells[k + 1..own_row.1];
            take(&row[..row.partition_point(|&(c, _)| c[2] <= next_z)]);
            for (dx, dy) in [(0, 1), (1, -1), (1, 0), (1, 1)] {
                let key = (cell[0].saturating_add(dx), cell[1].saturating_add(dy));
                let Some(&(first, end)) = rows.get(&key) else {
                    continue;
                };
                let row = &cells[first..end];
                let low = row.partition_point(|&(c, _)| c[2] < cell[2].saturating_sub(1));
                let high = row.partition_point(|&(c, _)| c[2] <= next_z);
                take(&row[low..high]);
            }
            found
        })
        .collect();
    // A saturated cell is its own neighbour: a pair found twice is kept once.
    pairs.par_sort_unstable();
    pairs.dedup();
    pairs
}

/// How far a body may move before the pairs are found again, as a fraction of the largest
/// bounding radius: the pairs are found with every bounding sphere grown by half of it.
pub const MARGIN_FRACTION: f64 = 0.5;

/// The candidate pairs of a crowd kept over steps (a Verlet list): found with a margin, and
/// found again only once a body has moved more than half the margin from where it was
/// then. Until then every pair that touches is among them, so which steps find them again
/// never changes a result: only which pairs are tested.
#[derive(Clone, Debug, Default)]
pub struct NeighbourList {
    pairs: Vec<(usize, usize)>,
    anchors: Vec<[f64; 3]>,
    margin: f64,
}

impl NeighbourList {
    /// The candidate pairs among bodies at `centres` with bounding radii `radii`, sorted:
    /// those kept, or found again if a body has moved too far (or is not finite).
    pub fn pairs(&mut self, centres: &[[f64; 3]], radii: &[f64]) -> &[(usize, usize)] {
        let half = self.margin / 2.0;
        let moved = |(now, then): (&[f64; 3], &[f64; 3])| {
            let squared: f64 = (0..3).map(|k| (now[k] - then[k]).powi(2)).sum();
            // A centre that is not a number has moved too far.
            squared.is_nan() || squared > half * half
        };
        let stale =
            self.anchors.len() != centres.len() || centres.par_iter().zip(&self.anchors).any(moved);
        if stale {
            let largest = radii.iter().copied().fold(0.0_f64, f64::max);
            self.margin = MARGIN_FRACTION * largest;
            self.pairs = pairs_within(centres, radii, &vec![true; centres.len()], self.margin);
            self.anchors = centres.to_vec();
        }
        &self.pairs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair whose bounding spheres meet, by testing all of them.
    fn all_pairs(centres: &[[f64; 3]], radii: &[f64]) -> Vec<(usize, usize)> {
        let mut pairs = Vec::new();
        for a in 0..centres.len() {
            for b in a + 1..centres.len() {
                let squared: f64 = (0..3)
                    .map(|k| (centres[a][k] - centres[b][k]).powi(2))
                    .sum();
                if squared <= (radii[a] + radii[b]).powi(2) {
                    pairs.push((a, b));
                }
            }
        }
        pairs
    }

    #[test]
    fn the_grid_finds_every_pair_that_all_pairs_find() {
        let mut rng = crate::verify::xorshift::Xorshift64(7);
        for scale in [1.0, -1e6, 3e30] {
            let count = 400;
            let centres: Vec<[f64; 3]> = (0..count)
                .map(|_| [0; 3].map(|_: i32| scale + 6.0 * rng.unit()))
                .collect();
            let radii: Vec<f64> = (0..count).map(|_| 0.05 + 0.3 * rng.unit()).collect();
            let found = candidate_pairs(&centres, &radii, &vec![true; count]);
            let expected = all_pairs(&centres, &radii);
            assert!(!expected.is_empty());
            assert_eq!(found, expected, "centres about {scale}");
        }
    }

    #[test]
    fn a_kept_list_holds_every_touching_pair_until_a_body_moves_past_its_margin() {
        let mut rng = crate::verify::xorshift::Xorshift64(11);
        let count = 300;
        let mut centres: Vec<[f64; 3]> = (0..count)
            .map(|_| [0; 3].map(|_: i32| 5.0 * rng.unit()))
            .collect();
        let radii: Vec<f64> = (0..count).map(|_| 0.1 + 0.2 * rng.unit()).collect();
        let mut list = NeighbourList::default();
        for _ in 0..200 {
            for centre in &mut centres {
                for c in centre.iter_mut() {
                    *c += 0.02 * (rng.unit() - 0.5);
                }
            }
            let touching = all_pairs(&centres, &radii);
            let kept = list.pairs(&centres, &radii).to_vec();
            assert!(touching.iter().all(|pair| kept.binary_search(pair).is_ok()));
        }
        // The kept pairs reach past the touching ones: the margin.
        assert!(list.pairs.len() > all_pairs(&centres, &radii).len());
    }

    #[test]
    fn inactive_and_faulted_bodies_take_no_part() {
        let centres = [
            [0.0; 3],
            [0.1, 0.0, 0.0],
            [f64::NAN, 0.0, 0.0],
            [0.0, 0.1, 0.0],
        ];
        let radii = [0.1; 4];
        let found = candidate_pairs(&centres, &radii, &[true, true, true, false]);
        assert_eq!(found, vec![(0, 1)]);
    }
}
