#!/usr/bin/env bash
# The measurements to take on a machine with a real GPU, in one call that fits a short lease:
# the adapter's limits, the bit-for-bit checks (gpu == cpu, gpu-f64 == cpu-ref, on the seeded
# crowd under every integrator and on every scene), then BENCHMARKS.md's "On a GPU machine"
# bench (split at 1e8 bodies, so that a refusal there cannot lose the smaller sizes) and an
# f64 bench. Each part has its own time limit, and every output goes to OUT as it is made.
#
#   scripts/gpu-machine.sh BINARY OUT_DIR
set -u
if [ $# -ne 2 ]; then
    echo "usage: scripts/gpu-machine.sh BINARY OUT_DIR" >&2
    exit 2
fi
bin=$(realpath "$1")
out=$2
mkdir -p "$out"
cd "$(dirname "$0")/.."
log="$out/log.txt"
say() { echo "== [$(date +%T)] $*" | tee -a "$log"; }
part() { # part SECONDS COMMAND...: runs one part under its limit, its output into the log
    local limit=$1
    shift
    say "$*"
    timeout "$limit" "$@" 2>&1 | tee -a "$log"
    say "exit ${PIPESTATUS[0]}"
}

say "machine"
{ nvidia-smi -L; nproc; uname -r; } 2>&1 | tee -a "$log"
part 60 "$bin" info

for integrator in rk4 lie_rk4 euler symplectic_euler; do
    part 60 "$bin" check --bodies 100000 --steps 1000 --integrator "$integrator" --no-custom-force
done
part 60 "$bin" check --bodies 100000 --steps 1000

scratch=$(mktemp -d)
for scene in scenes/*.json; do
    for pair in "gpu cpu" "gpu-f64 cpu-ref"; do
        set -- $pair
        for backend in "$1" "$2"; do
            timeout 60 "$bin" run "$scene" --backend "$backend" --steps 600 \
                --out "$scratch/$backend.npy" --quiet >/dev/null 2>>"$log"
        done
        if cmp -s "$scratch/$1.npy" "$scratch/$2.npy"; then verdict=identical; else verdict=DIFFER; fi
        say "$(basename "$scene") 600 steps: $1 and $2 final states $verdict"
        rm -f "$scratch"/*.npy
    done
done

# The tangents: the Jacobian and the floor's numbers, through contacts on floor.json.
for scene in scenes/example.json scenes/floor.json; do
    for pair in "gpu cpu" "gpu-f64 cpu-ref"; do
        set -- $pair
        for backend in "$1" "$2"; do
            timeout 60 "$bin" run "$scene" --backend "$backend" --steps 200 --jacobian \
                --out "$scratch/$backend.npz" --quiet >/dev/null 2>>"$log"
        done
        if cmp -s "$scratch/$1.npz" "$scratch/$2.npz"; then verdict=identical; else verdict=DIFFER; fi
        say "$(basename "$scene") 200 steps with --jacobian: $1 and $2 archives $verdict"
        rm -f "$scratch"/*.npz
    done
done
rm -rf "$scratch"

part 240 "$bin" bench --bodies 1e4..1e7 --steps 32 --backends cpu,gpu --fuse 1,8 \
    --workgroup-sizes 32,64,128,256 --shader checked,trusted --json "$out/gpu.json" --plot "$out/gpu.svg"
part 150 "$bin" bench --bodies 1e8 --steps 32 --backends cpu,gpu --fuse 1,8 \
    --workgroup-sizes 64,256 --shader trusted --repeats 3 --json "$out/gpu-1e8.json"
part 90 "$bin" bench --bodies 1e5..1e7 --steps 32 --backends cpu-ref,gpu-f64 --fuse 1,8 \
    --workgroup-sizes 64 --repeats 3 --json "$out/gpu-f64.json"
part 90 "$bin" bench --bodies 1e5 --steps 32 --backends gpu,gpu-f64 --fuse 8 \
    --workgroup-sizes 64 --repeats 3 --tangents none,mass,state --json "$out/gpu-tangents.json"
say "done"
