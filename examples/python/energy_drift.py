"""Energy drift of a torque-free tumbling crowd, per integrator: the kinetic energy after
each batch of steps relative to its start. Plots with matplotlib if it is installed,
otherwise prints the table.

    python examples/python/energy_drift.py [BACKEND]
"""

import sys

import numpy as np

import rigid_crowd


def kinetic_energy(crowd, states):
    masses = crowd.masses
    v = states["velocity"].astype(np.float64)
    w = states["angular_velocity"].astype(np.float64)
    angular = states["angular_momentum"].astype(np.float64)
    return 0.5 * (masses * (v * v).sum(axis=1)).sum() + 0.5 * (w * angular).sum()


def drift(integrator, backend, batches=20, steps=200):
    crowd = rigid_crowd.Crowd.generate(2_000, seed=7, integrator=integrator, dt=0.01)
    sim = rigid_crowd.Simulation(crowd, backend=backend)
    start = kinetic_energy(crowd, sim.states())
    times, drifts = [0.0], [0.0]
    for _ in range(batches):
        sim.step(steps)
        times.append(sim.time)
        drifts.append(kinetic_energy(crowd, sim.states()) / start - 1.0)
    return np.array(times), np.array(drifts)


def main():
    backend = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    results = {name: drift(name, backend) for name in ["rk4", "lie_rk4", "lie_poisson", "lie_poisson4", "euler", "symplectic_euler"]}
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: printing the drift instead of plotting it")
        for name, (times, drifts) in results.items():
            print(f"{name:>17}: relative energy drift after {times[-1]:.0f} s: {drifts[-1]:+.3e}")
        return
    for name, (times, drifts) in results.items():
        plt.plot(times, drifts, label=name)
    plt.xlabel("simulated time (s)")
    plt.ylabel("relative kinetic-energy drift")
    plt.yscale("symlog", linthresh=1e-9)
    plt.legend()
    plt.title(f"2,000 torque-free bodies, dt = 0.01 s, backend {backend}")
    plt.savefig("energy_drift.png", dpi=120)
    print("wrote energy_drift.png")


if __name__ == "__main__":
    main()
