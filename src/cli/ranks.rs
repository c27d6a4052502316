//! `run` and `resume` under an MPI launcher (`mpirun -np R rigid-crowd run ...`; feature
//! `mpi`): the crowd split over the ranks, rank 0 writing the one output, the one trajectory
//! and the checkpoint's manifest, every rank its checkpoint shard.
//!
//! Every fallible step ends in an agreement (src/mpi/agree.rs), so the ranks leave together
//! with one error, which rank 0 prints. Frames and final states are gathered to rank 0
//! (src/mpi/gather.rs) and encoded exactly as one process encodes them, so the files are
//! byte for byte a single process's.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::*;

use super::quarantine_report::{QuarantineReport, entries};
use super::recording::Recording;
use super::resume::ResumeArgs;
use super::run::{Output, PlannedRun, RunArgs, Tangents, parse_backend};
use super::run_loop::{Stepping, run_to_end};
use super::text::say;
use super::world::{World, conclude};
use crate::assembly::body_source::BodySource;
use crate::backends::gpu::{DeviceCount, GpuContext};
use crate::mpi::{MpiSimulation, bytes_to_root, node_rank};
use crate::record::{
    FinalStates, NamedArray, StreamError, TrajectoryFormat, encode_frame_part, stream_final_rows,
    tangent_array,
};
use crate::{Error, OnFault, Result, RunPlan};

/// `rigid-crowd run` over the ranks.
pub(crate) fn run(args: RunArgs, world: World, started: Instant) -> Result<ExitCode> {
    let outcome = run_ranks(args, &world, started);
    Ok(conclude(&world, outcome))
}

fn run_ranks(args: RunArgs, world: &World, started: Instant) -> Result<ExitCode> {
    let comm = world.comm().duplicate();
    let agree = |r| crate::mpi::agree_on(&comm, r);
    same_file_everywhere(&comm, &args.scene)?;
    let backend = agree(parse_backend(&args.backend))?;
    let planned = crate::mpi::agree_on(&comm, PlannedRun::of(&args, backend))?;
    check_devices(planned.start.devices)?;
    let rules = planned.start.crowd.fault_rules;
    // Refused before any work; the ranks' loop reads the format from the plan.
    out_format(&args.out)?;
    let claimed = match world.is_root() {
        true => (|| {
            Ok(Some(RootFiles {
                output: Output::claim(&args.out)?,
                recording: planned.prepare_recording(&args)?,
                report: QuarantineReport::claim(&args.out, rules)?,
            }))
        })(),
        false => Ok(None),
    };
    let mut root = crate::mpi::agree_on(&comm, claimed)?;
    let PlannedRun { start, plan, .. } = planned;
    let gpu = open_gpu(&comm, start.on.backend)?;
    let source = match &start.recipe {
        Some(spec) => BodySource::with_generated(&start.crowd.bodies, spec),
        None => Ok(BodySource::given(&start.crowd.bodies)),
    };
    let source = crate::mpi::agree_on(&comm, source)?;
    let mut sim = MpiSimulation::from_source(comm, &start.crowd, &source, start.on, gpu.as_ref())?;
    drop(source);
    if let Some(Tangents::Started(tangents)) = &start.tangents {
        sim.carry_tangents(tangents, &start.crowd)?;
    }
    let schedule = FrameSchedule::share(
        sim.comm(),
        root.as_mut().map(|files| &mut files.recording),
        sim.clock_step(),
        args.recording.record.as_deref(),
        None,
    )?;
    drop(start);
    drive(
        sim,
        Drive {
            plan,
            root,
            checkpoint: args.checkpoint.clone(),
            schedule,
            started,
            gpu: gpu.as_ref().map(GpuContext::describe),
        },
    )
}

/// `rigid-crowd resume MANIFEST` over the ranks that wrote it.
pub(crate) fn resume(args: ResumeArgs, world: World, started: Instant) -> Result<ExitCode> {
    let outcome = resume_ranks(args, &world, started);
    Ok(conclude(&world, outcome))
}

fn resume_ranks(args: ResumeArgs, world: &World, started: Instant) -> Result<ExitCode> {
    let bytes = std::fs::read(&args.checkpoint).map_err(|e| Error::io(&args.checkpoint, e))?;
    if !crate::checkpoint::is_manifest(&bytes) {
        return Err(Error::Mpi(format!(
            "{} was written by one process: resume it without mpirun",
            args.checkpoint.display()
        )));
    }
    drop(bytes);
    let comm = world.comm().duplicate();
    let backend = match &args.backend {
        Some(name) => Some(crate::mpi::agree_on(&comm, parse_backend(name))?),
        None => None,
    };
    check_devices(crate::mpi::agree_on(
        &comm,
        super::run::parse_devices(&args.devices),
    )?)?;
    let (sim, run) = MpiSimulation::resume_with_laws(comm, &args.checkpoint, backend, &args.laws)?;
    let step = sim.clock_step();
    // Rank 0 holds the run plan: it decides and tells the others.
    let planned = match sim.is_root() {
        true => super::resume::resume_plan(&args, run.as_ref(), step).map(Some),
        false => Ok(None),
    };
    let planned = sim.agree(planned)?;
    let mut words = match &planned {
        Some((plan, _)) => vec![plan.end_step, plan.checkpoint_every],
        None => vec![0, 0],
    };
    sim.comm().process_at_rank(0).broadcast_into(&mut words[..]);
    let out = broadcast_path(
        sim.comm(),
        planned.as_ref().map(|(plan, _)| plan.out.as_path()),
    );
    out_format(&out)?;
    let plan = RunPlan {
        end_step: words[0],
        out,
        checkpoint_every: words[1],
        recording: None,
    };
    let claimed = match planned {
        Some((_, trajectory)) => (|| {
            let output = Output::claim(&plan.out)?;
            let bodies = sim.body_count();
            let steps = plan.end_step.saturating_sub(step);
            let recording = match &trajectory {
                Some(t) => Recording::resume(t, bodies, step, sim.local().dt(), steps, true)?,
                None => Recording::progress_only(bodies, steps, true),
            };
            let report = QuarantineReport::claim(&plan.out, sim.local().fault_rules())?;
            let files = RootFiles {
                output,
                recording,
                report,
            };
            Ok(Some((files, trajectory)))
        })(),
        None => Ok(None),
    };
    let claimed = sim.agree(claimed)?;
    let (mut root, trajectory) = match claimed {
        Some((files, trajectory)) => (Some(files), trajectory),
        None => (None, None),
    };
    let record_path = trajectory.as_ref().map(|t| t.path.clone());
    let schedule = FrameSchedule::share(
        sim.comm(),
        root.as_mut().map(|files| &mut files.recording),
        step,
        record_path.as_deref(),
        trajectory.as_ref().map(|t| (t.first_step, t.every)),
    )?;
    // The checkpoint keeps being written where it was read.
    let checkpoint = (plan.checkpoint_every > 0).then(|| args.checkpoint.clone());
    drive(
        sim,
        Drive {
            plan,
            root,
            checkpoint,
            schedule,
            started,
            gpu: None,
        },
    )
}

/// What the ranks' loop needs besides the simulation.
struct Drive {
    plan: RunPlan,
    /// Rank 0's files.
    root: Option<RootFiles>,
    checkpoint: Option<PathBuf>,
    schedule: Option<FrameSchedule>,
    started: Instant,
    /// The GPU adapter the ranks run on, when they run on one.
    gpu: Option<String>,
}

/// What rank 0 writes.
struct RootFiles {
    /// The final states' file.
    output: Output,
    recording: Recording,
    /// The list of the bodies a `freeze` run froze.
    report: Option<QuarantineReport>,
}

/// Steps to `plan.end_step`, writing the frames due and the checkpoints, then the final
/// states; rank 0 prints the summary, or the error with where the work is.
fn drive(sim: MpiSimulation<SimpleCommunicator>, d: Drive) -> Result<ExitCode> {
    let start_step = sim.clock_step();
    let steps = d.plan.end_step.saturating_sub(start_step);
    let (output, recording, report) = match d.root {
        Some(files) => (Some(files.output), Some(files.recording), files.report),
        None => (None, None, None),
    };
    let mut rank = RankRun {
        sim,
        schedule: d.schedule,
        recording,
    };
    let integration = match run_to_end(&mut rank, &d.plan, d.checkpoint.as_deref()) {
        Ok(integration) => integration,
        Err(stopped) => {
            if rank.sim.is_root() {
                let resume = format!("mpirun -np {} rigid-crowd resume", rank.sim.ranks());
                say(&stopped.line(d.checkpoint.as_deref(), &resume));
            }
            return Ok(ExitCode::FAILURE);
        }
    };
    let RankRun {
        mut sim, recording, ..
    } = rank;
    let elapsed = integration.seconds();
    write_final_states(&mut sim, output, out_format(&d.plan.out)?)?;
    let freeze = sim.local().fault_rules().on_fault == OnFault::Freeze;
    let frozen = match freeze {
        true => sim.quarantined()?,
        false => Vec::new(),
    };
    let recorded = match recording {
        Some(recording) => recording.commit_with(sim.local_mut(), |_| Ok(frozen)),
        None => Ok(String::new()),
    };
    let recorded = sim.agree(recorded)?;
    let reported = match freeze {
        true => write_report(&mut sim, report)?,
        false => None,
    };
    if sim.is_root() {
        let body_steps = sim.body_count() as f64 * steps as f64;
        let (integrator, dt) = (sim.local().integrator(), sim.local().dt());
        let adapter = describe(d.gpu.as_deref(), sim.local().backend(), sim.ranks())
            + super::run::divisions_note(sim.local());
        say(&format!(
            "{} bodies x {steps} steps ({integrator}, dt = {dt} s) on {}: {elapsed:.3} s, {}body-steps/s; wrote {}{recorded}; set-up {:.3} s, integration {elapsed:.3} s, output {:.3} s",
            sim.body_count(),
            adapter,
            super::text::rate(body_steps / elapsed.max(1e-9)),
            d.plan.out.display(),
            (integration.began - d.started).as_secs_f64(),
            integration.ended.elapsed().as_secs_f64(),
        ));
        if let Some(line) = reported {
            say(&line);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A rank's share of the run, as the run loop drives it.
struct RankRun {
    sim: MpiSimulation<SimpleCommunicator>,
    /// The frames to record, known to every rank (rank 0 writes them).
    schedule: Option<FrameSchedule>,
    /// Rank 0's recording.
    recording: Option<Recording>,
}

impl RankRun {
    /// Writes the frame due at the current step, if one is.
    fn write_due_frame(&mut self) -> Result<()> {
        match &mut self.schedule {
            Some(schedule) if schedule.next == self.sim.clock_step() => {
                schedule.write_frame(&mut self.sim, self.recording.as_mut())
            }
            _ => Ok(()),
        }
    }
}

impl Stepping for RankRun {
    fn clock_step(&self) -> u64 {
        self.sim.clock_step()
    }

    fn advance(&mut self, steps: u64) -> Result<()> {
        let target = self.sim.clock_step() + steps;
        loop {
            self.write_due_frame()?;
            let clock = self.sim.clock_step();
            if clock >= target {
                return Ok(());
            }
            let next_frame = self.schedule.as_ref().map_or(u64::MAX, |s| s.next);
            self.sim.step(target.min(next_frame) - clock)?;
        }
    }

    fn checkpoint(&mut self, path: &Path, plan: &RunPlan) -> Result<()> {
        let synced = match &mut self.recording {
            Some(recording) => recording.sync(self.sim.local_mut()),
            None => Ok(None),
        };
        let synced = self.sim.agree(synced)?;
        let run = self.sim.is_root().then(|| RunPlan {
            recording: synced,
            ..plan.clone()
        });
        self.sim.checkpoint(path, run)
    }

    fn finish(&mut self) -> Result<()> {
        // A run of no steps still writes the frame of its first step.
        self.write_due_frame()?;
        self.sim.finish()
    }
}

/// The list of the bodies a `freeze` run froze, every rank's entries (made where the bodies'
/// masses are) gathered in crowd order into rank 0's `report`; its summary line on rank 0.
fn write_report(
    sim: &mut MpiSimulation<SimpleCommunicator>,
    report: Option<QuarantineReport>,
) -> Result<Option<String>> {
    let first = sim.shard().start;
    let local = sim.local_mut().quarantined();
    let mine: Result<Vec<u8>> = local.map(|frozen| {
        let mut lines = Vec::new();
        for entry in entries(sim.local(), &frozen, first) {
            lines.extend_from_slice(entry.to_string().as_bytes());
            lines.push(b'\n');
        }
        lines
    });
    let mine = sim.agree(mine)?;
    let mut all = Vec::new();
    let sent = bytes_to_root(sim.comm(), &mut all, |out| out.write_all(&mine));
    sim.agree(sent.map_err(|e| Error::Mpi(format!("gathering the frozen bodies: {e}"))))?;
    let written = match report {
        Some(report) => (|| {
            let entries = String::from_utf8_lossy(&all)
                .lines()
                .map(serde_json::from_str)
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| Error::Mpi(format!("a rank sent a bad entry: {e}")))?;
            report
                .write_entries(entries, sim.body_count(), sim.clock_step())
                .map(Some)
        })(),
        None => Ok(None),
    };
    sim.agree(written)
}

/// The final states of every rank, in crowd order, into rank 0's `output`, committed only
/// once every rank's part arrived whole.
fn write_final_states(
    sim: &mut MpiSimulation<SimpleCommunicator>,
    output: Option<Output>,
    format: TrajectoryFormat,
) -> Result<()> {
    let tangents = tangent_arrays_on_root(sim)?;
    let first = sim.shard().start;
    let header = FinalStates::of(sim.local(), sim.body_count());
    let (comm, local) = sim.parts_mut();
    let mut read_error = None;
    let mut own = |out: &mut dyn Write| match stream_final_rows(local, format, first, out) {
        Ok(()) => Ok(()),
        Err(StreamError::Write(e)) => Err(e),
        Err(StreamError::Read(e)) => {
            read_error = Some(e);
            Ok(())
        }
    };
    let written = match output {
        Some(output) => {
            let mut gathered = false;
            let file = header.write(output.file, format, &tangents, |out| {
                gathered = true;
                bytes_to_root(comm, out, &mut own).map_err(StreamError::Write)
            });
            if !gathered {
                // The file failed before its rows: take the others' parts all the same.
                let _ = bytes_to_root(comm, &mut std::io::sink(), &mut own);
            }
            file.map(Some)
        }
        None => bytes_to_root(comm, &mut std::io::sink(), &mut own)
            .map(|()| None)
            .map_err(|e| Error::Mpi(format!("sending the final states to rank 0: {e}"))),
    };
    let written = match read_error {
        Some(e) => Err(e),
        None => written,
    };
    let file = sim.agree(written)?;
    let committed = file.map_or(Ok(()), |file| file.commit());
    sim.agree(committed)
}

/// The tangents the ranks carry, every rank's bodies gathered into one array each on rank 0
/// (empty on the others), as one process's final states hold them.
fn tangent_arrays_on_root(sim: &mut MpiSimulation<SimpleCommunicator>) -> Result<Vec<NamedArray>> {
    let backend = sim.local().backend();
    let mut arrays = Vec::new();
    for (name, width) in sim.tangent_names() {
        if let Some(values) = sim.tangents_on_root(&name)? {
            arrays.push(tangent_array(&name, width, values, backend));
        }
    }
    Ok(arrays)
}

/// When the frames are due and in what format: every rank encodes its part of each frame.
struct FrameSchedule {
    format: TrajectoryFormat,
    every: u64,
    /// The clock step of the first frame.
    first: u64,
    /// The clock step of the next frame to write.
    next: u64,
}

impl FrameSchedule {
    /// Rank 0's recording (from the flags, or continued from a checkpoint's `resumed`
    /// first step and interval) made known to every rank. `clock_step` is the run's step now;
    /// a resumed recording holds every frame up to it.
    fn share(
        comm: &SimpleCommunicator,
        recording: Option<&mut Recording>,
        clock_step: u64,
        path: Option<&Path>,
        resumed: Option<(u64, u64)>,
    ) -> Result<Option<Self>> {
        let mut words = [0u64; 4];
        if let Some((_, every, first)) = recording.and_then(|r| r.gathered(clock_step)) {
            let next = match resumed {
                Some(_) => first + ((clock_step - first) / every + 1) * every,
                None => clock_step,
            };
            words = [1, every, first, next];
        }
        comm.process_at_rank(0).broadcast_into(&mut words[..]);
        let path = broadcast_path(comm, path);
        if words[0] == 0 {
            return Ok(None);
        }
        let format =
            TrajectoryFormat::from_path(&path).map_err(|m| Error::invalid("--record", m))?;
        Ok(Some(Self {
            format,
            every: words[1],
            first: words[2],
            next: words[3],
        }))
    }

    /// Gathers the frame of the current step to rank 0, which appends it.
    fn write_frame(
        &mut self,
        sim: &mut MpiSimulation<SimpleCommunicator>,
        recording: Option<&mut Recording>,
    ) -> Result<()> {
        let clock = sim.clock_step();
        let (step, time) = (clock - self.first, sim.local().time());
        let first = sim.shard().start;
        let mut part = Vec::new();
        let read = sim.local_mut().bodies().map(|bodies| {
            encode_frame_part(self.format, step, time, first, &bodies, &mut part);
        });
        let mut frame = Vec::new();
        let sent = bytes_to_root(sim.comm(), &mut frame, |out| out.write_all(&part));
        sim.agree(read.and(sent.map_err(|e| Error::Mpi(format!("gathering a frame: {e}")))))?;
        let written = match recording.and_then(|r| r.gathered(clock).map(|(w, ..)| w)) {
            Some(writer) => writer.write_encoded_frame(step, time, &frame),
            None => Ok(()),
        };
        sim.agree(written)?;
        self.next += self.every;
        Ok(())
    }
}

/// Rank 0's `path` (empty if `None`) on every rank.
fn broadcast_path(comm: &SimpleCommunicator, path: Option<&Path>) -> PathBuf {
    let mut bytes = path
        .map(|p| p.to_string_lossy().into_owned().into_bytes())
        .unwrap_or_default();
    crate::mpi::broadcast_bytes(comm, 0, &mut bytes);
    PathBuf::from(String::from_utf8_lossy(&bytes).into_owned())
}

/// Every rank must read the same scene: its bytes' length and CRC-32, compared over the
/// ranks (a rank that cannot read it fails the run for all).
fn same_file_everywhere(comm: &SimpleCommunicator, path: &Path) -> Result<()> {
    let read = std::fs::read(path).map_err(|e| Error::io(path, e));
    let read = crate::mpi::agree_on(comm, read)?;
    let mine = [read.len() as u64, u64::from(crc32fast::hash(&read))];
    let mut all = vec![0u64; 2 * comm.size() as usize];
    comm.all_gather_into(&mine[..], &mut all[..]);
    match (1..comm.size() as usize).find(|&r| all[2 * r..2 * r + 2] != all[..2]) {
        None => Ok(()),
        Some(rank) => Err(Error::Mpi(format!(
            "the ranks read different scene files: rank {rank}'s {} ({} bytes, CRC-32 {:08x}) is not rank 0's ({} bytes, CRC-32 {:08x})",
            path.display(),
            all[2 * rank],
            all[2 * rank + 1],
            all[0],
            all[1]
        ))),
    }
}

/// Under MPI a rank takes one GPU: `--devices` must be 1.
fn check_devices(devices: DeviceCount) -> Result<()> {
    if devices != DeviceCount::Count(1) {
        return Err(Error::invalid(
            "--devices",
            "under MPI each rank takes one GPU (the one of its rank on its node): start one rank per GPU instead",
        ));
    }
    Ok(())
}

/// The final states' format, from `--out` (every rank encodes its rows in it).
fn out_format(out: &Path) -> Result<TrajectoryFormat> {
    TrajectoryFormat::from_path(out).map_err(|m| Error::invalid("--out", m))
}

/// The GPU of this rank on a GPU backend: the adapter of its index on its node.
fn open_gpu(comm: &SimpleCommunicator, backend: crate::Backend) -> Result<Option<GpuContext>> {
    let gpu = match backend.gpu_precision() {
        Some(_) => GpuContext::open_adapter(node_rank(comm)).map(Some),
        None => Ok(None),
    };
    crate::mpi::agree_on(comm, gpu)
}

/// The summary line's "on ...".
fn describe(gpu: Option<&str>, backend: crate::Backend, ranks: usize) -> String {
    let what = match (gpu, backend) {
        (Some(gpu), _) => gpu.to_string(),
        (None, crate::Backend::Reference) => "the f64 CPU reference".to_string(),
        (None, crate::Backend::FastCpu) => {
            format!("the f32 CPU path, {} threads", rayon::current_num_threads())
        }
        (None, backend) => backend.to_string(),
    };
    format!("{ranks} MPI ranks, each on {what}")
}
