//! Which pairs of bodies may touch: a uniform grid of cells as wide as the largest bounding
//! sphere's diameter, each body in the cell of its centre, so two bodies that touch lie in
//! the same or adjacent cells. The answer is the candidate pairs `(a, b)`, `a < b`, sorted:
//! it depends on the positions alone, never on the order the work is done in.

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
    let taking_part = |i: usize| active[i] && centres[i].iter().all(|c| c.is_finite());
    let largest = (0..centres.len())
        .filter(|&i| taking_part(i))
        .map(|i| radii[i])
        .fold(0.0_f64, f64::max);
    if largest <= 0.0 {
        return Vec::new();
    }
    let width = 2.0 * largest;
    let mut cells: Vec<([i64; 3], usize)> = (0..centres.len())
        .filter(|&i| taking_part(i))
        .map(|i| (centres[i].map(|c| cell_of(c, width)), i))
        .collect();
    cells.sort_unstable();
    let mut pairs = Vec::new();
    for &(cell, a) in &cells {
        for dx in -1..=1_i64 {
            for dy in -1..=1_i64 {
                for dz in -1..=1_i64 {
                    let next = [
                        cell[0].saturating_add(dx),
                        cell[1].saturating_add(dy),
                        cell[2].saturating_add(dz),
                    ];
                    let first = cells.partition_point(|&(c, _)| c < next);
                    let others = cells[first..].iter().take_while(|&&(c, _)| c == next);
                    for &(_, b) in others {
                        let reach = radii[a] + radii[b];
                        let between = (0..3).map(|k| centres[a][k] - centres[b][k]);
                        let squared: f64 = between.map(|d| d * d).sum();
                        if a < b && squared <= reach * reach {
                            pairs.push((a, b));
                        }
                    }
                }
            }
        }
    }
    // A saturated cell is its own neighbour: a pair found twice is kept once.
    pairs.sort_unstable();
    pairs.dedup();
    pairs
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
