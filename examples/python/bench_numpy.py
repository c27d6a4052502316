"""What rigid_crowd saves a numpy user: the same batched RK4 (momentum form, torque-free
bodies under gravity, renormalized quaternions) written in plain numpy, against
rigid_crowd's `cpu` and `gpu` backends, in body-steps per second; and the cost of the
Python layer itself (a call on a one-body crowd against the same call's work at 1e5).

    python examples/python/bench_numpy.py [BODIES ...]
"""

import sys
import time

import numpy as np

import rigid_crowd

GRAVITY = np.array([0.0, 0.0, -9.81])
DT = 1e-3


def rotation(q):
    w, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    r = np.empty((len(q), 3, 3))
    r[:, 0, 0] = 1 - 2 * (y * y + z * z)
    r[:, 0, 1] = 2 * (x * y - w * z)
    r[:, 0, 2] = 2 * (x * z + w * y)
    r[:, 1, 0] = 2 * (x * y + w * z)
    r[:, 1, 1] = 1 - 2 * (x * x + z * z)
    r[:, 1, 2] = 2 * (y * z - w * x)
    r[:, 2, 0] = 2 * (x * z - w * y)
    r[:, 2, 1] = 2 * (y * z + w * x)
    r[:, 2, 2] = 1 - 2 * (x * x + y * y)
    return r


def derivative(state, mass, inv_moments):
    x, q, p, angular = state
    norm = q / np.linalg.norm(q, axis=1, keepdims=True)
    r = rotation(norm)
    body_l = np.einsum("nji,nj->ni", r, angular)
    omega = np.einsum("nij,nj->ni", r, body_l * inv_moments)
    w, v = q[:, :1], q[:, 1:]
    dq = 0.5 * np.concatenate(
        [-(omega * v).sum(axis=1, keepdims=True), w * omega + np.cross(omega, v)], axis=1
    )
    return [p / mass[:, None], dq, mass[:, None] * GRAVITY, np.zeros_like(angular)]


def numpy_rk4_step(state, mass, inv_moments):
    k1 = derivative(state, mass, inv_moments)
    k2 = derivative([s + 0.5 * DT * k for s, k in zip(state, k1)], mass, inv_moments)
    k3 = derivative([s + 0.5 * DT * k for s, k in zip(state, k2)], mass, inv_moments)
    k4 = derivative([s + DT * k for s, k in zip(state, k3)], mass, inv_moments)
    new = [s + DT / 6 * (a + 2 * b + 2 * c + d) for s, a, b, c, d in zip(state, k1, k2, k3, k4)]
    new[1] /= np.linalg.norm(new[1], axis=1, keepdims=True)
    return new


def body_steps_per_second(run, bodies, steps):
    run(1)  # warm-up
    start = time.perf_counter()
    run(steps)
    return bodies * steps / (time.perf_counter() - start)


def main():
    sizes = [int(float(n)) for n in sys.argv[1:]] or [100_000, 1_000_000]
    rng = np.random.default_rng(1)
    print(f"rigid_crowd {rigid_crowd.info()['version']}; GPU adapter: "
          + (rigid_crowd.info()["adapters"][0]["name"] if rigid_crowd.info()["adapters"] else "none"))
    for n in sizes:
        mass = rng.uniform(0.5, 2.0, n)
        # Boxes: their principal moments always satisfy A + B >= C.
        a, b, c = rng.uniform(0.2, 1.0, (3, n))
        moments = mass[:, None] / 12 * np.stack([b * b + c * c, a * a + c * c, a * a + b * b], axis=1)
        q = rng.normal(size=(n, 4))
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        positions = rng.uniform(-10, 10, (n, 3))
        omega = rng.normal(size=(n, 3))
        crowd = rigid_crowd.Crowd.from_arrays(
            mass, positions, moments=moments, orientations=q, angular_velocities=omega, dt=DT,
            forces=[{"type": "gravity", "acceleration": GRAVITY.tolist()}],
        )
        state = [positions.copy(), q.copy(), np.zeros((n, 3)), np.zeros((n, 3))]
        sim0 = rigid_crowd.Simulation(crowd, backend="cpu-ref")
        state[3] = sim0.states()["angular_momentum"].copy()
        inv = 1.0 / moments

        def numpy_run(steps):
            nonlocal state
            for _ in range(steps):
                state = numpy_rk4_step(state, mass, inv)

        rates = {"numpy (f64)": body_steps_per_second(numpy_run, n, 3 if n >= 1_000_000 else 10)}
        for backend in ["cpu", "gpu"]:
            sim = rigid_crowd.Simulation(crowd, backend=backend)

            def run(steps, sim=sim):
                sim.step(steps)
                sim.finish()

            rates[f"rigid_crowd {backend}"] = body_steps_per_second(run, n, 50)
        base = rates["numpy (f64)"]
        for name, rate in rates.items():
            print(f"{n:>9} bodies  {name:<16} {rate / 1e6:8.2f} M body-steps/s  {rate / base:7.1f}x numpy")

    # The Python layer's own cost: the calls on a one-body crowd, against step(100) + states()
    # at 1e5 bodies on the fast CPU path.
    one = rigid_crowd.Simulation(rigid_crowd.Crowd.generate(1, seed=1), backend="cpu")
    calls = 2000
    start = time.perf_counter()
    for _ in range(calls):
        one.step(100)
        one.states()
    per_call = (time.perf_counter() - start) / calls
    big = rigid_crowd.Simulation(rigid_crowd.Crowd.generate(100_000, seed=1), backend="cpu")
    big.step(100)
    start = time.perf_counter()
    for _ in range(5):
        big.step(100)
        big.states()
    work = (time.perf_counter() - start) / 5
    print(f"python layer: {per_call * 1e6:.1f} us per step(100) + states() on one body, "
          f"{100 * per_call / work:.3f}% of the same calls at 1e5 bodies ({work * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
