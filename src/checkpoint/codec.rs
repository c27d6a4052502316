//! The checkpoint payload: a crowd (bodies with their constants and states, forces, planes,
//! keyframes, integrator, step, clock) and what the run needs to continue, field by field.
//! Every value is stored with its exact bits, so a resumed run starts from the very state the
//! interrupted one had.

use crate::model::fault::Fault;
use crate::model::fault_rules::{Envelope, FaultRules, OnFault, QuarantinedBody};
use glam::DVec3;

use crate::assembly::crowd::Crowd;
use crate::assembly::scene::SCENE_VERSION;
use crate::checkpoint::bytes::{ByteReader, ByteWriter};
use crate::checkpoint::contents::{Checkpoint, TangentColumns};
use crate::checkpoint::run_plan::{RecordingPlan, RunPlan, TrajectoryProgress};
use crate::model::backend::Backend;
use crate::model::body::{Body, BodyState};
use crate::model::codes::Coded;
use crate::model::collisions::Collisions;
use crate::model::error::{Error, Result};
use crate::model::force::{Force, ForceKind, LawDeclaration};
use crate::model::force::{ForceParameters, ForceType};
use crate::model::force_declaration::MAX_CROWD_LAWS;
use crate::model::integrator::Integrator;
use crate::model::mass::{MassProperties, ModelFrame};
use crate::model::plane::Plane;
use crate::model::shape::Shape;
use crate::model::shape::{NO_SHAPE_CODE, ShapeKind};
use crate::model::tangent::TangentPlan;
use crate::physics::custom_force::CustomForce;
use crate::physics::force_law::ExternalLoad;

/// Bytes of one body record: mass, inertia, shape tag and parameters, model frame, state.
const BODY_BYTES: usize = 8 + 72 + 1 + 24 + 24 + 32 + 104;
/// Bytes of one external load: force and torque.
const LOAD_BYTES: usize = 48;
/// A `None` force target.
const EVERY_BODY: u64 = u64::MAX;
/// Bytes of one frozen body: index, step, fault code, state.
const FROZEN_BYTES: usize = 8 + 8 + 4 + 104;

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
        w.bool(run.recording.is_some());
        if let Some(recording) = &run.recording {
            w.string(&recording.path.to_string_lossy());
            w.u64(recording.every);
            w.u64(recording.frames);
            w.u64(recording.first_step);
            w.u64(recording.progress.frames_written);
            w.u64(recording.progress.bytes);
            w.u32(recording.progress.crc32);
        }
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
        w.vec3(plane.point);
    }
    w.bool(crowd.custom_force.is_some());
    if let Some(custom) = &crowd.custom_force {
        w.string(custom.wgsl());
        w.string(custom.origin());
    }
    w.len(crowd.forces.len());
    let numbered_laws = version_of(checkpoint) >= 8;
    for force in &crowd.forces {
        w.u64(force.body.map_or(EVERY_BODY, |b| b as u64));
        encode_force_kind(&mut w, &force.kind);
        if let ForceKind::Law { law, .. } = force.kind {
            if numbered_laws {
                let number = law.unattached_number();
                w.len(number.unwrap_or_else(|| crowd.law_number_of(&force.kind)));
            }
        }
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
    let rules = &crowd.fault_rules;
    w.u8(rules.on_fault.code() as u8);
    let envelope = &rules.envelope;
    for limit in [
        envelope.max_speed,
        envelope.max_angular_speed,
        envelope.max_distance,
    ] {
        w.bool(limit.is_some());
        w.f64(limit.unwrap_or(0.0));
    }
    w.len(checkpoint.quarantined.len());
    for q in &checkpoint.quarantined {
        w.u64(q.body as u64);
        w.u64(q.step);
        w.u32(q.fault.code());
        encode_state(&mut w, &q.state);
    }
    w.bool(checkpoint.tangents.is_some());
    if let Some(tangents) = &checkpoint.tangents {
        w.len(tangents.names.len());
        for name in &tangents.names {
            w.string(name);
        }
        w.len(tangents.columns.len());
        for &value in &tangents.columns {
            w.f64(value);
        }
    }
    w.bool(checkpoint.f32_divisions_in_f64);
    let version = version_of(checkpoint);
    if version >= 7 {
        w.len(checkpoint.force_laws.len());
        for name in &checkpoint.force_laws {
            w.string(name);
        }
    }
    if let Some(collisions) = &crowd.collisions {
        w.f64(collisions.restitution);
        w.f64(collisions.friction);
    }
    w.bytes
}

/// The format version of `checkpoint`'s payload: the oldest that holds it. Only a crowd with
/// forces of a registered law needs version 7 (the laws' names), and only one running
/// several laws version 8 (each law force's law, by number); any other is written as
/// version 6, byte for byte as before, and older builds read it. A colliding crowd needs
/// version 9 (its restitution and friction after the laws' names).
pub(crate) fn version_of(checkpoint: &Checkpoint) -> u32 {
    match (checkpoint.crowd.collisions, checkpoint.force_laws.len()) {
        (Some(_), _) => 9,
        (None, 0) => 6,
        (None, 1) => 7,
        (None, _) => 8,
    }
}

/// The tangents of a version 4 payload, checked against the crowd: names it has, and
/// `13 x k` finite numbers per body. A crowd with forces of a registered law holds them
/// without their law's declaration, so its names and count are checked when it is resumed
/// with the law attached (`Simulation::restore_tangents`).
fn decode_tangents(r: &mut ByteReader, crowd: &Crowd) -> Result<Option<TangentColumns>> {
    if !r.bool("tangents")? {
        return Ok(None);
    }
    let count = r.count(8, "tangents.names")?;
    let names = (0..count)
        .map(|i| r.string(&format!("tangents.names[{i}]")))
        .collect::<Result<Vec<String>>>()?;
    let law_unattached = (crowd.forces.iter())
        .any(|f| matches!(f.kind, ForceKind::Law { law, .. } if law.unattached_number().is_some()));
    let plan = match law_unattached {
        true => None,
        false => Some(TangentPlan::parse(
            &names,
            &crowd.forces,
            &crowd.planes,
            &crowd.keyframes,
            "tangents.names",
        )?),
    };
    let len = r.count(8, "tangents.columns")?;
    let expected = plan.map_or(len, |plan| crowd.bodies.len() * plan.body_len());
    if len != expected {
        return Err(Error::invalid(
            "tangents.columns",
            format!(
                "holds {len} numbers; {} bodies need {expected}",
                crowd.bodies.len()
            ),
        ));
    }
    let columns = (0..len)
        .map(|_| r.f64("tangents.columns"))
        .collect::<Result<Vec<f64>>>()?;
    if let Some(at) = columns.iter().position(|v| !v.is_finite()) {
        return Err(Error::invalid(
            format!("tangents.columns[{at}]"),
            "must be a finite number",
        ));
    }
    Ok(Some(TangentColumns { names, columns }))
}

/// Reads a payload of format `version` (1: the run plan has no recording; 1 and 2: no fault
/// rules and no frozen bodies; 1 to 3: no tangents; 1 to 4: no plane points; 1 to 5: no
/// `f32_divisions_in_f64`, which is then false).
pub(crate) fn decode(bytes: &[u8], version: u32) -> Result<Checkpoint> {
    let mut r = ByteReader::new(bytes);
    let scene_version = r.u32("scene_version")?;
    if scene_version != SCENE_VERSION {
        return Err(Error::invalid(
            "scene_version",
            format!(
                "holds a version {scene_version} scene; this build reads version {SCENE_VERSION}"
            ),
        ));
    }
    let backend = backend_from_tag(r.u8("backend")?)?;
    let adapter = r.string("adapter")?;
    let integrator = integrator_from_tag(r.u8("integrator")?)?;
    let dt = r.f64("dt")?;
    let step = r.u64("step")?;
    let run = if r.bool("run")? {
        let end_step = r.u64("run.end_step")?;
        let out = r.string("run.out")?.into();
        let checkpoint_every = r.u64("run.checkpoint_every")?;
        let recording = if version >= 2 && r.bool("run.recording")? {
            Some(decode_recording(&mut r)?)
        } else {
            None
        };
        Some(RunPlan {
            end_step,
            out,
            checkpoint_every,
            recording,
        })
    } else {
        None
    };
    let keyframes = r.list(8, "keyframes", |r, field| {
        let n = r.count(16, field)?;
        (0..n).map(|_| Ok([r.f64(field)?, r.f64(field)?])).collect()
    })?;
    let planes = r.list(48, "planes", |r, field| {
        let (normal, offset) = (r.vec3(field)?, r.f64(field)?);
        let (restitution, friction) = (r.f64(field)?, r.f64(field)?);
        // Before version 5 a plane kept no point: its point nearest the origin is one.
        let point = match version {
            ..=4 => normal * offset,
            _ => r.vec3(field)?,
        };
        Ok(Plane {
            normal,
            offset,
            restitution,
            friction,
            point,
        })
    })?;
    let custom_force = if r.bool("custom_force")? {
        let wgsl = r.string("custom_force.wgsl")?;
        let origin = r.string("custom_force.origin")?;
        // A Rust closure cannot be stored: the force comes back GPU-only until the caller
        // attaches its twin again (see `Checkpoint::crowd`).
        Some(CustomForce::gpu_only(wgsl, origin))
    } else {
        None
    };
    let forces = r.list(9, "forces", |r, field| {
        let body = match r.u64(&format!("{field}.body"))? {
            EVERY_BODY => None,
            b => Some(usize::try_from(b).map_err(|_| {
                Error::invalid(format!("{field}.body"), format!("{b} is out of range"))
            })?),
        };
        let mut kind = decode_force_kind(r, field)?;
        if let ForceKind::Law { law, .. } = &mut kind {
            // Its law by number (version 8; before, the crowd's one law), attached again
            // by the name the checkpoint gives that number (`Checkpoint::with_laws`).
            let number = match version {
                ..=7 => 0,
                _ => r.index(&format!("{field}.law"))?,
            };
            *law = LawDeclaration::unattached(number).ok_or_else(|| {
                Error::invalid(
                    format!("{field}.law"),
                    format!("names law {number}; a crowd runs at most {MAX_CROWD_LAWS}"),
                )
            })?;
        }
        Ok(Force { kind, body })
    })?;
    let bodies = r.list(BODY_BYTES, "bodies", decode_body)?;
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
    let (fault_rules, quarantined) = match version {
        ..=2 => (FaultRules::default(), Vec::new()),
        _ => (
            decode_fault_rules(&mut r)?,
            decode_quarantined(&mut r, bodies.len())?,
        ),
    };
    let mut crowd = Crowd {
        bodies,
        forces,
        integrator,
        dt,
        planes,
        collisions: None,
        keyframes,
        custom_force,
        start_step: step,
        fault_rules,
    };
    crowd.validate_read_back()?;
    let tangents = match version {
        ..=3 => None,
        _ => decode_tangents(&mut r, &crowd)?,
    };
    let f32_divisions_in_f64 = match version {
        ..=5 => false,
        _ => r.bool("f32_divisions_in_f64")?,
    };
    if f32_divisions_in_f64 && backend != Backend::Gpu {
        return Err(Error::invalid(
            "f32_divisions_in_f64",
            format!("is set by a {backend} checkpoint; only `gpu` sets it"),
        ));
    }
    let force_laws = match version {
        ..=6 => Vec::new(),
        _ => {
            let count = r.count(8, "force_laws")?;
            (0..count)
                .map(|i| r.string(&format!("force_laws[{i}]")))
                .collect::<Result<Vec<String>>>()?
        }
    };
    for (i, force) in crowd.forces.iter().enumerate() {
        if let ForceKind::Law { law, .. } = force.kind {
            let number = law.unattached_number().unwrap_or(0);
            if number >= force_laws.len() {
                return Err(Error::invalid(
                    format!("forces[{i}].law"),
                    format!(
                        "names law {number}, but the checkpoint names {} force laws",
                        force_laws.len()
                    ),
                ));
            }
        }
    }
    if version >= 9 {
        let restitution = r.f64("collisions.restitution")?;
        let collisions = Collisions::new(restitution, r.f64("collisions.friction")?);
        collisions.validate("collisions")?;
        crowd.collisions = Some(collisions);
    }
    if r.remaining() != 0 {
        return Err(Error::invalid(
            "checkpoint",
            format!("{} unexpected bytes after the last field", r.remaining()),
        ));
    }
    Ok(Checkpoint {
        force_laws,
        crowd,
        backend,
        adapter,
        f32_divisions_in_f64,
        run,
        external_loads,
        quarantined,
        tangents,
    })
}

fn decode_recording(r: &mut ByteReader) -> Result<RecordingPlan> {
    let path = r.string("run.recording.path")?.into();
    let every = r.u64("run.recording.every")?;
    if every == 0 {
        return Err(Error::invalid("run.recording.every", "must be at least 1"));
    }
    let frames = r.u64("run.recording.frames")?;
    let first_step = r.u64("run.recording.first_step")?;
    let frames_written = r.u64("run.recording.frames_written")?;
    if frames_written == 0 || frames_written > frames {
        return Err(Error::invalid(
            "run.recording.frames_written",
            format!("{frames_written} frames written of {frames}"),
        ));
    }
    let bytes = r.u64("run.recording.bytes")?;
    let crc32 = r.u32("run.recording.crc32")?;
    Ok(RecordingPlan {
        path,
        every,
        frames,
        first_step,
        progress: TrajectoryProgress {
            frames_written,
            bytes,
            crc32,
        },
    })
}

fn encode_body(w: &mut ByteWriter, body: &Body) {
    let mass = &body.mass;
    w.f64(mass.mass());
    w.mat3(mass.inertia_body());
    let dimensions = mass.shape().map_or([0.0; 3], |shape| shape.dimensions());
    let tag = mass
        .shape()
        .map_or(NO_SHAPE_CODE, |shape| shape.kind().code());
    w.u8(tag as u8);
    w.vec3(DVec3::from_array(dimensions));
    let frame = mass.model_frame();
    w.vec3(frame.offset);
    w.quat(frame.rotation);
    encode_state(w, &body.state);
}

fn encode_state(w: &mut ByteWriter, s: &BodyState) {
    w.vec3(s.position);
    w.quat(s.orientation);
    w.vec3(s.linear_momentum);
    w.vec3(s.angular_momentum);
}

fn decode_state(r: &mut ByteReader, field: &str) -> Result<BodyState> {
    Ok(BodyState {
        position: r.vec3(field)?,
        orientation: r.quat(field)?,
        linear_momentum: r.vec3(field)?,
        angular_momentum: r.vec3(field)?,
    })
}

/// The fault rules (format 3; earlier formats had none: `stop`, no envelope).
fn decode_fault_rules(r: &mut ByteReader) -> Result<FaultRules> {
    let code = r.u8("fault_rules.on_fault")?;
    let on_fault = *OnFault::ALL.get(code as usize).ok_or_else(|| {
        Error::invalid(
            "fault_rules.on_fault",
            format!("unknown policy code {code}"),
        )
    })?;
    let mut limit = |name: &str| -> Result<Option<f64>> {
        let field = format!("fault_rules.{name}");
        let present = r.bool(&field)?;
        let value = r.f64(&field)?;
        Ok(present.then_some(value))
    };
    let envelope = Envelope {
        max_speed: limit("max_speed")?,
        max_angular_speed: limit("max_angular_speed")?,
        max_distance: limit("max_distance")?,
    };
    Ok(FaultRules { on_fault, envelope })
}

/// The frozen bodies (format 3), each checked against the crowd of `bodies` bodies.
fn decode_quarantined(r: &mut ByteReader, bodies: usize) -> Result<Vec<QuarantinedBody>> {
    r.list(FROZEN_BYTES, "quarantined", |r, field| {
        let body = r.index(&format!("{field}.body"))?;
        if body >= bodies {
            return Err(Error::invalid(
                format!("{field}.body"),
                format!("body {body} is past the crowd of {bodies} bodies"),
            ));
        }
        let step = r.u64(&format!("{field}.step"))?;
        let code = r.u32(&format!("{field}.fault"))?;
        let fault = Fault::from_code(code).ok_or_else(|| {
            Error::invalid(
                format!("{field}.fault"),
                format!("unknown fault code {code}"),
            )
        })?;
        let state = decode_state(r, &format!("{field}.state"))?;
        Ok(QuarantinedBody {
            body,
            step,
            fault,
            state,
        })
    })
}

fn decode_body(r: &mut ByteReader, field: &str) -> Result<Body> {
    let mass = r.f64(&format!("{field}.mass"))?;
    let inertia = r.mat3(&format!("{field}.inertia"))?;
    let shape_field = format!("{field}.shape");
    let tag = r.u8(&shape_field)?;
    let p = r.vec3(&shape_field)?;
    let kind = match tag as u32 {
        NO_SHAPE_CODE => None,
        code => Some(
            ShapeKind::from_code(code)
                .ok_or_else(|| Error::invalid(&shape_field, format!("unknown shape tag {tag}")))?,
        ),
    };
    let shape = kind.map(|kind| Shape::from_dimensions(kind, p.to_array()));
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
    let state = decode_state(r, &format!("{field}.state"))?;
    Ok(Body {
        mass: properties,
        state,
    })
}

/// A force as its type's code and its parameters in the order of `ForceParameters` (the
/// same order the GPU record uses): vectors, scalars, then the keyframe table.
fn encode_force_kind(w: &mut ByteWriter, kind: &ForceKind) {
    let force_type = kind.force_type();
    w.u8(force_type.code() as u8);
    let p = kind.parameters();
    let (vectors, scalars, has_table) = force_type.arity();
    for &v in &p.vectors[..vectors] {
        w.vec3(v);
    }
    for &x in &p.scalars[..scalars] {
        w.f64(x);
    }
    if has_table {
        w.len(p.table.unwrap_or(0));
    }
}

fn decode_force_kind(r: &mut ByteReader, field: &str) -> Result<ForceKind> {
    let tag = r.u8(&format!("{field}.type"))?;
    let force_type = ForceType::from_code(tag as u32).ok_or_else(|| {
        Error::invalid(format!("{field}.type"), format!("unknown force tag {tag}"))
    })?;
    let (vectors, scalars, has_table) = force_type.arity();
    let mut p = ForceParameters::default();
    for v in &mut p.vectors[..vectors] {
        *v = r.vec3(field)?;
    }
    for x in &mut p.scalars[..scalars] {
        *x = r.f64(field)?;
    }
    if has_table {
        p.table = Some(r.index(field)?);
    }
    Ok(ForceKind::from_parameters(force_type, &p))
}

/// A backend's tag is its position in `Backend::ALL`.
fn backend_tag(backend: Backend) -> u8 {
    Backend::ALL
        .iter()
        .position(|&b| b == backend)
        .expect("every backend is listed") as u8
}

fn backend_from_tag(tag: u8) -> Result<Backend> {
    Backend::ALL
        .get(tag as usize)
        .copied()
        .ok_or_else(|| Error::invalid("backend", format!("unknown backend tag {tag}")))
}

fn integrator_tag(integrator: Integrator) -> u8 {
    integrator.code() as u8
}

fn integrator_from_tag(tag: u8) -> Result<Integrator> {
    Integrator::from_code(tag as u32)
        .ok_or_else(|| Error::invalid("integrator", format!("unknown integrator tag {tag}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DQuat;

    fn frozen_checkpoint() -> Checkpoint {
        let mass = MassProperties::from_shape(2.0, Shape::Sphere { radius: 0.5 }, "b").unwrap();
        let body = |x: f64| Body {
            mass,
            state: BodyState {
                position: DVec3::new(x, 0.0, 0.0),
                orientation: DQuat::IDENTITY,
                linear_momentum: DVec3::new(0.0, 1.0, 0.0),
                angular_momentum: DVec3::ZERO,
            },
        };
        let rules = FaultRules {
            on_fault: OnFault::Freeze,
            envelope: Envelope {
                max_speed: Some(3.5),
                max_angular_speed: None,
                max_distance: Some(1e6),
            },
        };
        Checkpoint {
            force_laws: Vec::new(),
            crowd: Crowd::new(vec![body(0.0), body(1.0), body(2.0)], 0.01).with_fault_rules(rules),
            backend: Backend::Reference,
            adapter: String::new(),
            f32_divisions_in_f64: false,
            run: None,
            external_loads: None,
            quarantined: vec![QuarantinedBody {
                body: 2,
                step: 41,
                fault: Fault::Speed,
                state: body(2.5).state,
            }],
            tangents: None,
        }
    }

    #[test]
    fn tangents_survive_the_round_trip_and_bad_ones_are_refused_by_name() {
        let mut checkpoint = frozen_checkpoint();
        let columns: Vec<f64> = (0..3 * 13 * 14).map(|i| i as f64 * 0.25 - 7.0).collect();
        checkpoint.tangents = Some(TangentColumns {
            names: vec!["state".into(), "mass".into()],
            columns,
        });
        let back = decode(&encode(&checkpoint), version_of(&checkpoint)).unwrap();
        assert_eq!(back, checkpoint);
        let refused = |change: &dyn Fn(&mut TangentColumns)| {
            let mut bad = checkpoint.clone();
            change(bad.tangents.as_mut().unwrap());
            decode(&encode(&bad), version_of(&bad))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            refused(&|t| t.names[1] = "weight".into()),
            "tangents.names: `weight` names no tangent: use state, mass, inertia, forces[i].FIELD or planes[i].FIELD"
        );
        assert_eq!(
            refused(&|t| {
                t.columns.pop();
            }),
            "tangents.columns: holds 545 numbers; 3 bodies need 546"
        );
        assert_eq!(
            refused(&|t| t.columns[7] = f64::NAN),
            "tangents.columns[7]: must be a finite number"
        );
    }

    /// A colliding crowd is written as version 9, its coefficients after the laws' names (a
    /// law or none), and bad ones are refused by field; without collisions, nothing changes.
    #[test]
    fn collisions_survive_the_round_trip() {
        let mut checkpoint = frozen_checkpoint();
        assert_eq!(version_of(&checkpoint), 6);
        checkpoint.crowd.collisions = Some(Collisions::new(0.25, 0.75));
        assert_eq!(version_of(&checkpoint), 9);
        assert_eq!(decode(&encode(&checkpoint), 9).unwrap(), checkpoint);
        checkpoint.force_laws = vec!["wind".into()];
        assert_eq!(decode(&encode(&checkpoint), 9).unwrap(), checkpoint);
        checkpoint.crowd.collisions = Some(Collisions::new(2.0, 0.75));
        let refused = decode(&encode(&checkpoint), 9).unwrap_err();
        assert!(
            refused
                .to_string()
                .starts_with("collisions.restitution: must be in [0, 1]"),
            "{refused}"
        );
    }

    /// A crowd of several laws is written as version 8, each law force with its law's
    /// number, and read back with each force waiting for that law; a number past the laws
    /// the checkpoint names is refused by field.
    #[test]
    fn each_law_forces_law_survives_the_round_trip() {
        let mut checkpoint = frozen_checkpoint();
        let law = |number: usize, body: Option<usize>| Force {
            kind: ForceKind::Law {
                law: LawDeclaration::unattached(number).unwrap(),
                vectors: [DVec3::new(1.0, 2.0, 3.0), DVec3::ZERO],
                scalars: [0.5 + number as f64, 0.0, 0.0, 0.0],
            },
            body,
        };
        checkpoint.crowd.forces = vec![law(1, None), law(0, Some(2)), law(1, Some(0))];
        checkpoint.force_laws = vec!["wind".into(), "tether".into()];
        assert_eq!(version_of(&checkpoint), 8);
        let back = decode(&encode(&checkpoint), 8).unwrap();
        assert_eq!(back, checkpoint);
        // One law: version 7, which names no numbers: every force is the law's.
        checkpoint.crowd.forces.truncate(2);
        checkpoint.crowd.forces[0] = law(0, None);
        checkpoint.force_laws.truncate(1);
        assert_eq!(version_of(&checkpoint), 7);
        assert_eq!(decode(&encode(&checkpoint), 7).unwrap(), checkpoint);

        checkpoint.crowd.forces.push(law(5, None));
        checkpoint.force_laws.push("other".into());
        let refused = decode(&encode(&checkpoint), 8).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "forces[2].law: names law 5, but the checkpoint names 2 force laws"
        );
    }

    /// Version 6's last byte says whether `gpu` took its f32 divisions in f64: it survives
    /// the round trip, a version 5 payload (without it) reads as false, and a checkpoint of
    /// another backend that claims it is refused by name.
    #[test]
    fn the_f32_divisions_setting_survives_the_round_trip() {
        let mut checkpoint = frozen_checkpoint();
        checkpoint.backend = Backend::Gpu;
        checkpoint.f32_divisions_in_f64 = true;
        let bytes = encode(&checkpoint);
        assert_eq!(decode(&bytes, version_of(&checkpoint)).unwrap(), checkpoint);
        let version_5 = decode(&bytes[..bytes.len() - 1], 5).unwrap();
        assert!(!version_5.f32_divisions_in_f64);
        assert_eq!(
            version_5,
            Checkpoint {
                f32_divisions_in_f64: false,
                ..checkpoint.clone()
            }
        );
        checkpoint.backend = Backend::FastCpu;
        let refused = decode(&encode(&checkpoint), version_of(&checkpoint)).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "f32_divisions_in_f64: is set by a cpu checkpoint; only `gpu` sets it"
        );
    }

    #[test]
    fn fault_rules_and_frozen_bodies_survive_the_round_trip() {
        let checkpoint = frozen_checkpoint();
        let back = decode(&encode(&checkpoint), version_of(&checkpoint)).unwrap();
        assert_eq!(back, checkpoint);
    }

    #[test]
    fn a_frozen_body_with_an_unknown_fault_or_past_the_crowd_is_refused_by_name() {
        let bytes = encode(&frozen_checkpoint());
        // The last frozen record: index, step, fault code, the 104 bytes of its state; then
        // the byte that says there are no tangents and the f32 divisions' byte.
        let code_at = bytes.len() - 2 - 104 - 4;
        let mut unknown = bytes.clone();
        unknown[code_at..code_at + 4].copy_from_slice(&99u32.to_le_bytes());
        let message = decode(&unknown, version_of(&frozen_checkpoint()))
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with("quarantined[0].fault: unknown fault code 99"),
            "{message}"
        );
        let mut past = bytes.clone();
        let body_at = code_at - 16;
        past[body_at..body_at + 8].copy_from_slice(&3u64.to_le_bytes());
        let message = decode(&past, version_of(&frozen_checkpoint()))
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with("quarantined[0].body: body 3 is past"),
            "{message}"
        );
    }
}
