#!/usr/bin/env bash
# Instructions per body-step of the CPU backends, counted by valgrind's callgrind: a figure
# that does not move with machine noise. Two runs differ only in the step count, so the
# difference in instructions is the cost of the extra body-steps alone (set-up, crowd
# generation and thread start cancel out).
# Usage: [BINARY=path/to/rigid-crowd] scripts/instructions-per-body-step.sh [BODIES]
# (needs valgrind and a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
bodies=${1:-8000}
binary=${BINARY:-target/release/rigid-crowd}
[ -x "$binary" ] || cargo build --release
total_instructions() { # backend steps
    local out
    out=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file="$out" \
        "$binary" bench --backends "$1" --bodies "$bodies" --steps "$2" --repeats 1 \
        --threads 1 >/dev/null 2>&1
    callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
    rm -f "$out"
}
for backend in cpu cpu-ref; do
    short=$(total_instructions "$backend" 10)
    long=$(total_instructions "$backend" 20)
    # bench runs each configuration twice (warm-up and one timed run): 2 x 10 extra steps.
    echo "$backend: $(( (long - short) / (2 * 10 * bodies) )) instructions per body-step ($bodies bodies, rk4, gravity + drag)"
done
