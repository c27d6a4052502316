//! A crowd: the bodies, the forces acting on them, the integrator and the time step.

use crate::model::body::{Body, BodyState};
use crate::model::codes::Coded;
use crate::model::collisions::Collisions;
use crate::model::error::{Error, Result};
use crate::model::fault_rules::FaultRules;
use crate::model::force::{Force, ForceKind};
use crate::model::integrator::Integrator;
use crate::model::plane::Plane;
use crate::model::validate::{check_number, check_vector, in_range};
use crate::physics::collision::collides;
use crate::physics::custom_force::CustomForce;

/// Everything needed to integrate a crowd of independent rigid bodies.
#[derive(Clone, Debug, PartialEq)]
pub struct Crowd {
    /// The bodies, in index order.
    pub bodies: Vec<Body>,
    /// Force sources; each acts on one body or on all of them.
    pub forces: Vec<Force>,
    /// Time-integration scheme.
    pub integrator: Integrator,
    /// Time step `h` (seconds).
    pub dt: f64,
    /// Static planes every body bounces off; each body then needs a shape (for its contact points).
    pub planes: Vec<Plane>,
    /// Whether the bodies collide with each other, and how (`None`: they are independent).
    pub collisions: Option<Collisions>,
    /// Keyframe tables `[[t, value], ...]` (times strictly increasing) that
    /// [`ForceKind::Keyframed`] forces index.
    pub keyframes: Vec<Vec<[f64; 2]>>,
    /// The force that [`ForceKind::Custom`] forces apply, if any.
    pub custom_force: Option<CustomForce>,
    /// The step count the clock starts from: the simulated time of step `n` is
    /// `(start_step + n) dt`. A crowd built from the bodies of a simulation that has taken
    /// `k` steps continues its time-varying forces where it left off with `start_step = k`.
    pub start_step: u64,
    /// What happens to a body that goes non-finite or leaves the envelope: the run stops
    /// (the default, with no envelope), or the body is frozen and the rest goes on.
    pub fault_rules: FaultRules,
}

impl Crowd {
    /// A crowd with RK4 and the given step, no forces.
    pub fn new(bodies: Vec<Body>, dt: f64) -> Self {
        Self {
            bodies,
            forces: Vec::new(),
            integrator: Integrator::Rk4,
            dt,
            planes: Vec::new(),
            collisions: None,
            keyframes: Vec::new(),
            custom_force: None,
            start_step: 0,
            fault_rules: FaultRules::default(),
        }
    }

    /// Adds a static plane (builder style).
    pub fn with_plane(mut self, plane: Plane) -> Self {
        self.planes.push(plane);
        self
    }

    /// Makes every body collide with every other (builder style).
    pub fn with_collisions(mut self, collisions: Collisions) -> Self {
        self.collisions = Some(collisions);
        self
    }

    /// Adds a keyframe table and returns its index for [`ForceKind::Keyframed`].
    pub fn add_keyframes(&mut self, keyframes: Vec<[f64; 2]>) -> usize {
        self.keyframes.push(keyframes);
        self.keyframes.len() - 1
    }

    /// Sets the force that [`ForceKind::Custom`] forces apply (builder style).
    pub fn with_custom_force(mut self, custom: CustomForce) -> Self {
        self.custom_force = Some(custom);
        self
    }

    /// The simulated time after `steps` steps of this crowd: `(start_step + steps) dt`.
    pub fn time_after(&self, steps: u64) -> f64 {
        (self.start_step + steps) as f64 * self.dt
    }

    /// Whether each body's steps read nothing but its own state (and the constants): no
    /// force reads the clock. Then a body that a step leaves as it was stays so
    /// (`physics::rest`), and a body at rest on a plane costs no more steps.
    pub fn steps_read_the_state_alone(&self) -> bool {
        (self.forces.iter()).all(|force| !force.kind.force_type().reads_the_clock())
    }

    /// Adds a force source (builder style).
    pub fn with_force(mut self, force: Force) -> Self {
        self.forces.push(force);
        self
    }

    /// Sets the fault rules (builder style).
    pub fn with_fault_rules(mut self, rules: FaultRules) -> Self {
        self.fault_rules = rules;
        self
    }

    /// Sets the integrator (builder style).
    pub fn with_integrator(mut self, integrator: Integrator) -> Self {
        self.integrator = integrator;
        self
    }

    /// Everything but the bodies, for the bodies `range` of the crowd integrated on their
    /// own (one shard of a crowd spread over several devices): the forces on every body, and
    /// the own forces of those bodies, renumbered from the first, in their order
    /// ([`shard_force_numbers`](Self::shard_force_numbers) says which each is).
    pub fn shard_settings(&self, range: std::ops::Range<usize>) -> Crowd {
        let forces = self
            .shard_force_numbers(range.clone())
            .into_iter()
            .map(|i| {
                let force = self.forces[i];
                Force {
                    body: force.body.map(|body| body - range.start),
                    ..force
                }
            });
        Crowd {
            bodies: Vec::new(),
            forces: forces.collect(),
            integrator: self.integrator,
            dt: self.dt,
            planes: self.planes.clone(),
            collisions: self.collisions,
            keyframes: self.keyframes.clone(),
            custom_force: self.custom_force.clone(),
            start_step: self.start_step,
            fault_rules: self.fault_rules,
        }
    }

    /// The crowd's index of each force of [`shard_settings`](Self::shard_settings)`(range)`:
    /// the forces on every body and the own forces of the bodies `range`, in their order.
    pub fn shard_force_numbers(&self, range: std::ops::Range<usize>) -> Vec<usize> {
        (0..self.forces.len())
            .filter(|&i| self.forces[i].body.is_none_or(|body| range.contains(&body)))
            .collect()
    }

    /// Checks what the types alone cannot: `dt`, force parameters and force targets.
    pub fn validate(&self) -> Result<()> {
        self.validate_settings(self.bodies.len())?;
        self.validate_bodies(0, &self.bodies)
    }

    /// Everything [`Self::validate`] checks but the bodies themselves, for a crowd of
    /// `body_count` bodies (its own and any generated after them).
    pub fn validate_settings(&self, body_count: usize) -> Result<()> {
        self.validate_settings_of(body_count, true)
    }

    /// The names of the registered laws the crowd runs (`CustomForce::laws`), in the order
    /// it numbers them: what a checkpoint keeps to attach the laws again. (A shard of a crowd
    /// runs them all, whichever of their forces act on its bodies.)
    pub fn force_law_names(&self) -> Vec<&'static str> {
        (self.custom_force.iter())
            .flat_map(|custom| custom.laws())
            .filter_map(|law| law.law_declaration().map(|d| d.name))
            .collect()
    }

    /// The crowd's number of a force's law ([`CustomForce::laws`]): what its record holds
    /// (0 for a force of any other kind).
    pub fn law_number_of(&self, kind: &ForceKind) -> usize {
        match (kind, &self.custom_force) {
            (ForceKind::Law { law, .. }, Some(custom)) => custom.law_number(law).unwrap_or(0),
            _ => 0,
        }
    }

    /// [`Self::validate`] of a crowd read back from a checkpoint, whose laws' forces wait
    /// for their law (`Checkpoint::with_custom_force`): a simulation of it checks them.
    pub fn validate_read_back(&self) -> Result<()> {
        self.validate_settings_of(self.bodies.len(), false)?;
        self.validate_bodies(0, &self.bodies)
    }

    fn validate_settings_of(&self, body_count: usize, laws_attached: bool) -> Result<()> {
        check_number("dt", self.dt)?;
        if self.dt <= 0.0 {
            return Err(Error::invalid(
                "dt",
                format!("must be > 0 (got {})", self.dt),
            ));
        }
        for (i, force) in self.forces.iter().enumerate() {
            let field = format!("forces[{i}]");
            if let Some(body) = force.body {
                if body >= body_count {
                    return Err(Error::invalid(
                        format!("{field}.body"),
                        format!("names body {body}, but the scene has {body_count} bodies"),
                    ));
                }
            }
            self.validate_force_kind(&force.kind, &field, laws_attached)?;
        }
        for (i, table) in self.keyframes.iter().enumerate() {
            validate_keyframes(table, &format!("keyframes[{i}]"))?;
        }
        // The GPU counts steps in two f32 lanes of 2^24 each (see shaders/integrate.wgsl).
        if self.start_step >= 1 << 48 {
            return Err(Error::invalid(
                "start_step",
                format!("must be < 2^48 (got {})", self.start_step),
            ));
        }
        for (i, plane) in self.planes.iter().enumerate() {
            plane.validate(&format!("planes[{i}]"))?;
        }
        if let Some(collisions) = &self.collisions {
            collisions.validate("collisions")?;
        }
        self.fault_rules.validate("fault_rules")
    }

    /// The checks of [`Self::validate`] on each body of `bodies`, the crowd's bodies from
    /// index `first` on: in range, and with contact geometry when there are planes.
    pub fn validate_bodies(&self, first: usize, bodies: &[Body]) -> Result<()> {
        if !self.planes.is_empty() {
            if let Some(i) = bodies.iter().position(|b| b.mass.shape().is_none()) {
                let i = first + i;
                return Err(Error::invalid(
                    format!("bodies[{i}].shape"),
                    "has no contact geometry: `planes` collide with box, sphere, capsule, cylinder and ellipsoid bodies, not meshes or bodies given by their inertia",
                ));
            }
        }
        if self.collisions.is_some() {
            let colliding = |b: &Body| b.mass.shape().is_some_and(|s| collides(s.kind()));
            if let Some(i) = bodies.iter().position(|b| !colliding(b)) {
                let kind = bodies[i]
                    .mass
                    .shape()
                    .map_or("a body without a shape", |s| s.kind().name());
                return Err(Error::invalid(
                    format!("bodies[{}].shape", first + i),
                    format!(
                        "{kind} does not collide with other bodies yet: `collisions` take sphere and capsule bodies"
                    ),
                ));
            }
        }
        for (i, body) in (first..).zip(bodies) {
            // Fast path for crowds of millions: name fields only when something is wrong.
            if !state_in_range(&body.state) {
                check_state(&body.state, &format!("bodies[{i}]"))?;
            }
        }
        Ok(())
    }
}

/// Every number of state `s` finite and within the f32 range; `field` names its body.
pub fn check_state(s: &BodyState, field: &str) -> Result<()> {
    if state_in_range(s) {
        return Ok(());
    }
    check_vector(&format!("{field}.position"), s.position.to_array())?;
    check_vector(&format!("{field}.orientation"), s.orientation.to_array())?;
    check_vector(
        &format!("{field}.linear_momentum"),
        s.linear_momentum.to_array(),
    )?;
    check_vector(
        &format!("{field}.angular_momentum"),
        s.angular_momentum.to_array(),
    )
}

impl Crowd {
    /// Checks one force's parameters, and what it refers to in the crowd.
    fn validate_force_kind(
        &self,
        kind: &ForceKind,
        field: &str,
        laws_attached: bool,
    ) -> Result<()> {
        match *kind {
            ForceKind::Keyframed { table, .. } => {
                kind.validate_parameters(field)?;
                if table >= self.keyframes.len() {
                    return Err(Error::invalid(
                        format!("{field}.table"),
                        format!(
                            "names keyframe table {table}, but the crowd has {}",
                            self.keyframes.len()
                        ),
                    ));
                }
                Ok(())
            }
            ForceKind::Custom if self.custom_force.is_none() => Err(Error::invalid(
                field,
                "a custom force needs the crowd's custom_force (Crowd::with_custom_force)",
            )),
            ForceKind::Law { law, .. } => {
                let custom = self.custom_force.as_ref();
                let attached = custom.and_then(|custom| custom.law_number(law)).is_some();
                let waiting = !laws_attached && law.unattached_number().is_some();
                if !attached && !waiting {
                    let laws: Vec<&str> = (custom.into_iter())
                        .flat_map(|custom| custom.laws())
                        .filter_map(|law| law.law_declaration().map(|d| d.name))
                        .collect();
                    return Err(Error::invalid(
                        format!("{field}.type"),
                        match laws.first() {
                            _ if law.unattached_number().is_some() => "a force of a registered law, read back from a checkpoint without it: attach the law (Checkpoint::with_laws)".to_string(),
                            Some(_) => format!(
                                "the force law {:?} is not among the crowd's ({}): add it (CustomForce::with_law)",
                                law.name,
                                laws.join(", ")
                            ),
                            None => format!(
                                "the force law {:?} needs the crowd's custom force to be that law (Crowd::with_custom_force)",
                                law.name
                            ),
                        },
                    ));
                }
                kind.validate_parameters(field)
            }
            _ => kind.validate_parameters(field),
        }
    }
}

/// At least one keyframe, every number in range, times strictly increasing.
pub(crate) fn validate_keyframes(table: &[[f64; 2]], field: &str) -> Result<()> {
    if table.is_empty() {
        return Err(Error::invalid(
            field,
            "needs at least one [t, value] keyframe",
        ));
    }
    for (i, &point) in table.iter().enumerate() {
        check_vector(&format!("{field}[{i}]"), point)?;
        if i > 0 && point[0] <= table[i - 1][0] {
            return Err(Error::invalid(
                format!("{field}[{i}]"),
                format!(
                    "keyframe times must increase strictly (got {} after {})",
                    point[0],
                    table[i - 1][0]
                ),
            ));
        }
    }
    Ok(())
}

/// Whether every state number of `body` is finite and within the f32 range (no allocation).
fn state_in_range(s: &BodyState) -> bool {
    [
        s.position.to_array(),
        s.linear_momentum.to_array(),
        s.angular_momentum.to_array(),
    ]
    .iter()
    .flatten()
    .chain(&s.orientation.to_array())
    .all(|&v| in_range(v))
}
