#!/usr/bin/env bash
# docs/performance.md's "Parallel checks" and "A fresh folder" figures, whole process (the kit, its
# workers and the client; /usr/bin/time counts reaped children): `run -j 1` against
# `-j 2`, alternated, after a warm-up; then a run in a new empty folder (no .hypothesis/,
# as in every CI checkout) against one in a folder that has run before, alternated.
# Prints one line per run: what, wall s, user s, sys s, peak RSS KiB of the largest process.
# Usage, from a checkout with the README's .venv: benchmarks/jobs_and_cold_start.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
KIT=$ROOT/.venv/bin/stella-conform
CLIENT=("$ROOT/.venv/bin/python" "$ROOT/adapters/python/reference_client.py")
ROUNDS=${1:-5}
ERR=$(mktemp)
WARM=$(mktemp -d)
trap 'rm -rf "$ERR" "$WARM"' EXIT
timed() { /usr/bin/time -f "%e %U %S %M" "$@" >/dev/null 2>"$ERR" || true; tail -1 "$ERR"; }
echo "warm-up $(timed "$KIT" run --mode persistent --no-database -j 2 -- "${CLIENT[@]}")"
for _ in $(seq "$ROUNDS"); do
  echo "j1 $(timed "$KIT" run --mode persistent --no-database -j 1 -- "${CLIENT[@]}")"
  echo "j2 $(timed "$KIT" run --mode persistent --no-database -j 2 -- "${CLIENT[@]}")"
done
COLD=(run --mode persistent --no-database --examples 10 -j 2 -- "${CLIENT[@]}")
(cd "$WARM" && timed "$KIT" "${COLD[@]}" >/dev/null)
for _ in $(seq "$ROUNDS"); do
  FRESH=$(mktemp -d)
  echo "fresh $(cd "$FRESH" && timed "$KIT" "${COLD[@]}")"
  rm -rf "$FRESH"
  echo "warm $(cd "$WARM" && timed "$KIT" "${COLD[@]}")"
done
