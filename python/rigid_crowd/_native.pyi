"""Type stubs of the compiled module; see the package docstring for the whole API."""

from os import PathLike
from typing import Any, Dict, List, Optional, Union

import numpy as np
import numpy.typing as npt

_Path = Union[str, "PathLike[str]"]
_Array = npt.ArrayLike

class Crowd:
    """A crowd: bodies, forces, planes, integrator and time step."""

    @staticmethod
    def from_arrays(
        settings: str,
        masses: npt.NDArray[np.float64],
        positions: npt.NDArray[np.float64],
        orientations: npt.NDArray[np.float64],
        velocities: npt.NDArray[np.float64],
        angular_velocities: npt.NDArray[np.float64],
        inertia: Optional[npt.NDArray[np.float64]] = None,
        moments: Optional[npt.NDArray[np.float64]] = None,
    ) -> "Crowd": ...
    @staticmethod
    def from_json(text: str) -> "Crowd": ...
    @staticmethod
    def cross_check_crowd(
        count: int, seed: int = 1, integrator: str = "rk4", dt: float = 1e-3
    ) -> "Crowd": ...
    def __len__(self) -> int: ...
    @property
    def dt(self) -> float:
        """The time step, in seconds."""
    @property
    def integrator(self) -> str:
        """The integrator's name."""
    @property
    def masses(self) -> npt.NDArray[np.float64]:
        """Every body's mass (N,)."""

class Scene:
    """A scene file: its crowd and how many steps to run."""

    @staticmethod
    def load(path: _Path) -> "Scene":
        """Reads and validates a scene file; an invalid one raises ValueError naming the field."""
    @property
    def crowd(self) -> Crowd: ...
    @property
    def steps(self) -> int: ...

class Simulation:
    """A crowd being integrated on one backend: "gpu", "gpu-f64", "cpu" or "cpu-ref"."""

    def __init__(
        self,
        crowd: Crowd,
        backend: str = "gpu",
        *,
        on_fault: Optional[str] = None,
        max_speed: Optional[float] = None,
        max_angular_speed: Optional[float] = None,
        max_distance: Optional[float] = None,
        tangents: Optional[List[str]] = None,
        f32_divisions_in_f64: bool = False,
    ) -> None:
        """on_fault: "stop" (an error) or "freeze" (the body alone, see quarantined) for a body
        that goes non-finite or leaves the envelope of the max_* limits. tangents: the
        derivatives to carry ("state", "mass", "inertia", "forces[i].FIELD"; cpu-ref).
        f32_divisions_in_f64 ("gpu" only): the f32 kernel's divisions and square roots taken
        in f64, so that "gpu" gives "cpu"'s bits where the adapter's f32 ones are approximate."""
    def jacobian(self) -> np.ndarray:
        """d y(now) / d y(start), (N, 13, 13) float64, y = x y z qw qx qy qz px py pz lx ly lz."""
    def sensitivity(self, name: str) -> np.ndarray:
        """d y(now) / d name, (N, 13, k) float64, the start state held fixed."""
    def quarantined(self) -> List[Dict[str, Any]]:
        """The frozen bodies: body, step, fault and their last good state (orientation w x y z)."""
    @staticmethod
    def resume(path: _Path, backend: Optional[str] = None) -> "Simulation":
        """Continues the run a checkpoint file captured, bit for bit on the same backend."""
    def step(self, steps: int) -> None:
        """Advances every body by `steps` steps without the GIL; Ctrl-C stops it between batches."""
    def finish(self) -> None:
        """Waits until every queued step is done."""
    def states(self) -> Dict[str, np.ndarray]:
        """position (N, 3), orientation (N, 4, w x y z), velocity, angular_velocity,
        linear_momentum, angular_momentum (N, 3): float32 on gpu and cpu, float64 on gpu-f64
        and cpu-ref."""
    def set_states(
        self,
        indices: List[int],
        position: Optional[_Array] = None,
        orientation: Optional[_Array] = None,
        velocity: Optional[_Array] = None,
        angular_velocity: Optional[_Array] = None,
        linear_momentum: Optional[_Array] = None,
        angular_momentum: Optional[_Array] = None,
    ) -> None:
        """New states for the bodies `indices`; what is not given keeps its current value."""
    def checkpoint(self, path: _Path) -> None:
        """Writes everything needed to continue this run (atomically)."""
    def record(self, path: _Path, steps: int, every: int = 1) -> int:
        """Runs `steps` steps, writing a frame every `every` steps (.csv, .npy or .npz);
        returns the frames written."""
    @property
    def backend(self) -> str: ...
    @property
    def f32_divisions_in_f64(self) -> bool:
        """Whether the "gpu" kernel takes its f32 divisions and square roots in f64."""
    @property
    def steps_taken(self) -> int: ...
    @property
    def time(self) -> float: ...
    def __len__(self) -> int: ...

def cross_check(crowd: Crowd, steps: int) -> Dict[str, Dict[str, float]]:
    """Each backend's largest relative deviation from the f64 reference, per quantity."""

def info() -> Dict[str, Any]:
    """The GPU adapters (name, backend, f64 support, limits) and the backends."""
