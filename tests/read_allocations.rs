//! A lean read of one million states into caller-owned arrays allocates nothing on the CPU
//! backends and nothing that grows with the crowd on the GPU (a few wgpu command objects),
//! where `bodies()` allocates 344 bytes a body. One test in this binary: the allocator
//! counts the calling thread only, and nothing else runs beside it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use rigid_crowd::gpu::GpuContext;
use rigid_crowd::{Backend, Crowd, CrowdSpec, Simulation, StateArrays};

struct Counting;

thread_local! {
    static ALLOCATED: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator; only counts on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.with(|a| a.set(a.get() + layout.size()));
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above, that is from `System`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATED.with(|a| a.set(a.get() + new_size));
        // SAFETY: as for `dealloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Bytes the calling thread allocated while running `f`.
fn allocated_by(f: impl FnOnce()) -> usize {
    let before = ALLOCATED.with(Cell::get);
    f();
    ALLOCATED.with(Cell::get) - before
}

/// What a GPU read may allocate, whatever the crowd: wgpu's command encoder, submission
/// and map callbacks.
const GPU_READ_BYTES: usize = 64 << 10;

#[test]
fn reading_a_million_states_into_caller_arrays_allocates_nothing_that_grows_with_the_crowd() {
    const BODIES: usize = 1_000_000;
    let crowd = Crowd::new(CrowdSpec::new(BODIES, 3).generate().unwrap(), 1e-3);
    let ctx = GpuContext::new().unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"));
    let mut arrays = StateArrays::<f32>::state(BODIES).with_velocities();
    for backend in [Backend::Reference, Backend::FastCpu, Backend::Gpu] {
        let mut sim = Simulation::on_backend(&crowd, backend, &ctx).unwrap();
        sim.step(1).unwrap();
        // The first GPU read makes the staging buffers the later ones reuse.
        sim.read_states(arrays.as_mut()).unwrap();
        sim.step(1).unwrap();
        let lean = allocated_by(|| sim.read_states(arrays.as_mut()).unwrap());
        let full = allocated_by(|| assert_eq!(sim.bodies().unwrap().len(), BODIES));
        let bound = if backend.gpu_precision().is_some() {
            GPU_READ_BYTES
        } else {
            0
        };
        assert!(
            lean <= bound,
            "{}: a lean read allocated {lean} bytes (bound {bound})",
            backend.name()
        );
        // The counter sees the full read's 344 bytes a body, so it would see a lean one's.
        assert!(
            full >= BODIES * 344,
            "{}: bodies() allocated {full}",
            backend.name()
        );
    }
}
