#!/usr/bin/env bash
# Install everything the project needs, from the project's own files. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}

need_apt=()
command -v node >/dev/null 2>&1 || need_apt+=(nodejs npm)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]} from Debian" >&2
  apt-get update -qq && apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

echo "setup: python packages (pip install -e .[dev])" >&2
"$PYTHON" -m pip install -q --disable-pip-version-check -e ".[dev]"

# The Kaitai Struct compiler (npm kaitai-struct-compiler, run under node) and js-yaml.
if [ -f kaitai/package-lock.json ]; then
  echo "setup: kaitai compiler (npm ci)" >&2
  npm ci --prefix kaitai --no-audit --no-fund --loglevel=error >/dev/null
fi
