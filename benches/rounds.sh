#!/usr/bin/env bash
# Old binary, new binary and `jq -c .` back to back on one file, three rounds (issue 17,
# BENCHMARKS.md "Issue 17": medians of three): `check` and `stats` of each binary, then jq.
#
# Usage: benches/rounds.sh OLD_RAWPV NEW_RAWPV FILE
# Needs GNU time and jq. Generate FILE with target/release/examples/gen (see BENCHMARKS.md).
set -uo pipefail
old=${1:?usage: benches/rounds.sh OLD_RAWPV NEW_RAWPV FILE}
new=${2:?}
f=${3:?}
fmt='%e s wall, %U s user, %S s sys, %M KB max RSS'
for round in 1 2 3; do
  echo "== round $round, load: $(cut -d' ' -f1-3 /proc/loadavg)"
  for b in "$old" "$new"; do
    for c in check stats; do
      echo -n "$b $c: "; /usr/bin/time -f "$fmt" "$b" "$c" "$f" 2>&1 >/dev/null | tail -1
    done
  done
  echo -n "jq: "; /usr/bin/time -f "$fmt" jq -c . "$f" 2>&1 >/dev/null | tail -1
done
