"""The README's Python snippet: a seeded crowd under gravity, stepped on the GPU (or the CPU
where there is none), states out as numpy arrays.

    pip install ./python && python examples/python/quickstart.py
"""

import rigid_crowd

backend = "gpu" if rigid_crowd.info()["adapters"] else "cpu"
crowd = rigid_crowd.Crowd.generate(
    10_000, seed=42, forces=[{"type": "gravity", "acceleration": [0, 0, -9.81]}]
)
sim = rigid_crowd.Simulation(crowd, backend=backend)
sim.step(100)
states = sim.states()  # numpy arrays: position (N, 3), orientation (N, 4; w, x, y, z), ...
print(backend, states["position"].dtype, states["position"].mean(axis=0))
