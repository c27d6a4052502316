//! The step clock in f32: a step count split in two exact f32 integers, so that `cpu` and the
//! GPU kernels (which store the count this way) compute the same time of every step.

/// The f32 time of step `step` (counted from the crowd's clock zero): the step count split
/// in two exact f32 integers, as the GPU stores it (the kernel's `step_time` in
/// shaders/integrate.wgsl computes the same).
#[inline(always)]
pub(crate) fn step_time(step: u64, dt: f32) -> f32 {
    let low = (step % STEPS_PER_OVERFLOW) as f32;
    let high = (step / STEPS_PER_OVERFLOW) as f32;
    low * dt + high * (STEPS_PER_OVERFLOW as f32 * dt)
}

/// Steps counted exactly by one f32 before the count carries (2^24).
pub const STEPS_PER_OVERFLOW: u64 = 1 << 24;
