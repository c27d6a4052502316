//! Device-side timing with timestamp queries: each submission's compute pass writes a
//! timestamp at its start and end; the sum of the intervals is the kernel time.

use std::time::{Duration, Instant};

use crate::backends::gpu::device::context::GpuContext;
use crate::backends::gpu::device::readback::read_buffer;
use crate::model::error::Result;

/// Timestamp queries of up to `passes` compute passes.
#[derive(Debug)]
pub(crate) struct PassTimer {
    queries: wgpu::QuerySet,
    resolved: wgpu::Buffer,
    passes: u32,
}

impl PassTimer {
    /// `None` where the adapter has no timestamp queries or `passes` exceeds a query set.
    pub fn new(ctx: &GpuContext, passes: u32) -> Option<Self> {
        if !ctx.has_timestamps() || passes == 0 || passes > wgpu::QUERY_SET_MAX_QUERIES / 2 {
            return None;
        }
        let queries = ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("pass timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: 2 * passes,
        });
        let resolved = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("resolved timestamps"),
            size: 2 * passes as u64 * 8,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        Some(Self {
            queries,
            resolved,
            passes,
        })
    }

    /// Timestamp writes for pass `index`.
    pub fn writes(&self, index: u32) -> wgpu::ComputePassTimestampWrites<'_> {
        wgpu::ComputePassTimestampWrites {
            query_set: &self.queries,
            beginning_of_pass_write_index: Some(2 * index),
            end_of_pass_write_index: Some(2 * index + 1),
        }
    }

    /// Resolves pass `index`'s two timestamps; call after the pass, in the same encoder.
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder, index: u32) {
        // Resolve offsets must be 256-byte aligned, so the whole set is resolved at the
        // last pass; earlier passes' queries stay valid until then.
        if index + 1 == self.passes {
            encoder.resolve_query_set(&self.queries, 0..2 * self.passes, &self.resolved, 0);
        }
    }

    /// The summed duration of every pass (waits for the readback).
    pub fn total(&self, ctx: &GpuContext) -> Result<Duration> {
        let ticks: Vec<u64> = read_buffer(ctx, &self.resolved, 2 * self.passes as usize)?;
        Ok(ticks
            .chunks_exact(2)
            .map(|pair| elapsed(ctx, pair[0], pair[1]))
            .sum())
    }
}

/// The time between two timestamps of `ctx`'s queue.
fn elapsed(ctx: &GpuContext, start: u64, end: u64) -> Duration {
    let nanoseconds = end.saturating_sub(start) as f64 * ctx.queue.get_timestamp_period() as f64;
    Duration::from_secs_f64(nanoseconds * 1e-9)
}

/// The adapter's copy bandwidth: bytes read plus bytes written per second by
/// `copy_buffer_to_buffer` of `bytes` bytes, the median of `repeats` copies.
/// Timed by timestamp queries inside the encoder where the adapter has them, else by
/// submit-and-wait wall clock (the second value says which: true for device time).
/// Only `rigid-crowd bench` measures it.
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) fn copy_bandwidth(ctx: &GpuContext, bytes: u64, repeats: usize) -> Result<(f64, bool)> {
    let bytes = bytes.clamp(4, ctx.limits().max_buffer_size) / 4 * 4;
    let buffer = |label| {
        ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes,
            usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    };
    let (source, target) = (buffer("copy source"), buffer("copy target"));
    let inside_encoders = ctx.has_timestamps_inside_encoders();
    let queries = inside_encoders.then(|| {
        ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("copy timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        })
    });
    let resolved = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("resolved copy timestamps"),
        size: 16,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let mut seconds = Vec::with_capacity(repeats);
    // One untimed copy first: the first touch of fresh memory is slower.
    for round in 0..=repeats.max(1) {
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("copy bandwidth"),
            });
        if let Some(q) = &queries {
            encoder.write_timestamp(q, 0);
        }
        encoder.copy_buffer_to_buffer(&source, 0, &target, 0, bytes);
        if let Some(q) = &queries {
            encoder.write_timestamp(q, 1);
            encoder.resolve_query_set(q, 0..2, &resolved, 0);
        }
        let start = Instant::now();
        ctx.queue.submit([encoder.finish()]);
        ctx.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| crate::Error::Gpu(format!("waiting for a copy: {e}")))?;
        let wall = start.elapsed().as_secs_f64();
        let seconds_taken = if queries.is_some() {
            let ticks: Vec<u64> = read_buffer(ctx, &resolved, 2)?;
            elapsed(ctx, ticks[0], ticks[1]).as_secs_f64()
        } else {
            wall
        };
        if round > 0 {
            seconds.push(seconds_taken);
        }
    }
    ctx.take_uncaptured()?;
    seconds.sort_by(f64::total_cmp);
    let median = seconds[seconds.len() / 2].max(1e-12);
    Ok((2.0 * bytes as f64 / median, inside_encoders))
}
