//! The list of bodies the plain kernel hands over near a plane (shaders/near_list.wgsl), and
//! each fused dispatch's two dispatches around it: every body's steps (`integrate`, which
//! lists the bodies that come near a plane and counts the workgroups they need), then the
//! listed bodies' remaining steps with contacts (`integrate_near`, dispatched indirectly
//! over those workgroups: none where no body came near a plane). A body far from every
//! plane never runs the contact code, and the bodies near one run it apart from the others.
//! The list's two headers take turns from one fused dispatch to the next, each `integrate`
//! emptying the one the next fills.

use std::sync::atomic::{AtomicU32, Ordering};

use wgpu::util::DeviceExt;

use crate::backends::gpu::device::bindings::{bind_buffer_ranges, near_bind_group_layout};
use crate::backends::gpu::device::pipeline::NearPipelines;

/// Bytes of one header: `integrate_near`'s workgroups in x, y and z, the counts at the
/// list's front and back, and three unused (near_list.wgsl).
const HEADER_BYTES: u64 = 32;

/// Both headers, empty, with their workgroups in y and z 1 for good: the list's start.
const EMPTY_HEADERS: [u32; 16] = [0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0];

/// Bytes of one entry: a body's chunk index and the step it resumes at.
const ENTRY_BYTES: u64 = 8;

/// The list's buffer, and each kernel's bind group for each header.
#[derive(Debug)]
pub(crate) struct NearList {
    /// The headers, then the entries; also `integrate_near`'s indirect arguments.
    list: wgpu::Buffer,
    /// `integrate`'s group 1, filling header 0 or 1.
    fill: [wgpu::BindGroup; 2],
    /// `integrate_near`'s group 1, taking header 0 or 1.
    take: [wgpu::BindGroup; 2],
    /// The header the next fused dispatch fills (an atomic only so that a simulation stays
    /// `Sync`; the dispatches are encoded in order).
    header: AtomicU32,
}

impl NearList {
    /// A list that holds `capacity` bodies (at least the largest chunk's, since each body is
    /// handed over at most once a dispatch), its headers written through `queue`.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, capacity: usize) -> Self {
        let bytes = HEADER_BYTES * 2 + ENTRY_BYTES * capacity.max(1) as u64;
        let list = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("bodies near a plane"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::INDIRECT
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        queue.write_buffer(&list, 0, bytemuck::cast_slice(&EMPTY_HEADERS));
        // Parity 0 at offset 0, parity 1 at the least offset a uniform binding may start at.
        let stride = device.limits().min_uniform_buffer_offset_alignment;
        let mut parities = vec![0u32; 2 * stride as usize / 4];
        parities[stride as usize / 4] = 1;
        let parities = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("near list parities"),
            contents: bytemuck::cast_slice(&parities),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let group = |takes: bool, header: u32| {
            let parity = wgpu::BufferBinding {
                buffer: &parities,
                offset: u64::from(header * stride),
                size: wgpu::BufferSize::new(4),
            };
            let layout = near_bind_group_layout(device, takes);
            let label = if takes {
                "near list, taken"
            } else {
                "near list, filled"
            };
            bind_buffer_ranges(
                device,
                label,
                &layout,
                &[parity, list.as_entire_buffer_binding()],
            )
        };
        Self {
            fill: [group(false, 0), group(false, 1)],
            take: [group(true, 0), group(true, 1)],
            list,
            header: AtomicU32::new(0),
        }
    }

    /// Binds the list as group 1 of `pass`, whose plain kernel hands contacts over.
    pub fn bind(&self, pass: &mut wgpu::ComputePass<'_>) {
        pass.set_bind_group(
            1,
            &self.fill[self.header.load(Ordering::Relaxed) as usize],
            &[],
        );
    }

    /// One fused dispatch of a chunk bound as `bindings`, over `grid` workgroups:
    /// `integrate`, then the bodies it listed. `integrate` is the pass's pipeline after.
    pub fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        (integrate, near): (&wgpu::ComputePipeline, &NearPipelines),
        (bindings, grid): (&wgpu::BindGroup, (u32, u32)),
    ) {
        let header = self.header.load(Ordering::Relaxed);
        pass.set_pipeline(integrate);
        pass.set_bind_group(0, bindings, &[]);
        pass.set_bind_group(1, &self.fill[header as usize], &[]);
        pass.dispatch_workgroups(grid.0, grid.1, 1);
        pass.set_pipeline(&near.integrate_near);
        pass.set_bind_group(0, bindings, &[]);
        pass.set_bind_group(1, &self.take[header as usize], &[]);
        pass.dispatch_workgroups_indirect(&self.list, u64::from(header) * HEADER_BYTES);
        self.header.store(1 - header, Ordering::Relaxed);
        pass.set_pipeline(integrate);
        self.bind(pass);
    }
}

#[cfg(test)]
mod tests {
    use glam::DVec3;

    use crate::backends::gpu::GpuContext;
    use crate::{Backend, Crowd, CrowdSpec, Force, ForceKind, Plane, ShapeKind, Simulation};

    /// Bodies of every shape raining onto a floor and a slanted wall, in chunks of 64 bodies
    /// (32 in f64), over steps taken in three calls of odd lengths: the list's headers take
    /// turns across chunks, across fused and single dispatches and across submissions, and
    /// every chunk's bodies near a plane are taken where they are listed. `gpu` gives `cpu`'s
    /// bits and `gpu-f64` `cpu-ref`'s. It fails if a header is never emptied, or if the
    /// headers do not take turns (both checked).
    #[test]
    fn bodies_near_planes_in_several_chunks_take_the_references_steps() {
        let ctx = GpuContext::new().expect("GPU tests need an adapter");
        let small = ctx.with_max_binding_bytes(64 * 64);
        let spec = CrowdSpec {
            region: [[-2.0, -2.0, 0.5], [2.0, 2.0, 3.0]],
            size: [0.1, 0.3],
            shapes: ShapeKind::EVERY.to_vec(),
            ..CrowdSpec::new(300, 17)
        };
        let crowd = Crowd::new(spec.generate().unwrap(), 1e-3)
            .with_force(Force::on_all(ForceKind::Gravity {
                acceleration: DVec3::new(0.0, 0.0, -9.81),
            }))
            .with_plane(Plane::ground(0.4, 0.5))
            .with_plane(Plane::through(
                DVec3::new(-2.0, 0.0, 0.0),
                DVec3::new(1.0, 0.2, 0.6),
                0.5,
                0.2,
            ));
        let calls = [5, 803, 17];
        let run = |backend: Backend| {
            let mut sim = Simulation::on_backend(&crowd, backend, &small).unwrap();
            if backend.gpu_precision().is_some() {
                assert!(sim.gpu_chunks().len() >= 5, "{}", sim.gpu_chunks().len());
            }
            for steps in calls {
                sim.step(steps).unwrap();
            }
            sim.bodies().unwrap()
        };
        for (gpu, cpu) in [
            (Backend::Gpu, Backend::FastCpu),
            (Backend::GpuF64, Backend::Reference),
        ] {
            let (ours, theirs) = (run(gpu), run(cpu));
            let landed = theirs.iter().filter(|b| b.state.position.z < 0.45).count();
            assert!(
                landed > 150,
                "{landed} of 300 bodies came down to the floor"
            );
            let differing = ours
                .iter()
                .zip(&theirs)
                .filter(|(a, b)| a.state != b.state)
                .count();
            assert_eq!(
                differing, 0,
                "{gpu:?} against {cpu:?}: {differing} bodies differ"
            );
        }
    }

    /// More bodies near a plane than `integrate_near` has workgroups: 70,000 bodies of the
    /// five shapes standing on a floor, one to a workgroup, so that the list's two ends need
    /// more than the 65,535 workgroups it is dispatched over at most, and each invocation
    /// takes entries a stride apart, across the padding between the ends. `gpu` gives
    /// `cpu`'s bits for every body (it fails if the stride loop is taken out: checked). Built
    /// with the command line's features, whose `bench` generates the pile.
    #[cfg(feature = "cli")]
    #[test]
    fn more_bodies_near_planes_than_workgroups_are_each_taken_once() {
        let ctx = GpuContext::new().expect("GPU tests need an adapter");
        let crowd = crate::bench::Workload::Resting.crowd(70_000, 3).unwrap();
        let options = crate::gpu::GpuOptions {
            workgroup_size: 1,
            steps_per_dispatch: 2,
            ..Default::default()
        };
        let mut gpu = Simulation::gpu_with_options(&crowd, &ctx, options).unwrap();
        let mut cpu = Simulation::on_backend(&crowd, Backend::FastCpu, &ctx).unwrap();
        for sim in [&mut gpu, &mut cpu] {
            sim.step(3).unwrap();
        }
        let (ours, theirs) = (gpu.bodies().unwrap(), cpu.bodies().unwrap());
        let moved = (theirs.iter().zip(&crowd.bodies))
            .filter(|(now, start)| now.state != start.state)
            .count();
        assert!(moved > 60_000, "only {moved} bodies moved on cpu");
        let differing = (ours.iter().zip(&theirs))
            .filter(|(a, b)| a.state != b.state)
            .count();
        assert_eq!(differing, 0, "{differing} of 70,000 bodies differ from cpu");
    }
}
