#!/usr/bin/env bash
# Compares the GPU (or any) throughput of an older commit with the working tree, in one
# sitting on one machine: builds both release binaries, runs the same `rigid-crowd bench`
# alternately (old, new, old, new, ...) and prints, per row, both figures and new/old.
# Run it before a change to a kernel lands, and quote its output (with the machine).
#
#   scripts/bench-compare.sh OLD_COMMIT [ROUNDS] [-- BENCH ARGS...]
#   scripts/bench-compare.sh 017ff43 2 -- --bodies 100000 --steps 48 --backends cpu,gpu --fuse 1,8
#
# The old commit is built in a worktree under target/bench-compare/ (kept, so a second
# comparison against it does not rebuild), unless OLD_BINARY names a release binary already
# built from it (for example the one target/release held before the change). Needs git,
# cargo and python3.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ]; then
    echo "usage: scripts/bench-compare.sh OLD_COMMIT [ROUNDS] [-- BENCH ARGS...]" >&2
    exit 2
fi
old=$(git rev-parse --verify --quiet "$1^{commit}") || {
    echo "bench-compare: OLD_COMMIT: no commit named '$1'" >&2
    exit 2
}
shift
rounds=2
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
    rounds=$1
    shift
fi
[ "${1:-}" = "--" ] && shift
case "$rounds" in
    '' | *[!0-9]* | 0) echo "bench-compare: ROUNDS: must be a whole number >= 1, got '$rounds'" >&2; exit 2 ;;
esac
bench_args=("$@")
[ ${#bench_args[@]} -eq 0 ] && bench_args=(--bodies 100000 --steps 48 --backends cpu,gpu --fuse 1,8 --repeats 3)

work="target/bench-compare"
mkdir -p "$work"
if [ -n "${OLD_BINARY:-}" ]; then
    [ -x "$OLD_BINARY" ] || {
        echo "bench-compare: OLD_BINARY: '$OLD_BINARY' is not an executable file" >&2
        exit 2
    }
    old_bin=$OLD_BINARY
    echo "bench-compare: ${old:0:12} (old) is $old_bin; building the working tree (new)" >&2
else
    old_tree="$work/tree-${old:0:12}"
    if [ ! -d "$old_tree" ]; then
        git worktree add --detach "$old_tree" "$old" >/dev/null
    fi
    # The old tree sits under this workspace's target/: a commit without a [workspace] table
    # of its own must be told it is its own workspace, or cargo refuses to build it.
    if ! grep -q '^\[workspace\]' "$old_tree/Cargo.toml"; then
        printf '\n[workspace]\n' >>"$old_tree/Cargo.toml"
    fi
    echo "bench-compare: building ${old:0:12} (old) and the working tree (new)" >&2
    (cd "$old_tree" && CARGO_TARGET_DIR="$PWD/../target-${old:0:12}" cargo build --release --quiet)
    old_bin="$work/target-${old:0:12}/release/rigid-crowd"
fi
cargo build --release --quiet
new_bin="target/release/rigid-crowd"

out="$work/run-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
for round in $(seq 1 "$rounds"); do
    for side in old new; do
        bin=$old_bin
        [ "$side" = new ] && bin=$new_bin
        echo "bench-compare: round $round, $side" >&2
        "$bin" bench "${bench_args[@]}" --json "$out/$side-$round.json" >/dev/null
    done
done

python3 - "$out" "$rounds" "${old:0:12}" <<'PY'
import json, sys
out, rounds, old = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def rows(side):
    table = {}
    for r in range(1, rounds + 1):
        report = json.load(open(f"{out}/{side}-{r}.json"))
        for m in report["rows"]:
            key = (m["backend"], m["variant"], m["bodies"])
            table.setdefault(key, []).append(m["body_steps_per_second"] / 1e6)
    return table
old_rows, new_rows = rows("old"), rows("new")
print(f"M body-steps/s, {rounds} round(s) each, alternating; old = {old}, new = working tree")
print(f"{'backend':8} {'variant':34} {'bodies':>9}  {'old':>18}  {'new':>18}  new/old")
for key in old_rows:
    if key not in new_rows:
        continue
    o, n = old_rows[key], new_rows[key]
    fmt = lambda xs: " / ".join(f"{x:.2f}" for x in xs)
    ratio = (sum(n) / len(n)) / (sum(o) / len(o))
    print(f"{key[0]:8} {key[1]:34} {key[2]:>9}  {fmt(o):>18}  {fmt(n):>18}  {ratio:6.2f}x")
PY
