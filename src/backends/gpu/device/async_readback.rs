//! Reading the states back without stalling the integration: double-buffered staging.
//!
//! A request encodes a copy of every chunk's states buffer into a staging set (one
//! `MAP_READ` buffer per chunk) and submits it right after the steps queued so far, then
//! maps the set asynchronously. Integration keeps being queued behind the copy; the host
//! takes the states once the mapping completes. Two staging sets are recycled, so while the
//! host copies frame N out of one, frame N + 1 can land in the other. A third outstanding
//! request first moves the oldest one into host memory (waiting for it), which keeps the
//! staging memory at two sets however many tickets the caller holds.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::backends::gpu::chunk::BufferChunk;
use crate::backends::gpu::device::context::{GpuContext, one_line};
use crate::model::error::{Error, Result};

/// How long a completed copy's mapping may take to be delivered before it is an error.
const MAPPING_DEADLINE: Duration = Duration::from_secs(30);

/// Staging sets kept mapped or in flight at once: one being read by the host, one filling.
pub(crate) const STAGING_SETS: usize = 2;

/// One `MAP_READ` buffer per chunk, sized to that chunk's states.
#[derive(Debug)]
struct StagingSet {
    buffers: Vec<wgpu::Buffer>,
}

/// What the map callbacks of one set report: buffers mapped so far, and the first error.
#[derive(Debug, Default)]
struct MapStatus {
    mapped: usize,
    error: Option<String>,
}

#[derive(Debug)]
enum Contents {
    /// Copy submitted, mapping under way (or done) into this set.
    Mapping {
        set: StagingSet,
        status: Arc<Mutex<MapStatus>>,
    },
    /// Already moved to host memory to free its staging set.
    OnHost(Vec<u8>),
}

#[derive(Debug)]
struct Pending {
    id: u64,
    submission: wgpu::SubmissionIndex,
    contents: Contents,
}

/// The outstanding state requests of one GPU simulation, oldest first.
#[derive(Debug, Default)]
pub(crate) struct AsyncReadback {
    pending: VecDeque<Pending>,
    free: Vec<StagingSet>,
    next_id: u64,
}

impl AsyncReadback {
    /// Queues a copy of the states as every step submitted so far leaves them, and returns
    /// its id. Does not wait for the device unless two copies are already outstanding.
    pub fn request(&mut self, ctx: &GpuContext, chunks: &[BufferChunk]) -> Result<u64> {
        if self.mapping_count() >= STAGING_SETS {
            self.move_oldest_to_host(ctx)?;
        }
        let set = match self.free.pop() {
            Some(set) => set,
            None => StagingSet::new(&ctx.device, chunks),
        };
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("async readback"),
            });
        for (chunk, staging) in chunks.iter().zip(&set.buffers) {
            encoder.copy_buffer_to_buffer(&chunk.states, 0, staging, 0, staging.size());
        }
        let submission = ctx.queue.submit([encoder.finish()]);
        let status = Arc::new(Mutex::new(MapStatus::default()));
        for staging in &set.buffers {
            let status = Arc::clone(&status);
            staging.map_async(wgpu::MapMode::Read, .., move |result| {
                let mut status = status.lock().unwrap_or_else(|e| e.into_inner());
                match result {
                    Ok(()) => status.mapped += 1,
                    Err(e) => {
                        status.error.get_or_insert(e.to_string());
                    }
                }
            });
        }
        ctx.take_uncaptured()?;
        let id = self.next_id;
        self.next_id += 1;
        self.pending.push_back(Pending {
            id,
            submission,
            contents: Contents::Mapping { set, status },
        });
        Ok(id)
    }

    /// The states of request `id` if its copy has landed, without blocking; `None` while
    /// the device is still busy with it. A request is handed out once.
    pub fn try_take(&mut self, ctx: &GpuContext, id: u64) -> Result<Option<Vec<u8>>> {
        let index = self.index_of(id)?;
        if let Contents::Mapping { status, .. } = &self.pending[index].contents {
            ctx.device
                .poll(wgpu::PollType::Poll)
                .map_err(|e| ctx.gpu_error(one_line(&format!("polling the device: {e}"))))?;
            if !is_mapped(status, self.set_len(index))? {
                return Ok(None);
            }
        }
        let mut states = Vec::new();
        self.take_with(index, &mut |bytes| states.extend_from_slice(bytes))?;
        Ok(Some(states))
    }

    /// The states of request `id`, waiting for the device if needed.
    pub fn wait(&mut self, ctx: &GpuContext, id: u64) -> Result<Vec<u8>> {
        let mut states = Vec::new();
        self.wait_with(ctx, id, &mut |bytes| states.extend_from_slice(bytes))?;
        Ok(states)
    }

    /// Hands the states of request `id` to `visit`, waiting for the device if needed: chunk
    /// by chunk in crowd order, straight from the mapped staging memory, so nothing is
    /// copied on the host unless `visit` copies it.
    pub fn wait_with(
        &mut self,
        ctx: &GpuContext,
        id: u64,
        visit: &mut dyn FnMut(&[u8]),
    ) -> Result<()> {
        let index = self.index_of(id)?;
        self.wait_mapped(ctx, index)?;
        self.take_with(index, visit)
    }

    fn mapping_count(&self) -> usize {
        self.pending
            .iter()
            .filter(|p| matches!(p.contents, Contents::Mapping { .. }))
            .count()
    }

    fn index_of(&self, id: u64) -> Result<usize> {
        self.pending.iter().position(|p| p.id == id).ok_or_else(|| {
            Error::invalid(
                "states ticket",
                "was already redeemed or belongs to another simulation",
            )
        })
    }

    fn set_len(&self, index: usize) -> usize {
        match &self.pending[index].contents {
            Contents::Mapping { set, .. } => set.buffers.len(),
            Contents::OnHost(_) => 0,
        }
    }

    /// Blocks until request `index`'s copy is mapped (a no-op once it is on the host).
    fn wait_mapped(&self, ctx: &GpuContext, index: usize) -> Result<()> {
        let pending = &self.pending[index];
        let Contents::Mapping { status, set } = &pending.contents else {
            return Ok(());
        };
        let mut poll = wgpu::PollType::Wait {
            submission_index: Some(pending.submission.clone()),
            timeout: None,
        };
        // The callbacks run inside `poll`, on whichever thread polls the device: a mapping
        // resolved just after its submission completed needs another (indefinite) wait to
        // deliver them, and when other threads share the device one of them may be running
        // this callback at the moment our poll returns. So wait on, briefly, until a deadline.
        let deadline = Instant::now() + MAPPING_DEADLINE;
        loop {
            ctx.device
                .poll(poll)
                .map_err(|e| ctx.gpu_error(one_line(&format!("waiting for a readback: {e}"))))?;
            if is_mapped(status, set.buffers.len())? {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(Error::Gpu(format!(
                    "a readback buffer was not mapped within {} s of its copy completing",
                    MAPPING_DEADLINE.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_micros(100));
            poll = wgpu::PollType::wait_indefinitely();
        }
    }

    /// Moves the oldest request still in a staging set into host memory.
    fn move_oldest_to_host(&mut self, ctx: &GpuContext) -> Result<()> {
        let Some(index) = self
            .pending
            .iter()
            .position(|p| matches!(p.contents, Contents::Mapping { .. }))
        else {
            return Ok(());
        };
        self.wait_mapped(ctx, index)?;
        let states = self.copy_out(index)?;
        self.pending[index].contents = Contents::OnHost(states);
        Ok(())
    }

    /// Removes mapped request `index` and hands its states to `visit`.
    fn take_with(&mut self, index: usize, visit: &mut dyn FnMut(&[u8])) -> Result<()> {
        let Some(pending) = self.pending.remove(index) else {
            return Err(Error::Gpu(format!("no readback request at {index}")));
        };
        match pending.contents {
            Contents::OnHost(states) => {
                visit(&states);
                Ok(())
            }
            Contents::Mapping { set, .. } => self.drain(set, visit),
        }
    }

    /// Moves mapped request `index` out of its staging set into host memory.
    fn copy_out(&mut self, index: usize) -> Result<Vec<u8>> {
        let contents = std::mem::replace(
            &mut self.pending[index].contents,
            Contents::OnHost(Vec::new()),
        );
        let Contents::Mapping { set, .. } = contents else {
            unreachable!("only mapped requests are copied out");
        };
        let mut states = Vec::new();
        self.drain(set, &mut |bytes| states.extend_from_slice(bytes))?;
        Ok(states)
    }

    /// Hands each buffer of mapped `set` to `visit`, unmaps it, and recycles the set.
    fn drain(&mut self, set: StagingSet, visit: &mut dyn FnMut(&[u8])) -> Result<()> {
        for staging in &set.buffers {
            let view = staging
                .get_mapped_range(..)
                .map_err(|e| Error::Gpu(one_line(&format!("reading a readback buffer: {e}"))))?;
            visit(&view);
            drop(view);
            staging.unmap();
        }
        if self.free.len() < STAGING_SETS {
            self.free.push(set);
        }
        Ok(())
    }
}

/// Whether all `buffers` of a set are mapped; a mapping error becomes the error.
fn is_mapped(status: &Mutex<MapStatus>, buffers: usize) -> Result<bool> {
    let status = status.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = &status.error {
        return Err(Error::Gpu(one_line(&format!(
            "mapping a readback buffer: {e}"
        ))));
    }
    Ok(status.mapped == buffers)
}

impl StagingSet {
    fn new(device: &wgpu::Device, chunks: &[BufferChunk]) -> Self {
        let buffers = chunks
            .iter()
            .map(|chunk| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("async readback staging"),
                    // A chunk is never empty, so neither is its buffer.
                    size: chunk.states.size(),
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
            .collect();
        Self { buffers }
    }
}

#[cfg(test)]
mod tests {
    use crate::assembly::body_source::BodySource;
    use crate::assembly::generate::CrowdSpec;
    use crate::backends::gpu::{GpuContext, GpuOptions, GpuSimulation};
    use crate::{Crowd, Force, ForceKind};

    #[test]
    fn requests_read_every_chunk_and_recycle_two_staging_sets() {
        let ctx = GpuContext::new().expect("the readback test needs a GPU adapter (see README)");
        // 64-byte records: at most 100 bodies per chunk, so 1,050 bodies take 11 chunks.
        let ctx = ctx.with_max_binding_bytes(64 * 100);
        let crowd = Crowd::new(CrowdSpec::new(1050, 4).generate().unwrap(), 1e-3).with_force(
            Force::on_all(ForceKind::LinearDrag {
                linear: 0.5,
                angular: 0.5,
            }),
        );
        let mut sim = GpuSimulation::shard(
            &ctx,
            &crowd,
            &BodySource::given(&crowd.bodies),
            GpuOptions::default(),
            0,
        )
        .unwrap();
        assert_eq!(sim.chunk_count(), 11);
        let mut expected = Vec::new();
        let mut ids = Vec::new();
        for _ in 0..4 {
            sim.step(3).unwrap();
            expected.push(sim.bodies().unwrap());
            ids.push(sim.request_states().unwrap());
        }
        // Four requests, two staging sets: the two oldest were moved to host memory.
        let on_host = sim
            .readback
            .pending
            .iter()
            .filter(|p| matches!(p.contents, super::Contents::OnHost(_)))
            .count();
        assert_eq!(on_host, 2);
        for (id, expected) in ids.into_iter().zip(expected) {
            assert_eq!(sim.wait_states(id).unwrap(), expected);
        }
        assert!(sim.readback.pending.is_empty());
        assert!(sim.readback.free.len() <= super::STAGING_SETS);
    }
}
