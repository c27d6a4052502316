//! The crowd `rigid-crowd check` and the cross-check tests run: seeded, with every force kind
//! and a custom force written twice (WGSL and a Rust twin).

use glam::DVec3;

use crate::assembly::crowd::Crowd;
use crate::assembly::generate::CrowdSpec;
use crate::model::error::Result;
use crate::model::force::{Force, ForceKind};
use crate::model::integrator::Integrator;
use crate::physics::custom_force::CustomForce;
use crate::physics::force_law::{CustomForceInput, ExternalLoad};

/// WGSL of the cross-check's custom force: quadratic drag `F = -c M |v| v`,
/// `tau = -c M |omega| omega / 100`, with `c = 0.02 (body mod 5 + 1)` (so the body index
/// reaches the kernel correctly) and `c` growing with time as `1 + t`.
///
/// Written against `real`, so it compiles in both precisions (`gpu` and `gpu-f64`).
pub const QUADRATIC_DRAG_WGSL: &str = "\
fn custom_force(position: vec3<real>, orientation: vec4<real>, velocity: vec3<real>,
                angular_velocity: vec3<real>, mass: real, time: real, body: u32) -> Load {
    let c = real(0.02) * real(body % 5u + 1u) * (real(1.0) + time);
    return Load(
        -c * mass * length(velocity) * velocity,
        real(-0.01) * c * mass * length(angular_velocity) * angular_velocity,
    );
}
";

/// The Rust twin of [`QUADRATIC_DRAG_WGSL`].
pub(crate) fn custom_drag(input: &CustomForceInput) -> ExternalLoad {
    let c = 0.02 * ((input.body % 5) + 1) as f64 * (1.0 + input.time);
    let (v, w) = (input.velocity, input.angular_velocity);
    ExternalLoad {
        force: -v * (c * input.mass * v.length()),
        torque: -w * (0.01 * c * input.mass * w.length()),
    }
}

/// What a kind's sample in `check`'s crowd (`@check_every k |s| { .. }` in the list of kinds,
/// `model/force.rs`) reads of the body it acts on.
pub(crate) struct CheckSample {
    /// The body's mass.
    pub mass: f64,
    /// Its centre of mass at the start.
    pub position: DVec3,
    /// A unit world direction, varied from body to body.
    pub dir: DVec3,
    /// A body-frame point inside the body.
    pub arm: DVec3,
    /// A body-frame torque of about 1 rad/s^2.
    pub spin_up: DVec3,
    /// A phase varied from body to body (radians).
    pub phase: f64,
    /// The body's smallest principal moment of inertia.
    pub stiffest_inertia: f64,
    /// The crowd's keyframe table.
    pub keyframes: usize,
}

/// The crowd's forces from each kind's sample in the list of kinds: `every_kind` the forces
/// on every body, `per_body(i, sample)` those of body `i`, in the list's order.
macro_rules! check_samples {
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
        fn every_kind() -> Vec<ForceKind> {
            vec![$($(ForceKind::$kind $every_body,)?)*]
        }

        fn per_body(index: usize, sample: &CheckSample) -> Vec<ForceKind> {
            let mut forces = Vec::new();
            $($(
                if index % $every == 0 {
                    let $sample = sample;
                    forces.push(ForceKind::$kind $numbers);
                }
            )?)*
            forces
        }
    };
}

crate::model::force::every_force_kind!(check_samples);

/// The crowd `rigid-crowd check` compares the backends on, ready for `cross_check`: seeded,
/// and exercising every force type, each on the bodies and with the numbers its sample in the
/// list of kinds (`model/force.rs`) gives it; the custom force is the quadratic drag
/// `F = -c M |v| v` written twice ([`QUADRATIC_DRAG_WGSL`] and its Rust twin).
///
/// NOTE: the per-body forces scale with each body's mass and size, so that they accelerate
/// every body alike (about 2 m/s^2, a few rad/s^2). A light body swung hard by a spring or a
/// point force is a chaotic pendulum: there f32 and f64 part ways at the rate the dynamics
/// amplify rounding, which would measure the chaos, not the kernel.
pub fn cross_check_crowd(
    count: usize,
    seed: u64,
    integrator: Integrator,
    dt: f64,
) -> Result<Crowd> {
    let bodies = CrowdSpec::new(count, seed).generate()?;
    let mut crowd = Crowd::new(bodies, dt)
        .with_integrator(integrator)
        .with_custom_force(CustomForce::new(QUADRATIC_DRAG_WGSL, custom_drag));
    crowd
        .forces
        .extend(every_kind().into_iter().map(Force::on_all));
    let keyframes = crowd.add_keyframes(vec![[0.0, 0.0], [0.3, 1.0], [0.7, -1.0], [1.0, 0.5]]);
    for i in 0..count {
        // Deterministic, varied directions without another random stream.
        let phase = i as f64 * 0.618_033_988_75;
        let dir = DVec3::new(phase.sin(), (1.7 * phase).cos(), (0.3 * phase).sin()).normalize();
        let body = &crowd.bodies[i];
        let mass = body.mass.mass();
        let stiffest_inertia = body.mass.inertia_body().diagonal().min_element();
        // Radius of gyration about the stiffest axis: a length that fits inside the body.
        let reach = (stiffest_inertia / mass).sqrt();
        // About 1 rad/s^2 from a torque along `axis` (body frame).
        let axis = DVec3::new(0.3, (1.3 * phase).sin(), 0.8).normalize();
        let sample = CheckSample {
            mass,
            position: body.state.position,
            dir,
            arm: DVec3::new((2.3 * phase).cos(), -0.5, 0.4).normalize() * (0.5 * reach),
            spin_up: axis * stiffest_inertia,
            phase,
            stiffest_inertia,
            keyframes,
        };
        let own = per_body(i, &sample);
        crowd
            .forces
            .extend(own.into_iter().map(|kind| Force::on_body(i, kind)));
    }
    Ok(crowd)
}
