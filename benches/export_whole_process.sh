#!/usr/bin/env bash
# Whole-process measurements of issue 26 (BENCHMARKS.md "Export"): `rawpv export` to HTML and
# to Markdown beside claude-code-log (`claude-code-log convert FILE -o OUT`, PyPI) on the same
# file in the same run, three times each (wall, user + sys CPU and max RSS of every run, then the
# medians), the load average before each command.
#
# Usage: benches/export_whole_process.sh FILE [RAWPV]
#   RAWPV: the binary to measure (default: target/release/rawpv).
#   CCL: the claude-code-log command (default: claude-code-log; unset or missing: skipped).
# Needs: cargo build --release --bin rawpv; GNU time; pip install claude-code-log.
# Build the 100 MB input with the script in BENCHMARKS.md ("Session 3"); never commit it.
set -euo pipefail
file=${1:?usage: benches/export_whole_process.sh FILE [RAWPV]}
root=$(cd "$(dirname "$0")/.." && pwd)
rawpv=${2:-$root/target/release/rawpv}
ccl=${CCL:-claude-code-log}
out=$(mktemp -d)
echo "== $(basename "$file"): $(stat -c %s "$file") bytes"

three() {
  local label=$1
  shift
  local walls=() cpus=() rss=()
  echo "-- $label; load: $(cut -d' ' -f1-3 /proc/loadavg)"
  for _ in 1 2 3; do
    local t line
    t=$(mktemp)
    /usr/bin/time -o "$t" -f '%e %U %S %M' "$@" > /dev/null 2> /dev/null || true
    line=$(tail -1 "$t")
    rm "$t"
    read -r w u s m <<< "$line"
    walls+=("$w")
    cpus+=("$(echo "$u + $s" | bc)")
    rss+=("$(( m / 1024 ))")
  done
  med() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
  printf '%-28s wall %s s (median %s), CPU %s s (median %s), max RSS %s MB (median %s)\n' \
    "$label" "${walls[*]}" "$(med "${walls[@]}")" "${cpus[*]}" "$(med "${cpus[@]}")" \
    "${rss[*]}" "$(med "${rss[@]}")"
}

three "rawpv export html" "$rawpv" export "$file" -o "$out/r.html"
three "rawpv export markdown" "$rawpv" export "$file" -o "$out/r.md"
three "rawpv export html --no-redact" "$rawpv" export "$file" -o "$out/n.html" --no-redact
three "rawpv export md --no-redact" "$rawpv" export "$file" -o "$out/n.md" --no-redact
if command -v "$ccl" > /dev/null; then
  echo "claude-code-log: $("$ccl" --version 2>&1 | tail -1)"
  three "claude-code-log html" "$ccl" convert "$file" -o "$out/c.html" --no-cache
  three "claude-code-log markdown" "$ccl" convert "$file" -o "$out/c.md" --no-cache
fi
ls -l "$out"
rm -r "$out"
