//! The envelope a body must stay inside: limits on its speed, its angular speed and its
//! distance from the origin, each compared squared (no square root to round).

use super::algebra::Vec3;
use super::scalar::Scalar;

/// Which rules a body at `position` moving at `velocity` and `angular_velocity` breaks, in
/// order speed, angular speed, distance: `|v|^2 > limits_squared[0]`, and so on.
#[inline(always)]
pub fn envelope_breaches<R: Scalar>(
    position: Vec3<R>,
    velocity: Vec3<R>,
    angular_velocity: Vec3<R>,
    limits_squared: [R; 3],
) -> [R::Bool; 3] {
    let [speed, angular_speed, distance] = limits_squared;
    [
        speed.less(velocity.length_squared()),
        angular_speed.less(angular_velocity.length_squared()),
        distance.less(position.length_squared()),
    ]
}
