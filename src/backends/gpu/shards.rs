//! One crowd on several devices: contiguous shards of bodies, one [`GpuSimulation`] each.
//! Bodies are independent, so a shard integrates exactly as the whole crowd would; every
//! index that leaves this file is a crowd index.

use crate::body_steps::carried::CarriedTangents;
use crate::model::tangent::TangentPlan;
use std::collections::HashMap;
use std::ops::Range;
use std::time::Instant;

use crate::assembly::body_source::{BodySource, plan_shards};
use crate::assembly::crowd::Crowd;
use crate::backends::gpu::{GpuChunk, GpuContext, GpuOptions, GpuSimulation, StepTimes};
use crate::model::body::{Body, BodyState};
use crate::model::error::{Error, Result};
use crate::model::fault_rules::QuarantinedBody;
use crate::model::mass::MassProperties;
use crate::physics::force_law::ExternalLoad;

/// A crowd integrated on one or more devices.
#[derive(Debug)]
pub(crate) struct GpuShards {
    shards: Vec<Shard>,
    /// Outstanding state requests: each shard's part, taken as it lands.
    tickets: HashMap<u64, Vec<TicketPart>>,
    next_ticket: u64,
}

#[derive(Debug)]
struct Shard {
    sim: GpuSimulation,
    /// The crowd indices of its bodies.
    bodies: Range<usize>,
}

#[derive(Debug)]
enum TicketPart {
    Requested(u64),
    Landed(Vec<Body>),
}

impl GpuShards {
    /// The bodies of `source` under the rest of `crowd`, split over the devices of `contexts`
    /// (one shard each, the first bodies on the first device). `source` holds the bodies of
    /// a larger crowd from index `first_body` on (0 for a whole crowd; an MPI rank's shard
    /// otherwise): the kernel sees those crowd indices, every index handed out here counts
    /// from `source`'s first body.
    pub fn new(
        contexts: &[GpuContext],
        crowd: &Crowd,
        source: &BodySource,
        options: GpuOptions,
        first_body: usize,
    ) -> Result<Self> {
        if let [ctx] = contexts {
            let sim = GpuSimulation::shard(ctx, crowd, source, options, first_body)?;
            return Ok(Self::of(vec![Shard {
                sim,
                bodies: 0..source.len(),
            }]));
        }
        if contexts.is_empty() || source.len() < contexts.len() {
            return Err(Error::invalid(
                "devices",
                format!(
                    "a crowd of {} bodies cannot be split over {} devices",
                    source.len(),
                    contexts.len()
                ),
            ));
        }
        let budgets: Option<Vec<u64>> = contexts.iter().map(|c| c.memory_budget()).collect();
        let weights: Vec<f64> = match budgets {
            Some(budgets) => budgets.into_iter().map(|b| b as f64).collect(),
            None => vec![1.0; contexts.len()],
        };
        let mut shards = Vec::with_capacity(contexts.len());
        for (ctx, bodies) in contexts.iter().zip(plan_shards(source.len(), &weights, 1)) {
            let settings = crowd.shard_settings(bodies.clone());
            let open = |part: &BodySource| {
                GpuSimulation::shard(ctx, &settings, part, options, first_body + bodies.start)
            };
            let sim = match source.shard(bodies.clone()) {
                Some(part) => open(&part),
                None => open(&BodySource::given(&source.collect_range(bodies.clone())?)),
            }
            .map_err(|e| in_shard(e, shards.len(), &bodies))?;
            shards.push(Shard { sim, bodies });
        }
        Ok(Self::of(shards))
    }

    fn of(shards: Vec<Shard>) -> Self {
        Self {
            shards,
            tickets: HashMap::new(),
            next_ticket: 0,
        }
    }

    /// The first device's context.
    pub fn context(&self) -> &GpuContext {
        self.shards[0].sim.context()
    }

    /// The device of shard `index`, if there is one.
    #[cfg(all(feature = "fault-injection", feature = "cli"))]
    pub fn device(&self, index: usize) -> Option<&GpuContext> {
        self.shards.get(index).map(|shard| shard.sim.context())
    }

    /// The kernel options in use (the same on every device).
    pub fn options(&self) -> &GpuOptions {
        self.shards[0].sim.options()
    }

    /// How many devices the crowd is on.
    pub fn device_count(&self) -> usize {
        self.shards.len()
    }

    /// Calls `op` on every shard, in order, whatever fails; the error of the lowest body (a
    /// fault) or of the first shard that failed, in crowd indices.
    fn on_each<T>(
        &mut self,
        mut op: impl FnMut(&mut GpuSimulation) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut out = Vec::with_capacity(self.shards.len());
        let mut first_error: Option<(usize, Error)> = None;
        let several = self.shards.len() > 1;
        for (i, shard) in self.shards.iter_mut().enumerate() {
            match op(&mut shard.sim) {
                Ok(value) => out.push(value),
                Err(e) => {
                    let e = match several {
                        true => in_shard(e, i, &shard.bodies),
                        false => e,
                    };
                    let rank = fault_body(&e).unwrap_or(usize::MAX);
                    if first_error.as_ref().is_none_or(|(best, _)| rank < *best) {
                        first_error = Some((rank, e));
                    }
                }
            }
        }
        match first_error {
            Some((_, e)) => Err(e),
            None => Ok(out),
        }
    }

    /// Queues `steps` steps on every device; with several, in rounds of one submission each,
    /// so that the devices work at the same time.
    pub fn step(&mut self, steps: u64) -> Result<()> {
        if self.shards.len() == 1 {
            return self.shards[0].sim.step(steps);
        }
        let round = self.shards[0].sim.steps_per_submission();
        let mut done = 0;
        while done < steps {
            let batch = round.min(steps - done);
            self.on_each(|sim| sim.step(batch))?;
            done += batch;
        }
        Ok(())
    }

    /// Steps and waits, timing the run on the host; on one device also on the device.
    pub fn timed_steps(&mut self, steps: u64) -> Result<StepTimes> {
        if self.shards.len() == 1 {
            return self.shards[0].sim.timed_steps(steps);
        }
        self.finish()?;
        let start = Instant::now();
        self.step(steps)?;
        self.finish()?;
        Ok(StepTimes {
            wall: start.elapsed(),
            device: None,
        })
    }

    /// Waits for every device.
    pub fn finish(&mut self) -> Result<()> {
        self.on_each(GpuSimulation::finish).map(drop)
    }

    /// Starts carrying the tangents of `plan` (checked against `crowd`) from every body's
    /// state now, on every device.
    pub fn start_tangents(&mut self, plan: &TangentPlan, crowd: &Crowd) -> Result<()> {
        let several = self.shards.len() > 1;
        for (i, shard) in self.shards.iter_mut().enumerate() {
            let bodies = shard.bodies.clone();
            (shard.sim.start_tangents(plan, crowd, bodies.clone())).map_err(|e| match several {
                true => in_shard(e, i, &bodies),
                false => e,
            })?;
        }
        Ok(())
    }

    /// Copies columns `columns` of every body's tangent block into `out` (`13 x
    /// columns.len()` per body, row-major, in crowd order), once the queued steps are done.
    pub fn read_tangents(&mut self, columns: Range<usize>, out: &mut [f64]) -> Result<()> {
        let Some(plan) = self.shards[0].sim.tangent_plan().cloned() else {
            return Ok(());
        };
        let mut all = Vec::with_capacity(out.len());
        for shard in &mut self.shards {
            all.extend(shard.sim.tangent_columns()?);
        }
        CarriedTangents::<f64> { plan, columns: all }.read(columns, out);
        Ok(())
    }

    /// Replaces every body's tangent block with `columns` (in crowd order).
    pub fn set_tangents(&mut self, columns: &[f64]) -> Result<()> {
        let Some(per_body) = self.shards[0].sim.tangent_plan().map(|p| p.body_len()) else {
            return Ok(());
        };
        for shard in &mut self.shards {
            let b = &shard.bodies;
            shard
                .sim
                .set_tangent_columns(&columns[b.start * per_body..b.end * per_body])?;
        }
        Ok(())
    }

    /// Every body, in crowd order.
    pub fn bodies(&self) -> Result<Vec<Body>> {
        let several = self.shards.len() > 1;
        let mut bodies = Vec::new();
        for (i, shard) in self.shards.iter().enumerate() {
            match shard.sim.bodies() {
                Ok(part) => bodies.extend(part),
                Err(e) if several => return Err(in_shard(e, i, &shard.bodies)),
                Err(e) => return Err(e),
            }
        }
        Ok(bodies)
    }

    /// Hands every body to `visit` in crowd order (see [`GpuSimulation::visit_states`]).
    pub fn visit_states(
        &mut self,
        visit: impl FnMut(usize, &MassProperties, &BodyState),
    ) -> Result<()> {
        self.each_shard(visit, |sim, visit| sim.visit_states(visit))
    }

    #[cfg(feature = "cli")]
    /// Hands every body to `visit` in crowd order (see [`GpuSimulation::stream_states`]).
    pub fn stream_states(
        &mut self,
        visit: impl FnMut(usize, &MassProperties, &BodyState),
    ) -> Result<()> {
        self.each_shard(visit, |sim, visit| sim.stream_states(visit))
    }

    /// `read` of every shard in turn, its bodies handed to `visit` with crowd indices.
    fn each_shard(
        &mut self,
        mut visit: impl FnMut(usize, &MassProperties, &BodyState),
        read: impl Fn(
            &mut GpuSimulation,
            &mut dyn FnMut(usize, &MassProperties, &BodyState),
        ) -> Result<()>,
    ) -> Result<()> {
        for shard in &mut self.shards {
            let first = shard.bodies.start;
            read(&mut shard.sim, &mut |i, mass, state| {
                visit(first + i, mass, state)
            })?;
        }
        Ok(())
    }

    /// Asks every device for a copy of its states; returns the request's id.
    pub fn request_states(&mut self) -> Result<u64> {
        if self.shards.len() == 1 {
            return self.shards[0].sim.request_states();
        }
        let parts = self.on_each(|sim| sim.request_states())?;
        let id = self.next_ticket;
        self.next_ticket += 1;
        let parts = parts.into_iter().map(TicketPart::Requested).collect();
        self.tickets.insert(id, parts);
        Ok(id)
    }

    /// The bodies of request `id` once every device's copy has landed; `None` before.
    pub fn try_states(&mut self, id: u64) -> Result<Option<Vec<Body>>> {
        if self.shards.len() == 1 {
            return self.shards[0].sim.try_states(id);
        }
        let mut parts = self.ticket(id)?;
        let mut all_landed = true;
        for (shard, part) in self.shards.iter_mut().zip(parts.iter_mut()) {
            if let TicketPart::Requested(part_id) = *part {
                match shard.sim.try_states(part_id)? {
                    Some(bodies) => *part = TicketPart::Landed(bodies),
                    None => all_landed = false,
                }
            }
        }
        if !all_landed {
            self.tickets.insert(id, parts);
            return Ok(None);
        }
        Ok(Some(landed(parts)))
    }

    /// The bodies of request `id`, waiting for every device's copy.
    pub fn wait_states(&mut self, id: u64) -> Result<Vec<Body>> {
        if self.shards.len() == 1 {
            return self.shards[0].sim.wait_states(id);
        }
        let mut parts = self.ticket(id)?;
        for (shard, part) in self.shards.iter_mut().zip(parts.iter_mut()) {
            if let TicketPart::Requested(part_id) = *part {
                *part = TicketPart::Landed(shard.sim.wait_states(part_id)?);
            }
        }
        Ok(landed(parts))
    }

    /// Hands the states of request `id` to `visit` in crowd order, waiting for them.
    pub fn visit_request(
        &mut self,
        id: u64,
        mut visit: impl FnMut(usize, &MassProperties, &BodyState),
    ) -> Result<()> {
        if self.shards.len() == 1 {
            return self.shards[0].sim.visit_request(id, visit);
        }
        let parts = self.ticket(id)?;
        for (shard, part) in self.shards.iter_mut().zip(parts) {
            let first = shard.bodies.start;
            match part {
                TicketPart::Requested(part_id) => shard
                    .sim
                    .visit_request(part_id, |i, mass, state| visit(first + i, mass, state))?,
                TicketPart::Landed(bodies) => {
                    for (i, body) in bodies.iter().enumerate() {
                        visit(first + i, &body.mass, &body.state);
                    }
                }
            }
        }
        Ok(())
    }

    fn ticket(&mut self, id: u64) -> Result<Vec<TicketPart>> {
        self.tickets
            .remove(&id)
            .ok_or_else(|| Error::invalid("ticket", format!("no outstanding request {id}")))
    }

    /// Writes new states for bodies `indices` (crowd indices, validated).
    pub fn set_states(
        &mut self,
        indices: &[usize],
        states: &[BodyState],
        clock_step: u64,
    ) -> Result<()> {
        for shard in &mut self.shards {
            let (local, picked): (Vec<usize>, Vec<BodyState>) = indices
                .iter()
                .zip(states)
                .filter(|(i, _)| shard.bodies.contains(i))
                .map(|(&i, s)| (i - shard.bodies.start, *s))
                .unzip();
            if !local.is_empty() {
                shard.sim.set_states(&local, &picked, clock_step)?;
            }
        }
        Ok(())
    }

    /// Sets every body's external load (one per body, validated).
    pub fn set_external_loads(&mut self, loads: &[ExternalLoad]) -> Result<()> {
        for shard in &mut self.shards {
            shard.sim.set_external_loads(&loads[shard.bodies.clone()])?;
        }
        Ok(())
    }

    /// The frozen bodies of every device, in crowd order.
    pub fn quarantined(&mut self) -> Result<Vec<QuarantinedBody>> {
        let mut all = Vec::new();
        for shard in &mut self.shards {
            let first = shard.bodies.start;
            all.extend(
                shard
                    .sim
                    .quarantined()?
                    .into_iter()
                    .map(|q| QuarantinedBody {
                        body: first + q.body,
                        ..q
                    }),
            );
        }
        Ok(all)
    }

    /// Freezes bodies (crowd indices, validated) as [`GpuSimulation::freeze`] does.
    pub fn freeze(&mut self, bodies: &[QuarantinedBody]) -> Result<()> {
        for shard in &mut self.shards {
            let local: Vec<QuarantinedBody> = bodies
                .iter()
                .filter(|q| shard.bodies.contains(&q.body))
                .map(|q| QuarantinedBody {
                    body: q.body - shard.bodies.start,
                    ..*q
                })
                .collect();
            shard.sim.freeze(&local)?;
        }
        Ok(())
    }

    /// Body `body`'s mass properties (a crowd index).
    #[cfg(feature = "cli")]
    pub fn mass(&self, body: usize) -> MassProperties {
        let shard = self
            .shards
            .iter()
            .find(|s| s.bodies.contains(&body))
            .expect("a crowd index is in a shard");
        shard.sim.mass(body - shard.bodies.start)
    }

    /// Every device's chunks, in crowd order, with crowd indices.
    pub fn chunks(&self) -> Vec<GpuChunk<'_>> {
        self.shards.iter().flat_map(|s| s.sim.chunks()).collect()
    }
}

/// The bodies of landed parts, in order.
fn landed(parts: Vec<TicketPart>) -> Vec<Body> {
    let mut bodies = Vec::new();
    for part in parts {
        if let TicketPart::Landed(part) = part {
            bodies.extend(part);
        }
    }
    bodies
}

/// The body a fault error names, if it is one.
fn fault_body(e: &Error) -> Option<usize> {
    match *e {
        Error::NonFinite { body, .. } | Error::OutsideEnvelope { body, .. } => Some(body),
        _ => None,
    }
}

/// `e` of shard `index` (bodies `bodies`) in crowd terms: a faulty body's crowd index, a
/// lost device named with its shard.
fn in_shard(e: Error, index: usize, bodies: &Range<usize>) -> Error {
    match e {
        Error::NonFinite { body, step } => Error::NonFinite {
            body: bodies.start + body,
            step,
        },
        Error::OutsideEnvelope { body, step, fault } => Error::OutsideEnvelope {
            body: bodies.start + body,
            step,
            fault,
        },
        Error::DeviceLost(message) => Error::DeviceLost(format!(
            "device {index} (shard of bodies {}..{}): {message}",
            bodies.start, bodies.end
        )),
        Error::Gpu(message) => Error::Gpu(format!(
            "device {index} (shard of bodies {}..{}): {message}",
            bodies.start, bodies.end
        )),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assembly::body_source::SOURCE_CHUNK;

    #[test]
    fn shards_cover_the_crowd_in_order_in_proportion_to_memory() {
        for (count, weights) in [
            (10, vec![1.0, 1.0]),
            (3, vec![1.0, 1.0, 1.0]),
            (7, vec![1.0, 5.0, 1.0]),
            (5 * SOURCE_CHUNK + 3, vec![1.0, 1.0]),
            (100 * SOURCE_CHUNK, vec![3.0, 1.0]),
        ] {
            let ranges = plan_shards(count, &weights, 1);
            assert_eq!(ranges.len(), weights.len());
            assert_eq!(ranges[0].start, 0);
            assert_eq!(ranges.last().unwrap().end, count);
            for pair in ranges.windows(2) {
                assert_eq!(pair[0].end, pair[1].start);
            }
            assert!(ranges.iter().all(|r| !r.is_empty()), "{ranges:?}");
            if count >= SOURCE_CHUNK * weights.len() {
                assert!(
                    ranges.iter().all(|r| r.start % SOURCE_CHUNK == 0),
                    "{ranges:?}"
                );
            }
        }
        assert_eq!(
            plan_shards(100 * SOURCE_CHUNK, &[3.0, 1.0], 1)[0].end,
            75 * SOURCE_CHUNK
        );
        assert_eq!(plan_shards(10, &[1.0, 1.0], 1), vec![0..5, 5..10]);
    }
}
