"""Java and Maven for the tests and tools that run Apache Kafka's release jars (DESIGN.md §7).

The one place that finds ``java`` (17+) and ``mvn``, builds a Maven module of ours for a Kafka
release into a cache outside the repository, resolves a release's jars and starts a JVM on
them. Kafka's jars stay in Maven's own ``~/.m2``; nothing here is ever committed.

Public API:

- :func:`cache_dir` -- ``$KLOGSPEC_CACHE`` or ``~/.cache/klogspec``;
- :func:`find_java`, :func:`find_maven` -- the tools, or :class:`KafkaJarsError`;
- :func:`build` -- ``build(module_dir, version)``: compile a module whose ``pom.xml`` has the
  properties ``kafka.version`` and ``klogspec.build.dir``, once per version and source state;
  returns a :class:`Built` (its classes and class path);
- :func:`classpath` -- ``classpath(version, artifacts)``: the jars of Kafka artifacts
  (``kafka-tools``, ``kafka_2.13``...) of a release and their dependencies, without a module;
- :func:`java_command` -- the command line that runs a main class on a :class:`Built`.

Every failure (no Java 17+, no Maven, a version Maven Central does not have, a compile error)
is a :class:`KafkaJarsError` with a one-line reason; the commands exit 2 on it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

MIN_JAVA = 17
VERSION = re.compile(r"^\d+\.\d+\.\d+$")
BUILD_TIMEOUT_S = 1800  # a first build downloads a release's jars from Maven Central


class KafkaJarsError(Exception):
    """Java, Maven or a Kafka release is not available; the message says which and why."""


@dataclass(frozen=True)
class Built:
    """A module compiled for one Kafka release: ``classes`` plus its run-time ``jars``."""

    version: str
    directory: Path
    classes: Path
    jars: tuple[str, ...]

    @property
    def classpath(self) -> str:
        return os.pathsep.join((str(self.classes), *self.jars))


def cache_dir() -> Path:
    """Where builds live: ``$KLOGSPEC_CACHE`` or ``~/.cache/klogspec`` (created)."""
    root = Path(os.environ.get("KLOGSPEC_CACHE") or Path.home() / ".cache" / "klogspec")
    root.mkdir(parents=True, exist_ok=True)
    return root


def java_major(java: str) -> int | None:
    """The major version ``java -version`` reports (8 for ``1.8.0``), or None."""
    try:
        out = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not found:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def find_java() -> str:
    """``$JAVA_HOME/bin/java`` or ``java`` on the PATH, at least Java 17."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not Path(java).is_file():
        raise KafkaJarsError(f"Java {MIN_JAVA}+ is needed and no java was found (PATH, JAVA_HOME)")
    major = java_major(java)
    if major is None or major < MIN_JAVA:
        raise KafkaJarsError(f"Java {MIN_JAVA}+ is needed; {java} is Java {major or 'unknown'}")
    return java


def find_maven() -> str:
    """``mvn`` on the PATH (scripts/setup.sh installs Debian's maven when it is missing)."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise KafkaJarsError("Maven (mvn) is needed and is not on the PATH: run scripts/setup.sh")
    return mvn


def check_version(version: str) -> str:
    if not VERSION.match(version):
        raise KafkaJarsError(f"a Kafka version is X.Y.Z (for example 4.4.0), not {version!r}")
    return version


def build(module_dir: Path, version: str) -> Built:
    """Compile ``module_dir`` for Kafka ``version`` into the cache, unless its sources and pom
    are unchanged since the last build there; returns what to run."""
    check_version(version)
    out = cache_dir() / module_dir.name / version
    out.mkdir(parents=True, exist_ok=True)
    stamp = out / "sources.sha256"
    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test processes may build the same release
        digest = _sources_digest(module_dir)
        if not (stamp.is_file() and stamp.read_text() == digest):
            _maven(module_dir, version, out)
            stamp.write_text(digest)
    jars = tuple(j for j in (out / "classpath.txt").read_text().strip().split(os.pathsep) if j)
    return Built(version, out, out / "build" / "classes", jars)


def classpath(version: str, artifacts: list[str]) -> list[str]:
    """The jars of ``artifacts`` (``kafka-tools``, or ``group:artifact``) of Kafka ``version``
    and their run-time dependencies, through a generated pom in the cache."""
    check_version(version)
    deps = []
    for artifact in artifacts:
        group, _, name = artifact.rpartition(":")
        deps.append(
            f"<dependency><groupId>{group or 'org.apache.kafka'}</groupId>"
            f"<artifactId>{name}</artifactId><version>${{kafka.version}}</version></dependency>"
        )
    key = hashlib.sha256(" ".join(sorted(artifacts)).encode()).hexdigest()[:12]
    module = cache_dir() / "kafka-artifacts" / key
    module.mkdir(parents=True, exist_ok=True)
    (module / "pom.xml").write_text(_POM.format(key=key, deps="".join(deps)))
    return list(build(module, version).jars)


def java_command(built: Built, main_class: str, args: list[str] = ()) -> list[str]:
    """``java @<argfile> main_class args...``: the class path lives in an argument file (Java
    9+), so the command line stays short enough to print and pass as ``cmd:``."""
    argfile = built.directory / "java.args"
    text = f'-cp "{built.classpath}"\n-Dorg.slf4j.simpleLogger.logFile=System.err\n'
    text += "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn\n"
    if not argfile.is_file() or argfile.read_text() != text:
        argfile.write_text(text)
    return [find_java(), f"@{argfile}", main_class, *args]


def _sources_digest(module_dir: Path) -> str:
    files = sorted(p for p in module_dir.rglob("*") if p.is_file() and "target" not in p.parts)
    h = hashlib.sha256()
    for p in files:
        h.update(p.relative_to(module_dir).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def _maven(module_dir: Path, version: str, out: Path) -> None:
    find_java()
    command = [
        find_maven(), "-B", "-q", "-f", str(module_dir / "pom.xml"),
        f"-Dkafka.version={version}", f"-Dklogspec.build.dir={out / 'build'}",
        "compile", "dependency:build-classpath", "-Dmdep.includeScope=runtime",
        f"-Dmdep.outputFile={out / 'classpath.txt'}",
    ]  # fmt: skip
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise KafkaJarsError(f"building {module_dir.name} for Kafka {version} timed out") from None
    if done.returncode == 0:
        return
    log = done.stdout + done.stderr
    if re.search(
        rf"(Could not resolve|Could not find artifact|was not found).*{re.escape(version)}", log
    ):
        raise KafkaJarsError(
            f"Kafka {version} does not resolve on Maven Central (or in ~/.m2 offline): "
            "see https://repo1.maven.org/maven2/org/apache/kafka/kafka_2.13/ for the releases"
        )
    errors = [line for line in log.splitlines() if "ERROR" in line][:3]
    raise KafkaJarsError(
        f"building {module_dir.name} for Kafka {version} failed: " + " | ".join(errors)
    )


_POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.klogspec</groupId><artifactId>kafka-artifacts-{key}</artifactId><version>1.0</version>
  <properties><kafka.version>4.4.0</kafka.version>
    <klogspec.build.dir>${{project.basedir}}/target</klogspec.build.dir></properties>
  <dependencies>{deps}</dependencies>
  <build><directory>${{klogspec.build.dir}}</directory></build>
</project>
"""
