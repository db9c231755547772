package kafkatestee;

import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.utils.Time;

import java.util.function.Supplier;

/**
 * The harness's clock (MODEL-5): every request's now_ms is set here before Kafka's code runs, and Kafka's classes get
 * this object wherever they take a {@link Time}. Nothing the testee does reads the system clock for log behaviour.
 */
final class ManualTime implements Time {
    private volatile long nowMs;

    void set(long nowMs) { this.nowMs = nowMs; }

    @Override public long milliseconds() { return nowMs; }

    @Override public long nanoseconds() { return nowMs * 1_000_000L; }

    @Override public void sleep(long ms) { /* the log code on our paths never sleeps */ }

    @Override
    public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
        if (!condition.get()) throw new TimeoutException("ManualTime cannot wait");
    }
}
