"""One real example per ``klogspec`` command, for the CLI page (generated.py).

Each example is a command line and the output it printed, recorded in
``docs/cli-examples.yaml``; the commands run, with relative paths, in a directory holding two
small partitions made here by the reference implementation: ``orders-0`` (closed cleanly),
``orders-1`` (crashed: a torn batch at the end of its ``.log`` and no clean-shutdown marker) and
``orders-2`` (``orders-0`` with a flipped byte in its second batch, recovered from offset 0, so
that its quarantine holds intact records for ``salvage``).
``tests/test_cli_examples.py`` runs every example again and fails when its output changed
(``KLOGSPEC_WRITE_CLI_EXAMPLES=1`` rewrites the file instead), and fails when a command has
no example, so the page cannot go stale.
"""

from __future__ import annotations

import html
import os
import shlex
from dataclasses import dataclass
from pathlib import Path

import yaml

FILE = Path(__file__).resolve().parents[1] / "cli-examples.yaml"
NOW_MS = 1_700_000_000_000
MAX_LINES = 30  # an example longer than this is cut, with a line saying how much was left out


@dataclass
class Example:
    command: str  # the top-level command whose section shows it
    args: list[str]
    name: str = ""  # a second example of a command has its own name (else the command's)
    output: str = ""
    stdin: str | None = None
    note: str = ""
    exit_code: int = 0

    @property
    def shell(self) -> str:
        line = shlex.join(["klogspec", self.command, *self.args])
        return f"echo {shlex.quote(self.stdin.strip())} | {line}" if self.stdin else line


def load(path: Path = FILE) -> dict[str, Example]:
    if not path.is_file():
        return {}
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    return {e.get("name") or e["command"]: Example(**e) for e in entries}


def of_command(examples: dict[str, Example], command: str) -> list[Example]:
    """The command's examples: its own first, then the named ones in the file's order."""
    return [e for e in examples.values() if e.command == command]


def save(examples: dict[str, Example], path: Path = FILE) -> None:
    entries = []
    for example in examples.values():
        entry = {"command": example.command, "args": example.args}
        if example.name:
            entry = {"name": example.name, **entry}
        if example.stdin is not None:
            entry["stdin"] = example.stdin
        if example.note:
            entry["note"] = example.note
        entry["exit_code"] = example.exit_code
        entry["output"] = example.output
        entries.append(entry)

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper, value: str):  # outputs as literal blocks, as they print
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    header = "# One real example per klogspec command (docs/hooks/cli_examples.py): the CLI page\n"
    header += "# shows them; tests/test_cli_examples.py checks that they still print this.\n"
    dumped = yaml.dump(entries, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=100)
    path.write_text(header + dumped, encoding="utf-8")


def make_partitions(root: Path) -> Path:
    """``root/orders-0`` (clean), ``root/orders-1`` (crashed) and ``root/orders-2`` (salvaged),
    and the compacted ``root/prices-0``, always the same bytes."""
    from reference_impl import Log, LogConfig, ManualClock, SimpleRecord, build_record_batch
    from reference_impl.records import Compression

    config = LogConfig(segment_bytes=600, index_interval_bytes=100)
    for partition, crash in ((0, False), (1, True)):
        clock = ManualClock(NOW_MS)
        log = Log.open(root / f"orders-{partition}", config, clock)
        for i in range(6):
            records = [SimpleRecord(key=b"order-%d" % (3 * i + j), value=b'{"qty": %d}' % j,
                                    timestamp=NOW_MS + 1000 * i) for j in range(3)]  # fmt: skip
            codec = Compression.ZSTD if i % 2 else Compression.NONE
            log.append_as_leader(build_record_batch(records, compression=codec), leader_epoch=0)
            clock.sleep(1000)
        if crash:  # a crash mid-append: half a batch at the end, and no clean shutdown
            log.flush()
            active = max((root / "orders-1").glob("*.log"))
            torn = build_record_batch([SimpleRecord(value=b"lost", timestamp=NOW_MS)])
            with open(active, "ab") as handle:
                handle.write(torn[: len(torn) // 2])
        else:
            log.close()
    _recovered_copy(root / "orders-0", root / "orders-2")
    _compacted(root / "prices-0")
    return root


def _compacted(partition: Path) -> None:
    """A compacted topic's partition: three currencies' prices updated, one deleted (a
    tombstone), one update in a transaction its coordinator aborted."""
    from reference_impl import Log, LogConfig, ManualClock, SimpleRecord, build_record_batch
    from reference_impl.log.log_validator import AppendOrigin
    from reference_impl.records import ControlRecordType, build_control_batch

    clock = ManualClock(NOW_MS)
    log = Log.open(partition, LogConfig(cleanup_policy="compact", segment_bytes=300), clock)
    writes = [(b"EUR", b"1.08"), (b"USD", b"1.00"), (b"GBP", b"1.27"), (b"EUR", b"1.09"),
              (b"GBP", None), (b"USD", b"0.99"), (b"EUR", b"1.10")]  # fmt: skip
    for i, (key, value) in enumerate(writes):
        txn = {"producer_id": 42, "producer_epoch": 0, "base_sequence": 0, "is_transactional": True}
        record = SimpleRecord(key=key, value=value, timestamp=clock.milliseconds())
        log.append_as_leader(build_record_batch([record], **(txn if i == 5 else {})), 0)
        if i == 5:  # USD 0.99 is never committed
            abort = build_control_batch(ControlRecordType.ABORT, producer_id=42, producer_epoch=0,
                                        timestamp=clock.milliseconds())  # fmt: skip
            log.append_as_leader(abort, 0, AppendOrigin.COORDINATOR)
        clock.sleep(1000)
    log.close()


def _recovered_copy(source: Path, target: Path) -> None:
    """``source`` copied, one byte of its second batch's records flipped (a CRC mismatch), and
    recovered from offset 0, which quarantines the batch and everything after it."""
    import shutil

    from click.testing import CliRunner

    from klogspec.cli import main

    shutil.copytree(source, target)
    segment = target / "00000000000000000000.log"
    data = bytearray(segment.read_bytes())
    data[200] ^= 0xFF  # inside the batch at position 133
    segment.write_bytes(bytes(data))
    CliRunner().invoke(main, ["recover", "--yes", "--from-offset", "0", str(target)])


def _machine_paths(text: str) -> str:
    """The paths that differ between machines (the build cache, the Java runtime) as a
    reader's would read: ``~/.cache/klogspec`` and ``java``."""
    from conformance import kafka_jars

    text = text.replace(str(kafka_jars.cache_dir()), "~/.cache/klogspec")
    try:
        return text.replace(kafka_jars.find_java(), "java")
    except kafka_jars.KafkaJarsError:
        return text


def run(example: Example, root: Path) -> tuple[str, int]:
    """The example's stdout and exit status, run in ``root`` as a user would in a shell."""
    from click.testing import CliRunner

    from klogspec.cli import main

    # Paths are given absolute and printed relative: a Spark session started elsewhere (the
    # tests') resolves relative paths in its own working directory, not in ``root``.
    args = [str(root / arg) if (root / arg).exists() or before == "--out" else arg
            for before, arg in zip(["", *example.args], example.args, strict=False)]  # fmt: skip
    cwd = os.getcwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(main, [example.command, *args], input=example.stdin)
    finally:
        os.chdir(cwd)
    # trailing spaces (rich pads table cells) are not part of what a reader sees
    stdout = _machine_paths(result.stdout.replace(f"{root}/", ""))
    lines = [line.rstrip() for line in stdout.splitlines()]
    return "".join(f"{line}\n" for line in lines), result.exit_code


def markdown(example: Example) -> list[str]:
    """The example's block on the CLI page: the command line, then what it printed."""
    lines = example.output.rstrip("\n").splitlines()
    if len(lines) > MAX_LINES:
        left_out = len(lines) - MAX_LINES
        lines = [*lines[:MAX_LINES], f"... ({left_out} more lines)"]
    out = ["**Example**" + (f" ({example.note})" if example.note else "") + ":", ""]
    body = [f"$ {html.escape(example.shell)}", *(html.escape(line) for line in lines)]
    out += ['<div class="klog-example" markdown="0"><pre><code>' + "\n".join(body)
            + "</code></pre></div>", ""]  # fmt: skip
    if example.exit_code:
        out += [f"Exit status {example.exit_code}.", ""]
    return out
