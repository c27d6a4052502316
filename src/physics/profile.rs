//! The keyframe search on the CPU, in f64 and f32: which segment of a table a time falls
//! in. The interpolation on the segment is `physics::forces::keyframe_lerp`; the GPU kernel
//! makes the same comparisons (shaders/derivative.wgsl).

use crate::physics::forces::keyframe_lerp;
use crate::physics::scalar::Scalar;

/// The piecewise-linear interpolation of `keyframes` (`[t, value]`, times strictly
/// increasing, at least one) at `t`, held constant before the first and after the last.
pub(crate) fn keyframe_scale<R: Scalar + PartialOrd>(keyframes: &[[R; 2]], t: R) -> R {
    let [first_time, first_value] = keyframes[0];
    if t <= first_time {
        return first_value;
    }
    for pair in keyframes.windows(2) {
        let ([t0, v0], [t1, v1]) = (pair[0], pair[1]);
        if t < t1 {
            return keyframe_lerp([t0, v0], [t1, v1], t);
        }
    }
    keyframes[keyframes.len() - 1][1]
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
