//! The keyframe search on the CPU, in f64 and f32: which segment of a table a time falls
//! in ([`keyframe_segment`], which both interpolations below read). The interpolation on the
//! segment is `physics::forces::keyframe_lerp`; the GPU kernels make the same comparisons
//! in `keyframe_segment` (shaders/keyframes.wgsl).

use crate::physics::dual::WIDEST_DUAL;
use crate::physics::forces::keyframe_lerp;
use crate::physics::scalar::Scalar;

/// Where `t` falls among the times of `keyframes` (`[t, value]`, times strictly increasing,
/// at least one): `(i, i)` where keyframe `i`'s value holds (`t` at or before the first, or
/// past the last), `(i - 1, i)` where `t` lies on the segment between them.
#[inline(always)]
pub(crate) fn keyframe_segment<P: PartialOrd + Copy>(keyframes: &[[P; 2]], t: P) -> (usize, usize) {
    if t <= keyframes[0][0] {
        return (0, 0);
    }
    for (i, [at, _]) in keyframes.iter().enumerate().skip(1) {
        if t < *at {
            return (i - 1, i);
        }
    }
    (keyframes.len() - 1, keyframes.len() - 1)
}

/// The piecewise-linear interpolation of `keyframes` at `t`, held constant before the first
/// and after the last.
pub(crate) fn keyframe_scale<R: Scalar + PartialOrd>(keyframes: &[[R; 2]], t: R) -> R {
    match keyframe_segment(keyframes, t) {
        (a, b) if a == b => keyframes[a][1],
        (a, b) => keyframe_lerp(keyframes[a], keyframes[b], t),
    }
}

/// Which number of a keyframe table each column of a block is taken along, for one force
/// record: `2 i` is keyframe `i`'s time, `2 i + 1` its value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct KeyframeSeeds([Option<u32>; WIDEST_DUAL]);

impl KeyframeSeeds {
    /// Takes column `column` along table number `number`.
    pub(crate) fn seed(&mut self, column: usize, number: usize) {
        self.0[column] = Some(number as u32);
    }

    /// Whether any column is taken along the table.
    pub(crate) fn any(&self) -> bool {
        self.0.iter().any(Option::is_some)
    }

    /// The columns taken along table number `number`, a bit each.
    #[inline(always)]
    pub(crate) fn columns(&self, number: usize) -> u8 {
        (self.0.iter().enumerate())
            .filter(|(_, seed)| **seed == Some(number as u32))
            .fold(0, |columns, (j, _)| columns | 1 << j)
    }
}

/// [`keyframe_scale`] with the table's numbers moving along the columns `seeds` takes
/// them along: the same comparisons (on the values), the same interpolation, each number
/// entering as `number(value, its columns)`, a number of `R` whose tangents are 1 in those
/// columns. `time` is `t` in `R` (it moves along no column).
#[inline(always)]
pub(crate) fn seeded_keyframe_scale<P: Scalar + PartialOrd, R: Scalar>(
    keyframes: &[[P; 2]],
    t: P,
    time: R,
    seeds: &KeyframeSeeds,
    number: impl Fn(P, u8) -> R,
) -> R {
    let keyframe = |i: usize| {
        let [at, value] = keyframes[i];
        [
            number(at, seeds.columns(2 * i)),
            number(value, seeds.columns(2 * i + 1)),
        ]
    };
    match keyframe_segment(keyframes, t) {
        (a, b) if a == b => keyframe(a)[1],
        (a, b) => keyframe_lerp(keyframe(a), keyframe(b), time),
    }
}

/// A keyframed record's scale at `t` (`time` in `R`, along no column): the interpolation on
/// the values where no column is taken along its table (`seeds` none or empty), made a
/// number of `R` by `fixed`; else [`seeded_keyframe_scale`].
#[inline(always)]
pub(crate) fn record_scale<P: Scalar + PartialOrd, R: Scalar>(
    (keyframes, t): (&[[P; 2]], P),
    time: R,
    seeds: Option<&KeyframeSeeds>,
    fixed: impl FnOnce(P) -> R,
    seeded: impl Fn(P, u8) -> R,
) -> R {
    match seeds.filter(|seeds| seeds.any()) {
        None => fixed(keyframe_scale(keyframes, t)),
        Some(seeds) => seeded_keyframe_scale(keyframes, t, time, seeds, seeded),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyframes_interpolate_and_hold_their_ends() {
        let ramp = [[1.0, 2.0], [3.0, 6.0], [4.0, 0.0]];
        for (t, expected) in [
            (-5.0, 2.0),
            (1.0, 2.0),
            (2.0, 4.0),
            (3.0, 6.0),
            (3.5, 3.0),
            (4.0, 0.0),
            (9.0, 0.0),
        ] {
            assert_eq!(keyframe_scale(&ramp, t), expected, "t = {t}");
        }
        assert_eq!(keyframe_scale(&[[0.5, 7.0]], 0.0), 7.0);
        assert_eq!(keyframe_scale(&[[0.5, 7.0]], 2.0), 7.0);
    }
}
