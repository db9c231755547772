"""Java and Maven plumbing (conformance/kafka_jars.py) and ``klogspec kafka-testee``.

What a user without Java 17+ or Maven, or with a Kafka version Maven Central does not have,
sees: one line and exit status 2, never a traceback; and a build that is cached per version
and per state of the module's sources.
"""

from __future__ import annotations

import os
import stat

import pytest
from click.testing import CliRunner

from conformance import kafka_jars
from conformance.kafka_jars import KafkaJarsError, build, check_version, find_java, find_maven
from conformance.kafka_testee_cli import MODULE_DIR, kafka_testee, parse_kafka_impl
from conformance.transport import CannotStart, resolve_impl


def fake_java(tmp_path, version_line: str):
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    java.chmod(java.stat().st_mode | stat.S_IEXEC)
    return home


@pytest.mark.parametrize("version", ["4.4", "4.4.0-rc1", "latest", ""])
def test_a_version_is_three_numbers(version):
    with pytest.raises(KafkaJarsError, match="X.Y.Z"):
        check_version(version)


def test_java_older_than_17_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(fake_java(tmp_path, 'openjdk version "11.0.2" 2019-01-15')))
    with pytest.raises(KafkaJarsError, match="Java 17"):
        find_java()


def test_java_8_reads_as_8(tmp_path, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(fake_java(tmp_path, 'java version "1.8.0_292"')))
    with pytest.raises(KafkaJarsError, match="is Java 8"):
        find_java()


def test_java_17_is_taken(tmp_path, monkeypatch):
    home = fake_java(tmp_path, 'openjdk version "17.0.15" 2025-04-15')
    monkeypatch.setenv("JAVA_HOME", str(home))
    assert find_java() == str(home / "bin" / "java")


def test_no_maven_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(KafkaJarsError, match="scripts/setup.sh"):
        find_maven()


def test_the_command_exits_2_with_one_line_without_maven(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("KLOGSPEC_CACHE", str(tmp_path / "cache"))
    result = CliRunner().invoke(kafka_testee, ["command", "--kafka-version", "4.4.0"])
    assert result.exit_code == 2
    assert result.output.startswith("error: ") and "Traceback" not in result.output


def test_the_short_impl_form(tmp_path, monkeypatch):
    assert parse_kafka_impl("kafka:4.4.0") == ("4.4.0", [])
    assert parse_kafka_impl("kafka:4.1.2 --checkpoints=reference") == (
        "4.1.2",
        ["--checkpoints=reference"],
    )
    with pytest.raises(ValueError):
        parse_kafka_impl("kafka:")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("KLOGSPEC_CACHE", str(tmp_path / "cache"))
    with pytest.raises(CannotStart, match="is needed"):
        resolve_impl("kafka:4.4.0")


def test_a_build_is_cached_per_version_and_sources(tmp_path, monkeypatch):
    monkeypatch.setenv("KLOGSPEC_CACHE", str(tmp_path / "cache"))
    module = tmp_path / "mod"
    module.mkdir()
    (module / "pom.xml").write_text("<project/>")
    calls = []

    def maven(module_dir, version, out):
        calls.append(version)
        (out / "classpath.txt").write_text(os.pathsep.join(["/a.jar", "/b.jar"]))

    monkeypatch.setattr(kafka_jars, "_maven", maven)
    built = build(module, "4.4.0")
    assert built.jars == ("/a.jar", "/b.jar")
    assert built.directory == tmp_path / "cache" / "mod" / "4.4.0"
    build(module, "4.4.0")
    assert calls == ["4.4.0"]  # the second run is instant
    (module / "pom.xml").write_text("<project></project>")
    build(module, "4.4.0")
    build(module, "4.0.2")
    assert calls == ["4.4.0", "4.4.0", "4.0.2"]


def test_the_module_ships_its_sources():
    assert (MODULE_DIR / "pom.xml").is_file()
    assert "<kafka.version>" in (MODULE_DIR / "pom.xml").read_text()
    assert (MODULE_DIR / "src/main/java/kafkatestee/ReleaseLog.java").is_file()


def test_a_version_maven_central_lacks_is_a_clear_error(tmp_path, monkeypatch):
    try:
        find_java()
        find_maven()
    except KafkaJarsError as exc:
        pytest.skip(str(exc))
    monkeypatch.setenv("KLOGSPEC_CACHE", str(tmp_path / "cache"))
    with pytest.raises(KafkaJarsError, match="does not resolve"):
        build(MODULE_DIR, "4.99.0")


def test_classpath_resolves_artifacts_through_a_generated_pom(tmp_path, monkeypatch):
    monkeypatch.setenv("KLOGSPEC_CACHE", str(tmp_path / "cache"))
    seen = {}

    def maven(module_dir, version, out):
        seen["pom"] = (module_dir / "pom.xml").read_text()
        (out / "classpath.txt").write_text("/k/kafka-tools.jar")

    monkeypatch.setattr(kafka_jars, "_maven", maven)
    assert kafka_jars.classpath("4.3.1", ["kafka-tools", "org.slf4j:slf4j-simple"]) == [
        "/k/kafka-tools.jar"
    ]
    assert "<artifactId>kafka-tools</artifactId>" in seen["pom"]
    assert "<groupId>org.slf4j</groupId>" in seen["pom"]
    assert "<groupId>org.apache.kafka</groupId>" in seen["pom"]
