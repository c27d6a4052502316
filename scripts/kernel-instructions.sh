#!/usr/bin/env bash
# x86 instructions per body-step that lavapipe's compiled integration kernel executes,
# counted by valgrind's callgrind: a figure machine noise does not move, where the kernel's
# wall time on this VM spreads by 30% from run to run. lavapipe's JIT code is the only code
# callgrind finds in no file (object `???`); the bench runs the kernel twice (warm-up and one
# timed run), so the count is divided by 2 x bodies x steps.
#
#   scripts/kernel-instructions.sh [BINARY...]
#   WORKLOADS="gravity-drag every-force" BODIES=4096 STEPS=8 FUSE=8 scripts/kernel-instructions.sh
#   BACKEND=gpu-f64 WORKLOADS=contacts scripts/kernel-instructions.sh   (the f64 kernel)
#   TANGENTS=state scripts/kernel-instructions.sh   (the tangent kernels of the Jacobian's
#   blocks, summed; TANGENTS=none, the default, counts the plain kernel)
#
# With several binaries (say an older build's, from scripts/bench-compare.sh, and this
# one's) each workload is counted for each, so the figures compare kernels one for one.
# Needs valgrind; takes about a minute a count (compiling the kernel under valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
workloads=${WORKLOADS:-"gravity-drag every-force contacts"}
bodies=${BODIES:-4096}
steps=${STEPS:-8}
fuse=${FUSE:-8}
backend=${BACKEND:-gpu}
tangents=${TANGENTS:-none}
binaries=("$@")
if [ ${#binaries[@]} -eq 0 ]; then
    [ -x target/release/rigid-crowd ] || cargo build --release
    binaries=(target/release/rigid-crowd)
fi
command -v valgrind >/dev/null || {
    echo "kernel-instructions: needs valgrind (apt-get install valgrind)" >&2
    exit 2
}
jit_instructions() { # binary workload
    local out
    out=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file="$out" \
        "$1" bench --backends "$backend" --bodies "$bodies" --steps "$steps" --fuse "$fuse" \
        --repeats 1 --workload "$2" --tangents "$tangents" >/dev/null 2>&1
    callgrind_annotate --threshold=100 "$out" 2>/dev/null |
        awk '/\[\?\?\?\]$/ { gsub(",", "", $1); total += $1 } END { print total + 0 }'
    rm -f "$out"
}
echo "x86 instructions per body-step in lavapipe's $backend kernel ($bodies bodies, $steps steps, fuse $fuse, tangents $tangents)"
for workload in $workloads; do
    for binary in "${binaries[@]}"; do
        total=$(jit_instructions "$binary" "$workload")
        per=$(python3 -c "print(f'{$total / (2 * $bodies * $steps):.1f}')")
        printf '%-14s %-60s %8s\n' "$workload" "$binary" "$per"
    done
done
