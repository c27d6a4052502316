#!/usr/bin/env bash
# Runs every scene in scenes/ on every backend with two builds and compares every file they
# write: final states (.csv, .npy), a recorded trajectory (.npz), checkpoints, the list of
# frozen bodies, the Jacobian archive (.npz with every tangent column), the sensitivities'
# archive and the exit code. For changes that must not change a byte (a refactor).
#
#   scripts/outputs-compare.sh OLD_BINARY NEW_BINARY
#
# Each case runs 120 steps with a recording and checkpoints, then 60 steps under
# `--on-fault freeze --max-speed 3`, then 4 steps carrying the whole Jacobian (`--jacobian`),
# then 4 steps carrying the sensitivities along the mass, the inertia and every number of
# every force and plane of the scene (`--sensitivity`, the names read from the scene).
# Both builds write to the same paths (moved aside after
# each run), since checkpoints record their paths.
set -u
if [ $# -ne 2 ]; then
    echo "usage: scripts/outputs-compare.sh OLD_BINARY NEW_BINARY" >&2
    exit 2
fi
old=$(realpath "$1")
new=$(realpath "$2")
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failed=0
pairs=0
for scene in scenes/*.json; do
    name=$(basename "$scene" .json)
    directions=$(python3 -c '
import json, sys
scene = json.load(open(sys.argv[1]))
names = ["mass", "inertia"]
for i, force in enumerate(scene.get("forces", [])):
    names += [f"forces[{i}].{key}" for key, value in force.items()
              if key not in ("type", "body", "bodies") and not isinstance(value, (str, bool))]
for i, plane in enumerate(scene.get("planes", [])):
    names += [f"planes[{i}].{key}" for key in plane]
print(",".join(names))' "$scene")
    for backend in cpu-ref cpu gpu gpu-f64; do
        for side in old new; do
            binary=$old
            [ "$side" = new ] && binary=$new
            work="$dir/work"
            rm -rf "$work"
            mkdir -p "$work" "$dir/$side"
            "$binary" run "$scene" --backend "$backend" --steps 120 --out "$work/final.csv" \
                --record "$work/traj.npz" --every 30 --checkpoint "$work/run.ckpt" \
                --checkpoint-every 50 --quiet >/dev/null 2>&1
            echo $? >"$work/exit-code"
            "$binary" run "$scene" --backend "$backend" --steps 60 --out "$work/final.npy" \
                --on-fault freeze --max-speed 3 --quiet >/dev/null 2>&1
            echo $? >>"$work/exit-code"
            "$binary" run "$scene" --backend "$backend" --steps 4 --jacobian \
                --out "$work/jacobian.npz" --quiet >/dev/null 2>&1
            echo $? >>"$work/exit-code"
            "$binary" run "$scene" --backend "$backend" --steps 4 --sensitivity "$directions" \
                --out "$work/sensitivities.npz" --quiet >/dev/null 2>&1
            echo $? >>"$work/exit-code"
            mv "$work" "$dir/$side/$name-$backend"
        done
        for file in $( (ls "$dir/old/$name-$backend"; ls "$dir/new/$name-$backend") | sort -u); do
            pairs=$((pairs + 1))
            if ! cmp -s "$dir/old/$name-$backend/$file" "$dir/new/$name-$backend/$file"; then
                echo "differs: $name on $backend: $file"
                failed=1
            fi
        done
    done
done
echo "$pairs file pairs compared; $([ $failed = 0 ] && echo 'all identical' || echo 'some differ')"
exit $failed
