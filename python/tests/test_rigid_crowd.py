"""The Python package against the Rust command line, an independent numpy integrator and
its own promises: bad input named, the GIL released, Ctrl-C honoured, memory flat."""

import _thread
import csv
import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import rigid_crowd as rc

BACKENDS = ["cpu-ref", "cpu", "gpu", "gpu-f64"]
F32_BACKENDS = {"cpu", "gpu"}
REPO = Path(__file__).resolve().parents[2]
# The f32 backends' documented agreement with the f64 reference (rigid_crowd::GPU_TOLERANCE).
F32_TOLERANCE = 1e-3


def cli() -> str:
    """The release binary the suite compares against (built by `cargo build --release`)."""
    path = os.environ.get("RIGID_CROWD_BIN", str(REPO / "target" / "release" / "rigid-crowd"))
    assert Path(path).exists(), f"build the CLI first (cargo build --release): {path}"
    return path


SCENE = {
    "version": 1,
    "dt": 0.002,
    "steps": 150,
    "integrator": "rk4",
    "forces": [
        {"type": "gravity", "acceleration": [0, 0, -9.81]},
        {"type": "linear_drag", "linear": 0.3, "angular": 0.1},
        {"type": "quadratic_drag", "linear": 0.05, "angular": 0.02},
        {"type": "spring", "body": 1, "anchor": [0, 0, 3], "attach": [0.1, 0, 0],
         "stiffness": 20, "damping": 0.5},
    ],
    "bodies": [
        {"mass": 1, "shape": {"box": [1, 0.5, 0.3]}, "position": [0, 0, 2],
         "angular_velocity": [1, 2, 3]},
        {"mass": 2, "shape": {"sphere": 0.3}, "position": [1, 0, 2], "velocity": [0, 1, 0]},
        {"mass": 0.5, "inertia": [0.1, 0.2, 0.25], "position": [-1, 2, 0],
         "orientation": [0.9, 0.1, 0.3, 0.2], "angular_velocity": [0, -4, 1]},
    ],
}


def write_scene(tmp_path: Path) -> Path:
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(SCENE))
    return path


@pytest.mark.parametrize("backend", BACKENDS)
def test_results_equal_the_cli_bit_for_bit(tmp_path, backend):
    scene_path = write_scene(tmp_path)
    out = tmp_path / "final.csv"
    subprocess.run(
        [cli(), "run", str(scene_path), "--backend", backend, "--out", str(out)],
        check=True, capture_output=True,
    )
    with out.open() as f:
        rows = list(csv.DictReader(f))
    scene = rc.Scene.load(scene_path)
    assert scene.steps == 150 and len(scene.crowd) == 3
    sim = rc.Simulation(scene.crowd, backend=backend)
    sim.step(scene.steps)
    states = sim.states()
    dtype = np.float32 if backend in F32_BACKENDS else np.float64
    columns = {
        "position": ["x", "y", "z"],
        "orientation": ["qw", "qx", "qy", "qz"],
        "linear_momentum": ["px", "py", "pz"],
        "angular_momentum": ["lx", "ly", "lz"],
        # Derived in f64 from the state, then given in the backend's precision.
        "velocity": ["vx", "vy", "vz"],
        "angular_velocity": ["wx", "wy", "wz"],
    }
    for quantity, names in columns.items():
        assert states[quantity].dtype == dtype, quantity
        from_cli = np.array([[float(r[n]) for n in names] for r in rows]).astype(dtype)
        np.testing.assert_array_equal(states[quantity], from_cli, err_msg=quantity)


def test_a_torque_free_top_agrees_with_an_independent_numpy_rk4():
    inertia = np.diag([1.0, 2.0, 3.0])
    q0 = np.array([0.9, 0.1, -0.3, 0.2])
    q0 /= np.linalg.norm(q0)
    omega0 = np.array([0.8, 1.1, 1.3])  # world frame
    dt, steps = 1e-3, 1000

    def rotation(q):
        w, x, y, z = q / np.linalg.norm(q)
        return np.array([
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ])

    def spin(q, omega):  # dq/dt = 1/2 (0, omega) q, quaternions w, x, y, z
        w, v = q[0], q[1:]
        return 0.5 * np.concatenate([[-omega @ v], w * omega + np.cross(omega, v)])

    angular_momentum = rotation(q0) @ inertia @ rotation(q0).T @ omega0  # constant
    inv = np.linalg.inv(inertia)

    def dq(q):
        r = rotation(q)
        return spin(q, r @ inv @ r.T @ angular_momentum)

    q = q0.copy()
    for _ in range(steps):
        k1 = dq(q)
        k2 = dq(q + 0.5 * dt * k1)
        k3 = dq(q + 0.5 * dt * k2)
        k4 = dq(q + dt * k3)
        q = q + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        q /= np.linalg.norm(q)
    r = rotation(q)
    omega = r @ inv @ r.T @ angular_momentum

    crowd = rc.Crowd.from_arrays(
        [1.5], [[0.0, 0.0, 0.0]], inertia=[inertia], orientations=[q0],
        angular_velocities=[omega0], dt=dt,
    )
    for backend in BACKENDS:
        sim = rc.Simulation(crowd, backend=backend)
        sim.step(steps)
        states = sim.states()
        got_q = states["orientation"][0].astype(np.float64)
        got_q *= np.sign(got_q @ q)
        tolerance = F32_TOLERANCE if backend in F32_BACKENDS else 1e-9
        assert np.linalg.norm(got_q - q) < tolerance, (backend, got_q, q)
        got_omega = states["angular_velocity"][0]
        assert np.linalg.norm(got_omega - omega) < tolerance * np.linalg.norm(omega), backend
        # The top tumbled: a frozen orientation would fail the comparison above.
    assert np.linalg.norm(q - q0) > 0.1


def good_arrays(n=3):
    return dict(
        masses=np.ones(n),
        positions=np.zeros((n, 3)),
        moments=np.ones((n, 3)),
    )


@pytest.mark.parametrize(
    "change, field",
    [
        (dict(positions=np.zeros((3, 2))), "positions"),
        (dict(masses=np.array([1.0, -1.0, 1.0])), "bodies[1].mass"),
        (dict(masses=np.array([1.0, 1.0, 0.0])), "bodies[2].mass"),
        (dict(positions=np.array([[0, 0, 0], [0, np.nan, 0], [0, 0, 0]])), "bodies[1].position"),
        (dict(orientations=np.zeros((3, 4))), "bodies[0].orientation"),
        (dict(moments=np.array([[1, 1, 1], [1, 1, 5], [1, 1, 1]])), "bodies[1]"),
        (dict(velocities=np.ones((2, 3))), "velocities"),
        (dict(masses=[[1.0]]), "masses"),
    ],
)
def test_bad_arrays_raise_value_error_naming_the_field(change, field):
    arrays = {**good_arrays(), **change}
    with pytest.raises(ValueError) as error:
        rc.Crowd.from_arrays(**arrays)
    assert str(error.value).startswith(field), str(error.value)


def test_quaternions_that_are_not_unit_are_normalized():
    crowd = rc.Crowd.from_arrays(**good_arrays(1), orientations=[[2.0, 0.0, 0.0, 0.0]])
    sim = rc.Simulation(crowd, backend="cpu-ref")
    np.testing.assert_array_equal(sim.states()["orientation"][0], [1.0, 0.0, 0.0, 0.0])


def test_an_invalid_scene_file_raises_value_error_naming_the_field(tmp_path):
    scene = json.loads(json.dumps(SCENE))
    scene["bodies"][0]["mass"] = -1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(scene))
    with pytest.raises(ValueError, match=r"bodies\[0\]\.mass: must be a finite number > 0 \(got -1\)"):
        rc.Scene.load(path)
    with pytest.raises(OSError):
        rc.Scene.load(tmp_path / "missing.json")


@pytest.mark.parametrize("backend", BACKENDS)
def test_set_states_resets_one_body_and_leaves_the_rest(backend):
    crowd = rc.Crowd.generate(50, seed=4)  # no forces: bodies move uniformly
    sim = rc.Simulation(crowd, backend=backend)
    sim.step(10)
    before = sim.states()
    sim.set_states([7], position=[[1.0, 2.0, 3.0]], velocity=[[0.0, 0.0, 5.0]])
    after = sim.states()
    np.testing.assert_array_equal(after["position"][7], [1.0, 2.0, 3.0])
    np.testing.assert_allclose(after["velocity"][7], [0.0, 0.0, 5.0], atol=1e-6)
    others = np.arange(50) != 7
    for quantity in ["position", "orientation", "linear_momentum", "angular_momentum"]:
        np.testing.assert_array_equal(after[quantity][others], before[quantity][others])
    # Kept, up to the renormalization every input gets (an ulp or two).
    eps = np.finfo(after["orientation"].dtype).eps
    np.testing.assert_allclose(after["orientation"][7], before["orientation"][7], rtol=0, atol=4 * eps)
    sim.step(100)  # 0.1 s at 5 m/s
    np.testing.assert_allclose(sim.states()["position"][7], [1.0, 2.0, 3.5], rtol=1e-5)
    with pytest.raises(ValueError, match=r"indices\[0\]"):
        sim.set_states([50], position=[[0.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match="position"):
        sim.set_states([1, 2], position=[[0.0, 0.0, 0.0]])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_resumed_checkpoint_continues_bit_for_bit(tmp_path, backend):
    crowd = rc.Crowd.generate(40, seed=9, forces=[{"type": "gravity", "acceleration": [0, 0, -9.81]}])
    sim = rc.Simulation(crowd, backend=backend)
    sim.step(10)
    path = tmp_path / "run.ckpt"
    sim.checkpoint(path)
    sim.step(15)
    resumed = rc.Simulation.resume(path)
    assert resumed.backend == backend and resumed.steps_taken == 0
    resumed.step(15)
    for quantity, values in sim.states().items():
        np.testing.assert_array_equal(resumed.states()[quantity], values, err_msg=quantity)


def test_f32_divisions_in_f64_give_cpus_bits_and_survive_a_checkpoint(tmp_path):
    crowd = rc.Crowd.generate(40, seed=4, forces=[{"type": "gravity", "acceleration": [0, 0, -9.81]},
                                                  {"type": "quadratic_drag", "linear": 0.05, "angular": 0.02}])
    sim = rc.Simulation(crowd, backend="gpu", f32_divisions_in_f64=True)
    assert sim.f32_divisions_in_f64
    assert not rc.Simulation(crowd, backend="gpu").f32_divisions_in_f64
    cpu = rc.Simulation(crowd, backend="cpu")
    sim.step(10)
    path = tmp_path / "run.ckpt"
    sim.checkpoint(path)
    sim.step(15)
    cpu.step(25)
    resumed = rc.Simulation.resume(path)
    assert resumed.backend == "gpu" and resumed.f32_divisions_in_f64
    resumed.step(15)
    for quantity, values in sim.states().items():
        np.testing.assert_array_equal(resumed.states()[quantity], values, err_msg=quantity)
        np.testing.assert_array_equal(cpu.states()[quantity], values, err_msg=quantity)
    assert not rc.Simulation.resume(path, backend="gpu-f64").f32_divisions_in_f64
    for backend in ["cpu", "cpu-ref", "gpu-f64"]:
        with pytest.raises(ValueError, match=f"f32_divisions_in_f64: applies to the \"gpu\" backend only, not \"{backend}\""):
            rc.Simulation(crowd, backend=backend, f32_divisions_in_f64=True)


def test_record_writes_the_frames_it_reports(tmp_path):
    crowd = rc.Crowd.generate(20, seed=2)
    sim = rc.Simulation(crowd, backend="cpu")
    path = tmp_path / "trajectory.npy"
    frames = sim.record(path, 20, every=5)
    assert frames == 5 and sim.steps_taken == 20
    data = np.load(path)
    assert data.shape[:2] == (5, 20), data.shape


def test_ctrl_c_interrupts_a_long_step_between_batches():
    crowd = rc.Crowd.generate(20000, seed=1)
    sim = rc.Simulation(crowd, backend="cpu")
    # Python's own Ctrl-C handler, which a process started in the background (`cmd &` in a
    # script) does not get: SIGINT is ignored there, interrupt_main() then does nothing,
    # and the step below would run its 1e9 steps.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        timer = threading.Timer(0.5, _thread.interrupt_main)
        timer.start()
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            sim.step(10**9)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - start < 30
    assert 0 < sim.steps_taken < 10**9
    assert np.isfinite(sim.states()["position"]).all()


def test_step_releases_the_gil():
    crowd = rc.Crowd.generate(20000, seed=1)
    sim = rc.Simulation(crowd, backend="cpu")
    worker = threading.Thread(target=sim.step, args=(3000,))
    ticks = 0
    worker.start()
    while worker.is_alive():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    assert sim.steps_taken == 3000
    assert ticks > 20, f"the main thread ran only {ticks} times while stepping"


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_memory_stays_flat_over_a_thousand_create_step_read_cycles(backend):
    crowd = rc.Crowd.generate(200, seed=3, forces=[{"type": "gravity", "acceleration": [0, 0, -9.81]}])

    def cycle():
        sim = rc.Simulation(crowd, backend=backend)
        sim.step(5)
        assert sim.states()["position"].shape == (200, 3)

    for _ in range(100):  # warm-up: the GPU device, pipelines, allocator pools
        cycle()
    before = rss_bytes()
    for _ in range(1000):
        cycle()
    growth = rss_bytes() - before
    # 1,000 leaked simulations of 200 bodies would be tens of MB at the least.
    assert growth < 8 << 20, f"{backend}: RSS grew by {growth / 2**20:.1f} MiB"


def test_cross_check_and_info():
    report = rc.cross_check(rc.Crowd.cross_check_crowd(200, seed=5), 50)
    # The CLI's `check` from Python: its crowd by default.
    assert rc.cross_check(steps=20, bodies=100).keys() == report.keys()
    assert set(report) >= {"gpu", "cpu"}
    for backend, quantities in report.items():
        assert set(quantities) == {
            "position", "orientation", "velocity", "angular_velocity",
            "linear_momentum", "angular_momentum",
        }
        assert max(quantities.values()) < F32_TOLERANCE, (backend, quantities)
        if backend in F32_BACKENDS:
            assert max(quantities.values()) > 0.0, backend
    about = rc.info()
    assert about["adapters"], about
    assert {"name", "supports_f64", "limits"} <= set(about["adapters"][0])
    assert "gpu-f64" in about["backends"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_freeze_quarantines_a_runaway_body_which_a_reset_brings_back(backend):
    crowd = rc.Crowd.generate(30, seed=5, speed=1.0)
    sim = rc.Simulation(crowd, backend=backend, on_fault="freeze", max_speed=10.0)
    sim.set_states([12], velocity=[[40.0, 0.0, 0.0]])  # past the limit from the first step
    sim.step(20)
    frozen = sim.quarantined()
    assert [q["body"] for q in frozen] == [12]
    assert frozen[0]["fault"] == "speed" and frozen[0]["step"] == 0
    np.testing.assert_allclose(frozen[0]["velocity"], [40.0, 0.0, 0.0], rtol=1e-6)
    states = sim.states()
    np.testing.assert_allclose(states["position"][12], frozen[0]["position"], rtol=1e-6)
    # The rest moved on; reset, the body rejoins.
    sim.set_states([12], velocity=[[1.0, 0.0, 0.0]])
    sim.step(5)
    assert sim.quarantined() == []
    with pytest.raises(RuntimeError, match="body 12 passed its speed limit"):
        stopping = rc.Simulation(crowd, backend=backend, on_fault="stop", max_speed=10.0)
        stopping.set_states([12], velocity=[[40.0, 0.0, 0.0]])
        stopping.step(3)
        stopping.finish()
    with pytest.raises(ValueError, match="on_fault"):
        rc.Simulation(crowd, backend=backend, on_fault="later")
    with pytest.raises(ValueError, match="max_speed"):
        rc.Simulation(crowd, backend=backend, max_speed=-1.0)


def test_tangents_equal_the_clis_and_a_stiffness_sensitivity_its_differences(tmp_path):
    scene_path = write_scene(tmp_path)
    scene = rc.Scene.load(scene_path)
    names = ["state", "mass", "forces[3].stiffness"]
    for backend, dtype in [("gpu", np.float32), ("gpu-f64", np.float64),
                           ("cpu", np.float32), ("cpu-ref", np.float64)]:
        out = tmp_path / f"final-{backend}.npz"
        subprocess.run(
            [cli(), "run", str(scene_path), "--backend", backend, "--out", str(out),
             "--jacobian", "--sensitivity", "mass,forces[3].stiffness"],
            check=True, capture_output=True,
        )
        archive = np.load(out)
        sim = rc.Simulation(scene.crowd, backend=backend, tangents=names)
        sim.step(scene.steps)
        assert sim.jacobian().shape == (3, 13, 13) and sim.jacobian().dtype == dtype
        np.testing.assert_array_equal(sim.jacobian(), archive["jacobian"])
        for name in names[1:]:
            assert sim.sensitivity(name).dtype == dtype
            np.testing.assert_array_equal(sim.sensitivity(name), archive[name])

    # d (x, q, P, L) / d stiffness of the spring's body, against central differences.
    def final_state(stiffness):
        changed = json.loads(json.dumps(SCENE))
        changed["forces"][3]["stiffness"] = stiffness
        path = tmp_path / "nudged.json"
        path.write_text(json.dumps(changed))
        nudged = rc.Simulation(rc.Scene.load(path).crowd, backend="cpu-ref")
        nudged.step(scene.steps)
        s = nudged.states()
        return np.concatenate([s[k][1] for k in
                               ("position", "orientation", "linear_momentum", "angular_momentum")])

    h = 1e-4
    difference = (final_state(20 + h) - final_state(20 - h)) / (2 * h)
    column = sim.sensitivity("forces[3].stiffness")[1, :, 0]
    assert np.abs(column - difference).max() <= 1e-6 * np.abs(difference).max()
    assert not sim.sensitivity("forces[3].stiffness")[0].any(), "the spring pulls body 1 only"

    with pytest.raises(ValueError, match="`inertia` is not carried"):
        sim.sensitivity("inertia")
    # The GPU's tangents are the CPU's of its precision, bit for bit on lavapipe.
    for gpu, cpu in [("gpu", "cpu"), ("gpu-f64", "cpu-ref")]:
        pair = [rc.Simulation(scene.crowd, backend=b, tangents=names) for b in (gpu, cpu)]
        for one in pair:
            one.step(scene.steps)
        np.testing.assert_array_equal(pair[0].jacobian(), pair[1].jacobian())
    with pytest.raises(ValueError, match="a spring force has no number `stifness`"):
        rc.Simulation(scene.crowd, backend="cpu-ref", tangents=["forces[3].stifness"])


def test_colliding_spheres_leave_with_the_impulse_formulas_velocities():
    # Two spheres head-on with collisions on (the scene format's `collisions`): after the
    # impact their velocities are the impulse formula's, and momentum is conserved.
    collisions = {"restitution": 0.5, "friction": 0.3}
    scene = {
        "dt": 0.001,
        "steps": 400,
        "collisions": collisions,
        "bodies": [
            {"mass": 1, "shape": {"sphere": 0.1}, "position": [-0.5, 0, 0], "velocity": [2, 0, 0]},
            {"mass": 3, "shape": {"sphere": 0.2}, "position": [0.5, 0, 0], "velocity": [-1, 0, 0]},
        ],
    }
    sim = rc.Simulation(rc.Crowd.from_scene_json(json.dumps(scene)), backend="cpu-ref")
    sim.step(400)
    vx = sim.states()["velocity"][:, 0]
    j = (1.0 + 0.5) * (1.0 * 3.0 / 4.0) * 3.0
    np.testing.assert_allclose(vx, [2.0 - j, -1.0 + j / 3.0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(vx @ [1.0, 3.0], 2.0 - 3.0, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match=r"^collisions: bodies collide on `cpu-ref` so far, not on `cpu`"):
        rc.Simulation(rc.Crowd.from_scene_json(json.dumps(scene)), backend="cpu")

    # The keyword: a generated crowd of spheres collides, and runs to the same bits twice;
    # without the keyword it ends elsewhere.
    def generated(**keywords):
        crowd = rc.Crowd.generate(
            200, seed=5, shapes=["sphere"], size=[0.1, 0.2], region=[[0, 0, 0], [2, 2, 2]], **keywords
        )
        sim = rc.Simulation(crowd, backend="cpu-ref")
        sim.step(200)
        return sim.states()["position"]

    colliding = generated(collisions=collisions)
    np.testing.assert_array_equal(colliding, generated(collisions=collisions))
    assert not np.array_equal(colliding, generated())
    # Bodies given by their inertia alone have no shape to collide with: refused by name.
    with pytest.raises(ValueError, match=r"^bodies\[0\]\.shape: a body without a shape does not collide"):
        rc.Crowd.from_arrays([1.0], [[0.0, 0.0, 0.0]], moments=[[1.0, 1.0, 1.0]], collisions=collisions)
