#!/usr/bin/env bash
# The project's test command: set up, check generated code and style, run the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PYTHON=${PYTHON:-python3}

if [ -f kaitai/build.mjs ]; then
  echo "test: kaitai/generated is fresh" >&2
  node kaitai/build.mjs --check
fi
echo "test: ruff" >&2
"$PYTHON" -m ruff check .
"$PYTHON" -m ruff format --check .
echo "test: pytest" >&2
"$PYTHON" -m pytest "$@"
