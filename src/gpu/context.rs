//! Adapter choice and device creation.

use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::gpu::layout::{BodyConstantsGpu, BodyStateGpu};

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
}

/// What `rigid-crowd info` prints about one adapter.
#[derive(Clone, Debug)]
pub struct AdapterSummary {
    /// Name, backend, device type and driver.
    pub info: wgpu::AdapterInfo,
    /// The adapter's limits.
    pub limits: wgpu::Limits,
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
        })
        .collect()
}

impl AdapterSummary {
    /// The most bodies one chunk of buffers holds; larger crowds take several chunks.
    pub fn bodies_per_binding(&self) -> usize {
        bodies_per_binding(&self.limits)
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

impl GpuContext {
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

    /// A device and queue on `adapter`, with its full limits.
    fn open(adapter: wgpu::Adapter) -> Result<Self> {
        let info = adapter.get_info();
        // A crowd of millions needs far more than the default 128 MiB per storage binding.
        let limits = adapter.limits();
        // Timestamps time the kernel on the device in `rigid-crowd bench`; optional.
        let features = adapter.features()
            & (wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);
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
        Ok(Self {
            adapter,
            device,
            queue,
            info,
            limits,
            uncaptured,
        })
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

    /// The most bodies one chunk of buffers holds; larger crowds take several chunks.
    pub fn bodies_per_binding(&self) -> usize {
        bodies_per_binding(&self.limits)
    }

    /// Reports (and clears) an error that escaped every error scope.
    pub(crate) fn take_uncaptured(&self) -> Result<()> {
        let mut slot = self.uncaptured.lock().unwrap_or_else(|p| p.into_inner());
        match slot.take() {
            Some(message) => Err(Error::Gpu(message)),
            None => Ok(()),
        }
    }
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
fn bodies_per_binding(limits: &wgpu::Limits) -> usize {
    let record = size_of::<BodyStateGpu>().max(size_of::<BodyConstantsGpu>()) as u64;
    (max_binding_bytes(limits) / record).min(u32::MAX as u64) as usize
}

/// wgpu's messages span lines; ours are one line.
pub(crate) fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}
