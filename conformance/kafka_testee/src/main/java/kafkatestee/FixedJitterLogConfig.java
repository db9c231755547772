package kafkatestee;

import org.apache.kafka.storage.internals.log.LogConfig;

import java.util.Map;

/**
 * Kafka's LogConfig with one override: randomSegmentJitter() (called by LogSegment.open for every segment) returns
 * the scenario's fixed roll_jitter_ms instead of a random draw below min(segment.jitter.ms, segment.ms): the spec's
 * MODEL-9 Deviation (every value it allows is one Kafka can draw; with roll_jitter_ms 0, the default, both give 0).
 * Parsing, validators and defaults are Kafka's LogConfig. `--random-jitter` uses Kafka's LogConfig unchanged.
 */
final class FixedJitterLogConfig extends LogConfig {
    private final long rollJitterMs;

    FixedJitterLogConfig(Map<?, ?> props, long rollJitterMs) {
        super(props);
        this.rollJitterMs = rollJitterMs;
    }

    @Override
    public long randomSegmentJitter() { return rollJitterMs; }
}
