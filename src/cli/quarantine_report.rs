//! What a `freeze` run tells about the bodies it quarantined: the list, written as JSON
//! beside the final states, and one line on stderr.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::checkpoint::atomic_file::AtomicFile;
use crate::model::body::{angular_velocity, velocity};
use crate::model::error::{Error, Result};
use crate::model::fault_rules::{FaultRules, OnFault, QuarantinedBody};
use crate::simulation::facade::Simulation;

/// `OUT.quarantine.json` for the final states `OUT`.
pub(crate) fn report_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".quarantine.json");
    PathBuf::from(name)
}

/// The list's file, claimed before the run (an unwritable path fails before any work).
pub(crate) struct QuarantineReport {
    file: AtomicFile,
    path: PathBuf,
    rules: FaultRules,
}

impl QuarantineReport {
    /// The report of a run under `rules` writing its final states to `out`: one under
    /// `freeze`, none under `stop` (whose fault ends the run with an error instead).
    pub fn claim(out: &Path, rules: FaultRules) -> Result<Option<Self>> {
        if rules.on_fault != OnFault::Freeze {
            return Ok(None);
        }
        let path = report_path(out);
        Ok(Some(Self {
            file: AtomicFile::create(&path)?,
            path,
            rules,
        }))
    }

    /// Writes every quarantined body of `sim` (index, step, fault, last good state with its
    /// velocities) and returns the summary line.
    pub fn write(self, sim: &mut Simulation) -> Result<String> {
        let quarantined = sim.quarantined()?;
        let entries = entries(sim, &quarantined, 0);
        self.write_entries(entries, sim.body_count(), sim.clock_step())
    }

    /// Writes the list of `entries` ([`entries`], every rank's in crowd order for a run over
    /// MPI ranks) of a crowd of `bodies` at clock step `step`; returns the summary line.
    pub fn write_entries(
        mut self,
        entries: Vec<Value>,
        bodies: usize,
        step: u64,
    ) -> Result<String> {
        let envelope = &self.rules.envelope;
        let first = match entries.first() {
            Some(q) => format!(
                " (first: body {} in step {}, {})",
                q["body"],
                q["step"],
                q["fault"].as_str().unwrap_or_default()
            ),
            None => String::new(),
        };
        let count = entries.len();
        let report = json!({
            "on_fault": self.rules.on_fault.name(),
            "envelope": {
                "max_speed": envelope.max_speed,
                "max_angular_speed": envelope.max_angular_speed,
                "max_distance": envelope.max_distance,
            },
            "bodies": bodies,
            "step": step,
            "quarantined": entries,
        });
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| Error::invalid("quarantine report", e.to_string()))?;
        self.file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.write_all(b"\n"))
            .map_err(|e| Error::io(&self.path, e))?;
        self.file.commit()?;
        Ok(format!(
            "quarantined {count} of {bodies} bodies{first}; the list is in {}",
            self.path.display()
        ))
    }
}

/// The report's entry of each of `quarantined`, bodies of `sim` whose crowd indices start at
/// `first_body` (not 0 for an MPI rank's shard): index, step, fault, last good state with its
/// velocities.
pub(crate) fn entries(
    sim: &Simulation,
    quarantined: &[QuarantinedBody],
    first_body: usize,
) -> Vec<Value> {
    let vector = |v: glam::DVec3| json!([v.x, v.y, v.z]);
    quarantined
        .iter()
        .map(|q| {
            let mass = sim.mass(q.body);
            let (s, o) = (&q.state, q.state.orientation);
            json!({
                "body": first_body + q.body,
                "step": q.step,
                "fault": q.fault.name(),
                "position": vector(s.position),
                "orientation": [o.w, o.x, o.y, o.z],
                "velocity": vector(velocity(&mass, s)),
                "angular_velocity": vector(angular_velocity(&mass, s)),
                "linear_momentum": vector(s.linear_momentum),
                "angular_momentum": vector(s.angular_momentum),
            })
        })
        .collect()
}
