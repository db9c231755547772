#!/usr/bin/env bash
# The main job on embedded defaults: the conformance suite run on the bundled reference
# implementation, in process and then as a JSON-lines subprocess testee (klogspec testee).
# Extra arguments go to both runs (e.g. --only 'roll.*', --report FILE).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >&2
klogspec conformance --impl reference --transport inproc --table none "$@"
klogspec conformance --impl reference --transport subprocess "$@"
