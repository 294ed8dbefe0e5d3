#!/usr/bin/env bash
# The ccusage oracle of `rawpv stats --all` (issue 28): builds a fake HOME holding the Claude Code
# corpus (../shared/corpus/claude-code, each file under ~/.claude/projects/<its cwd, with every
# character but letters and digits as '-'>/, as Claude Code lays sessions out) and the Codex
# rollouts (../shared/corpus/codex files starting with `session_meta`, under
# ~/.codex/sessions/2025/01/01/). Gemini's sessions are left out: ccusage reports Gemini's output
# tokens without the thoughts it bills (and costs) as output, rawpv counts them in the output, so
# the token columns differ by definition there. Runs ccusage and
# rawpv on it with TZ=UTC, and keeps both outputs in tests/fixtures/ccusage/ so that the cargo test
# `usage_oracle` compares rawpv with the kept ccusage output without npm.
#
# Usage: tests/oracle/ccusage_compare.sh [RAWPV]      (from the repository root)
#   RAWPV    the rawpv binary (default: target/release/rawpv, else $CARGO_TARGET_DIR/release/rawpv)
#   CCUSAGE  the ccusage command (default: ccusage on PATH). ccusage 20.0.24 from npm was used:
#            `npm install ccusage@20.0.24` (20.0.26, the latest, has no linux-x64 native package
#            on the registry; 19.x needs Node 22; 18.x keeps the *first* streamed copy of a message,
#            whose output_tokens are partial).
# Writes: tests/fixtures/ccusage/{daily,session,monthly,weekly}.json (ccusage --json --offline),
#         tests/fixtures/ccusage/rawpv-daily.json (rawpv stats --all --by day --json), and prints a
#         per-day comparison.
set -euo pipefail
cd "$(dirname "$0")/../.."
CORPUS=../shared/corpus/claude-code
OUT=tests/fixtures/ccusage
RAWPV=${1:-${CARGO_TARGET_DIR:-target}/release/rawpv}
CCUSAGE=${CCUSAGE:-ccusage}
HOME_DIR=$(mktemp -d)
trap 'rm -rf "$HOME_DIR"' EXIT
mkdir -p "$HOME_DIR/.claude/projects"
for f in "$CORPUS"/*.jsonl "$CORPUS"/*/*.jsonl; do
  cwd=$(grep -o -m1 '"cwd":"[^"]*"' "$f" | sed 's/^"cwd":"//; s/"$//')
  dir="$HOME_DIR/.claude/projects/$(printf '%s' "$cwd" | sed 's/[^A-Za-z0-9]/-/g')"
  mkdir -p "$dir"
  cp "$f" "$dir/"
done
mkdir -p "$HOME_DIR/.codex/sessions/2025/01/01"
for f in ../shared/corpus/codex/*.jsonl; do
  if head -c 100 "$f" | grep -q '"type":"session_meta"'; then cp "$f" "$HOME_DIR/.codex/sessions/2025/01/01/"; fi
done
export TZ=UTC
run() { env -i PATH="$PATH" HOME="$HOME_DIR" TZ=UTC XDG_CACHE_HOME="$HOME_DIR/.cache" \
  XDG_CONFIG_HOME="$HOME_DIR/.config" "$@"; }
"$CCUSAGE" --version > "$OUT/ccusage-version.txt"
for c in daily session monthly weekly; do
  run "$CCUSAGE" "$c" --json --offline > "$OUT/$c.json"
done
run "$RAWPV" stats --all --by day --json --no-cache > "$OUT/rawpv-daily.json"
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
cc = {d["period"]: d for d in json.load(open(f"{out}/daily.json"))["daily"]}
rv = {r["key"]: r for r in json.load(open(f"{out}/rawpv-daily.json"))["rows"] if r["tokens"]}
for day in sorted(set(cc) | set(rv)):
    c, r = cc.get(day), rv.get(day)
    if not c or not r:
        print(day, "only in", "ccusage" if c else "rawpv"); continue
    ct = (c["inputTokens"], c["outputTokens"], c["cacheCreationTokens"], c["cacheReadTokens"])
    t = r["tokens"]; rt = (t["input"], t["output"], t["cache_write"], t["cache_read"])
    cost = (r["cost_usd"] or 0) / c["totalCost"] - 1 if c["totalCost"] else 0
    print(day, "tokens", "same" if ct == rt else f"DIFFER ccusage {ct} rawpv {rt}",
          f"cost ccusage {c['totalCost']:.6f} rawpv {r['cost_usd'] or 0:.6f} ({100*cost:+.3f} %)")
PY
