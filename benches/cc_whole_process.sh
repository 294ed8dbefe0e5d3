#!/usr/bin/env bash
# Whole-process measurements of issue 16 (BENCHMARKS.md "Claude Code transcripts (issue 16)"):
# `rawpv check` and `rawpv stats` on a Claude Code transcript beside `jq -c .` and ccusage on the
# same file in the same run, each three times (wall and max RSS of every run, then the median),
# and the viewer's path (examples/open_file: first screen, fully loaded, peak RSS, the slowest
# source message applied on the app task) three times.
#
# Usage: benches/cc_whole_process.sh FILE [RAWPV [OPEN_FILE]]
#   RAWPV / OPEN_FILE: the binaries to measure (default: target/release/rawpv and
#   target/release/examples/open_file), e.g. an older build to compare.
#   CCUSAGE: the ccusage entry point (`node $CCUSAGE daily --offline`, run with a
#   CLAUDE_CONFIG_DIR holding only FILE); unset: ccusage is skipped.
# Needs: cargo build --release --bin rawpv --example open_file; jq; GNU time; node for ccusage.
# Build the 100 MB input with the script in BENCHMARKS.md; never commit it.
set -euo pipefail
file=${1:?usage: benches/cc_whole_process.sh FILE [RAWPV [OPEN_FILE]]}
root=$(cd "$(dirname "$0")/.." && pwd)
rawpv=${2:-$root/target/release/rawpv}
open_file=${3:-$root/target/release/examples/open_file}
echo "== $(basename "$file"): $(stat -c %s "$file") bytes; load: $(cut -d' ' -f1-3 /proc/loadavg)"

# Runs "$@" three times; prints each run's wall (s) and max RSS (MB), then their medians.
three() {
  local label=$1
  shift
  local walls=() rss=()
  for _ in 1 2 3; do
    local out t
    t=$(mktemp)
    /usr/bin/time -o "$t" -f '%e %M' "$@" > /dev/null 2> /dev/null || true
    out=$(tail -1 "$t")
    rm "$t"
    walls+=("${out% *}")
    rss+=("$(( ${out#* } / 1024 ))")
  done
  local mw mr
  mw=$(printf '%s\n' "${walls[@]}" | sort -g | sed -n 2p)
  mr=$(printf '%s\n' "${rss[@]}" | sort -g | sed -n 2p)
  printf '%-22s wall %s s (median %s s), max RSS %s MB (median %s MB)\n' \
    "$label" "${walls[*]}" "$mw" "${rss[*]}" "$mr"
}

three "rawpv check" "$rawpv" check "$file"
three "rawpv stats" "$rawpv" stats "$file"
three "jq -c ." jq -c . "$file"
if [[ -n "${CCUSAGE:-}" ]]; then
  home=$(mktemp -d)
  mkdir -p "$home/projects/bench"
  ln -s "$(realpath "$file")" "$home/projects/bench/$(basename "$file")"
  three "ccusage daily" env CLAUDE_CONFIG_DIR="$home" node "$CCUSAGE" daily --offline
  rm -r "$home"
fi
echo "-- viewer path (open_file), three runs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in 1 2 3; do
  "$open_file" "$file" | grep -E 'first screen|fully indexed|draws|memory'
done
