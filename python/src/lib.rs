//! `rigid_crowd._native`: the compiled half of the Python package. The pure-Python half
//! (`rigid_crowd/__init__.py`) turns keyword arguments into the scene format and checks
//! array shapes; everything physical happens here, in the Rust library.

use std::path::PathBuf;

use numpy::{PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rigid_crowd::glam::{DMat3, DQuat, DVec3};
use rigid_crowd::gpu::{GpuContext, GpuOptions, list_adapters};
use rigid_crowd::record::{TrajectoryWriter, frame_count, record_run};
use rigid_crowd::{
    Backend, Body, BodyState, Checkpoint, MassProperties, OnFault, Scalar, Scene, StateArrays,
    StatesMut,
};

/// Body-steps between two checks for Ctrl-C in `step`, bounded in steps so small crowds
/// still fuse dispatches and huge ones still get a check every few steps.
const BODY_STEPS_PER_SIGNAL_CHECK: u64 = 1 << 24;
const STEPS_PER_SIGNAL_CHECK: std::ops::RangeInclusive<u64> = 8..=4096;

/// The library's error as the Python exception a user expects: bad input is a
/// `ValueError` whose message names the field, a file error an `OSError`, the rest a
/// `RuntimeError`.
fn to_py(e: rigid_crowd::Error) -> PyErr {
    match e {
        rigid_crowd::Error::Invalid { .. } => PyValueError::new_err(e.to_string()),
        rigid_crowd::Error::Io { .. } => PyOSError::new_err(e.to_string()),
        _ => PyRuntimeError::new_err(e.to_string()),
    }
}

fn invalid(field: &str, message: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("{field}: {message}"))
}

/// A crowd: bodies, forces, planes, integrator and time step.
#[pyclass(module = "rigid_crowd", frozen)]
struct Crowd {
    inner: rigid_crowd::Crowd,
}

#[pymethods]
impl Crowd {
    /// The crowd described by `settings` (scene-format JSON) with `bodies` first: masses
    /// (N,), either `inertia` (N, 3, 3 flattened to N, 9) or `moments` (N, 3), then
    /// positions, orientations (w, x, y, z), velocities and angular velocities.
    #[staticmethod]
    #[pyo3(signature = (settings, masses, positions, orientations, velocities, angular_velocities, inertia=None, moments=None))]
    #[allow(clippy::too_many_arguments)]
    fn from_arrays(
        settings: &str,
        masses: PyReadonlyArray1<f64>,
        positions: PyReadonlyArray2<f64>,
        orientations: PyReadonlyArray2<f64>,
        velocities: PyReadonlyArray2<f64>,
        angular_velocities: PyReadonlyArray2<f64>,
        inertia: Option<PyReadonlyArray2<f64>>,
        moments: Option<PyReadonlyArray2<f64>>,
    ) -> PyResult<Self> {
        let masses = masses.as_slice()?;
        let rows = |name: &str, array: &PyReadonlyArray2<f64>, width: usize| {
            checked_rows(name, array, masses.len(), width)
        };
        let positions = rows("positions", &positions, 3)?;
        let orientations = rows("orientations", &orientations, 4)?;
        let velocities = rows("velocities", &velocities, 3)?;
        let angular_velocities = rows("angular_velocities", &angular_velocities, 3)?;
        let inertia = match (&inertia, &moments) {
            (Some(full), None) => Inertia::Full(rows("inertia", full, 9)?),
            (None, Some(principal)) => Inertia::Principal(rows("moments", principal, 3)?),
            _ => {
                return Err(invalid(
                    "inertia",
                    "give exactly one of `inertia` and `moments`",
                ));
            }
        };
        let v3 = |a: &[f64], i: usize| DVec3::new(a[3 * i], a[3 * i + 1], a[3 * i + 2]);
        let mut bodies = Vec::with_capacity(masses.len());
        for (i, &mass) in masses.iter().enumerate() {
            let field = format!("bodies[{i}]");
            let mass = match &inertia {
                Inertia::Full(m) => {
                    MassProperties::new(mass, DMat3::from_cols_slice(&m[9 * i..9 * i + 9]), &field)
                }
                Inertia::Principal(m) => MassProperties::from_principal(mass, v3(m, i), &field),
            }
            .map_err(to_py)?;
            let q = &orientations[4 * i..4 * i + 4];
            let orientation = DQuat::from_xyzw(q[1], q[2], q[3], q[0]);
            let length = orientation.length_squared();
            if length.is_nan() || length <= 0.0 {
                return Err(invalid(
                    &format!("{field}.orientation"),
                    format!("must be a finite non-zero quaternion (got {q:?})"),
                ));
            }
            bodies.push(Body::from_model_kinematics(
                mass,
                v3(&positions, i),
                orientation,
                v3(&velocities, i),
                v3(&angular_velocities, i),
            ));
        }
        let scene = Scene::from_json_with_bodies(settings, bodies).map_err(to_py)?;
        Ok(Self { inner: scene.crowd })
    }

    /// The crowd of a scene in the scene format (JSON text): bodies listed or generated.
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        let scene = Scene::from_json(text).map_err(to_py)?;
        Ok(Self { inner: scene.crowd })
    }

    /// The crowd `rigid-crowd check` compares the backends on: seeded, every force kind.
    #[staticmethod]
    #[pyo3(signature = (count, seed=1, integrator="rk4", dt=1e-3))]
    fn cross_check_crowd(count: usize, seed: u64, integrator: &str, dt: f64) -> PyResult<Self> {
        let integrator = integrator
            .parse()
            .map_err(|m: String| invalid("integrator", m))?;
        let inner = rigid_crowd::cross_check_crowd(count, seed, integrator, dt).map_err(to_py)?;
        Ok(Self { inner })
    }

    /// How many bodies.
    fn __len__(&self) -> usize {
        self.inner.bodies.len()
    }

    /// The time step, in seconds.
    #[getter]
    fn dt(&self) -> f64 {
        self.inner.dt
    }

    /// The integrator's name.
    #[getter]
    fn integrator(&self) -> &'static str {
        self.inner.integrator.name()
    }

    /// Every body's mass (N,).
    #[getter]
    fn masses<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArray1<f64>> {
        let masses: Vec<f64> = self.inner.bodies.iter().map(|b| b.mass.mass()).collect();
        numpy::PyArray1::from_vec(py, masses)
    }

    fn __repr__(&self) -> String {
        format!(
            "Crowd({} bodies, {} forces, {} planes, {}, dt={})",
            self.inner.bodies.len(),
            self.inner.forces.len(),
            self.inner.planes.len(),
            self.inner.integrator.name(),
            self.inner.dt
        )
    }
}

enum Inertia {
    Full(Vec<f64>),
    Principal(Vec<f64>),
}

/// A scene file: its crowd and how many steps to run.
#[pyclass(module = "rigid_crowd", name = "Scene", frozen)]
struct SceneFile {
    #[pyo3(get)]
    crowd: Py<Crowd>,
    #[pyo3(get)]
    steps: u64,
}

#[pymethods]
impl SceneFile {
    /// Reads and validates a scene file; an invalid one raises `ValueError` naming the field.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let scene = Scene::load(&path)
            .map_err(|e| to_py(e.within(format_args!("{}: ", path.display()))))?;
        Ok(Self {
            crowd: Py::new(py, Crowd { inner: scene.crowd })?,
            steps: scene.steps,
        })
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Scene({}, steps={})",
            self.crowd.borrow(py).__repr__(),
            self.steps
        )
    }
}

/// A crowd being integrated on one backend.
#[pyclass(module = "rigid_crowd")]
struct Simulation {
    sim: rigid_crowd::Simulation,
    /// Each body's mass properties, to turn velocities into momenta in `set_states`.
    masses: Vec<MassProperties>,
}

/// One GPU device for every simulation of the process, opened on first use: opening a
/// device per simulation would cost a device's memory and start-up each time.
fn shared_gpu() -> rigid_crowd::Result<&'static GpuContext> {
    static CONTEXT: std::sync::OnceLock<GpuContext> = std::sync::OnceLock::new();
    if let Some(ctx) = CONTEXT.get() {
        return Ok(ctx);
    }
    let ctx = GpuContext::new()?;
    Ok(CONTEXT.get_or_init(|| ctx))
}

/// A simulation of `crowd` on `backend`, GPU backends on the shared device; `gpu`'s f32
/// divisions and square roots in f64 if `f32_divisions_in_f64`.
fn simulation_on(
    crowd: &rigid_crowd::Crowd,
    backend: Backend,
    f32_divisions_in_f64: bool,
) -> rigid_crowd::Result<rigid_crowd::Simulation> {
    match backend {
        Backend::Gpu => {
            let options = GpuOptions {
                f32_divisions_in_f64,
                ..GpuOptions::default()
            };
            rigid_crowd::Simulation::gpu_with_options(crowd, shared_gpu()?, options)
        }
        Backend::GpuF64 => rigid_crowd::Simulation::on_backend(crowd, backend, shared_gpu()?),
        _ => rigid_crowd::Simulation::new(crowd, backend),
    }
}

fn backend(name: &str) -> PyResult<Backend> {
    name.parse().map_err(|m: String| invalid("backend", m))
}

#[pymethods]
impl Simulation {
    /// `on_fault`: what a body that goes non-finite or leaves the envelope (`max_speed`,
    /// `max_angular_speed`, `max_distance`) does: `"stop"` the run (an error) or
    /// `"freeze"` it alone (see `quarantined`). Unset, the crowd's own rules hold.
    /// `tangents`: the derivatives to carry from the start (`"state"`, `"mass"`,
    /// `"inertia"`, `"forces[i].FIELD"`, a keyframed force's `"forces[i].keyframes"`,
    /// `"planes[i].FIELD"`), read with `jacobian` and `sensitivity`.
    /// `f32_divisions_in_f64` (`"gpu"` only): the f32 kernel's divisions and square roots
    /// taken in f64, so that `"gpu"` gives `"cpu"`'s bits where the adapter's f32 ones are
    /// approximate.
    #[new]
    #[pyo3(signature = (crowd, backend="gpu", *, on_fault=None, max_speed=None, max_angular_speed=None, max_distance=None, tangents=None, f32_divisions_in_f64=false))]
    #[allow(clippy::too_many_arguments)] // keyword arguments, as Python users pass them
    fn new(
        py: Python<'_>,
        crowd: &Crowd,
        backend: &str,
        on_fault: Option<&str>,
        max_speed: Option<f64>,
        max_angular_speed: Option<f64>,
        max_distance: Option<f64>,
        tangents: Option<Vec<String>>,
        f32_divisions_in_f64: bool,
    ) -> PyResult<Self> {
        let backend = self::backend(backend)?;
        if f32_divisions_in_f64 && backend != Backend::Gpu {
            return Err(invalid(
                "f32_divisions_in_f64",
                format!("applies to the \"gpu\" backend only, not \"{backend}\""),
            ));
        }
        let mut rules = crowd.inner.fault_rules;
        if let Some(name) = on_fault {
            rules.on_fault = OnFault::parse(name, "on_fault").map_err(to_py)?;
        }
        let envelope = &mut rules.envelope;
        for (given, limit) in [
            (max_speed, &mut envelope.max_speed),
            (max_angular_speed, &mut envelope.max_angular_speed),
            (max_distance, &mut envelope.max_distance),
        ] {
            if given.is_some() {
                *limit = given;
            }
        }
        let changed;
        let crowd = if rules == crowd.inner.fault_rules {
            &crowd.inner
        } else {
            changed = crowd.inner.clone().with_fault_rules(rules);
            &changed
        };
        let mut sim = py
            .detach(|| simulation_on(crowd, backend, f32_divisions_in_f64))
            .map_err(to_py)?;
        if let Some(names) = tangents {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            sim.start_tangents(&names).map_err(to_py)?;
        }
        Ok(Self {
            sim,
            masses: crowd.bodies.iter().map(|b| b.mass).collect(),
        })
    }

    /// The Jacobian of every body, `(bodies, 13, 13)`, float64 on `cpu-ref` and float32 on
    /// `cpu` (like the states): row r and column c the derivative of the state's component r
    /// now by its component c when the tangents started, the state `x, y, z, qw, qx, qy, qz,
    /// px, py, pz, lx, ly, lz`. Needs `tangents=["state", ...]`.
    fn jacobian<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.sensitivity(py, "state")
    }

    /// The derivatives along the tangent `name` (as given in `tangents`), `(bodies, 13, k)`
    /// in the backend's precision, the state held fixed: `mass` (k = 1), `inertia` (k = 6:
    /// xx, yy, zz, xy, xz, yz) or `forces[i].FIELD` (k = 1, or 3 for a vector).
    fn sensitivity<'py>(&mut self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let width = self
            .sim
            .tangent_plan()
            .and_then(|plan| plan.columns(name))
            .map_or(0, |columns| columns.len());
        let shape = [self.sim.body_count(), 13, width];
        let array = numpy::PyArray3::<f64>::zeros(py, shape, false);
        {
            let mut guard = array.readwrite();
            let out = guard.as_slice_mut()?;
            let sim = &mut self.sim;
            py.detach(|| sim.read_tangents(name, out)).map_err(to_py)?;
        }
        match self.sim.backend() {
            // f32 tangents, widened exactly by read_tangents: narrowed back without loss.
            Backend::Gpu | Backend::FastCpu => Ok(array.cast_array::<f32>(false)?.into_any()),
            Backend::GpuF64 | Backend::Reference => Ok(array.into_any()),
        }
    }

    /// Continues the run a checkpoint file captured, on `backend` (the checkpoint's own
    /// when not given); on `"gpu"` its f32 divisions in f64 if the checkpoint's were.
    #[staticmethod]
    #[pyo3(signature = (path, backend=None))]
    fn resume(py: Python<'_>, path: PathBuf, backend: Option<&str>) -> PyResult<Self> {
        let checkpoint = Checkpoint::read(&path).map_err(to_py)?;
        let backend = match backend {
            Some(name) => self::backend(name)?,
            None => checkpoint.backend,
        };
        let sim = py
            .detach(|| match backend {
                Backend::Gpu | Backend::GpuF64 => {
                    let ctx = shared_gpu()?;
                    // The checkpoint's precision unless another GPU backend was asked for.
                    let mut checkpoint = checkpoint.clone();
                    checkpoint.backend = backend;
                    rigid_crowd::Simulation::resume_on_gpu(&checkpoint, ctx)
                }
                _ => rigid_crowd::Simulation::resume(&checkpoint, backend),
            })
            .map_err(to_py)?;
        Ok(Self {
            sim,
            masses: checkpoint.crowd.bodies.iter().map(|b| b.mass).collect(),
        })
    }

    /// Advances every body by `steps` steps, without the GIL. Ctrl-C stops it between
    /// batches of steps with `KeyboardInterrupt`; the steps taken until then stand.
    fn step(&mut self, py: Python<'_>, steps: u64) -> PyResult<()> {
        let bodies = self.sim.body_count().max(1) as u64;
        let batch = (BODY_STEPS_PER_SIGNAL_CHECK / bodies).clamp(
            *STEPS_PER_SIGNAL_CHECK.start(),
            *STEPS_PER_SIGNAL_CHECK.end(),
        );
        let mut left = steps;
        while left > 0 {
            let now = left.min(batch);
            let sim = &mut self.sim;
            py.detach(|| sim.step(now)).map_err(to_py)?;
            left -= now;
            py.check_signals()?;
        }
        Ok(())
    }

    /// Waits until every queued step is done (a no-op on the CPU backends).
    fn finish(&mut self, py: Python<'_>) -> PyResult<()> {
        let sim = &mut self.sim;
        py.detach(|| sim.finish()).map_err(to_py)
    }

    /// The states as numpy arrays, one per quantity: float32 on `gpu` and `cpu`, float64
    /// on `gpu-f64` and `cpu-ref`, written straight from the device read.
    fn states<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        match self.sim.backend() {
            Backend::Gpu | Backend::FastCpu => self.states_as::<f32>(py),
            Backend::GpuF64 | Backend::Reference => self.states_as::<f64>(py),
        }
    }

    /// Gives the bodies `indices` new states; quantities not given keep their current
    /// values. Velocities and momenta of the same kind are exclusive.
    #[pyo3(signature = (indices, position=None, orientation=None, velocity=None, angular_velocity=None, linear_momentum=None, angular_momentum=None))]
    #[allow(clippy::too_many_arguments)]
    fn set_states<'py>(
        &mut self,
        py: Python<'py>,
        indices: Vec<i64>,
        position: Option<Bound<'py, PyAny>>,
        orientation: Option<Bound<'py, PyAny>>,
        velocity: Option<Bound<'py, PyAny>>,
        angular_velocity: Option<Bound<'py, PyAny>>,
        linear_momentum: Option<Bound<'py, PyAny>>,
        angular_momentum: Option<Bound<'py, PyAny>>,
    ) -> PyResult<()> {
        let n = self.sim.body_count();
        let indices: Vec<usize> = indices
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                usize::try_from(i).ok().filter(|&i| i < n).ok_or_else(|| {
                    invalid(
                        &format!("indices[{k}]"),
                        format!("body {i} is not in the crowd of {n} bodies"),
                    )
                })
            })
            .collect::<PyResult<_>>()?;
        let rows = |name: &str, array: &Option<Bound<'py, PyAny>>, width: usize| {
            array
                .as_ref()
                .map(|a| checked_rows(name, &f64_array(py, name, a)?, indices.len(), width))
                .transpose()
        };
        let position = rows("position", &position, 3)?;
        let orientation = rows("orientation", &orientation, 4)?;
        let velocity = rows("velocity", &velocity, 3)?;
        let angular_velocity = rows("angular_velocity", &angular_velocity, 3)?;
        let linear_momentum = rows("linear_momentum", &linear_momentum, 3)?;
        let angular_momentum = rows("angular_momentum", &angular_momentum, 3)?;
        if velocity.is_some() && linear_momentum.is_some() {
            return Err(invalid(
                "velocity",
                "give velocity or linear_momentum, not both",
            ));
        }
        if angular_velocity.is_some() && angular_momentum.is_some() {
            return Err(invalid(
                "angular_velocity",
                "give angular_velocity or angular_momentum, not both",
            ));
        }
        // What is not given keeps its current value: the model frame's pose and the
        // velocities, as `states()` reports them.
        let mut now = StateArrays::<f64>::state(n).with_velocities();
        self.sim.read_states(now.as_mut()).map_err(to_py)?;
        let v3 = |a: &[f64], k: usize| DVec3::new(a[3 * k], a[3 * k + 1], a[3 * k + 2]);
        let given = |a: &Option<Vec<f64>>, k: usize, current: [f64; 3]| {
            a.as_ref().map_or(DVec3::from(current), |a| v3(a, k))
        };
        let states: Vec<BodyState> = indices
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let [w, x, y, z] = match &orientation {
                    Some(q) => [q[4 * k], q[4 * k + 1], q[4 * k + 2], q[4 * k + 3]],
                    None => now.orientation[i],
                };
                let body = Body::from_model_kinematics(
                    self.masses[i],
                    given(&position, k, now.position[i]),
                    DQuat::from_xyzw(x, y, z, w),
                    given(&velocity, k, now.velocity[i]),
                    given(&angular_velocity, k, now.angular_velocity[i]),
                );
                let mut state = body.state;
                if let Some(p) = &linear_momentum {
                    state.linear_momentum = v3(p, k);
                }
                if let Some(l) = &angular_momentum {
                    state.angular_momentum = v3(l, k);
                }
                state
            })
            .collect();
        self.sim.set_states(&indices, &states).map_err(to_py)
    }

    /// The bodies frozen under `on_fault="freeze"`, in crowd order: one dict each with
    /// `body`, `step` (the clock step of its last good state), `fault` (`"speed"`,
    /// `"non_finite_position"`, ...) and that state (`position`, `orientation` w x y z,
    /// `velocity`, `angular_velocity`, `linear_momentum`, `angular_momentum`). `set_states`
    /// on a frozen body makes it rejoin.
    fn quarantined<'py>(&mut self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let frozen = py.detach(|| self.sim.quarantined()).map_err(to_py)?;
        frozen
            .iter()
            .map(|q| {
                let body = Body {
                    mass: self.masses[q.body],
                    state: q.state,
                };
                let o = q.state.orientation;
                let dict = PyDict::new(py);
                dict.set_item("body", q.body)?;
                dict.set_item("step", q.step)?;
                dict.set_item("fault", q.fault.name())?;
                dict.set_item("position", q.state.position.to_array())?;
                dict.set_item("orientation", [o.w, o.x, o.y, o.z])?;
                dict.set_item("velocity", body.velocity().to_array())?;
                dict.set_item("angular_velocity", body.angular_velocity().to_array())?;
                dict.set_item("linear_momentum", q.state.linear_momentum.to_array())?;
                dict.set_item("angular_momentum", q.state.angular_momentum.to_array())?;
                Ok(dict)
            })
            .collect()
    }

    /// Writes everything needed to continue this run to `path` (atomically).
    fn checkpoint(&mut self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let sim = &mut self.sim;
        py.detach(|| sim.checkpoint()?.write(&path)).map_err(to_py)
    }

    /// Runs `steps` steps, writing the states at the start and every `every` steps to
    /// `path` (.csv, .npy or .npz, by extension); returns the frames written.
    #[pyo3(signature = (path, steps, every=1))]
    fn record(&mut self, py: Python<'_>, path: PathBuf, steps: u64, every: u64) -> PyResult<usize> {
        if every == 0 {
            return Err(invalid("every", "must be at least 1"));
        }
        let sim = &mut self.sim;
        py.detach(|| {
            let frames = frame_count(steps, every);
            let mut writer = TrajectoryWriter::create(&path, sim.body_count(), frames)?;
            record_run(
                sim,
                steps,
                every,
                |step, time, bodies| writer.write_frame(step, time, bodies),
                |_| {},
            )?;
            writer.finish()?;
            Ok(frames)
        })
        .map_err(to_py)
    }

    /// The backend's name.
    #[getter]
    fn backend(&self) -> &'static str {
        self.sim.backend().name()
    }

    /// Whether the `"gpu"` kernel takes its f32 divisions and square roots in f64.
    #[getter]
    fn f32_divisions_in_f64(&self) -> bool {
        self.sim
            .gpu_options()
            .is_some_and(GpuOptions::divides_in_f64)
    }

    /// Steps taken so far.
    #[getter]
    fn steps_taken(&self) -> u64 {
        self.sim.steps_taken()
    }

    /// Simulated time, in seconds.
    #[getter]
    fn time(&self) -> f64 {
        self.sim.time()
    }

    fn __len__(&self) -> usize {
        self.sim.body_count()
    }
}

impl Simulation {
    fn states_as<'py, T: Scalar + numpy::Element>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let n = self.sim.body_count();
        let array = |width: usize| PyArray2::<T>::zeros(py, [n, width], false);
        let arrays = [
            ("position", array(3)),
            ("orientation", array(4)),
            ("velocity", array(3)),
            ("angular_velocity", array(3)),
            ("linear_momentum", array(3)),
            ("angular_momentum", array(3)),
        ];
        {
            let mut guards: Vec<_> = arrays.iter().map(|(_, a)| a.readwrite()).collect();
            let mut slices = guards.iter_mut().map(|g| g.as_slice_mut());
            let mut next = || slices.next().expect("six arrays").map_err(PyErr::from);
            let (p, q, v, w, lp, la) = (next()?, next()?, next()?, next()?, next()?, next()?);
            let out = StatesMut {
                position: Some(as_rows(p)),
                orientation: Some(as_rows(q)),
                velocity: Some(as_rows(v)),
                angular_velocity: Some(as_rows(w)),
                linear_momentum: Some(as_rows(lp)),
                angular_momentum: Some(as_rows(la)),
            };
            self.sim.read_states(out).map_err(to_py)?;
        }
        let dict = PyDict::new(py);
        for (name, array) in arrays {
            dict.set_item(name, array)?;
        }
        Ok(dict)
    }
}

/// The values of `array`, which must have shape `(count, width)`, or a `ValueError` naming
/// `field`.
fn checked_rows(
    field: &str,
    array: &PyReadonlyArray2<f64>,
    count: usize,
    width: usize,
) -> PyResult<Vec<f64>> {
    if array.shape() != [count, width] {
        return Err(invalid(
            field,
            format!(
                "must have shape ({count}, {width}), got {:?}",
                array.shape()
            ),
        ));
    }
    Ok(array.as_slice()?.to_vec())
}

/// `value` (any array-like) as a contiguous float64 array, or a `ValueError` naming `field`.
fn f64_array<'py>(
    py: Python<'py>,
    field: &str,
    value: &Bound<'py, PyAny>,
) -> PyResult<PyReadonlyArray2<'py, f64>> {
    let kwargs = PyDict::new(py);
    kwargs.set_item("dtype", "float64")?;
    py.import("numpy")?
        .call_method("ascontiguousarray", (value,), Some(&kwargs))
        .and_then(|a| Ok(a.cast_into::<PyArray2<f64>>()?.readonly()))
        .map_err(|e| invalid(field, format!("must be a 2-D array of numbers ({e})")))
}

/// A flat slice of `W * N` values as `N` rows of `W`.
fn as_rows<T, const W: usize>(flat: &mut [T]) -> &mut [[T; W]] {
    let (rows, rest) = flat.as_chunks_mut::<W>();
    debug_assert!(rest.is_empty(), "arrays are made with W columns");
    rows
}

/// Runs `steps` steps of `crowd` on every backend and returns each one's largest relative
/// deviation from the f64 reference, per quantity.
#[pyfunction]
#[pyo3(signature = (crowd, steps))]
fn cross_check<'py>(py: Python<'py>, crowd: &Crowd, steps: u64) -> PyResult<Bound<'py, PyDict>> {
    let crowd = &crowd.inner;
    let check = py
        .detach(|| rigid_crowd::cross_check(crowd, steps, shared_gpu()?))
        .map_err(to_py)?;
    let result = PyDict::new(py);
    let deviations = [
        ("gpu", Some(check.gpu)),
        ("gpu-f64", check.gpu_f64),
        ("cpu", Some(check.fast_cpu)),
    ];
    for (backend, deviation) in deviations {
        let Some(deviation) = deviation else { continue };
        let quantities = PyDict::new(py);
        for (name, value) in deviation.named() {
            quantities.set_item(name, value)?;
        }
        result.set_item(backend, quantities)?;
    }
    Ok(result)
}

/// The GPU adapters this machine offers, with what matters for crowds.
#[pyfunction]
fn info<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let adapters = pyo3::types::PyList::empty(py);
    for adapter in list_adapters() {
        let entry = PyDict::new(py);
        entry.set_item("name", &adapter.info.name)?;
        entry.set_item("backend", format!("{:?}", adapter.info.backend))?;
        entry.set_item("device_type", format!("{:?}", adapter.info.device_type))?;
        entry.set_item("driver", &adapter.info.driver)?;
        entry.set_item("supports_f64", adapter.supports_f64)?;
        entry.set_item("device_memory", adapter.device_memory)?;
        let limits = PyDict::new(py);
        limits.set_item(
            "max_storage_buffer_binding_size",
            adapter.limits.max_storage_buffer_binding_size,
        )?;
        limits.set_item("max_buffer_size", adapter.limits.max_buffer_size)?;
        limits.set_item(
            "max_compute_workgroups_per_dimension",
            adapter.limits.max_compute_workgroups_per_dimension,
        )?;
        entry.set_item("limits", limits)?;
        adapters.append(entry)?;
    }
    let result = PyDict::new(py);
    result.set_item("version", env!("CARGO_PKG_VERSION"))?;
    result.set_item("backends", ["cpu-ref", "cpu", "gpu", "gpu-f64"])?;
    result.set_item("adapters", adapters)?;
    Ok(result)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Crowd>()?;
    m.add_class::<SceneFile>()?;
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(cross_check, m)?)?;
    m.add_function(wrap_pyfunction!(info, m)?)?;
    Ok(())
}
