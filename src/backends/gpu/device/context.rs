//! Adapter choice and device creation.

use std::sync::{Arc, Mutex};

use crate::backends::gpu::device::bindings::PLAIN_STORAGE_BUFFERS;
use crate::backends::gpu::device::pipeline_cache::PipelineCache;
use crate::backends::gpu::kernel::layout::RecordSizes;
use crate::model::error::{Error, Result};
use crate::model::precision::Precision;

/// How to get a GPU adapter where there is none; part of every "no adapter" message.
pub const NO_ADAPTER_HINT: &str = "install a Vulkan driver (on Linux without a GPU: Mesa's software driver, `apt-get install mesa-vulkan-drivers`)";

/// A device and queue on the chosen adapter, with the adapter's full limits.
#[derive(Clone, Debug)]
pub struct GpuContext {
    adapter: wgpu::Adapter,
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    limits: wgpu::Limits,
    /// The first error nobody captured in a scope; reported by the next checked operation.
    uncaptured: Arc<Mutex<Option<String>>>,
    /// Why the device was lost, once it is.
    lost: Arc<Mutex<Option<String>>>,
    /// Bytes of device memory a crowd may use, where known (see [`GpuContext::memory_budget`]).
    memory_budget: Option<u64>,
    /// The integration pipelines built on this device, shared by its simulations.
    pipelines: Arc<PipelineCache>,
}

/// Caps the device memory a crowd may use (bytes); crowds that need more are refused before
/// anything is allocated. Also how to share a GPU, and how the refusal is tested.
pub const MEMORY_BUDGET_VAR: &str = "RIGID_CROWD_GPU_MEMORY_BUDGET";

/// What `rigid-crowd info` prints about one adapter.
#[derive(Clone, Debug)]
pub struct AdapterSummary {
    /// Name, backend, device type and driver.
    pub info: wgpu::AdapterInfo,
    /// The adapter's limits.
    pub limits: wgpu::Limits,
    /// Its largest device-local memory heap, where the backend reports it (bytes).
    pub device_memory: Option<u64>,
    /// Whether it runs f64 kernels (`SHADER_F64`): the `gpu-f64` backend.
    pub supports_f64: bool,
}

/// Backends searched: `WGPU_BACKEND` if set, else the primary ones (Vulkan, Metal, DX12).
/// NOTE: OpenGL is left out by default: its compute support is second-class, and probing
/// it prints driver noise on machines without a display.
fn backends() -> wgpu::Backends {
    wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY)
}

fn new_instance() -> wgpu::Instance {
    let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    descriptor.backends = backends();
    // wgpu checks an indirect dispatch's arguments with a compute pass of its own before it,
    // which on lavapipe cost as much as a dispatch of the kernel (about 65 us) for every
    // fused dispatch with planes. Ours are in range by construction: `hand_over` counts
    // `integrate_near`'s workgroups up to MAX_NEAR_GROUPS (shaders/near_list.wgsl), the least
    // every device allows in one dimension, and the other two are 1. `WGPU_VALIDATION_INDIRECT_CALL=1`
    // turns the check back on.
    descriptor.flags = (wgpu::InstanceFlags::from_build_config()
        - wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL)
        .with_env();
    wgpu::Instance::new(descriptor)
}

/// Every adapter on the searched backends (`WGPU_BACKEND` chooses them).
pub fn list_adapters() -> Vec<AdapterSummary> {
    let instance = new_instance();
    pollster::block_on(instance.enumerate_adapters(backends()))
        .into_iter()
        .map(|a| AdapterSummary {
            info: a.get_info(),
            limits: a.limits(),
            device_memory: device_memory(&a),
            supports_f64: a.features().contains(wgpu::Features::SHADER_F64),
        })
        .collect()
}

impl AdapterSummary {
    /// The most bodies one chunk of buffers holds in `precision`; larger crowds take
    /// several chunks.
    pub fn bodies_per_binding(&self, precision: Precision) -> usize {
        bodies_per_binding(&self.limits, precision)
    }

    /// The largest crowd (without per-body forces) its device memory holds in `precision`,
    /// where known.
    pub fn largest_crowd(&self, precision: Precision) -> Option<usize> {
        self.largest_crowd_with(precision, 0)
    }

    /// [`largest_crowd`](Self::largest_crowd) when each body also takes `extra` bytes (its
    /// tangents, say).
    pub fn largest_crowd_with(&self, precision: Precision, extra: u64) -> Option<usize> {
        let per_body = RecordSizes::of(precision).device_bytes_per_body() + extra;
        (self.device_memory).map(|bytes| (bytes / per_body) as usize)
    }
}

/// The adapter named by `WGPU_ADAPTER_NAME` (a case-insensitive substring), else the
/// highest-performance one (`WGPU_POWER_PREF` may say otherwise) that can present to
/// `surface`, if one is given.
fn choose_adapter(
    instance: &wgpu::Instance,
    surface: Option<&wgpu::Surface>,
) -> Result<wgpu::Adapter> {
    if let Ok(wanted) = std::env::var("WGPU_ADAPTER_NAME") {
        let adapters = pollster::block_on(instance.enumerate_adapters(backends()));
        let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
        return adapters
            .into_iter()
            .find(|a| {
                a.get_info()
                    .name
                    .to_lowercase()
                    .contains(&wanted.to_lowercase())
            })
            .ok_or_else(|| {
                Error::NoAdapter(format!(
                    "WGPU_ADAPTER_NAME=`{wanted}` matches no adapter (found: {})",
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ))
            });
    }
    let options = wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::from_env()
            .unwrap_or(wgpu::PowerPreference::HighPerformance),
        force_fallback_adapter: false,
        compatible_surface: surface,
        ..Default::default()
    };
    pollster::block_on(instance.request_adapter(&options))
        .map_err(|e| Error::NoAdapter(format!("no GPU adapter found ({e}): {NO_ADAPTER_HINT}")))
}

/// How many devices to spread a crowd over (`--devices N|all`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceCount {
    /// One device on every adapter (software adapters only when there is no other).
    All,
    /// This many, opened round-robin over the adapters: on a machine with one adapter, all
    /// on it.
    Count(usize),
}

impl std::str::FromStr for DeviceCount {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, String> {
        match text {
            "all" => Ok(DeviceCount::All),
            n => match n.parse::<usize>() {
                Ok(0) | Err(_) => Err(format!(
                    "expected a count of at least 1 or `all` (got `{n}`)"
                )),
                Ok(n) => Ok(DeviceCount::Count(n)),
            },
        }
    }
}

/// The adapters devices are opened on, best first: `WGPU_ADAPTER_NAME`'s if set, hardware
/// before software.
fn device_adapters(instance: &wgpu::Instance) -> Result<Vec<wgpu::Adapter>> {
    let mut adapters = pollster::block_on(instance.enumerate_adapters(backends()));
    if let Ok(wanted) = std::env::var("WGPU_ADAPTER_NAME") {
        let wanted = wanted.to_lowercase();
        adapters.retain(|a| a.get_info().name.to_lowercase().contains(&wanted));
    }
    let software = |a: &wgpu::Adapter| a.get_info().device_type == wgpu::DeviceType::Cpu;
    adapters.sort_by_key(software);
    if adapters.iter().any(|a| !software(a)) {
        adapters.retain(|a| !software(a));
    }
    if adapters.is_empty() {
        return Err(Error::NoAdapter(format!(
            "no GPU adapter found: {NO_ADAPTER_HINT}"
        )));
    }
    Ok(adapters)
}

impl GpuContext {
    /// Opens the devices a crowd spread over several is integrated on (see
    /// [`Simulation::on_devices`](crate::Simulation::on_devices)): `count` of them
    /// round-robin over the adapters, or one per adapter.
    pub fn open_devices(count: DeviceCount) -> Result<Vec<GpuContext>> {
        let instance = new_instance();
        let adapters = device_adapters(&instance)?;
        let count = match count {
            DeviceCount::All => adapters.len(),
            DeviceCount::Count(n) => n,
        };
        (0..count)
            .map(|i| Self::open(adapters[i % adapters.len()].clone()))
            .collect()
    }

    /// Opens a device on the adapter `index` (counted round-robin over the adapters, in the
    /// order of [`open_devices`](Self::open_devices)): what an MPI rank opens with its index
    /// on its node, so that one rank per GPU takes every GPU of a node.
    pub fn open_adapter(index: usize) -> Result<Self> {
        let instance = new_instance();
        let adapters = device_adapters(&instance)?;
        Self::open(adapters[index % adapters.len()].clone())
    }

    /// Opens the best adapter (see [`list_adapters`]) with its full limits.
    pub fn new() -> Result<Self> {
        let instance = new_instance();
        let adapter = choose_adapter(&instance, None)?;
        Self::open(adapter)
    }

    /// Opens the best adapter that can present to `window` (as [`GpuContext::new`] chooses,
    /// among those), and returns the window's surface with it; for interactive viewers.
    pub fn with_surface(
        window: impl Into<wgpu::SurfaceTarget<'static>>,
    ) -> Result<(Self, wgpu::Surface<'static>)> {
        let instance = new_instance();
        let surface = instance.create_surface(window).map_err(|e| {
            Error::Gpu(one_line(&format!("could not create a window surface: {e}")))
        })?;
        let adapter = choose_adapter(&instance, Some(&surface))?;
        Ok((Self::open(adapter)?, surface))
    }

    /// Runs crowds on a device the caller already has (a renderer's, a game engine's, a
    /// pipeline of their own), made from `adapter`. The device keeps its owner's
    /// uncaptured-error and device-lost handlers: nothing is installed on it. Our operations
    /// report what goes wrong through their `Result`s (pipeline and buffer creation and the
    /// queueing of steps run in error scopes, and a failed wait or read is an error); a device loss shows as such an
    /// error, and the owner's lost callback hears of it.
    ///
    /// The kernels use what the device was created with: its limits bound the crowd's chunks
    /// and the workgroup size, `SHADER_F64` enables `gpu-f64`, `TIMESTAMP_QUERY` device-side
    /// timing. A device without what every kernel needs (compute shaders, enough storage
    /// buffers per stage) is refused with an error naming what is missing.
    pub fn from_device(
        adapter: wgpu::Adapter,
        device: wgpu::Device,
        queue: wgpu::Queue,
    ) -> Result<Self> {
        let info = adapter.get_info();
        let limits = device.limits();
        check_device(&adapter, &limits)?;
        Ok(Self {
            memory_budget: memory_budget(&adapter)?,
            adapter,
            device,
            queue,
            info,
            limits,
            uncaptured: Arc::default(),
            lost: Arc::default(),
            pipelines: Arc::default(),
        })
    }

    /// A device and queue on `adapter`, with its full limits.
    fn open(adapter: wgpu::Adapter) -> Result<Self> {
        let info = adapter.get_info();
        let memory_budget = memory_budget(&adapter)?;
        // A crowd of millions needs far more than the default 128 MiB per storage binding.
        let limits = adapter.limits();
        // Timestamps time the kernel on the device in `rigid-crowd bench`; f64 shaders run the
        // `gpu-f64` backend. Both optional.
        // Passthrough shaders, on Vulkan, take the kernel as exact SPIR-V (gpu/exact_spirv.rs).
        let mut features = adapter.features()
            & (wgpu::Features::TIMESTAMP_QUERY
                | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
                | wgpu::Features::SHADER_F64);
        if info.backend == wgpu::Backend::Vulkan {
            features |= adapter.features() & wgpu::Features::PASSTHROUGH_SHADERS;
        }
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("rigid-crowd"),
            required_features: features,
            required_limits: limits.clone(),
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .map_err(|e| Error::Gpu(format!("could not open device on `{}`: {e}", info.name)))?;
        let uncaptured = Arc::new(Mutex::new(None));
        let sink = Arc::clone(&uncaptured);
        // The default handler panics; keep the first message instead and report it as an Error.
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            let mut slot = sink.lock().unwrap_or_else(|p| p.into_inner());
            slot.get_or_insert_with(|| one_line(&e.to_string()));
        }));
        let lost = Arc::new(Mutex::new(None));
        let lost_sink = Arc::clone(&lost);
        device.set_device_lost_callback(move |reason, message| {
            let mut slot = lost_sink.lock().unwrap_or_else(|p| p.into_inner());
            slot.get_or_insert_with(|| match message.trim() {
                "" => format!("{reason:?}"),
                text => one_line(&format!("{text} ({reason:?})")),
            });
        });
        Ok(Self {
            adapter,
            device,
            queue,
            info,
            limits,
            uncaptured,
            lost,
            memory_budget,
            pipelines: Arc::default(),
        })
    }

    /// Bytes of device memory a crowd may use: `RIGID_CROWD_GPU_MEMORY_BUDGET` if set, else
    /// the adapter's largest device-local heap where the backend reports it (Vulkan).
    /// `None`: unknown, and only an allocation that fails reveals a crowd too large.
    pub fn memory_budget(&self) -> Option<u64> {
        self.memory_budget
    }

    /// The integration pipelines built on this device so far.
    pub(crate) fn pipelines(&self) -> &PipelineCache {
        &self.pipelines
    }

    /// How many integration kernels this device has compiled: simulations of one kind (the
    /// same integrator, force kinds, contacts, precision and build options) share one.
    pub fn pipeline_count(&self) -> usize {
        self.pipelines.len()
    }

    /// Whether the device runs f64 kernels (the adapter has `SHADER_F64`).
    pub fn supports_f64(&self) -> bool {
        self.device.features().contains(wgpu::Features::SHADER_F64)
    }

    /// An error naming the missing feature and the adapter unless the device runs kernels
    /// in `precision`.
    pub(crate) fn check_precision(&self, precision: Precision) -> Result<()> {
        if precision == Precision::F64 && !self.supports_f64() {
            return Err(Error::Gpu(format!(
                "gpu-f64 needs the SHADER_F64 feature, which the adapter `{}` does not have \
                 (`rigid-crowd info` lists the adapters that do; `--backend gpu` runs in f32)",
                self.info.name
            )));
        }
        Ok(())
    }

    /// Whether compute passes can write timestamps.
    pub fn has_timestamps(&self) -> bool {
        self.device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    /// Whether command encoders can write timestamps (used to time buffer copies).
    pub fn has_timestamps_inside_encoders(&self) -> bool {
        self.device.features().contains(
            wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS,
        )
    }

    /// The largest storage buffer one binding can see; larger crowds are split in chunks.
    pub fn max_binding_bytes(&self) -> u64 {
        max_binding_bytes(&self.limits)
    }

    /// The adapter in use (for a window surface's capabilities and configuration).
    pub fn adapter(&self) -> &wgpu::Adapter {
        &self.adapter
    }

    /// The queue work is submitted to.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The device buffers and pipelines are made on.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// Name, backend, device type and driver of the adapter in use.
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.info
    }

    /// The device's limits (the adapter's own, not the WebGPU defaults).
    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// One line naming the adapter: `name (backend, device type)`.
    pub fn describe(&self) -> String {
        describe(&self.info)
    }

    /// The most bodies one chunk of buffers holds in `precision`; larger crowds take
    /// several chunks.
    pub fn bodies_per_binding(&self, precision: Precision) -> usize {
        bodies_per_binding(&self.limits, precision)
    }

    /// The same device, but crowds are split as if one binding held only `bytes`: lets a
    /// test cover several chunks with a small crowd.
    #[cfg(test)]
    pub(crate) fn with_max_binding_bytes(&self, bytes: u64) -> Self {
        let mut ctx = self.clone();
        ctx.limits.max_storage_buffer_binding_size = bytes;
        ctx
    }

    /// Destroys the device, as a driver reset or a removed GPU would: every later operation on
    /// this context fails with [`Error::DeviceLost`]. Only in builds with the test-only
    /// feature `fault-injection`.
    #[cfg(feature = "fault-injection")]
    pub fn destroy_device(&self) {
        self.device.destroy();
        // The lost callback runs on the next poll; run it now so every later call sees it.
        let _ = self.device.poll(wgpu::PollType::Poll);
    }

    /// [`Error::DeviceLost`] once the device is gone.
    pub(crate) fn check_lost(&self) -> Result<()> {
        let slot = self.lost.lock().unwrap_or_else(|p| p.into_inner());
        match slot.as_ref() {
            Some(message) => Err(Error::DeviceLost(message.clone())),
            None => Ok(()),
        }
    }

    /// [`Error::DeviceLost`] if the device is gone (the real cause of most failures after a
    /// loss), else [`Error::Gpu`] with `message`.
    pub(crate) fn gpu_error(&self, message: String) -> Error {
        self.check_lost().err().unwrap_or(Error::Gpu(message))
    }

    /// Reports a lost device, or (and clears) an error that escaped every error scope.
    pub(crate) fn take_uncaptured(&self) -> Result<()> {
        self.check_lost()?;
        let mut slot = self.uncaptured.lock().unwrap_or_else(|p| p.into_inner());
        match slot.take() {
            Some(message) => Err(Error::Gpu(message)),
            None => Ok(()),
        }
    }
}

/// [`MEMORY_BUDGET_VAR`] if set, else the adapter's largest device-local heap.
fn memory_budget(adapter: &wgpu::Adapter) -> Result<Option<u64>> {
    match std::env::var(MEMORY_BUDGET_VAR) {
        Ok(text) => Ok(Some(text.trim().parse::<u64>().map_err(|_| {
            Error::invalid(
                MEMORY_BUDGET_VAR,
                format!("must be a byte count (got `{text}`)"),
            )
        })?)),
        Err(_) => Ok(device_memory(adapter)),
    }
}

/// An error naming the first thing a caller's device lacks for the integration kernel.
fn check_device(adapter: &wgpu::Adapter, limits: &wgpu::Limits) -> Result<()> {
    let name = adapter.get_info().name;
    let compute = wgpu::DownlevelFlags::COMPUTE_SHADERS;
    if !adapter.get_downlevel_capabilities().flags.contains(compute) {
        return Err(Error::Gpu(format!(
            "the device on `{name}` cannot run compute shaders (DownlevelFlags::COMPUTE_SHADERS)"
        )));
    }
    let storage = PLAIN_STORAGE_BUFFERS;
    if limits.max_storage_buffers_per_shader_stage < storage {
        return Err(Error::Gpu(format!(
            "the device on `{name}` allows {} storage buffers per shader stage; the integration \
             kernel binds {storage}: create it with `max_storage_buffers_per_shader_stage` of at \
             least {storage}",
            limits.max_storage_buffers_per_shader_stage
        )));
    }
    Ok(())
}

/// The largest device-local memory heap of a Vulkan adapter (the largest heap of any kind
/// on an adapter without one, such as a software driver); `None` on other backends.
fn device_memory(adapter: &wgpu::Adapter) -> Option<u64> {
    // SAFETY: the adapter outlives the guard, and the query only reads properties.
    let hal = unsafe { adapter.as_hal::<wgpu::hal::api::Vulkan>() }?;
    let instance = hal.shared_instance().raw_instance();
    // SAFETY: the physical device belongs to this live instance.
    let properties =
        unsafe { instance.get_physical_device_memory_properties(hal.raw_physical_device()) };
    let heaps = properties.memory_heaps_as_slice();
    const DEVICE_LOCAL: u32 = 1; // VK_MEMORY_HEAP_DEVICE_LOCAL_BIT
    let largest = |local_only: bool| {
        heaps
            .iter()
            .filter(|h| !local_only || h.flags.as_raw() & DEVICE_LOCAL != 0)
            .map(|h| h.size)
            .max()
    };
    largest(true).or_else(|| largest(false))
}

/// `name (backend, device type)`.
pub(crate) fn describe(info: &wgpu::AdapterInfo) -> String {
    format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type)
}

fn max_binding_bytes(limits: &wgpu::Limits) -> u64 {
    limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size)
}

/// The most bodies whose state and constants buffers each fit one storage binding.
fn bodies_per_binding(limits: &wgpu::Limits, precision: Precision) -> usize {
    let record = RecordSizes::of(precision).per_body_record() as u64;
    (max_binding_bytes(limits) / record).min(u32::MAX as u64) as usize
}

/// wgpu's messages span lines; ours are one line.
pub(crate) fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}
