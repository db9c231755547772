"""The one progress bar of the command line: bytes done of a known total, on stderr.

Shown only for inputs over ``PROGRESS_THRESHOLD`` so that small runs see no noise, and only
on a terminal, so that scripts see none; ``--no-progress`` turns it off (a total of 0). Transient, so it leaves nothing behind in a terminal's
scrollback.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

PROGRESS_THRESHOLD = 64 << 20  # inputs larger than this get a progress bar on stderr


class ByteProgress:
    """``with ByteProgress(label, total, console) as bar: bar.update(done)`` or ``bar.advance(n)``;
    a no-op below the threshold."""

    def __init__(self, label: str, total: int, console: Console) -> None:
        self.bar = None
        self.completed = 0
        if total > PROGRESS_THRESHOLD and console.is_terminal:  # rich would print a newline
            self.bar = Progress(
                TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                TimeRemainingColumn(), console=console, transient=True,
            )  # fmt: skip
            self.task = self.bar.add_task(label, total=total)

    def __enter__(self) -> ByteProgress:
        if self.bar is not None:
            self.bar.start()
        return self

    def update(self, completed: int) -> None:
        self.completed = completed
        if self.bar is not None:
            self.bar.update(self.task, completed=completed)

    def advance(self, amount: int) -> None:
        self.completed += amount
        if self.bar is not None:
            self.bar.advance(self.task, amount)

    def describe(self, label: str) -> None:
        """What is being read now (the bar's text)."""
        if self.bar is not None:
            self.bar.update(self.task, description=label)

    def add_total(self, amount: int) -> None:
        """More bytes to read than the total said (a second pass: recover's load)."""
        if self.bar is not None:
            task = self.bar.tasks[self.task]
            self.bar.update(self.task, total=(task.total or 0) + amount)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """The bar off the terminal for the block (a question asked on stderr)."""
        if self.bar is None:
            yield
            return
        self.bar.stop()
        try:
            yield
        finally:
            self.bar.start()

    def __exit__(self, *exc_info) -> None:
        if self.bar is not None:
            self.bar.stop()
