"""Java and Maven plumbing for the Kafka broker tools (conformance/kafka_broker/, DESIGN.md §7).

Kafka's release jars come from Maven Central through the module's pom.xml; everything generated
(the module's build, its resolved classpath, the broker corpus) lives in the cache directory
``${KLOGSPEC_CACHE:-~/.cache/klogspec}``, never in the repository.

* ``cache_dir()``: that directory, created on demand;
* ``build(module_dir, version)``: ``mvn package`` of a module for one Kafka release (its
  ``kafka.version`` property), into ``<cache>/maven/<module>/<version>/``, with the resolved
  dependency classpath written beside the jar; skipped when the pom and the Java sources are
  unchanged since the last build (a stamp of their sha256);
* ``classpath(module_dir, version)``: the module's jar then Kafka's jars, as a list of paths;
* ``require_java()``: the ``java`` and ``mvn`` commands, or ``JavaUnavailable`` saying what is
  missing (tests skip with that reason).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

MIN_JAVA = 17
STAMP = "klogspec-build.sha256"
CLASSPATH_FILE = "classpath.txt"


class JavaUnavailable(RuntimeError):
    """Java 17+, javac or Maven is missing, or Maven could not build the module."""


def cache_dir() -> Path:
    """``$KLOGSPEC_CACHE``, else ``~/.cache/klogspec``; created if missing."""
    configured = os.environ.get("KLOGSPEC_CACHE")
    root = Path(configured) if configured else Path.home() / ".cache" / "klogspec"
    root.mkdir(parents=True, exist_ok=True)
    return root


def require_java() -> tuple[str, str]:
    """The paths of ``java`` (17 or newer) and ``mvn``."""
    java, mvn = shutil.which("java"), shutil.which("mvn")
    if java is None or shutil.which("javac") is None:
        raise JavaUnavailable("no java/javac on PATH (Java 17+ JDK needed: scripts/setup.sh)")
    if mvn is None:
        raise JavaUnavailable("no mvn on PATH (Maven needed: scripts/setup.sh)")
    banner = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
    found = re.search(r'version "(\d+)', banner)
    if found is None or int(found.group(1)) < MIN_JAVA:
        raise JavaUnavailable(f"Java {MIN_JAVA}+ needed, found: {banner.splitlines()[:1]}")
    return java, mvn


def build(module_dir: Path, version: str) -> Path:
    """Build ``module_dir`` for Kafka ``version`` into the cache; the build directory."""
    _, mvn = require_java()
    module_dir = Path(module_dir).resolve()
    out = cache_dir() / "maven" / module_dir.name / version
    stamp = _sources_digest(module_dir)
    stamp_file = out / STAMP
    if stamp_file.is_file() and stamp_file.read_text() == stamp:
        return out
    command = [
        mvn, "-B", "-q", "-f", str(module_dir / "pom.xml"),
        f"-Dkafka.version={version}", f"-Dklogspec.build.dir={out}",
        "package", "dependency:build-classpath",
        f"-Dmdep.outputFile={out / CLASSPATH_FILE}",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise JavaUnavailable(f"mvn could not build {module_dir.name} for Kafka {version}:\n{tail}")
    stamp_file.write_text(stamp)
    return out


def classpath(module_dir: Path, version: str) -> list[str]:
    """The module's jar, then every jar Maven resolved for it (Kafka's own first)."""
    out = build(module_dir, version)
    jars = sorted(out.glob("*.jar"))
    resolved = (out / CLASSPATH_FILE).read_text().strip().split(os.pathsep)
    return [str(jar) for jar in jars] + [path for path in resolved if path]


def _sources_digest(module_dir: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted([module_dir / "pom.xml", *module_dir.glob("src/**/*.java")]):
        digest.update(path.relative_to(module_dir).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()
