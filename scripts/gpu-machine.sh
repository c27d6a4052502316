#!/usr/bin/env bash
# The measurements to take on a machine with a real GPU, in one call that fits a short lease:
# the adapter's limits, the bit-for-bit checks (gpu == cpu, gpu-f64 == cpu-ref, on the seeded
# crowd under every integrator, on every scene and on the tangents' archives), the GPU's
# tangent rows, every integrator's cost, then BENCHMARKS.md's "On a GPU machine" bench and an
# f64 bench. The most wanted come first; each part has its own time limit, and every output
# goes to OUT as it is made.
#
#   scripts/gpu-machine.sh BINARY OUT_DIR [--full]
#
# Without --full the plain benches are shortened (1e5 and 1e7 bodies, workgroup 64, trusted),
# so that the whole fits about seven minutes of a fifteen-minute lease (the tangent kernels
# take NVIDIA's compiler 10 to 60 s each).
set -u
if [ $# -lt 2 ] || [ $# -gt 3 ] || { [ $# -eq 3 ] && [ "$3" != --full ]; }; then
    echo "usage: scripts/gpu-machine.sh BINARY OUT_DIR [--full]" >&2
    exit 2
fi
full=${3:-}
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

# Every integrator `check --help` names.
integrators=$("$bin" check --help | sed -n 's/.*--integrator <INTEGRATOR>.*(\(.*\)).*/\1/p' | tr -d '`,' | sed 's/ or / /')
say "integrators: $integrators"
for integrator in $integrators; do
    part 60 "$bin" check --bodies 100000 --steps 1000 --integrator "$integrator" --no-custom-force
done
part 60 "$bin" check --bodies 100000 --steps 1000
# The f32 kernel with its divisions and square roots in f64: cpu's bits where the f64 ones
# are exact (info's arithmetic lines say whether they are).
for integrator in $integrators; do
    part 60 "$bin" check --bodies 100000 --steps 1000 --integrator "$integrator" \
        --no-custom-force --f32-divisions-in-f64
done

# `run` on every scene, then with --jacobian on two (the floor's through contacts), each
# GPU backend against its CPU twin: `gpu` natively and with its f32 divisions in f64.
scratch=$(mktemp -d)
compare() { # compare SCENE STEPS EXTENSION RUN_FLAGS...: the three pairs' outputs, byte for byte
    local scene=$1 steps=$2 ext=$3
    shift 3
    local pair label
    for pair in "gpu cpu" "gpu:exact cpu" "gpu-f64 cpu-ref"; do
        set -- $pair "$@"
        local gpu=$1 cpu=$2
        shift 2
        local flags=()
        label=$gpu
        if [ "$gpu" = gpu:exact ]; then gpu=gpu; flags=(--f32-divisions-in-f64); label="gpu --f32-divisions-in-f64"; fi
        timeout 90 "$bin" run "$scene" --backend "$gpu" "${flags[@]}" --steps "$steps" "$@" \
            --out "$scratch/gpu.$ext" --quiet >/dev/null 2>>"$log"
        timeout 60 "$bin" run "$scene" --backend "$cpu" --steps "$steps" "$@" \
            --out "$scratch/cpu.$ext" --quiet >/dev/null 2>>"$log"
        if cmp -s "$scratch/gpu.$ext" "$scratch/cpu.$ext"; then verdict=identical; else verdict=DIFFER; fi
        say "$(basename "$scene") $steps steps $*: $label and $cpu $verdict"
        rm -f "$scratch"/*."$ext"
    done
}
for scene in scenes/*.json; do
    compare "$scene" 600 npy
done
for scene in scenes/example.json scenes/floor.json; do
    compare "$scene" 200 npz --jacobian
done
# A checkpointed run resumed keeps its f32 divisions: the uninterrupted run's bytes.
timeout 60 "$bin" run scenes/rain.json --backend gpu --f32-divisions-in-f64 --steps 600 \
    --out "$scratch/whole.npy" --quiet >/dev/null 2>>"$log"
timeout 60 "$bin" run scenes/rain.json --backend gpu --f32-divisions-in-f64 --steps 250 \
    --checkpoint "$scratch/run.ckpt" --checkpoint-every 250 --out "$scratch/part.npy" --quiet >/dev/null 2>>"$log"
timeout 60 "$bin" resume "$scratch/run.ckpt" --steps 350 --out "$scratch/part.npy" --quiet >/dev/null 2>>"$log"
if cmp -s "$scratch/part.npy" "$scratch/whole.npy"; then verdict=identical; else verdict=DIFFER; fi
say "rain.json 250 steps, checkpoint, resume 350: against the uninterrupted run $verdict"
rm -rf "$scratch"

# Runs of a few milliseconds spread by up to 5x on the H100 (clocks between short
# dispatches, it seems): every timed run here is long enough to keep the GPU busy.
part 180 "$bin" bench --bodies 1e6 --steps 256 --backends gpu,gpu-f64 --fuse 8 --tangent-blocks auto,4 \
    --workgroup-sizes 64 --repeats 3 --tangents none,mass,inertia,state --json "$out/gpu-tangents.json"
part 60 "$bin" bench --bodies 1e7 --steps 256 --backends gpu --fuse 1,8 --f32-division native,f64 \
    --workgroup-sizes 64 --repeats 5 --json "$out/gpu-division.json"
part 150 "$bin" integrators --bodies 1000000 --steps 32 --json "$out/integrators.json"
if [ "$full" = --full ]; then
    part 240 "$bin" bench --bodies 1e4..1e7 --steps 32 --backends cpu,gpu --fuse 1,8 \
        --workgroup-sizes 32,64,128,256 --shader checked,trusted --json "$out/gpu.json" --plot "$out/gpu.svg"
    part 150 "$bin" bench --bodies 1e8 --steps 32 --backends cpu,gpu --fuse 1,8 \
        --workgroup-sizes 64,256 --shader trusted --repeats 3 --json "$out/gpu-1e8.json"
else
    part 90 "$bin" bench --bodies 1e5,1e7 --steps 256 --backends cpu,gpu --fuse 1,8 \
        --workgroup-sizes 64 --repeats 3 --json "$out/gpu.json"
fi
part 90 "$bin" bench --bodies 1e5..1e7 --steps 256 --backends gpu-f64 --fuse 1,8 \
    --workgroup-sizes 64 --repeats 3 --json "$out/gpu-f64.json"
say "done"
