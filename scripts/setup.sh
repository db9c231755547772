#!/usr/bin/env bash
# Install everything the project needs, from the project's own files. Idempotent.
#   Debian: node/npm (Kaitai compiler), a Java 17+ JDK (Spark; javac for the Kafka modules of
#           conformance/, built against Kafka's release jars) and Maven, Chromium (docs check),
#           a C compiler and the Python headers (the compiled kernels, reference_impl/kernels)
#   PyPI:   the project with its dev, spark and docs extras
#   npm:    kaitai-struct-compiler and js-yaml (kaitai/package-lock.json)
#   the Kafka testee's Debian jars, when it is present (its own setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}

java_major() {
  java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1
}

need_apt=()
command -v node >/dev/null 2>&1 || need_apt+=(nodejs npm)
# The kernels are optional (without them everything runs on the pure-Python path), but CI
# and developers build them: gcc, and the headers of the Python that runs the project.
command -v gcc >/dev/null 2>&1 || need_apt+=(gcc libc6-dev)
if ! "$PYTHON" -c 'import os, sysconfig, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
  need_apt+=(python3-dev)
fi
if ! command -v java >/dev/null 2>&1 || [ "$(java_major)" -lt 17 ] \
  || ! command -v javac >/dev/null 2>&1; then
  need_apt+=(openjdk-17-jdk-headless)
fi
# Maven resolves Kafka's release jars from Maven Central and compiles our modules against them
# (a JDK: javac): the Kafka testee (conformance/kafka_testee/, --impl kafka:<version>), the
# real-broker corpus and the dump differential (conformance/kafka_broker/, pytest marker broker).
command -v mvn >/dev/null 2>&1 || need_apt+=(maven)
if [ -z "${KLOGSPEC_NO_BROWSER:-}" ] && ! command -v chromium >/dev/null 2>&1; then
  need_apt+=(chromium)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]} from Debian" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

echo "setup: python packages (pip install -e .[dev,spark,docs])" >&2
"$PYTHON" -m pip install -q --disable-pip-version-check -e ".[dev,spark,docs]"

# The Kafka testee shipped beside the project (../shared/kafka-oracle, or $KLOGSPEC_KAFKA_ORACLE):
# Apache Kafka's own storage code, run by tests/conformance/test_kafka_oracle.py. Its own
# setup.sh installs the Debian jars it needs at run time (slf4j, zstd-jni, lz4, snappy, jackson).
oracle=${KLOGSPEC_KAFKA_ORACLE:-../shared/kafka-oracle}
[ -f "$oracle" ] && oracle=$(dirname "$oracle")  # the variable may name run.sh itself
if [ -f "$oracle/setup.sh" ]; then
  echo "setup: the Kafka testee's run-time jars ($oracle/setup.sh)" >&2
  bash "$oracle/setup.sh"
fi

# The Kaitai Struct compiler (npm kaitai-struct-compiler, run under node) and js-yaml.
if [ -f kaitai/package-lock.json ]; then
  echo "setup: kaitai compiler (npm ci)" >&2
  npm ci --prefix kaitai --no-audit --no-fund --loglevel=error >/dev/null
fi

# Which path the project runs: "compiled", or "pure" with the warning that says why.
"$PYTHON" -c 'from reference_impl import kernels; print("setup: kernels:", kernels.path())' >&2
