#!/usr/bin/env bash
# The main job on embedded defaults. Until the conformance suite lands this writes an
# example partition directory with the reference encoder and dumps it with klogspec.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >&2
PYTHON=${PYTHON:-python3}
out=${1:-build/example}
"$PYTHON" scripts/make_example.py "$out"
klogspec dump --deep "$out"
