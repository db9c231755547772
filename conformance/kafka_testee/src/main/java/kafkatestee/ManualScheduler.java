package kafkatestee;

import org.apache.kafka.server.util.Scheduler;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A deterministic stand-in for KafkaScheduler, driven by the harness clock. Kafka's code hands it the tasks it hands
 * KafkaScheduler (file deletion after file.delete.delay.ms, the flush after a roll, epoch checkpoint writes, the
 * partition.metadata flush...); this class only decides WHEN they run:
 * <ul>
 *   <li>MODEL-6: a task without delay runs before the operation that scheduled it returns;</li>
 *   <li>MODEL-7: a delayed task runs at the start of the first operation whose now_ms reaches its due time;</li>
 *   <li>shutdown drops delayed tasks, as KafkaScheduler does (executeExistingDelayedTasksAfterShutdownPolicy false).</li>
 * </ul>
 * Tasks due at the same time run in the order they were scheduled. A periodic task is re-armed at its due time plus
 * its period (scheduleAtFixedRate); periods the clock jumped over run once. Tasks named in {@code ignored} are never
 * run: UnifiedLog's PeriodicProducerExpirationCheck unless --producer-expiration (the PSTATE-10 Deviation).
 */
final class ManualScheduler implements Scheduler {
    private final ManualTime time;
    private final Set<String> ignored;
    private final List<Task> tasks = new ArrayList<>();
    private long seq = 0;
    private boolean running = true;

    ManualScheduler(ManualTime time, Set<String> ignored) {
        this.time = time;
        this.ignored = ignored;
    }

    final class Task implements ScheduledFuture<Object> {
        final Runnable runnable;
        long dueMs;
        final long periodMs;
        long order;
        boolean cancelled, done;

        Task(Runnable runnable, long dueMs, long periodMs) {
            this.runnable = runnable;
            this.dueMs = dueMs;
            this.periodMs = periodMs;
            this.order = seq++;
        }

        @Override public long getDelay(TimeUnit unit) { return unit.convert(dueMs - time.milliseconds(), TimeUnit.MILLISECONDS); }
        @Override public int compareTo(Delayed o) { return Long.compare(getDelay(TimeUnit.MILLISECONDS), o.getDelay(TimeUnit.MILLISECONDS)); }
        @Override public boolean cancel(boolean mayInterrupt) { boolean was = !cancelled && !done; cancelled = true; tasks.remove(this); return was; }
        @Override public boolean isCancelled() { return cancelled; }
        @Override public boolean isDone() { return done || cancelled; }
        @Override public Object get() { return null; }
        @Override public Object get(long timeout, TimeUnit unit) { return null; }
    }

    @Override public void startup() { running = true; }

    @Override
    public void shutdown() {
        running = false;
        tasks.clear();
    }

    @Override
    public ScheduledFuture<?> schedule(String name, Runnable task, long delayMs, long periodMs) {
        long dueMs;
        try {
            dueMs = Math.addExact(time.milliseconds(), Math.max(0, delayMs));
        } catch (ArithmeticException e) {
            return new Task(task, Long.MAX_VALUE, periodMs); // due past Long.MAX_VALUE: never
        }
        Task t = new Task(task, dueMs, periodMs);
        if (running && !ignored.contains(name)) tasks.add(t);
        return t;
    }

    @Override public void resizeThreadPool(int newSize) { }

    /** Run every task due at the current clock, including those they schedule without delay. */
    void runDue() {
        while (running) {
            long now = time.milliseconds();
            Task next = tasks.stream().filter(t -> t.dueMs <= now)
                    .min(Comparator.<Task>comparingLong(t -> t.dueMs).thenComparingLong(t -> t.order)).orElse(null);
            if (next == null) return;
            tasks.remove(next);
            if (next.periodMs > 0) {
                long missed = (now - next.dueMs) / next.periodMs + 1;
                try {
                    next.dueMs = Math.addExact(next.dueMs, Math.multiplyExact(missed, next.periodMs));
                    next.order = seq++;
                    tasks.add(next);
                } catch (ArithmeticException e) {
                    // the next period starts past Long.MAX_VALUE: never again
                }
            } else {
                next.done = true;
            }
            next.runnable.run();
        }
    }
}
