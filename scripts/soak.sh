#!/usr/bin/env bash
# Soak test: one `rigid-crowd run` of a crowd tumbling freely (no force, no plane), sized to
# last about DURATION seconds, recording and checkpointing on the way. Reports the drift of
#   - resident memory: VmRSS of the process, sampled from /proc every INTERVAL seconds;
#   - throughput: body-steps per second between consecutive checkpoints (their file times);
#   - energy: the crowd's kinetic energy, sum of (p.v + L.w) / 2 over the recorded frames;
#     no force acts, so it is conserved and its drift is the integration's.
# and exits 1 if the run fails. Files (scene, trajectory, checkpoint, samples) stay in DIR.
#
#   scripts/soak.sh [DURATION] [--backend gpu|cpu|cpu-ref|gpu-f64] [--bodies N]
#                   [--frames F] [--checkpoints C] [--interval S] [--dir DIR] [--bin PATH]
#   scripts/soak.sh 3600 --backend gpu --bodies 10000
#
# Defaults: 60 s, gpu, 1000 bodies, 100 recorded frames (CSV), 100 checkpoints, a sample a
# second, a new directory under target/soak/, target/release/rigid-crowd (built if missing).
# Needs bash, awk and GNU date; Linux (/proc).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    sed -n '9,11p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
whole() {
    case "$2" in
        '' | *[!0-9]* | 0) echo "soak: $1: must be a whole number >= 1, got '$2'" >&2; exit 2 ;;
    esac
}

duration=60 backend=gpu bodies=1000 frames=100 checkpoints=100 interval=1 dir="" bin=""
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
    duration=$1
    shift
fi
while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || usage
    case "$1" in
        --backend) backend=$2 ;;
        --bodies) bodies=$2 ;;
        --frames) frames=$2 ;;
        --checkpoints) checkpoints=$2 ;;
        --interval) interval=$2 ;;
        --dir) dir=$2 ;;
        --bin) bin=$2 ;;
        *) usage ;;
    esac
    shift 2
done
whole DURATION "$duration"
whole --bodies "$bodies"
whole --frames "$frames"
whole --checkpoints "$checkpoints"
whole --interval "$interval"

if [ -z "$bin" ]; then
    bin=target/release/rigid-crowd
    [ -x "$bin" ] || cargo build --release --quiet
fi
bin=$(realpath "$bin")
[ -n "$dir" ] || dir=target/soak/$(date +%Y%m%d-%H%M%S)
mkdir -p "$dir"
cd "$dir"

cat >scene.json <<EOF
{
  "version": 1, "dt": 0.001, "steps": 1, "integrator": "rk4", "forces": [],
  "crowd": {"count": $bodies, "seed": 1, "region": [[-50, -50, -50], [50, 50, 50]],
            "mass": [0.5, 5.0], "size": [0.2, 2.0], "shapes": ["box", "sphere"],
            "speed": 2.0, "spin": 10.0}
}
EOF

# The rate of this machine, from the summary line of a short run: "... 12.3 Mbody-steps/s; ...",
# grown until it integrates for half a second at least.
rate_of() {
    sed -n 's/.*, \([0-9.]*\) \([kMG]\{0,1\}\)body-steps\/s.*/\1 \2/p' "$1" | awk '
        { f = 1; if ($2 == "k") f = 1e3; if ($2 == "M") f = 1e6; if ($2 == "G") f = 1e9; print $1 * f }'
}
integration_of() {
    sed -n 's/.*integration \([0-9.]*\) s.*/\1/p' "$1"
}
calibration=$((100000 / bodies + 10))
for _ in 1 2 3 4 5 6 7 8; do
    "$bin" run scene.json --backend "$backend" --steps "$calibration" --out calibration.csv --quiet 2>calibration.log ||
        { cat calibration.log >&2; exit 1; }
    awk -v t="$(integration_of calibration.log)" 'BEGIN { exit !(t < 0.5) }' || break
    calibration=$((calibration * 4))
done
rate=$(rate_of calibration.log)
[ -n "$rate" ] || { echo "soak: no rate in the calibration run's summary:" >&2; cat calibration.log >&2; exit 1; }
steps=$(awk -v r="$rate" -v d="$duration" -v n="$bodies" 'BEGIN { s = int(r * d / n); print (s < 100 ? 100 : s) }')
# Checkpoints half a second apart at least, so that polling sees each one.
[ "$checkpoints" -le $((duration * 2)) ] || checkpoints=$((duration * 2))
every=$(( (steps + frames - 1) / frames ))
checkpoint_every=$(( (steps + checkpoints - 1) / checkpoints ))
echo "soak: $bodies bodies on $backend, $steps steps (about ${duration} s at $rate body-steps/s), a frame every $every steps, a checkpoint every $checkpoint_every; files in $PWD"

: >memory.tsv
: >checkpoints.tsv
start=$(date +%s.%N)
"$bin" run scene.json --backend "$backend" --steps "$steps" --out final.csv \
    --record trajectory.csv --every "$every" \
    --checkpoint soak.ckpt --checkpoint-every "$checkpoint_every" --quiet 2>run.log &
pid=$!
last_mtime="" next_sample=0
while kill -0 "$pid" 2>/dev/null; do
    now=$(date +%s.%N)
    elapsed=$(awk -v a="$now" -v b="$start" 'BEGIN { printf "%.3f", a - b }')
    if awk -v e="$elapsed" -v n="$next_sample" 'BEGIN { exit !(e >= n) }'; then
        rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
        [ -n "$rss" ] && printf '%s\t%s\n' "$elapsed" "$rss" >>memory.tsv
        next_sample=$(awk -v n="$next_sample" -v i="$interval" 'BEGIN { print n + i }')
    fi
    if [ -e soak.ckpt ]; then
        mtime=$(date -r soak.ckpt +%s.%N 2>/dev/null || true)
        if [ -n "$mtime" ] && [ "$mtime" != "$last_mtime" ]; then
            printf '%s\n' "$mtime" >>checkpoints.tsv
            last_mtime=$mtime
        fi
    fi
    sleep 0.05
done
status=0
wait "$pid" || status=$?
if [ "$status" -ne 0 ]; then
    echo "soak: the run failed (exit status $status):" >&2
    cat run.log >&2
    exit 1
fi
tail -n 1 run.log

echo
echo "memory (VmRSS, $(wc -l <memory.tsv) samples):"
awk -F '\t' '
    { t[NR] = $1; m[NR] = $2 / 1024 }
    END {
        if (NR < 4) { print "  too few samples: run longer"; exit }
        # Skip the first tenth (start-up); compare the next tenth with the last.
        w = int(NR / 10); if (w < 1) w = 1
        for (i = w + 1; i <= 2 * w; i++) a += m[i]
        for (i = NR - w + 1; i <= NR; i++) b += m[i]
        a /= w; b /= w
        for (i = 1; i <= NR; i++) if (m[i] > peak) peak = m[i]
        hours = (t[NR] - t[2 * w]) / 3600
        printf "  early %.1f MiB, late %.1f MiB: drift %+.2f MiB (%+.2f%%), %+.2f MiB/hour; peak %.1f MiB\n",
            a, b, b - a, 100 * (b - a) / a, (hours > 0 ? (b - a) / hours : 0), peak
    }' memory.tsv

echo "throughput (between $(wc -l <checkpoints.tsv) checkpoints, $checkpoint_every steps each):"
awk -v k="$checkpoint_every" -v n="$bodies" '
    { if (NR > 1) r[++c] = k * n / ($1 - prev); prev = $1 }
    END {
        if (c < 4) { print "  too few checkpoints: run longer"; exit }
        q = int(c / 4)
        for (i = 1; i <= q; i++) a += r[i]
        for (i = c - q + 1; i <= c; i++) b += r[i]
        a /= q; b /= q
        printf "  first quarter %.4g body-steps/s, last quarter %.4g: drift %+.2f%%\n", a, b, 100 * (b - a) / a
    }' checkpoints.tsv

echo "energy (kinetic, conserved without forces; $(($(wc -l <trajectory.csv) - 1)) rows):"
awk -F ',' '
    NR > 1 {
        e = 0.5 * ($17 * $11 + $18 * $12 + $19 * $13 + $20 * $14 + $21 * $15 + $22 * $16)
        if (!($1 in E)) order[++frames] = $1
        E[$1] += e; T[$1] = $2
    }
    END {
        e0 = E[order[1]]
        for (i = 1; i <= frames; i++) {
            d = (E[order[i]] - e0) / e0; if (d < 0) d = -d
            if (d > worst) worst = d
        }
        last = E[order[frames]]
        printf "  %d frames over %.3f s simulated: %.9g J at the start, %.9g J at the end: drift %+.3e (relative), largest %.3e\n",
            frames, T[order[frames]] - T[order[1]], e0, last, (last - e0) / e0, worst
    }' trajectory.csv
