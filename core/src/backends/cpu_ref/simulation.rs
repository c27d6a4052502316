//! The CPU reference backend: integrates every body in f64, bodies in parallel.

use rayon::prelude::*;

use crate::assembly::body_masses::BodyMasses;
use crate::assembly::body_source::{BodySource, SOURCE_CHUNK};
use crate::assembly::crowd::Crowd;
use crate::assembly::force_table::ForceTable;
use crate::backends::cpu_ref::collide::{self, resolve_crowd, separate_at_start};
use crate::backends::cpu_ref::faults::state_fault;
use crate::body_steps::carried::CarriedTangents;
use crate::body_steps::derivative::{ForceEnv, auxiliaries};
use crate::body_steps::stepper::BodyStepper;
use crate::body_steps::tangent_blocks::cpu_blocks;
use crate::body_steps::tangents::{Block, BodyInputs, TangentSteps, directions_of};
use crate::model::body::BodyState;
use crate::model::error::{Error, Result};
use crate::model::fault::Fault;
use crate::model::fault_rules::QuarantinedBody;
use crate::model::force::ForceKind;
use crate::model::integrator::Integrator;
use crate::model::mass::MassProperties;
use crate::model::plane::Plane;
use crate::model::quarantine::Quarantine;
use crate::model::tangent::TangentPlan;
use crate::physics::algebra::Vec3;
use crate::physics::collision::CollisionConstants;
use crate::physics::contact::{
    PlaneConstants, ShapeConstants, resolve_contacts, step_acceleration,
};
use crate::physics::custom_force::CustomForce;
use crate::physics::dual::DUAL_WIDTHS;
use crate::physics::force_law::ExternalLoad;
use crate::physics::motion::MassConstants;
use crate::physics::motion::State;
use crate::physics::neighbours::NeighbourList;
use crate::physics::rest::same_bits;

/// A crowd integrated by the f64 CPU reference.
#[derive(Clone, Debug)]
pub struct CpuRefSimulation {
    states: Vec<BodyState>,
    masses: BodyMasses,
    table: ForceTable,
    integrator: Integrator,
    dt: f64,
    planes: Vec<PlaneConstants<f64>>,
    /// The crowd's planes, whose numbers tangents are taken along.
    crowd_planes: Vec<Plane>,
    keyframes: Vec<Vec<[f64; 2]>>,
    custom_force: Option<CustomForce>,
    /// One per body once set; empty (every load zero) until then.
    loads: Vec<ExternalLoad>,
    /// `start_step` plus the steps taken: the clock reads `step * dt`.
    step: u64,
    /// The squared speed, angular speed and distance limits (infinite where unset).
    envelope_squared: [f64; 3],
    /// The policy and the frozen bodies, whose last good states `states` keeps.
    quarantine: Quarantine,
    /// The crowd index of body 0 here (a custom force sees crowd indices).
    first_body: usize,
    /// The tangents carried with the states, once started, and the blocks their columns
    /// run in.
    tangents: Option<(CarriedTangents<f64>, Vec<Block>)>,
    /// Whether each body was at rest when its last step ended (`physics::rest`): its steps
    /// leave it as it is until its state or the loads are set again, so later calls skip it.
    resting: Vec<bool>,
    /// The crowd's collision coefficients, if its bodies collide: then every step ends with
    /// the crowd's touching pairs resolved together.
    collisions: Option<CollisionConstants<f64>>,
    /// Each body's bounding radius, for a colliding crowd's neighbour search (else empty).
    bounding_radii: Vec<f64>,
    /// A colliding crowd's candidate pairs, kept over steps.
    neighbours: NeighbourList,
}

impl CpuRefSimulation {
    /// Takes the bodies of `source` and the rest of `crowd` (whose settings are validated;
    /// each body is checked here); fails on a custom force without a Rust twin. `source`
    /// starts at crowd index `first_body` (not 0 for an MPI rank's shard): the index a
    /// custom force sees.
    pub fn new(crowd: &Crowd, source: &BodySource, first_body: usize) -> Result<Self> {
        if let Some(custom) = &crowd.custom_force {
            custom.closure()?;
        }
        let mut states = Vec::new();
        states
            .try_reserve_exact(source.len())
            .map_err(|_| Error::too_many_bodies(source.len()))?;
        states.resize(source.len(), BodyState::default());
        let mut resting = Vec::new();
        resting
            .try_reserve_exact(source.len())
            .map_err(|_| Error::too_many_bodies(source.len()))?;
        resting.resize(source.len(), false);
        let masses = states
            .par_chunks_mut(SOURCE_CHUNK)
            .enumerate()
            .map(|(chunk, states)| {
                source.with_chunk(chunk, |first, bodies| {
                    crowd.validate_bodies(first, bodies)?;
                    for (state, body) in states.iter_mut().zip(bodies) {
                        *state = body.state;
                    }
                    Ok(crate::assembly::body_masses::MassChunk::of(bodies))
                })?
            })
            .collect::<Result<Vec<_>>>()?;
        let masses = BodyMasses::from_chunks(masses);
        let mut bounding_radii = Vec::new();
        if crowd.collisions.is_some() {
            separate_at_start(&mut states, &masses)?;
            bounding_radii = collide::bounding_radii(&masses);
        }
        Ok(Self {
            states,
            masses,
            table: ForceTable::new(crowd, source.len()),
            integrator: crowd.integrator,
            dt: crowd.dt,
            planes: crowd.planes.iter().map(PlaneConstants::of).collect(),
            crowd_planes: crowd.planes.clone(),
            keyframes: crowd.keyframes.clone(),
            custom_force: crowd.custom_force.clone(),
            loads: Vec::new(),
            step: crowd.start_step,
            quarantine: Quarantine::new(crowd.fault_rules.on_fault),
            envelope_squared: crowd.fault_rules.envelope.squared_limits(|v| v),
            first_body,
            tangents: None,
            resting,
            bounding_radii,
            neighbours: NeighbourList::default(),
            collisions: crowd.collisions.map(|c| CollisionConstants {
                restitution: c.restitution,
                friction: c.friction,
            }),
        })
    }

    /// Advances every body by `steps` steps. Bodies are independent, so each runs all its
    /// steps before the next body starts (one body's state stays in cache).
    ///
    /// A body whose new state would break a fault rule (turn NaN or infinite, or leave the
    /// envelope) stops at its last good state. Under `stop` the lowest such body, the clock
    /// step of its last good state and the fault are returned; under `freeze` the bodies
    /// are frozen there and left out of later steps.
    pub fn step(&mut self, steps: u64) -> Option<(usize, u64, Fault)> {
        if let Some(collisions) = self.collisions {
            return self.step_colliding(steps, &collisions);
        }
        let table = &self.table;
        let (integrator, dt, first_step) = (self.integrator, self.dt, self.step);
        let (keyframes, custom_force) = (&self.keyframes[..], self.custom_force.as_ref());
        let (planes, crowd_planes) = (&self.planes[..], &self.crowd_planes[..]);
        let (masses, loads) = (&self.masses, &self.loads[..]);
        let (quarantine, envelope_squared) = (&self.quarantine, &self.envelope_squared);
        let first_body = self.first_body;
        // The plan is read by every body while the columns are written: two borrows of the
        // carried tangents, split here.
        let (plan, tangent_columns) = match &mut self.tangents {
            Some((CarriedTangents { plan, columns }, blocks)) => {
                (Some((&*plan, &blocks[..])), Some(columns))
            }
            None => (None, None),
        };
        let body_steps = |i: usize,
                          (body_state, resting): (&mut BodyState, &mut bool),
                          columns: Option<&mut [f64]>| {
            if quarantine.is_frozen(i) {
                return None;
            }
            // At rest since an earlier call: every step leaves it as it is.
            if *resting && columns.is_none() {
                return None;
            }
            *resting = false;
            let mass = masses.get(i);
            let load = loads.get(i).copied().unwrap_or_default();
            let forces: Vec<&ForceKind> = table.acting_on(i).collect();
            let env = ForceEnv {
                body: first_body + i,
                load,
                keyframes,
                custom_force,
            };
            let refused = |next: &BodyState| body_fault(envelope_squared, next, &mass);
            if let (Some(columns), Some((plan, blocks))) = (columns, plan) {
                let origins: Vec<usize> = table.origins_of(i).collect();
                let directions = directions_of(plan, &forces, &origins);
                let carried = TangentSteps {
                    base: BodyInputs::of(body_state, &mass, &forces, crowd_planes),
                    mass: &mass,
                    directions: &directions,
                    blocks,
                    integrator,
                    env,
                };
                let schedule = (first_step, steps, dt);
                let mut state = State::from(&*body_state);
                let verdict = carried.run(&mut state, columns, schedule, |_, next| {
                    refused(&(*next).into())
                });
                *body_state = state.into();
                return verdict.map(|(step, fault)| (i, step, fault));
            }
            let stepper = BodyStepper::new(integrator, &mass, &forces, env);
            let shape = mass.shape().filter(|_| !planes.is_empty());
            let stepper = match shape {
                Some(shape) => stepper.meeting(ShapeConstants::of(&shape), planes),
                None => stepper,
            };
            // A body that may come to rest on a plane, under forces that read its state alone
            // (`physics::rest`).
            let settles =
                shape.is_some() && forces.iter().all(|f| !f.force_type().reads_the_clock());
            let mut state = State::from(&*body_state);
            for step in first_step..first_step + steps {
                // A product, not a running sum: the clock does not drift over long runs.
                let t = step as f64 * dt;
                let next = stepper.advance(&state, t, dt);
                if let Some(fault) = refused(&next.into()) {
                    *body_state = state.into();
                    return Some((i, step, fault));
                }
                let at_rest = settles && same_bits(&state, &next);
                state = next;
                if at_rest {
                    *resting = true;
                    break;
                }
            }
            *body_state = state.into();
            None
        };
        let faults: Vec<(usize, u64, Fault)> = match (plan, tangent_columns) {
            (Some((plan, _)), Some(columns)) => self
                .states
                .par_iter_mut()
                .zip(self.resting.par_iter_mut())
                .zip(columns.par_chunks_mut(plan.body_len()))
                .enumerate()
                .filter_map(|(i, (body, columns))| body_steps(i, body, Some(columns)))
                .collect(),
            _ => self
                .states
                .par_iter_mut()
                .zip(self.resting.par_iter_mut())
                .enumerate()
                .filter_map(|(i, body)| body_steps(i, body, None))
                .collect(),
        };
        self.step += steps;
        self.quarantine.settle(faults)
    }

    /// [`step`](Self::step) of a crowd whose bodies collide: step by step, every body's step
    /// (planes included), then the crowd's touching pairs together. A body that faults in a
    /// step leaves every body at that step's start under `stop`; under `freeze` it is frozen
    /// there, and from then on the others meet it as a body nothing moves.
    fn step_colliding(
        &mut self,
        steps: u64,
        collisions: &CollisionConstants<f64>,
    ) -> Option<(usize, u64, Fault)> {
        let (integrator, dt) = (self.integrator, self.dt);
        let (table, masses, loads) = (&self.table, &self.masses, &self.loads[..]);
        let (keyframes, custom_force) = (&self.keyframes[..], self.custom_force.as_ref());
        let (planes, first_body) = (&self.planes[..], self.first_body);
        // Each body's stepper and constants, built once for all the steps of the call.
        let bodies: Vec<_> = (0..self.states.len())
            .into_par_iter()
            .map(|i| {
                let mass = masses.get(i);
                let forces: Vec<&ForceKind> = table.acting_on(i).collect();
                let env = ForceEnv {
                    body: first_body + i,
                    load: loads.get(i).copied().unwrap_or_default(),
                    keyframes,
                    custom_force,
                };
                let stepper = BodyStepper::new(integrator, &mass, &forces, env);
                let shape = mass.shape().expect("checked: colliding bodies have shapes");
                let constants = (MassConstants::from(&mass), ShapeConstants::of(&shape));
                (stepper, mass, constants)
            })
            .collect();
        for step in self.step..self.step + steps {
            let t = step as f64 * dt;
            let (quarantine, envelope_squared) = (&self.quarantine, &self.envelope_squared);
            let stepped: Vec<(State<f64>, Vec3<f64>, Option<Fault>)> = (self.states.par_iter())
                .zip(&bodies)
                .enumerate()
                .map(|(i, (body_state, (stepper, mass, (constants, shape))))| {
                    let start = State::from(body_state);
                    if quarantine.is_frozen(i) {
                        return (start, Vec3::splat(0.0), None);
                    }
                    let free = stepper.advance(&start, t, dt);
                    let acceleration = step_acceleration(&start, &free, constants, dt);
                    let next = resolve_contacts(&start, free, constants, shape, planes, dt);
                    let fault = body_fault(envelope_squared, &next.into(), mass);
                    (next, acceleration, fault)
                })
                .collect();
            let faults: Vec<(usize, u64, Fault)> = (stepped.iter().enumerate())
                .filter_map(|(i, (_, _, fault))| fault.map(|f| (i, step, f)))
                .collect();
            if !faults.is_empty() {
                let stop = self.quarantine.settle(faults);
                if stop.is_some() {
                    return stop;
                }
            }
            let quarantine = &self.quarantine;
            let moves: Vec<bool> = (stepped.iter().enumerate())
                .map(|(i, (_, _, fault))| !quarantine.is_frozen(i) && fault.is_none())
                .collect();
            let mut states: Vec<State<f64>> = (stepped.iter().zip(&moves).enumerate())
                .map(|(i, ((next, _, _), &moves))| match moves {
                    true => *next,
                    false => State::from(&self.states[i]),
                })
                .collect();
            let accelerations: Vec<Vec3<f64>> = stepped.iter().map(|s| s.1).collect();
            let radii = &self.bounding_radii;
            let crowd = (&moves[..], &accelerations[..], masses, &radii[..]);
            let pass = (collisions, &mut self.neighbours);
            resolve_crowd(&mut states, crowd, planes, pass, dt);
            for (i, state) in states.iter().enumerate() {
                if moves[i] {
                    self.states[i] = (*state).into();
                }
            }
            self.step = step + 1;
        }
        None
    }

    /// Body `i`'s mass properties.
    pub fn mass(&self, i: usize) -> MassProperties {
        self.masses.get(i)
    }

    /// The frozen bodies, in crowd order.
    pub fn quarantined(&self) -> Vec<QuarantinedBody> {
        self.quarantine.records(|body| self.states[body])
    }

    /// Freezes each body of `bodies` at its given state, step and fault (validated).
    pub fn freeze(&mut self, bodies: &[QuarantinedBody]) {
        for q in bodies {
            self.states[q.body] = q.state;
            self.resting[q.body] = false;
            self.quarantine.freeze(q);
        }
    }

    /// Replaces the external loads (one per body, already validated).
    pub fn set_external_loads(&mut self, loads: &[ExternalLoad]) {
        self.loads.clear();
        self.loads.extend_from_slice(loads);
        // A body at rest under the old loads may move under the new ones.
        self.resting.fill(false);
    }

    /// Replaces body `i`'s state (validated by the caller); a frozen body rejoins the
    /// integration.
    pub fn set_state(&mut self, i: usize, state: &BodyState) {
        self.states[i] = *state;
        self.resting[i] = false;
        self.quarantine.release(i);
        if let Some((tangents, _)) = &mut self.tangents {
            let q = state.orientation;
            tangents.restart_body(i, [q.w, q.x, q.y, q.z]);
        }
    }

    /// Starts carrying the tangents of `plan` from every body's state now (validated against
    /// this crowd), replacing any carried before. Fails if the columns do not fit in memory.
    pub fn start_tangents(&mut self, plan: &TangentPlan, crowd: &Crowd) -> Result<()> {
        let states = &self.states;
        let carried = CarriedTangents::start(plan, states.len(), |i| {
            let q = states[i].orientation;
            [q.w, q.x, q.y, q.z]
        })?;
        self.tangents = Some((carried, cpu_blocks(plan, crowd, &DUAL_WIDTHS)));
        Ok(())
    }

    /// Replaces every body's carried block with `columns` (of the carried plan's length).
    pub fn set_tangents(&mut self, columns: &[f64]) {
        if let Some((tangents, _)) = &mut self.tangents {
            tangents.set(columns);
        }
    }

    /// Copies columns `columns` of every body's carried block into `out` (`13 x
    /// columns.len()` per body, row-major, in crowd order).
    pub fn read_tangents(&self, columns: std::ops::Range<usize>, out: &mut [f64]) {
        if let Some((tangents, _)) = &self.tangents {
            tangents.read(columns, out);
        }
    }

    /// Hands every body's index, mass properties and state to `visit`, in crowd order.
    pub fn visit_states(&self, mut visit: impl FnMut(usize, &MassProperties, &BodyState)) {
        self.masses
            .for_each(|i, mass| visit(i, mass, &self.states[i]));
    }
}

/// The first fault rule `next`, a body's new state, breaks.
fn body_fault(
    envelope_squared: &[f64; 3],
    next: &BodyState,
    mass: &MassProperties,
) -> Option<Fault> {
    let motion = || {
        let aux = auxiliaries(next, mass);
        (aux.velocity, aux.angular_velocity)
    };
    state_fault(envelope_squared, next, motion)
}
