//! The force kinds' laws (Baraff 2.8): each adds a force and a torque about the centre of
//! mass to a body's totals. Each law is written with its kind's declaration in the list of
//! kinds (`model/force.rs`); this module compiles them into [`add_force`] over the number
//! type, with the helpers the laws call.

use super::algebra::Vec3;
use super::force_law::{ForceInput, Parameters};
use super::motion::{Auxiliaries, Load, MassConstants, State};
use super::scalar::Scalar;
use super::trig::sin_cos;
use crate::model::force::{ForceType, every_force_kind};
use crate::model::force_declaration::take_lane;

/// What a force acting on one body sees: its state, constants and auxiliaries, and the time.
#[derive(Clone, Copy, Debug)]
pub struct Body<'a, R> {
    pub state: &'a State<R>,
    pub mass: &'a MassConstants<R>,
    pub aux: &'a Auxiliaries<R>,
    pub time: R,
}

impl<R: Scalar> Body<'_, R> {
    /// What a force law sees of this body: its orientation normalized, `index` its crowd
    /// index as a number, `parameters` the force's numbers.
    #[inline(always)]
    pub fn law_input(&self, index: R, parameters: Parameters<R>) -> ForceInput<R> {
        ForceInput {
            position: self.state.position,
            orientation: self.state.orientation.normalize(),
            velocity: self.aux.velocity,
            angular_velocity: self.aux.angular_velocity,
            mass: self.mass.mass,
            time: self.time,
            body: index,
            parameters,
        }
    }
}

/// `offset + amplitude sin(2 pi frequency t + phase)`.
#[inline(always)]
pub fn sinusoid_scale<R: Scalar>(offset: R, amplitude: R, frequency: R, phase: R, t: R) -> R {
    let (sin, _) = sin_cos(R::constant(std::f64::consts::TAU) * frequency * t + phase);
    offset + amplitude * sin
}

/// The value at `t` on the keyframe segment from `(t0, v0)` to `(t1, v1)`.
#[inline(always)]
pub fn keyframe_lerp<R: Scalar>([t0, v0]: [R; 2], [t1, v1]: [R; 2], t: R) -> R {
    v0 + (v1 - v0) * ((t - t0) / (t1 - t0))
}

/// Adds `scale` times a world force and torque: the sinusoidal and keyframed kinds, once
/// their scale is known.
#[inline(always)]
pub fn add_scaled<R: Scalar>(force: Vec3<R>, torque: Vec3<R>, scale: R, total: &mut Load<R>) {
    total.force = total.force + force * scale;
    total.torque = total.torque + torque * scale;
}

/// `add_force`, from the list of kinds (`every_force_kind!` in `model/force.rs`): each kind's
/// law there, with its numbers read from their lanes by the names it declares them with.
macro_rules! add_force_of_the_laws {
    ($(
        $(#[$kind_meta:meta])*
        $kind:ident $name:literal $([$reads:ident])? $({
            $(
                $(#[$field_meta:meta])*
                $field:ident : $shape:ident $unit:literal $($flag:ident)*
            ),* $(,)?
            $(; $table:ident)?
        })?
        $(=> |$body:ident, $total:ident| $add:block)?
        $(@check_all $every_body:tt)?
        $(@check_every $every:literal |$sample:ident| $numbers:tt)?
    )*
    ;
    $(#[$law_meta:meta])*
    law $law:ident $law_name:literal
    ) => {
        /// Adds the force and torque of a force of kind `kind` with parameters `p` on `body`
        /// to `total`: the kind's law. The keyframed kind's scale comes from its table
        /// (`keyframe_scale`), found by the caller; the custom kind and a registered law's
        /// are the user's own code, called by the caller.
        #[inline(always)]
        pub fn add_force<R: Scalar>(
            kind: ForceType,
            p: &Parameters<R>,
            body: &Body<R>,
            total: &mut Load<R>,
        ) {
            match kind {
                $(ForceType::$kind => law_of_one_kind!(
                    p, body, total; [$($($field $shape),*)?] $(|$body, $total| $add)?
                ),)*
                ForceType::$law => law_of_one_kind!(p, body, total; []),
            }
        }
    };
}

/// One kind's arm of `add_force`: its numbers taken from the lanes of `p` in the order
/// declared, bound to their names, then its law; a kind without one is its callers' to add.
macro_rules! law_of_one_kind {
    (
        $p:ident, $input:ident, $sum:ident; [$($field:ident $shape:ident),*]
        |$body:ident, $total:ident| $add:block
    ) => {{
        #[allow(unused_mut, unused_variables)]
        let (mut vectors, mut scalars) = ($p.vectors.into_iter(), $p.scalars.into_iter());
        $(let $field = take_lane!(vectors, scalars, $shape);)*
        let ($body, $total) = ($input, $sum);
        $add
    }};
    ($p:ident, $input:ident, $sum:ident; [$($field:ident $shape:ident),*]) => {
        unreachable!("the caller evaluates keyframed, custom and law forces")
    };
}

every_force_kind!(add_force_of_the_laws);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sinusoid_starts_at_its_phase() {
        assert_eq!(sinusoid_scale(1.0_f64, 2.0, 3.0, 0.0, 0.0), 1.0);
        let quarter = sinusoid_scale(1.0_f64, 2.0, 0.25, 0.0, 1.0);
        assert!((quarter - 3.0).abs() < 1e-15);
    }
}
