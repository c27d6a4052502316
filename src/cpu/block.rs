//! Bodies packed eight to a block, one array of lanes per field (structure of arrays within
//! the block), so each arithmetic operation runs on eight bodies at once.

use crate::body::{Body, BodyState};
use crate::cpu::faults::LaneMask;
use crate::cpu::lanes::{LANES, Lanes, QuatLanes, Vec3Lanes};
use crate::force::ForceKind;
use crate::force_table::ForceTable;

/// The momentum-form state of eight bodies; twin of `Motion` in shaders/derivative.wgsl.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct StateBlock {
    pub position: Vec3Lanes,
    pub orientation: QuatLanes,
    pub linear_momentum: Vec3Lanes,
    pub angular_momentum: Vec3Lanes,
}

/// The constants of eight bodies and where their own forces are.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ConstantBlock {
    pub mass: Lanes,
    pub inv_mass: Lanes,
    /// The symmetric Ibody^-1 as xx, yy, zz, xy, xz, yz.
    pub inv_inertia: [Lanes; 6],
    /// `(first, count)` of this block's per-body forces in the simulation's list.
    pub own_forces: (u32, u32),
    /// Each lane's body index in the crowd (a spare lane repeats its block's first body).
    pub bodies: [u32; crate::cpu::lanes::LANES],
}

/// The external loads of eight bodies (world frame, about each centre of mass).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct LoadBlock {
    pub force: Vec3Lanes,
    pub torque: Vec3Lanes,
}

/// A force in f32, its parameters shared by every lane it is applied to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum ForceF32 {
    Gravity {
        acceleration: [f32; 3],
    },
    LinearDrag {
        linear: f32,
        angular: f32,
    },
    QuadraticDrag {
        linear: f32,
        angular: f32,
    },
    PointForce {
        force: [f32; 3],
        point: [f32; 3],
    },
    Spring {
        anchor: [f32; 3],
        attach: [f32; 3],
        stiffness: f32,
        damping: f32,
    },
    Attractor {
        centre: [f32; 3],
        strength: f32,
        softening: f32,
    },
    Thrust {
        force: [f32; 3],
        torque: [f32; 3],
    },
    Sinusoidal {
        force: [f32; 3],
        torque: [f32; 3],
        offset: f32,
        amplitude: f32,
        frequency: f32,
        phase: f32,
    },
    /// Keyframes `keyframes[first..first + count]` of the simulation's flattened table.
    Keyframed {
        force: [f32; 3],
        torque: [f32; 3],
        first: u32,
        count: u32,
    },
    Custom,
}

/// A force acting on one body (one lane) of a block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct LaneForce {
    pub lane: usize,
    pub force: ForceF32,
}

fn f32x3(v: glam::DVec3) -> [f32; 3] {
    v.as_vec3().to_array()
}

impl ForceF32 {
    /// `kind` in f32; `spans` from `flatten_keyframes` locates keyframe tables.
    pub fn new(kind: &ForceKind, spans: &[(u32, u32)]) -> Self {
        match *kind {
            ForceKind::Gravity { acceleration } => ForceF32::Gravity {
                acceleration: f32x3(acceleration),
            },
            ForceKind::LinearDrag { linear, angular } => ForceF32::LinearDrag {
                linear: linear as f32,
                angular: angular as f32,
            },
            ForceKind::PointForce { force, point } => ForceF32::PointForce {
                force: f32x3(force),
                point: f32x3(point),
            },
            ForceKind::Spring {
                anchor,
                attach,
                stiffness,
                damping,
            } => ForceF32::Spring {
                anchor: f32x3(anchor),
                attach: f32x3(attach),
                stiffness: stiffness as f32,
                damping: damping as f32,
            },
            ForceKind::Attractor {
                centre,
                strength,
                softening,
            } => ForceF32::Attractor {
                centre: f32x3(centre),
                strength: strength as f32,
                softening: softening as f32,
            },
            ForceKind::Thrust { force, torque } => ForceF32::Thrust {
                force: f32x3(force),
                torque: f32x3(torque),
            },
            ForceKind::Sinusoidal {
                force,
                torque,
                offset,
                amplitude,
                frequency,
                phase,
            } => ForceF32::Sinusoidal {
                force: f32x3(force),
                torque: f32x3(torque),
                offset: offset as f32,
                amplitude: amplitude as f32,
                frequency: frequency as f32,
                phase: phase as f32,
            },
            ForceKind::Keyframed {
                force,
                torque,
                table,
            } => ForceF32::Keyframed {
                force: f32x3(force),
                torque: f32x3(torque),
                first: spans[table].0,
                count: spans[table].1,
            },
            ForceKind::Custom => ForceF32::Custom,
            ForceKind::QuadraticDrag { linear, angular } => ForceF32::QuadraticDrag {
                linear: linear as f32,
                angular: angular as f32,
            },
        }
    }
}

/// Packs up to eight bodies, the crowd's from `first_body` on; a short last block repeats its
/// first body in the spare lanes, which are integrated and then dropped. The block's own
/// forces are none until [`ConstantBlock::take_own_forces`] finds them.
pub(crate) fn pack_block(bodies: &[Body], first_body: usize) -> (StateBlock, ConstantBlock) {
    let body = |lane: usize| &bodies[if lane < bodies.len() { lane } else { 0 }];
    let lanes = |f: &dyn Fn(&Body) -> f64| Lanes(std::array::from_fn(|l| f(body(l)) as f32));
    let vec3 = |f: &dyn Fn(&Body) -> glam::DVec3| Vec3Lanes {
        x: lanes(&|b| f(b).x),
        y: lanes(&|b| f(b).y),
        z: lanes(&|b| f(b).z),
    };
    let state = StateBlock {
        position: vec3(&|b| b.state.position),
        orientation: QuatLanes {
            w: lanes(&|b| b.state.orientation.w),
            x: lanes(&|b| b.state.orientation.x),
            y: lanes(&|b| b.state.orientation.y),
            z: lanes(&|b| b.state.orientation.z),
        },
        linear_momentum: vec3(&|b| b.state.linear_momentum),
        angular_momentum: vec3(&|b| b.state.angular_momentum),
    };
    let inv = |f: &dyn Fn(glam::DMat3) -> f64| lanes(&|b| f(b.mass.inv_inertia_body()));
    let constants = ConstantBlock {
        mass: lanes(&|b| b.mass.mass()),
        inv_mass: lanes(&|b| b.mass.inv_mass()),
        inv_inertia: [
            inv(&|m| m.x_axis.x),
            inv(&|m| m.y_axis.y),
            inv(&|m| m.z_axis.z),
            inv(&|m| m.y_axis.x),
            inv(&|m| m.z_axis.x),
            inv(&|m| m.z_axis.y),
        ],
        own_forces: (0, 0),
        bodies: std::array::from_fn(|lane| {
            (first_body + if lane < bodies.len() { lane } else { 0 }) as u32
        }),
    };
    (state, constants)
}

impl LoadBlock {
    /// No force, no torque: every block's load until loads are set.
    pub const ZERO: Self = {
        let zero = Vec3Lanes {
            x: Lanes([0.0; crate::cpu::lanes::LANES]),
            y: Lanes([0.0; crate::cpu::lanes::LANES]),
            z: Lanes([0.0; crate::cpu::lanes::LANES]),
        };
        Self {
            force: zero,
            torque: zero,
        }
    };
}

impl ConstantBlock {
    /// Appends the block's per-body forces (from `table`) to `own` and records where they are.
    pub fn take_own_forces(
        &mut self,
        table: &ForceTable,
        spans: &[(u32, u32)],
        own: &mut Vec<LaneForce>,
    ) {
        let first = own.len() as u32;
        let body_count = table.body_count();
        for lane in 0..crate::cpu::lanes::LANES {
            let body = self.bodies[lane] as usize;
            // Spare lanes repeat the block's first body: its forces are pushed once.
            if body >= body_count || (lane > 0 && body == self.bodies[0] as usize) {
                continue;
            }
            let (start, count) = table.range(body);
            for kind in &table.forces[start as usize..(start + count) as usize] {
                own.push(LaneForce {
                    lane,
                    force: ForceF32::new(kind, spans),
                });
            }
        }
        self.own_forces = (first, own.len() as u32 - first);
    }
}

impl StateBlock {
    /// Every component of the lanes in `lanes` put back to `previous`'s: frozen bodies
    /// stay where they were while the rest of the block moves on.
    pub fn keep_lanes(&mut self, previous: &StateBlock, lanes: LaneMask) {
        let (p, q) = (&mut self.position, &mut self.orientation);
        let (m, l) = (&mut self.linear_momentum, &mut self.angular_momentum);
        let (pp, pq) = (&previous.position, &previous.orientation);
        let (pm, pl) = (&previous.linear_momentum, &previous.angular_momentum);
        let pairs = [
            (&mut p.x, pp.x),
            (&mut p.y, pp.y),
            (&mut p.z, pp.z),
            (&mut q.w, pq.w),
            (&mut q.x, pq.x),
            (&mut q.y, pq.y),
            (&mut q.z, pq.z),
            (&mut m.x, pm.x),
            (&mut m.y, pm.y),
            (&mut m.z, pm.z),
            (&mut l.x, pl.x),
            (&mut l.y, pl.y),
            (&mut l.z, pl.z),
        ];
        for (now, before) in pairs {
            for lane in (0..LANES).filter(|lane| lanes & (1 << lane) != 0) {
                now.0[lane] = before.0[lane];
            }
        }
    }

    /// Puts `s` (rounded to f32) into lane `lane`.
    pub fn set(&mut self, lane: usize, s: &BodyState) {
        let set3 = |a: &mut Vec3Lanes, v: glam::DVec3| {
            a.x.0[lane] = v.x as f32;
            a.y.0[lane] = v.y as f32;
            a.z.0[lane] = v.z as f32;
        };
        set3(&mut self.position, s.position);
        set3(&mut self.linear_momentum, s.linear_momentum);
        set3(&mut self.angular_momentum, s.angular_momentum);
        let (q, o) = (&mut self.orientation, s.orientation);
        q.w.0[lane] = o.w as f32;
        q.x.0[lane] = o.x as f32;
        q.y.0[lane] = o.y as f32;
        q.z.0[lane] = o.z as f32;
    }

    /// The f64 state of lane `lane` (exact widening).
    pub fn state(&self, lane: usize) -> BodyState {
        let v = |a: &Vec3Lanes| {
            glam::DVec3::new(a.x.0[lane] as f64, a.y.0[lane] as f64, a.z.0[lane] as f64)
        };
        let q = &self.orientation;
        BodyState {
            position: v(&self.position),
            orientation: glam::DQuat::from_xyzw(
                q.x.0[lane] as f64,
                q.y.0[lane] as f64,
                q.z.0[lane] as f64,
                q.w.0[lane] as f64,
            ),
            linear_momentum: v(&self.linear_momentum),
            angular_momentum: v(&self.angular_momentum),
        }
    }
}
