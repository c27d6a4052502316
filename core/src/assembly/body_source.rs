//! A crowd's bodies as the backends read them: chunk by chunk, in parallel, without ever
//! holding the whole crowd as [`Body`] values when it comes from a recipe.

use crate::model::body::Body;
use crate::model::error::Result;
use std::ops::Range;

use crate::assembly::generate::{GENERATED_CHUNK, GeneratedBodies};

/// Bodies per chunk: a multiple of every backend's block of bodies.
pub const SOURCE_CHUNK: usize = GENERATED_CHUNK;

/// Bodies given as values, followed by bodies generated from a recipe on demand.
pub struct BodySource<'a> {
    given: &'a [Body],
    generated: Option<GeneratedBodies<'a>>,
    /// The crowd index of this source's first body: a multiple of [`SOURCE_CHUNK`], not 0
    /// for one shard of a crowd ([`BodySource::shard`]).
    start: usize,
    count: usize,
}

/// How a crowd of `count` bodies is cut into contiguous shards, one per weight, in
/// proportion to the weights (each device's memory; equal for MPI ranks), on
/// [`SOURCE_CHUNK`] boundaries where the crowd holds at least `chunks_per_shard` chunks a
/// shard, so that generated bodies are made chunk by chunk as in one piece (a boundary is
/// then at most half a chunk from the proportional cut). Every shard holds at least one body
/// (`count` must be at least the number of weights).
pub fn plan_shards(count: usize, weights: &[f64], chunks_per_shard: usize) -> Vec<Range<usize>> {
    let total: f64 = weights.iter().sum();
    let align = if count >= SOURCE_CHUNK * weights.len() * chunks_per_shard {
        SOURCE_CHUNK
    } else {
        1
    };
    let mut ranges = Vec::with_capacity(weights.len());
    let (mut start, mut share) = (0, 0.0);
    for (i, weight) in weights.iter().enumerate() {
        share += weight;
        let end = if i + 1 == weights.len() {
            count
        } else {
            let ideal = (count as f64 * share / total).round() as usize;
            ((ideal + align / 2) / align * align).clamp(start + 1, count - (weights.len() - 1 - i))
        };
        ranges.push(start..end);
        start = end;
    }
    ranges
}

impl<'a> BodySource<'a> {
    /// Exactly `bodies`.
    pub fn given(bodies: &'a [Body]) -> Self {
        Self {
            given: bodies,
            generated: None,
            start: 0,
            count: bodies.len(),
        }
    }

    /// `bodies`, then the bodies of `spec` (validated here).
    pub fn with_generated(
        bodies: &'a [Body],
        spec: &'a crate::assembly::generate::CrowdSpec,
    ) -> Result<Self> {
        Ok(Self {
            given: bodies,
            generated: Some(GeneratedBodies::new(spec, bodies.len())?),
            start: 0,
            count: bodies.len() + spec.count,
        })
    }

    /// Number of bodies.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are no bodies.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Calls `visit(index of the chunk's first body, its bodies)` for chunk `chunk`:
    /// given bodies are lent as they are, generated ones made into a buffer first.
    pub fn with_chunk<T>(
        &self,
        chunk: usize,
        visit: impl FnOnce(usize, &[Body]) -> T,
    ) -> Result<T> {
        let first = self.start + chunk * SOURCE_CHUNK;
        let end = (first + SOURCE_CHUNK).min(self.start + self.count);
        if end <= self.given.len() {
            return Ok(visit(first - self.start, &self.given[first..end]));
        }
        let mut bodies = Vec::with_capacity(end - first);
        bodies.extend_from_slice(&self.given[first.min(self.given.len())..]);
        let generated = self
            .generated
            .as_ref()
            .expect("bodies past the given ones are generated");
        // The generated chunks line up with these: the one holding body `end - 1`.
        let last_generated = end - 1 - self.given.len();
        generated.generate_chunk(generated.chunk_of(last_generated), &mut bodies)?;
        debug_assert_eq!(bodies.len(), end - first);
        Ok(visit(first - self.start, &bodies))
    }

    /// The bodies `range` (of this source, which starts the crowd) as a source of their own,
    /// counted from 0, when the chunks line up: `range` starts on a multiple of
    /// [`SOURCE_CHUNK`] and ends on one or at the crowd's end (a generated chunk is made
    /// whole); else `None` (see [`BodySource::collect_range`]).
    pub fn shard(&self, range: std::ops::Range<usize>) -> Option<BodySource<'a>> {
        debug_assert!(self.start == 0 && range.end <= self.count);
        let lines_up = range.start.is_multiple_of(SOURCE_CHUNK)
            && (range.end.is_multiple_of(SOURCE_CHUNK) || range.end == self.count);
        lines_up.then(|| BodySource {
            given: self.given,
            generated: self.generated.clone(),
            start: range.start,
            count: range.len(),
        })
    }

    /// The bodies `range` as values: for a shard that does not start on a chunk boundary
    /// (only in crowds too small to split on them).
    pub fn collect_range(&self, range: std::ops::Range<usize>) -> Result<Vec<Body>> {
        let mut bodies = Vec::with_capacity(range.len());
        for chunk in range.start / SOURCE_CHUNK..range.end.div_ceil(SOURCE_CHUNK) {
            self.with_chunk(chunk, |first, chunk_bodies| {
                for (i, body) in (first..).zip(chunk_bodies) {
                    if range.contains(&i) {
                        bodies.push(*body);
                    }
                }
            })?;
        }
        Ok(bodies)
    }
}
