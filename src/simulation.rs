//! One API over both backends: build from a crowd, `step(n)`, read the bodies back.

use crate::body::Body;
use crate::cpu::CpuSimulation;
use crate::crowd::Crowd;
use crate::error::Result;
use crate::gpu::{GpuContext, GpuOptions, GpuSimulation};

/// Which backend integrates a crowd.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The f64 CPU reference.
    Cpu,
    /// The f32 WGSL kernels on a GPU adapter.
    Gpu,
}

impl Backend {
    /// `cpu` or `gpu`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Gpu => "gpu",
        }
    }
}

#[derive(Debug)]
enum Engine {
    Cpu(CpuSimulation),
    // Boxed: the GPU side holds many wgpu handles, the CPU side a few vectors.
    Gpu(Box<GpuSimulation>),
}

/// A crowd being integrated on one backend.
#[derive(Debug)]
pub struct Simulation {
    engine: Engine,
    dt: f64,
    steps_taken: u64,
}

impl Simulation {
    /// Integrates `crowd` with the f64 CPU reference.
    pub fn cpu(crowd: &Crowd) -> Result<Self> {
        crowd.validate()?;
        Ok(Self {
            engine: Engine::Cpu(CpuSimulation::new(crowd)),
            dt: crowd.dt,
            steps_taken: 0,
        })
    }

    /// Integrates `crowd` on the GPU of `ctx` with the default kernel options; fails if it
    /// does not fit the adapter's memory.
    pub fn gpu(crowd: &Crowd, ctx: &GpuContext) -> Result<Self> {
        Self::gpu_with_options(crowd, ctx, GpuOptions::default())
    }

    /// Integrates `crowd` on the GPU of `ctx` with the kernel built per `options`.
    pub fn gpu_with_options(crowd: &Crowd, ctx: &GpuContext, options: GpuOptions) -> Result<Self> {
        Ok(Self {
            engine: Engine::Gpu(Box::new(GpuSimulation::new(ctx, crowd, options)?)),
            dt: crowd.dt,
            steps_taken: 0,
        })
    }

    /// Integrates `crowd` on `backend`, opening the best GPU adapter if needed.
    pub fn new(crowd: &Crowd, backend: Backend) -> Result<Self> {
        match backend {
            Backend::Cpu => Self::cpu(crowd),
            Backend::Gpu => Self::gpu(crowd, &GpuContext::new()?),
        }
    }

    /// The backend in use.
    pub fn backend(&self) -> Backend {
        match self.engine {
            Engine::Cpu(_) => Backend::Cpu,
            Engine::Gpu(_) => Backend::Gpu,
        }
    }

    /// Advances every body by `steps` steps. On the GPU this only queues the work.
    pub fn step(&mut self, steps: u64) -> Result<()> {
        match &mut self.engine {
            Engine::Cpu(sim) => sim.step(steps),
            Engine::Gpu(sim) => sim.step(steps)?,
        }
        self.steps_taken += steps;
        Ok(())
    }

    /// Waits until all queued steps are done (a no-op on the CPU); use before timing.
    pub fn finish(&mut self) -> Result<()> {
        match &mut self.engine {
            Engine::Cpu(_) => Ok(()),
            Engine::Gpu(sim) => sim.finish(),
        }
    }

    /// The bodies in their current state (a GPU readback on the GPU backend).
    pub fn bodies(&self) -> Result<Vec<Body>> {
        match &self.engine {
            Engine::Cpu(sim) => Ok(sim.bodies().to_vec()),
            Engine::Gpu(sim) => sim.bodies(),
        }
    }

    /// Steps taken so far.
    pub fn steps_taken(&self) -> u64 {
        self.steps_taken
    }

    /// Simulated time so far: `steps_taken * dt`.
    pub fn time(&self) -> f64 {
        self.steps_taken as f64 * self.dt
    }
}
