#!/usr/bin/env python3
"""Writes a scene of bodies standing at rest on the floor of a pit of five planes, each on
a square grid 2.5 m apart with its lowest point on the floor, under gravity and linear drag:
the piles docs/contacts.md times ("Rest"). Sizes 0.1 to 0.5 m, masses 0.5 to 5 kg, seeded.

    scripts/resting-pile.py OUT.json [--shapes sphere,capsule,...] [--bodies N] [--no-planes]

Shapes stand unturned: a capsule and a cylinder on their flat end or cap, along z."""
import argparse
import json
import math
import random

# The height of each shape's centre above the floor, unturned, for size s.
SHAPES = {
    "sphere": lambda s: ({"sphere": s}, s),
    "box": lambda s: ({"box": [s, 1.3 * s, 0.8 * s]}, 0.4 * s),
    "cylinder": lambda s: ({"cylinder": {"radius": s / 2, "height": s}}, s / 2),
    "capsule": lambda s: ({"capsule": {"radius": s / 3, "length": s}}, s / 2 + s / 3),
    "ellipsoid": lambda s: ({"ellipsoid": [s, 0.8 * s, 0.6 * s]}, 0.6 * s),
}

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("out")
parser.add_argument("--shapes", default=",".join(SHAPES))
parser.add_argument("--bodies", type=int, default=5000)
parser.add_argument("--no-planes", action="store_true")
args = parser.parse_args()
kinds = args.shapes.split(",")
for kind in kinds:
    if kind not in SHAPES:
        parser.error(f"--shapes: no shape '{kind}' (one of {', '.join(SHAPES)})")
if args.bodies < 1:
    parser.error("--bodies: must be at least 1")

random.seed(5)
side = math.ceil(math.sqrt(args.bodies))
cell = 2.5
bodies = []
for i in range(args.bodies):
    shape, height = SHAPES[kinds[i % len(kinds)]](random.uniform(0.1, 0.5))
    bodies.append({"mass": random.uniform(0.5, 5.0), "shape": shape,
                   "position": [(i % side) * cell, (i // side) * cell, height]})
far = side * cell
wall = {"restitution": 0.5, "friction": 0.3}
planes = [{"point": [0, 0, 0], "normal": [0, 0, 1], "restitution": 0.4, "friction": 0.5},
          {"point": [-cell, 0, 0], "normal": [1, 0, 0], **wall},
          {"point": [far, 0, 0], "normal": [-1, 0, 0], **wall},
          {"point": [0, -cell, 0], "normal": [0, 1, 0], **wall},
          {"point": [0, far, 0], "normal": [0, -1, 0], **wall}]
scene = {"dt": 0.001, "steps": 300, "integrator": "rk4",
         "forces": [{"type": "gravity", "acceleration": [0, 0, -9.81]},
                    {"type": "linear_drag", "linear": 0.3, "angular": 0.05}],
         "bodies": bodies}
if not args.no_planes:
    scene["planes"] = planes
with open(args.out, "w") as out:
    json.dump(scene, out)
