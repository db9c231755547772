"""The ``klogspec`` command line (DESIGN.md §4).

Every command takes ``--json`` and shares the exit statuses below. The tools' own
commands (verify, recover) and those of other packages (conformance, scan, golden...)
register under the entry-point group ``klogspec.commands`` and are imported only when
invoked, so ``klogspec`` never imports ``conformance`` or ``pipeline`` and ``klogspec
dump`` does not pay for Spark.

Exit statuses: 0 clean; 1 findings (a file had errors, CRC failures, index
mismatches or trailing bytes); 2 the command could not run (bad usage, missing path, a
Python package of an optional extra not installed). A reader that closes the output early
(``klogspec dump ... | head``) ends the command quietly with status 0: a closed pipe is not a
finding.
"""

from __future__ import annotations

import os
import re
import sys
from importlib import metadata
from importlib.metadata import entry_points

import click
from rich.console import Console
from rich.markup import escape

from reference_impl.formats.file_naming import FileKind
from reference_impl.messages import DECODER_NAMES

from .dump import DUMPABLE_KINDS, DumpOptions, dump_paths
from .dump.render import JsonRenderer, TextRenderer
from .progress import ByteProgress

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
COMMAND_GROUP = "klogspec.commands"
DISTRIBUTION = "kafka-log-spec"
_OWN_PACKAGES = {"klogspec", "reference_impl", "conformance", "pipeline", "kaitai"}
_MODULE_DISTRIBUTIONS = {"snappy": "python-snappy", "kafka": "kafka-python"}


class _Group(click.Group):
    """Built-in commands plus the ``klogspec.commands`` entry points, loaded lazily.

    Every command runs through ``invoke``: a closed output pipe ends it with status 0, and a
    missing optional package with status 2 and the extra to install, never a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            try:
                return super().invoke(ctx)
            finally:
                sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        except BrokenPipeError:
            silence_stdout()
            sys.exit(EXIT_OK)
        except ModuleNotFoundError as exc:
            top = (exc.name or "").partition(".")[0]
            if not top or top in _OWN_PACKAGES:
                raise  # our own import: a bug, not a missing package
            command = f"klogspec {ctx.invoked_subcommand or ''}".strip()
            click.echo(f"error: {command} needs {missing_package_hint(top)}", err=True)
            sys.exit(EXIT_USAGE)

    def _plugins(self) -> dict:
        return {ep.name: ep for ep in entry_points(group=COMMAND_GROUP)}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._plugins()})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        command = super().get_command(ctx, name)
        if command is None and name in self._plugins():
            command = self._plugins()[name].load()
        return command


def missing_package_hint(module: str) -> str:
    """``the Python package X, which is not installed: pip install '...[extra]'``, naming the
    extra of this distribution that declares it (its metadata, from pyproject.toml)."""
    distribution = _MODULE_DISTRIBUTIONS.get(module, module)
    try:
        requirements = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        requirements = []
    for requirement in requirements:
        name, _, marker = requirement.partition(";")
        extra = re.search(r"""extra\s*==\s*["']([^"']+)["']""", marker)
        declared = re.split(r"[\s<>=!~\[(;]", name.strip(), maxsplit=1)[0]
        if extra and _normal(declared) == _normal(distribution):
            return (
                f"the Python package {distribution}, which is not installed: "
                f"pip install '{DISTRIBUTION}[{extra.group(1)}]'"
            )
    return f"the Python package {distribution}, which is not installed"


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush has nowhere to fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # not a real file (a test runner's capture): nothing is flushed at exit


class _Console(Console):
    """rich's console, except that a closed pipe raises BrokenPipeError for the group's
    handler (rich's own exits with status 1)."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


def stdout_console(**options) -> Console:
    return _Console(highlight=False, soft_wrap=True, **options)


def stderr_console(**options) -> Console:
    return _Console(stderr=True, highlight=False, soft_wrap=True, **options)


def no_progress_option(command):
    return click.option(
        "--progress/--no-progress",
        default=True,
        show_default=True,
        help="A progress bar on stderr for inputs over 64 MiB (drawn only on a terminal).",
    )(command)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kafka-log-spec")
def main() -> None:
    """Read, check and exercise Apache Kafka's on-disk log format."""


def json_option(command):
    return click.option("--json", "as_json", is_flag=True, help="Print JSON Lines.")(command)


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--deep", is_flag=True, help="Decode the records inside each batch.")
@click.option(
    "--print-data", is_flag=True, help="Print keys, values and header values (implies --deep)."
)
@click.option("--index-sanity-check", is_flag=True, help="Run only the broker's index sanityCheck.")
@click.option(
    "--verify-index-only",
    is_flag=True,
    help="Check index entries against the .log instead of printing them.",
)
@click.option(
    "--max-bytes", type=click.IntRange(min=0), help="Read at most this many bytes of each .log."
)
@click.option(
    "--type", "file_type", type=click.Choice(sorted(k.value for k in DUMPABLE_KINDS)),
    metavar="KIND",
    help="What the files named hold, whatever their names say: "
    + ", ".join(sorted(k.value for k in DUMPABLE_KINDS)) + ".",
)  # fmt: skip
@click.option(
    "--include-quarantine", is_flag=True,
    help="Also walk the .klogspec-quarantine folders klogspec recover leaves.",
)  # fmt: skip
@click.option(
    "--decode", type=click.Choice(DECODER_NAMES), default="none", is_flag=False,
    flag_value="auto", show_default=True,
    help="Decode each record's key and value as the internal topic's messages "
    "(key_decoded, value_decoded; implies --deep); auto (the default of a bare --decode) picks "
    "the decoder by the partition directory's topic.",
)  # fmt: skip
@no_progress_option
@json_option
def dump(
    paths, deep, print_data, index_sanity_check, verify_index_only, max_bytes, file_type,
    include_quarantine, decode, progress, as_json,
):  # fmt: skip
    """Decode segment, index, snapshot and checkpoint files, or whole log directories.

    A superset of Kafka's kafka-dump-log: .log files and KRaft .checkpoint
    snapshots batch by batch (records with --deep), .index/.timeindex/.txnindex
    entries, producer .snapshot files, the text checkpoints, partition.metadata,
    meta.properties and .kafka_cleanshutdown. Directories are walked recursively,
    without the quarantine folders of klogspec recover unless --include-quarantine. A
    piece kept there (00000000000000060611.log.490950-998265: bytes [490950, 998265) of
    that .log) is dumped as its file, with that file's positions.

    With --decode, the records of __consumer_offsets, __transaction_state,
    __cluster_metadata (and its snapshots), __remote_log_metadata and __share_group_state
    carry their keys and values as Kafka's messages; one that does not decode is kept in
    base64 with the reason.

    Exit status: 0 clean; 1 when a file has errors, CRC failures, index mismatches
    the spec does not allow, trailing bytes or records --decode could not decode; 2 when the command cannot run (a file
    named that cannot be dumped, such as one whose name is not a Kafka file's and no
    --type).
    """
    options = DumpOptions(
        deep, print_data, index_sanity_check, verify_index_only, max_bytes,
        FileKind(file_type) if file_type else None, include_quarantine, decode,
    )  # fmt: skip
    err = stderr_console()
    renderer = JsonRenderer() if as_json else TextRenderer(stdout_console(), options)
    clean, refused = True, []
    warn = lambda message: err.print(f"[yellow]warning:[/] {escape(message)}")  # noqa: E731

    def refuse(message: str) -> None:
        refused.append(message)
        err.print(f"[red]error:[/] {escape(message)}")

    for file_dump in dump_paths(paths, options, warn=warn, refuse=refuse):
        renderer.start(file_dump)
        total = file_dump.size_bytes if file_dump.info.kind.holds_batches and progress else 0
        with ByteProgress(file_dump.info.name, total, err) as bar:
            for event in file_dump.events():
                renderer.event(event)
                if event.get("type") == "batch":
                    bar.update(event["position"] - file_dump.origin + event["sizeBytes"])
        renderer.finish(file_dump)
        clean &= file_dump.ok
    sys.exit(EXIT_USAGE if refused else EXIT_OK if clean else EXIT_FINDINGS)
