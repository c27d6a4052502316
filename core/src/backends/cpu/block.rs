//! Bodies packed eight to a block, one array of lanes per field (structure of arrays within
//! the block), so each arithmetic operation runs on eight bodies at once.

use crate::assembly::force_table::ForceTable;
use crate::model::body::{Body, BodyState};
use crate::model::force::{ForceKind, ForceType};
use crate::physics::algebra::{Quat, SymMat3, Vec3};
use crate::physics::force_law::Parameters;
use crate::physics::lanes::{LANES, Lanes, Vec3Lanes};
use crate::physics::motion::{Load, MassConstants, State};

/// The momentum-form state of eight bodies, one lane each.
pub(crate) type StateBlock = State<Lanes>;

/// The external loads of eight bodies (world frame, about each centre of mass).
pub(crate) type LoadBlock = Load<Lanes>;

/// The constants of eight bodies and where their own forces are.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ConstantBlock {
    /// `M`, `1/M` and `Ibody^-1` of each lane.
    pub mass: MassConstants<Lanes>,
    /// `(first, count)` of this block's per-body forces in the simulation's list.
    pub own_forces: (u32, u32),
    /// Each lane's body index in the crowd (a spare lane repeats its block's first body).
    pub bodies: [u32; LANES],
}

/// A force in f32, its parameters shared by every lane it is applied to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ForceF32 {
    pub kind: ForceType,
    /// The parameters in `ForceParameters` order, rounded to f32 as the f32 kernel's are.
    pub parameters: Parameters<f32>,
    /// A keyframed force's table, `keyframes[first..first + count]` of the simulation's
    /// flattened table; a law's force its law's number in the crowd and 0.
    pub keyframes: (u32, u32),
}

/// A force acting on one body (one lane) of a block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct LaneForce {
    pub lane: usize,
    pub force: ForceF32,
}

impl ForceF32 {
    /// `kind` in f32; `spans` from `flatten_keyframes` locates keyframe tables, `table`
    /// numbers laws.
    pub fn new(kind: &ForceKind, spans: &[(u32, u32)], table: &ForceTable) -> Self {
        let p = kind.parameters();
        let vector = |v: glam::DVec3| Vec3::new(v.x as f32, v.y as f32, v.z as f32);
        let keyframes = match *kind {
            ForceKind::Keyframed { table, .. } => spans[table],
            ForceKind::Law { .. } => (table.law_number(kind), 0),
            _ => (0, 0),
        };
        Self {
            kind: kind.force_type(),
            parameters: Parameters {
                vectors: p.vectors.map(vector),
                scalars: p.scalars.map(|s| s as f32),
            },
            keyframes,
        }
    }
}

/// Packs up to eight bodies, the crowd's from `first_body` on; a short last block repeats its
/// first body in the spare lanes, which are integrated and then dropped. The block's own
/// forces are none until [`ConstantBlock::take_own_forces`] finds them.
pub(crate) fn pack_block(bodies: &[Body], first_body: usize) -> (StateBlock, ConstantBlock) {
    let body = |lane: usize| &bodies[if lane < bodies.len() { lane } else { 0 }];
    let lanes = |f: &dyn Fn(&Body) -> f64| Lanes(std::array::from_fn(|l| f(body(l)) as f32));
    let vec3 = |f: &dyn Fn(&Body) -> glam::DVec3| {
        Vec3::new(lanes(&|b| f(b).x), lanes(&|b| f(b).y), lanes(&|b| f(b).z))
    };
    let state = StateBlock {
        position: vec3(&|b| b.state.position),
        orientation: Quat::new(
            lanes(&|b| b.state.orientation.w),
            lanes(&|b| b.state.orientation.x),
            lanes(&|b| b.state.orientation.y),
            lanes(&|b| b.state.orientation.z),
        ),
        linear_momentum: vec3(&|b| b.state.linear_momentum),
        angular_momentum: vec3(&|b| b.state.angular_momentum),
    };
    let inv = |i: usize| lanes(&|b| b.mass.inv_inertia_entries()[i]);
    let constants = ConstantBlock {
        mass: MassConstants {
            mass: lanes(&|b| b.mass.mass()),
            inv_mass: lanes(&|b| b.mass.inv_mass()),
            inv_inertia: SymMat3 {
                xx: inv(0),
                yy: inv(1),
                zz: inv(2),
                xy: inv(3),
                xz: inv(4),
                yz: inv(5),
            },
        },
        own_forces: (0, 0),
        bodies: std::array::from_fn(|lane| {
            (first_body + if lane < bodies.len() { lane } else { 0 }) as u32
        }),
    };
    (state, constants)
}

/// No force, no torque: every block's load until loads are set.
pub(crate) const ZERO_LOAD: LoadBlock = {
    let zero = Vec3 {
        x: Lanes([0.0; LANES]),
        y: Lanes([0.0; LANES]),
        z: Lanes([0.0; LANES]),
    };
    Load {
        force: zero,
        torque: zero,
    }
};

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
        for lane in 0..LANES {
            let body = self.bodies[lane] as usize;
            // Spare lanes repeat the block's first body: its forces are pushed once.
            if body >= body_count || (lane > 0 && body == self.bodies[0] as usize) {
                continue;
            }
            let (start, count) = table.range(body);
            for kind in &table.forces[start as usize..(start + count) as usize] {
                own.push(LaneForce {
                    lane,
                    force: ForceF32::new(kind, spans, table),
                });
            }
        }
        self.own_forces = (first, own.len() as u32 - first);
    }
}

impl State<Lanes> {
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
