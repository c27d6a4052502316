//! Integration pipelines kept per device, keyed by everything that changes the compiled
//! kernel: many simulations of the same kind share one pipeline, and a crowd of a kind seen
//! before skips the driver's compilation.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, LockResult, Mutex, MutexGuard, PoisonError};

use crate::backends::gpu::kernel::kernel_spec::KernelSpec;
use crate::model::error::Result;
use crate::model::precision::Precision;

/// An entry point of the plain kernel's module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum KernelEntry {
    /// `integrate`: every body's steps (a tangent kernel has this one alone).
    Integrate,
    /// `integrate_near`: the remaining steps of the bodies handed over, near a plane.
    IntegrateNear,
}

impl KernelEntry {
    /// Its name in the kernel's WGSL.
    pub fn name(self) -> &'static str {
        match self {
            KernelEntry::Integrate => "integrate",
            KernelEntry::IntegrateNear => "integrate_near",
        }
    }
}

/// What a compiled integration pipeline depends on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PipelineKey {
    pub spec: KernelSpec,
    pub precision: Precision,
    pub workgroup_size: u32,
    pub trusted: bool,
    /// The custom force's WGSL, which is part of the module.
    pub custom_force: Option<String>,
    /// A tangent kernel's dual width and the inputs its block moves
    /// over the run (closed over the physics, so blocks that move the same share a kernel);
    /// `None` for the plain kernel.
    pub tangent_block: Option<(usize, crate::physics::dual_wgsl::MovingNumbers)>,
    /// f32 divisions and square roots taken in f64 (`GpuOptions::f32_divisions_in_f64`).
    pub divisions_in_f64: bool,
    /// The module's entry point the pipeline runs.
    pub entry: KernelEntry,
}

/// The pipelines built on one device so far.
pub(crate) type PipelineCache = BuildOnce<PipelineKey, wgpu::ComputePipeline>;

/// Values built once per key, however many threads ask for a key at once: the first builds
/// it and the others wait for that build rather than compiling the same kernel beside it
/// (a minute each on a software driver). Different keys build at the same time.
#[derive(Debug)]
pub(crate) struct BuildOnce<K, V> {
    /// Each key's slot; a slot's own lock is held while its value is built.
    slots: Mutex<HashMap<K, Arc<Mutex<Option<V>>>>>,
}

impl<K, V> Default for BuildOnce<K, V> {
    fn default() -> Self {
        Self {
            slots: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Eq + Hash, V: Clone> BuildOnce<K, V> {
    /// The value for `key`, built by `build` the first time it is asked for; a thread asking
    /// while another builds it waits and gets that value. A build that fails (or panics) is
    /// not kept: the next request, a waiting one included, builds again and so reports the
    /// same error.
    pub fn get_or_build(&self, key: K, build: impl FnOnce() -> Result<V>) -> Result<V> {
        let slot = Arc::clone(recover(self.slots.lock()).entry(key).or_default());
        let mut value = recover(slot.lock());
        if let Some(value) = value.as_ref() {
            return Ok(value.clone());
        }
        let built = build()?;
        *value = Some(built.clone());
        Ok(built)
    }

    /// How many values are kept.
    pub fn len(&self) -> usize {
        recover(self.slots.lock())
            .values()
            .filter(|slot| recover(slot.lock()).is_some())
            .count()
    }
}

/// A lock's guard, also after a thread panicked holding it: a slot is only ever left empty
/// or holding a whole value.
fn recover<T>(guard: LockResult<MutexGuard<'_, T>>) -> MutexGuard<'_, T> {
    guard.unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::error::Error;
    use std::sync::Barrier;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn threads_asking_for_one_key_at_once_build_it_once() {
        let cache = BuildOnce::<u32, usize>::default();
        let builds = AtomicUsize::new(0);
        let start = Barrier::new(4);
        let values: Vec<usize> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    scope.spawn(|| {
                        start.wait();
                        cache
                            .get_or_build(7, || {
                                // Long enough that the other threads ask while it builds.
                                std::thread::sleep(Duration::from_millis(200));
                                Ok(builds.fetch_add(1, Ordering::SeqCst) + 100)
                            })
                            .unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(builds.load(Ordering::SeqCst), 1);
        assert_eq!(values, vec![100; 4]);
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn different_keys_build_at_the_same_time() {
        let cache = BuildOnce::<u32, u32>::default();
        // Each build waits for the other's: with one build at a time this would never end.
        let both_building = Barrier::new(2);
        std::thread::scope(|scope| {
            for key in [1, 2] {
                let (cache, both_building) = (&cache, &both_building);
                scope.spawn(move || {
                    let value = cache.get_or_build(key, || {
                        both_building.wait();
                        Ok(key * 10)
                    });
                    assert_eq!(value.unwrap(), key * 10);
                });
            }
        });
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn a_failed_build_is_not_kept() {
        let cache = BuildOnce::<u32, u32>::default();
        let failed = cache.get_or_build(1, || Err(Error::Gpu("no".into())));
        assert!(failed.is_err());
        assert_eq!(cache.len(), 0);
        assert_eq!(cache.get_or_build(1, || Ok(5)).unwrap(), 5);
        // Kept now: a second build is not asked for.
        assert_eq!(cache.get_or_build(1, || Ok(6)).unwrap(), 5);
    }
}
