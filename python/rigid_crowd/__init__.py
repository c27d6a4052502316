"""Huge crowds of independent rigid bodies on the GPU, checked against an f64 CPU reference.

Crowds go in (a scene file, a seeded generator, or numpy arrays) and states come out as
numpy arrays, one per quantity. Quaternions are ``w, x, y, z`` everywhere.

>>> import rigid_crowd
>>> crowd = rigid_crowd.Crowd.generate(1000, seed=42, forces=[
...     {"type": "gravity", "acceleration": [0, 0, -9.81]}])
>>> sim = rigid_crowd.Simulation(crowd, backend="cpu")
>>> sim.step(100)
>>> sim.states()["position"].shape
(1000, 3)
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, Mapping, Optional

import numpy as np

from . import _native
from ._native import Scene, Simulation, info

__all__ = ["Crowd", "Scene", "Simulation", "cross_check", "info"]


def _settings(
    dt: float,
    forces: Optional[Iterable[Mapping[str, Any]]],
    planes: Optional[Iterable[Mapping[str, Any]]],
    integrator: str,
    start_step: int = 0,
    **extra: Any,
) -> str:
    """The scene-format JSON of everything but the listed bodies."""
    document = {
        "version": 1,
        "dt": dt,
        "steps": 0,
        "integrator": integrator,
        "forces": list(forces or []),
        "planes": list(planes or []),
        "start_step": start_step,
    }
    document.update(extra)
    try:
        return json.dumps(document, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ValueError(f"scene settings: {e}") from None


def _collisions(collisions: Optional[Mapping[str, float]]) -> Dict[str, Any]:
    """The settings' ``"collisions"`` entry, if asked for (none keeps the bodies independent)."""
    return {} if collisions is None else {"collisions": dict(collisions)}


def _rows(name: str, values: Any, count: int, width: int) -> np.ndarray:
    """`values` as a contiguous float64 (count, width) array, or a ValueError naming it."""
    try:
        array = np.ascontiguousarray(values, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{name}: must be an array of numbers ({e})") from None
    if array.shape != (count, width):
        raise ValueError(f"{name}: must have shape ({count}, {width}), got {array.shape}")
    return array


class Crowd:
    """Constructors of crowds; every one returns the compiled ``rigid_crowd.Crowd``.

    Forces and planes are lists of dicts in the scene format (``{"type": "gravity",
    "acceleration": [0, 0, -9.81]}``, ``{"point": [0, 0, 0], "normal": [0, 0, 1]}``), the
    integrator one of ``rigid-crowd integrators``' names (``"rk4"`` by default), and
    ``collisions`` (``{"restitution": 0.3, "friction": 0.5}``) makes every body collide with
    every other, as a scene's ``"collisions"`` does.
    """

    @staticmethod
    def generate(
        count: int,
        seed: int = 1,
        *,
        dt: float = 1e-3,
        forces: Optional[Iterable[Mapping[str, Any]]] = None,
        planes: Optional[Iterable[Mapping[str, Any]]] = None,
        integrator: str = "rk4",
        collisions: Optional[Mapping[str, float]] = None,
        **spec: Any,
    ) -> "_native.Crowd":
        """``count`` seeded random bodies, as a scene's ``"crowd"`` entry makes them; further
        keywords are that entry's fields."""
        crowd = {"count": count, "seed": seed, **spec}
        extra = _collisions(collisions)
        return _native.Crowd.from_json(
            _settings(dt, forces, planes, integrator, crowd=crowd, **extra)
        )

    @staticmethod
    def from_arrays(
        masses: Any,
        positions: Any,
        *,
        inertia: Any = None,
        moments: Any = None,
        orientations: Any = None,
        velocities: Any = None,
        angular_velocities: Any = None,
        dt: float = 1e-3,
        forces: Optional[Iterable[Mapping[str, Any]]] = None,
        planes: Optional[Iterable[Mapping[str, Any]]] = None,
        integrator: str = "rk4",
        start_step: int = 0,
        collisions: Optional[Mapping[str, float]] = None,
    ) -> "_native.Crowd":
        """Bodies from arrays: ``masses`` (N,), ``inertia`` (N, 3, 3) body-frame tensors or
        ``moments`` (N, 3) principal moments, ``positions`` (N, 3), ``orientations`` (N, 4)
        as ``w, x, y, z`` (identity if not given), world-frame ``velocities`` and
        ``angular_velocities`` (N, 3; zero if not given). Invalid values raise ValueError
        naming the field and the body, as a scene file's would."""
        try:
            masses = np.ascontiguousarray(masses, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise ValueError(f"masses: must be an array of numbers ({e})") from None
        if masses.ndim != 1:
            raise ValueError(f"masses: must have shape (N,), got {masses.shape}")
        n = masses.shape[0]
        if (inertia is None) == (moments is None):
            raise ValueError("inertia: give exactly one of `inertia` and `moments`")
        identity = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))
        zeros = np.zeros((n, 3))
        full = None
        if inertia is not None:
            full = np.ascontiguousarray(inertia, dtype=np.float64)
            if full.shape != (n, 3, 3):
                raise ValueError(f"inertia: must have shape ({n}, 3, 3), got {full.shape}")
            full = np.ascontiguousarray(full.reshape(n, 9))
        return _native.Crowd.from_arrays(
            _settings(dt, forces, planes, integrator, start_step, **_collisions(collisions)),
            masses,
            _rows("positions", positions, n, 3),
            _rows("orientations", identity if orientations is None else orientations, n, 4),
            _rows("velocities", zeros if velocities is None else velocities, n, 3),
            _rows(
                "angular_velocities",
                zeros if angular_velocities is None else angular_velocities,
                n,
                3,
            ),
            inertia=full,
            moments=None if moments is None else _rows("moments", moments, n, 3),
        )

    @staticmethod
    def from_scene_json(text: str) -> "_native.Crowd":
        """The crowd of a scene given as JSON text."""
        return _native.Crowd.from_json(text)

    @staticmethod
    def cross_check_crowd(
        count: int, seed: int = 1, integrator: str = "rk4", dt: float = 1e-3
    ) -> "_native.Crowd":
        """The crowd ``rigid-crowd check`` compares the backends on: every force kind."""
        return _native.Crowd.cross_check_crowd(count, seed, integrator, dt)


def cross_check(
    crowd: Optional["_native.Crowd"] = None,
    steps: int = 1000,
    *,
    bodies: int = 10_000,
    seed: int = 1,
    integrator: str = "rk4",
    dt: float = 1e-3,
) -> Dict[str, Dict[str, float]]:
    """Runs ``crowd`` (by default the seeded every-force crowd of ``rigid-crowd check``, of
    ``bodies`` bodies) for ``steps`` steps on every backend and returns, per backend
    (``gpu``, ``gpu-f64`` where the adapter has f64, ``cpu``), the largest relative deviation
    from the f64 reference of each quantity."""
    if crowd is None:
        crowd = _native.Crowd.cross_check_crowd(bodies, seed, integrator, dt)
    return _native.cross_check(crowd, steps)
