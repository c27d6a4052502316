//! A crowd's bodies as the backends read them: chunk by chunk, in parallel, without ever
//! holding the whole crowd as [`Body`] values when it comes from a recipe.

use crate::body::Body;
use crate::error::Result;
use crate::generate::{GENERATED_CHUNK, GeneratedBodies};

/// Bodies per chunk: a multiple of every backend's block of bodies.
pub(crate) const SOURCE_CHUNK: usize = GENERATED_CHUNK;

/// Bodies given as values, followed by bodies generated from a recipe on demand.
pub(crate) struct BodySource<'a> {
    given: &'a [Body],
    generated: Option<GeneratedBodies<'a>>,
    count: usize,
}

impl<'a> BodySource<'a> {
    /// Exactly `bodies`.
    pub fn given(bodies: &'a [Body]) -> Self {
        Self {
            given: bodies,
            generated: None,
            count: bodies.len(),
        }
    }

    #[cfg(feature = "cli")]
    /// `bodies`, then the bodies of `spec` (validated here).
    pub fn with_generated(bodies: &'a [Body], spec: &'a crate::CrowdSpec) -> Result<Self> {
        Ok(Self {
            given: bodies,
            generated: Some(GeneratedBodies::new(spec, bodies.len())?),
            count: bodies.len() + spec.count,
        })
    }

    /// Number of bodies.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Calls `visit(index of the chunk's first body, its bodies)` for chunk `chunk`:
    /// given bodies are lent as they are, generated ones made into a buffer first.
    pub fn with_chunk<T>(
        &self,
        chunk: usize,
        visit: impl FnOnce(usize, &[Body]) -> T,
    ) -> Result<T> {
        let first = chunk * SOURCE_CHUNK;
        let end = (first + SOURCE_CHUNK).min(self.count);
        if end <= self.given.len() {
            return Ok(visit(first, &self.given[first..end]));
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
        Ok(visit(first, &bodies))
    }
}
