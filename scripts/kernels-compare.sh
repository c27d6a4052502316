#!/usr/bin/env bash
# Compares the text of every kernel two builds compile: every scene in scenes/ on `gpu` and
# `gpu-f64`, plain and with the whole Jacobian, and on `gpu` with `--sensitivity mass` and
# with `--f32-divisions-in-f64`, one step each. Each build writes the kernels it compiles
# (RIGID_CROWD_DUMP_KERNELS) to a folder of its own; the folders are compared file by file.
# For changes to the compiler that must not change a kernel's text (a refactor): the same
# text is the same SPIR-V and the same bits. Exit 0 when both sets are the same.
#
#   scripts/kernels-compare.sh OLD_BINARY NEW_BINARY [FOLDER]
#
# FOLDER (a new temporary one by default, removed after) keeps the kernels, in old/ and new/.
set -u
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: scripts/kernels-compare.sh OLD_BINARY NEW_BINARY [FOLDER]" >&2
    exit 2
fi
old=$(realpath "$1")
new=$(realpath "$2")
cd "$(dirname "$0")/.."
work=$(mktemp -d)
if [ $# -eq 3 ]; then
    dir=$3
    mkdir -p "$dir"
    trap 'rm -rf "$work"' EXIT
else
    dir=$(mktemp -d)
    trap 'rm -rf "$work" "$dir"' EXIT
fi
for side in old new; do
    binary=$old
    [ "$side" = new ] && binary=$new
    rm -rf "${dir:?}/$side"
    mkdir -p "$dir/$side"
    for scene in scenes/*.json; do
        run() {
            RIGID_CROWD_DUMP_KERNELS="$dir/$side" "$binary" run "$scene" --steps 1 --quiet "$@" \
                >/dev/null 2>&1
        }
        for backend in gpu gpu-f64; do
            run --backend "$backend" --out "$work/final.csv"
            run --backend "$backend" --jacobian --out "$work/tangents.npz"
        done
        run --backend gpu --sensitivity mass --out "$work/tangents.npz"
        run --backend gpu --f32-divisions-in-f64 --jacobian --out "$work/tangents.npz"
    done
done
lines() { cat "$1"/*.wgsl 2>/dev/null | wc -l; }
echo "old: $(ls "$dir/old" | wc -l) kernels, $(lines "$dir/old") lines"
echo "new: $(ls "$dir/new" | wc -l) kernels, $(lines "$dir/new") lines"
if diff -q <(ls "$dir/old") <(ls "$dir/new") >/dev/null; then
    echo "every kernel the same text"
    exit 0
fi
echo "kernels only in old: $(comm -23 <(ls "$dir/old") <(ls "$dir/new") | wc -l)," \
    "only in new: $(comm -13 <(ls "$dir/old") <(ls "$dir/new") | wc -l)"
exit 1
