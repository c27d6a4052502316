//! The checkpoint payload: a crowd (bodies with their constants and states, forces, planes,
//! keyframes, integrator, step, clock) and what the run needs to continue, field by field.
//! Every value is stored with its exact bits, so a resumed run starts from the very state the
//! interrupted one had.

use glam::DVec3;

use crate::body::{Body, BodyState};
use crate::checkpoint::bytes::{ByteReader, ByteWriter};
use crate::checkpoint::{Checkpoint, RunPlan};
use crate::crowd::Crowd;
use crate::custom_force::{CustomForce, ExternalLoad};
use crate::error::{Error, Result};
use crate::force::{Force, ForceKind};
use crate::integrator::Integrator;
use crate::mass::{MassProperties, ModelFrame};
use crate::plane::Plane;
use crate::scene::SCENE_VERSION;
use crate::shape::Shape;
use crate::simulation::Backend;

/// Bytes of one body record: mass, inertia, shape tag and parameters, model frame, state.
const BODY_BYTES: usize = 8 + 72 + 1 + 24 + 24 + 32 + 104;
/// Bytes of one external load: force and torque.
const LOAD_BYTES: usize = 48;
/// A `None` force target.
const EVERY_BODY: u64 = u64::MAX;

pub(crate) fn encode(checkpoint: &Checkpoint) -> Vec<u8> {
    let mut w = ByteWriter::default();
    let crowd = &checkpoint.crowd;
    w.u32(SCENE_VERSION);
    w.u8(backend_tag(checkpoint.backend));
    w.string(&checkpoint.adapter);
    w.u8(integrator_tag(crowd.integrator));
    w.f64(crowd.dt);
    w.u64(crowd.start_step);
    w.bool(checkpoint.run.is_some());
    if let Some(run) = &checkpoint.run {
        w.u64(run.end_step);
        w.string(&run.out.to_string_lossy());
        w.u64(run.checkpoint_every);
    }
    w.len(crowd.keyframes.len());
    for table in &crowd.keyframes {
        w.len(table.len());
        for &[t, value] in table {
            w.f64(t);
            w.f64(value);
        }
    }
    w.len(crowd.planes.len());
    for plane in &crowd.planes {
        w.vec3(plane.normal);
        w.f64(plane.offset);
        w.f64(plane.restitution);
        w.f64(plane.friction);
    }
    w.bool(crowd.custom_force.is_some());
    if let Some(custom) = &crowd.custom_force {
        w.string(custom.wgsl());
        w.string(custom.origin());
    }
    w.len(crowd.forces.len());
    for force in &crowd.forces {
        w.u64(force.body.map_or(EVERY_BODY, |b| b as u64));
        encode_force_kind(&mut w, &force.kind);
    }
    w.len(crowd.bodies.len());
    for body in &crowd.bodies {
        encode_body(&mut w, body);
    }
    w.bool(checkpoint.external_loads.is_some());
    if let Some(loads) = &checkpoint.external_loads {
        w.len(loads.len());
        for load in loads {
            w.vec3(load.force);
            w.vec3(load.torque);
        }
    }
    w.bytes
}

pub(crate) fn decode(bytes: &[u8]) -> Result<Checkpoint> {
    let mut r = ByteReader::new(bytes);
    let version = r.u32("scene_version")?;
    if version != SCENE_VERSION {
        return Err(Error::invalid(
            "scene_version",
            format!("holds a version {version} scene; this build reads version {SCENE_VERSION}"),
        ));
    }
    let backend = backend_from_tag(r.u8("backend")?)?;
    let adapter = r.string("adapter")?;
    let integrator = integrator_from_tag(r.u8("integrator")?)?;
    let dt = r.f64("dt")?;
    let step = r.u64("step")?;
    let run = if r.bool("run")? {
        Some(RunPlan {
            end_step: r.u64("run.end_step")?,
            out: r.string("run.out")?.into(),
            checkpoint_every: r.u64("run.checkpoint_every")?,
        })
    } else {
        None
    };
    let tables = r.count(8, "keyframes")?;
    let mut keyframes = Vec::with_capacity(tables);
    for i in 0..tables {
        let field = format!("keyframes[{i}]");
        let n = r.count(16, &field)?;
        let mut table = Vec::with_capacity(n);
        for _ in 0..n {
            table.push([r.f64(&field)?, r.f64(&field)?]);
        }
        keyframes.push(table);
    }
    let n = r.count(48, "planes")?;
    let mut planes = Vec::with_capacity(n);
    for i in 0..n {
        let field = format!("planes[{i}]");
        planes.push(Plane {
            normal: r.vec3(&field)?,
            offset: r.f64(&field)?,
            restitution: r.f64(&field)?,
            friction: r.f64(&field)?,
        });
    }
    let custom_force = if r.bool("custom_force")? {
        let wgsl = r.string("custom_force.wgsl")?;
        let origin = r.string("custom_force.origin")?;
        // A Rust closure cannot be stored: the force comes back GPU-only until the caller
        // attaches its twin again (see `Checkpoint::crowd`).
        Some(CustomForce::gpu_only(wgsl, origin))
    } else {
        None
    };
    let n = r.count(9, "forces")?;
    let mut forces = Vec::with_capacity(n);
    for i in 0..n {
        let field = format!("forces[{i}]");
        let body = match r.u64(&format!("{field}.body"))? {
            EVERY_BODY => None,
            b => Some(usize::try_from(b).map_err(|_| {
                Error::invalid(format!("{field}.body"), format!("{b} is out of range"))
            })?),
        };
        let kind = decode_force_kind(&mut r, &field)?;
        forces.push(Force { kind, body });
    }
    let n = r.count(BODY_BYTES, "bodies")?;
    let mut bodies = Vec::with_capacity(n);
    for i in 0..n {
        bodies.push(decode_body(&mut r, &format!("bodies[{i}]"))?);
    }
    let external_loads = if r.bool("external_loads")? {
        let n = r.count(LOAD_BYTES, "external_loads")?;
        if n != bodies.len() {
            return Err(Error::invalid(
                "external_loads",
                format!("holds {n} loads for {} bodies", bodies.len()),
            ));
        }
        let mut loads = Vec::with_capacity(n);
        for i in 0..n {
            let field = format!("external_loads[{i}]");
            loads.push(ExternalLoad {
                force: r.vec3(&field)?,
                torque: r.vec3(&field)?,
            });
        }
        Some(loads)
    } else {
        None
    };
    if r.remaining() != 0 {
        return Err(Error::invalid(
            "checkpoint",
            format!("{} unexpected bytes after the last field", r.remaining()),
        ));
    }
    let crowd = Crowd {
        bodies,
        forces,
        integrator,
        dt,
        planes,
        keyframes,
        custom_force,
        start_step: step,
    };
    crowd.validate()?;
    Ok(Checkpoint {
        crowd,
        backend,
        adapter,
        run,
        external_loads,
    })
}

fn encode_body(w: &mut ByteWriter, body: &Body) {
    let mass = &body.mass;
    w.f64(mass.mass());
    w.mat3(mass.inertia_body());
    let (tag, parameters) = match mass.shape() {
        None => (0, DVec3::ZERO),
        Some(Shape::Box { size }) => (1, size),
        Some(Shape::Sphere { radius }) => (2, DVec3::new(radius, 0.0, 0.0)),
        Some(Shape::Cylinder { radius, height }) => (3, DVec3::new(radius, height, 0.0)),
        Some(Shape::Capsule { radius, length }) => (4, DVec3::new(radius, length, 0.0)),
        Some(Shape::Ellipsoid { semi_axes }) => (5, semi_axes),
    };
    w.u8(tag);
    w.vec3(parameters);
    let frame = mass.model_frame();
    w.vec3(frame.offset);
    w.quat(frame.rotation);
    let s = &body.state;
    w.vec3(s.position);
    w.quat(s.orientation);
    w.vec3(s.linear_momentum);
    w.vec3(s.angular_momentum);
}

fn decode_body(r: &mut ByteReader, field: &str) -> Result<Body> {
    let mass = r.f64(&format!("{field}.mass"))?;
    let inertia = r.mat3(&format!("{field}.inertia"))?;
    let shape_field = format!("{field}.shape");
    let tag = r.u8(&shape_field)?;
    let p = r.vec3(&shape_field)?;
    let shape = match tag {
        0 => None,
        1 => Some(Shape::Box { size: p }),
        2 => Some(Shape::Sphere { radius: p.x }),
        3 => Some(Shape::Cylinder {
            radius: p.x,
            height: p.y,
        }),
        4 => Some(Shape::Capsule {
            radius: p.x,
            length: p.y,
        }),
        5 => Some(Shape::Ellipsoid { semi_axes: p }),
        other => {
            return Err(Error::invalid(
                shape_field,
                format!("unknown shape tag {other}"),
            ));
        }
    };
    if let Some(shape) = &shape {
        shape.check(&shape_field)?;
    }
    let frame_field = format!("{field}.model_frame");
    let model_frame = ModelFrame {
        offset: r.vec3(&frame_field)?,
        rotation: r.quat(&frame_field)?,
    };
    // Rebuilt, not trusted: the inverse inertia is recomputed (bit for bit what the
    // original computed) and the mass and inertia are checked again.
    let properties = MassProperties::new(mass, inertia, field)?.with_geometry(shape, model_frame);
    let state_field = format!("{field}.state");
    let state = BodyState {
        position: r.vec3(&state_field)?,
        orientation: r.quat(&state_field)?,
        linear_momentum: r.vec3(&state_field)?,
        angular_momentum: r.vec3(&state_field)?,
    };
    Ok(Body {
        mass: properties,
        state,
    })
}

fn encode_force_kind(w: &mut ByteWriter, kind: &ForceKind) {
    match *kind {
        ForceKind::Gravity { acceleration } => {
            w.u8(0);
            w.vec3(acceleration);
        }
        ForceKind::LinearDrag { linear, angular } => {
            w.u8(1);
            w.f64(linear);
            w.f64(angular);
        }
        ForceKind::PointForce { force, point } => {
            w.u8(2);
            w.vec3(force);
            w.vec3(point);
        }
        ForceKind::Spring {
            anchor,
            attach,
            stiffness,
            damping,
        } => {
            w.u8(3);
            w.vec3(anchor);
            w.vec3(attach);
            w.f64(stiffness);
            w.f64(damping);
        }
        ForceKind::Attractor {
            centre,
            strength,
            softening,
        } => {
            w.u8(4);
            w.vec3(centre);
            w.f64(strength);
            w.f64(softening);
        }
        ForceKind::Thrust { force, torque } => {
            w.u8(5);
            w.vec3(force);
            w.vec3(torque);
        }
        ForceKind::Sinusoidal {
            force,
            torque,
            offset,
            amplitude,
            frequency,
            phase,
        } => {
            w.u8(6);
            w.vec3(force);
            w.vec3(torque);
            w.f64(offset);
            w.f64(amplitude);
            w.f64(frequency);
            w.f64(phase);
        }
        ForceKind::Keyframed {
            force,
            torque,
            table,
        } => {
            w.u8(7);
            w.vec3(force);
            w.vec3(torque);
            w.len(table);
        }
        ForceKind::Custom => w.u8(8),
    }
}

fn decode_force_kind(r: &mut ByteReader, field: &str) -> Result<ForceKind> {
    let f = field;
    Ok(match r.u8(&format!("{field}.type"))? {
        0 => ForceKind::Gravity {
            acceleration: r.vec3(f)?,
        },
        1 => ForceKind::LinearDrag {
            linear: r.f64(f)?,
            angular: r.f64(f)?,
        },
        2 => ForceKind::PointForce {
            force: r.vec3(f)?,
            point: r.vec3(f)?,
        },
        3 => ForceKind::Spring {
            anchor: r.vec3(f)?,
            attach: r.vec3(f)?,
            stiffness: r.f64(f)?,
            damping: r.f64(f)?,
        },
        4 => ForceKind::Attractor {
            centre: r.vec3(f)?,
            strength: r.f64(f)?,
            softening: r.f64(f)?,
        },
        5 => ForceKind::Thrust {
            force: r.vec3(f)?,
            torque: r.vec3(f)?,
        },
        6 => ForceKind::Sinusoidal {
            force: r.vec3(f)?,
            torque: r.vec3(f)?,
            offset: r.f64(f)?,
            amplitude: r.f64(f)?,
            frequency: r.f64(f)?,
            phase: r.f64(f)?,
        },
        7 => ForceKind::Keyframed {
            force: r.vec3(f)?,
            torque: r.vec3(f)?,
            table: r.index(f)?,
        },
        8 => ForceKind::Custom,
        other => {
            return Err(Error::invalid(
                format!("{field}.type"),
                format!("unknown force tag {other}"),
            ));
        }
    })
}

fn backend_tag(backend: Backend) -> u8 {
    match backend {
        Backend::Reference => 0,
        Backend::FastCpu => 1,
        Backend::Gpu => 2,
    }
}

fn backend_from_tag(tag: u8) -> Result<Backend> {
    Backend::ALL
        .into_iter()
        .find(|&b| backend_tag(b) == tag)
        .ok_or_else(|| Error::invalid("backend", format!("unknown backend tag {tag}")))
}

fn integrator_tag(integrator: Integrator) -> u8 {
    match integrator {
        Integrator::Euler => 0,
        Integrator::SymplecticEuler => 1,
        Integrator::Rk4 => 2,
        Integrator::LieRk4 => 3,
    }
}

fn integrator_from_tag(tag: u8) -> Result<Integrator> {
    Integrator::ALL
        .into_iter()
        .find(|&i| integrator_tag(i) == tag)
        .ok_or_else(|| Error::invalid("integrator", format!("unknown integrator tag {tag}")))
}
