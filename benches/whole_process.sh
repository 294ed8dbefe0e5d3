#!/usr/bin/env bash
# Whole-process measurements of issue 8 (BENCHMARKS.md "Whole process"): the viewer's path
# (examples/open_file: first screen, indexed, resident memory) and `print`, `check`, `convert`,
# `stats`, each beside `jq -c .` on the same file, one run each with /usr/bin/time.
#
# Usage: benches/whole_process.sh FILE [--no-jq]
# Needs: cargo build --release --bin rawpv --example open_file --example gen; jq; GNU time.
# Generate inputs with target/release/examples/gen (see BENCHMARKS.md); never commit them.
set -euo pipefail
file=${1:?usage: benches/whole_process.sh FILE [--no-jq]}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/target/release
fmt='%e s wall, %U s user, %S s sys, %M KB max RSS'
echo "== $(basename "$file"): $(stat -c %s "$file") bytes; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "-- viewer path (open_file)"
/usr/bin/time -f "   $fmt" "$bin/examples/open_file" "$file"
for cmd in print check convert stats; do
  echo "-- rawpv $cmd"
  /usr/bin/time -f "   $fmt" "$bin/rawpv" "$cmd" "$file" > /dev/null || true
done
if [[ "${2:-}" != "--no-jq" ]]; then
  echo "-- jq -c . (baseline)"
  /usr/bin/time -f "   $fmt" jq -c . "$file" > /dev/null
fi
