//! Bodies, crowds and a force law the tests of this crate and of `rigid-crowd` share
//! (hidden from the docs: not for use). Compiled in every build, with the few items the
//! command line alone calls: the core has no features, so the tests', Python's, MPI's and
//! the benches' builds share one compiled core.

use glam::{DQuat, DVec3};

use crate::assembly::crowd::Crowd;
use crate::assembly::generate::CrowdSpec;
use crate::model::body::{Body, BodyState};
use crate::model::force::{Force, ForceKind};
use crate::model::mass::MassProperties;
use crate::model::shape::Shape;
use crate::physics::algebra::Vec3;
use crate::physics::force_law::{ForceInput, ForceLaw};
use crate::physics::motion::Load;
use crate::physics::scalar::Scalar;

/// A box of 1 x 2 x 3 turning about all three axes and drifting.
pub fn tumbling_brick() -> (BodyState, MassProperties) {
    let mass = MassProperties::from_shape(
        3.0,
        Shape::Box {
            size: DVec3::new(1.0, 2.0, 3.0),
        },
        "brick",
    )
    .unwrap();
    let body = Body::from_kinematics(
        mass,
        DVec3::new(1.0, -2.0, 0.5),
        DQuat::from_rotation_x(0.4) * DQuat::from_rotation_z(-1.0),
        DVec3::new(0.3, 0.1, -0.2),
        DVec3::new(1.0, 2.0, 3.0),
    );
    (body.state, mass)
}

/// `count` seeded bodies under gravity and linear drag, which read no position.
pub fn gravity_drag(count: usize) -> Crowd {
    let bodies = CrowdSpec::new(count, 1).generate().unwrap();
    Crowd::new(bodies, 1e-3)
        .with_force(Force::on_all(ForceKind::Gravity {
            acceleration: DVec3::new(0.0, 0.0, -9.81),
        }))
        .with_force(Force::on_all(ForceKind::LinearDrag {
            linear: 0.3,
            angular: 0.05,
        }))
}

/// `crowd` with a spring on every body too, which reads the position and turns the body.
pub fn with_spring(crowd: Crowd) -> Crowd {
    crowd.with_force(Force::on_all(ForceKind::Spring {
        anchor: DVec3::ZERO,
        attach: DVec3::new(0.1, 0.0, 0.0),
        stiffness: 2.0,
        damping: 0.1,
    }))
}

/// A force law for the tests: a soft tether to the origin, stiffening with distance, with
/// damping, and a torque that depends on the orientation and the time.
pub struct Tether;

impl ForceLaw for Tether {
    fn load<R: Scalar>(&self, b: &ForceInput<R>) -> Load<R> {
        let c = R::constant;
        let reach = (b.position.dot(b.position) + c(1.0)).sqrt();
        let q = b.orientation;
        let axis = Vec3::new(q.x, q.y, q.z) * (b.time + c(0.5) + b.body * c(0.1));
        Load {
            force: b.position * (-(c(3.0) * b.mass * reach)) + b.velocity * c(-0.4),
            torque: axis.cross(b.angular_velocity) + b.angular_velocity * c(-0.2),
        }
    }
}
