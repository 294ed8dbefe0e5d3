#!/usr/bin/env bash
# Screenshots of an exported page in headless Chromium (issue 26): 1400 and 420 CSS pixels wide,
# light and dark, the first edit's diff open. Writes DIR/export-{1400,420}-{light,dark}.png.
#
# Usage: scripts/export-screenshots.sh [DIR [SESSION]]
#   DIR: where the PNGs go (default: /tmp/rawpv-shots); SESSION: the session to export
#   (default: the corpus' cc-v2.1.39-compaction-A-excerpt.jsonl).
# Needs: chromium (apt-get install chromium), the corpus at ../shared/corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/tmp/rawpv-shots}
mkdir -p "$dir"
export RAWPV_SHOTS
RAWPV_SHOTS=$(realpath "$dir")
if [[ -n "${2:-}" ]]; then
  export RAWPV_SHOT_INPUT
  RAWPV_SHOT_INPUT=$(realpath "$2")
fi
cargo test --test it export_browser::screenshots -- --ignored --exact
ls -l "$RAWPV_SHOTS"/export-*.png
