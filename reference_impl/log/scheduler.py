"""Delayed tasks on the injected clock (spec/behaviour/model.md, MODEL-6, MODEL-7): Kafka's
KafkaScheduler [server-common/.../util/KafkaScheduler.java], reduced to what a log schedules.

Kafka runs file deletions ``file.delete.delay.ms`` after a segment is renamed
``.deleted`` [LocalLog.deleteSegmentFiles]. The reference keeps those tasks in a
queue and runs the due ones whenever the log is next used (``run_due``), so "due"
is judged by the injected clock. A delay of 0 runs the task at once. ``shutdown``
drops what is still pending, as Kafka's scheduler does
(``setExecuteExistingDelayedTasksAfterShutdownPolicy(false)``): the ``.deleted``
files then stay until the next load removes them.

Kafka also schedules the flush after a roll and the leader-epoch checkpoint writes
after truncations; the reference does those synchronously instead.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable

from .clock import Clock


class Scheduler:
    """MODEL-6, MODEL-7: delayed work runs when the injected clock says it is due."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._queue: list[tuple[int, int, str, Callable[[], None]]] = []
        self._sequence = itertools.count()  # ties run in scheduling order

    def schedule_once(self, name: str, task: Callable[[], None], delay_ms: int = 0) -> None:
        if delay_ms <= 0:
            task()
            return
        due = self.clock.milliseconds() + delay_ms
        heapq.heappush(self._queue, (due, next(self._sequence), name, task))

    def run_due(self) -> int:
        """Run every task whose time has come; returns how many ran."""
        now = self.clock.milliseconds()
        ran = 0
        while self._queue and self._queue[0][0] <= now:
            _, _, _, task = heapq.heappop(self._queue)
            task()
            ran += 1
        return ran

    def pending(self) -> list[tuple[int, str]]:
        """(due time, name) of the tasks still waiting, soonest first."""
        return [(due, name) for due, _, name, _ in sorted(self._queue)]

    def shutdown(self) -> None:
        self._queue.clear()
