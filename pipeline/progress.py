"""What ``scan`` and ``extract`` tell their user while Spark works, on stderr.

Spark's start and the listing take seconds to tens of seconds before any segment is read,
so each step is a status line ("starting Spark", "listed ...", "checked ..."); while the
segments are read, verify's byte progress bar (klogspec/progress.py: on a terminal, for
inputs over 64 MiB) follows the Spark job's tasks, polled from Spark's status tracker.
``--no-progress`` turns both off; under ``spark-submit`` with ``--json`` the lines are
left out, as spark-submit merges the driver's stderr into its stdout.
"""

from __future__ import annotations

import threading
import time
import uuid

from rich.console import Console
from rich.markup import escape

from klogspec.progress import ByteProgress

POLL_SECONDS = 0.5


class Status:
    """Status lines on ``console``, each with the seconds since the command started."""

    def __init__(self, console: Console, enabled: bool) -> None:
        self.console, self.enabled = console, enabled
        self.started = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def say(self, text: str) -> None:
        if self.enabled:
            self.console.print(f"[dim]{self.elapsed():6.1f}s[/] {escape(text)}")


class JobProgress:
    """``with JobProgress(spark, label, total_bytes, console): <run a Spark job>``: the
    job runs in a job group of its own, whose tasks a thread polls; the bar shows their
    share of ``total_bytes`` (tasks carry about equal bytes: splits.py, scan.py)."""

    def __init__(self, spark, label: str, total_bytes: int, console: Console) -> None:
        self.context = spark.sparkContext
        self.label, self.group = label, f"klogspec-{uuid.uuid4().hex}"
        self.bar = ByteProgress(label, total_bytes, console)
        self.total, self.done = total_bytes, threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> JobProgress:
        self.context.setJobGroup(self.group, self.label)
        if self.bar.bar is not None:  # only when a bar is drawn
            self.bar.__enter__()
            self.thread.start()
        return self

    def _poll(self) -> None:
        while not self.done.wait(POLL_SECONDS):
            self.update()

    def update(self) -> None:
        """The bar moved to the share of the job group's tasks completed so far."""
        tracker = self.context.statusTracker()
        tasks = completed = 0
        for job in tracker.getJobIdsForGroup(self.group):
            info = tracker.getJobInfo(job)
            for stage in info.stageIds if info else ():
                stage_info = tracker.getStageInfo(stage)
                if stage_info is not None:
                    tasks += stage_info.numTasks
                    completed += stage_info.numCompletedTasks
        if tasks:
            self.bar.update(self.total * completed // tasks)
            self.bar.describe(f"{self.label}: {completed} of {tasks} tasks")

    def __exit__(self, *exc_info) -> None:
        self.done.set()
        if self.thread.is_alive():
            self.thread.join()
            self.update()  # the last tasks, finished since the last poll
            self.bar.__exit__(*exc_info)
        self.context.setLocalProperty("spark.jobGroup.id", None)
