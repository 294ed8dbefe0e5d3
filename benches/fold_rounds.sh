#!/usr/bin/env bash
# Issue 17, item 3 (the one-shot commands fold and drop): `benches/rounds.sh` (check, stats and
# jq -c ., three rounds) on each FILE, then `print` of the old and the new binary, three rounds
# (BENCHMARKS.md "Fold and drop: stats and print").
#
# Usage: benches/fold_rounds.sh OLD_RAWPV NEW_RAWPV FILE...
# Needs GNU time and jq. Generate the files with target/release/examples/gen (BENCHMARKS.md).
set -uo pipefail
old=${1:?usage: benches/fold_rounds.sh OLD_RAWPV NEW_RAWPV FILE...}
new=${2:?}
shift 2
here=$(dirname "$0")
fmt='%e s wall, %U s user, %S s sys, %M KB max RSS'
for f in "$@"; do
  echo "### $f"
  "$here/rounds.sh" "$old" "$new" "$f"
  for round in 1 2 3; do
    echo "== print, round $round, load: $(cut -d' ' -f1-3 /proc/loadavg)"
    for b in "$old" "$new"; do
      echo -n "$b print: "; /usr/bin/time -f "$fmt" "$b" print "$f" 2>&1 >/dev/null | tail -1
    done
  done
done
echo "done $(date +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)"
