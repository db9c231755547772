package kafkatestee;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;

import java.io.File;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The testee's frame around Kafka's UnifiedLog: the harness clock, the deterministic scheduler, LogManager's part
 * (LogDirGlue) and when the root checkpoints are written. Kafka's defaults: producer.id.expiration.ms 86400000,
 * transaction.max.timeout.ms 900000, producer.id.expiration.check.interval.ms 600000.
 */
final class Session {
    static final int MAX_TRANSACTION_TIMEOUT_MS = 900000;
    static final int PRODUCER_ID_EXPIRATION_MS = 86400000;
    static final int PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS = 600000;
    /** log.initial.task.delay.ms and the two log.flush.*.checkpoint.interval.ms defaults (LogManager.startup). */
    static final long INITIAL_TASK_DELAY_MS = 30000L;
    static final long CHECKPOINT_INTERVAL_MS = 60000L;

    static final class Options {
        boolean fixedJitter = true;
        boolean producerExpiration = false;
        boolean transactionVerification = false;
        /** "kafka": LogManager's timing; "reference": also at open and after every change of what they record. */
        String checkpoints = "kafka";
    }

    final Options options;
    final ManualTime time = new ManualTime();
    ManualScheduler scheduler;
    ReleaseLog log;
    LogDirGlue glue;
    boolean closed = true;

    Session(Options options) { this.options = options; }

    JsonNode dispatch(String op, JsonNode args, long nowMs, KafkaTestee testee) {
        time.set(nowMs);
        if (!op.equals("hello") && !op.equals("open") && closed)
            throw new Errors.OperationError("LOG_CLOSED", "no log is open"); // MODEL-12
        if (!closed) runDueTasks(); // MODEL-7: delayed work now due runs first
        List<Long> before = closed ? null : recorded();
        try {
            return testee.run(op, args);
        } catch (Errors.OperationError e) {
            throw e;
        } catch (Throwable e) {
            throw Errors.of(e, op);
        } finally {
            if (!closed) {
                runDueTasks(); // MODEL-6: work scheduled without delay
                if (options.checkpoints.equals("reference") && before != null && !before.equals(recordedSafe()))
                    glue.checkpointBoth(log);
            }
        }
    }

    /** What the root checkpoints record, and the segments (a deletion changes them): the reference writes on a change. */
    List<Long> recorded() {
        List<Long> values = new java.util.ArrayList<>(List.of(log.longValue("recoveryPoint"), log.longValue("logStartOffset")));
        for (LogSegment s : log.logSegments()) values.add(s.baseOffset());
        return values;
    }

    List<Long> recordedSafe() {
        try {
            return recorded();
        } catch (RuntimeException e) {
            return null;
        }
    }

    void runDueTasks() {
        try {
            scheduler.runDue();
        } catch (Throwable e) {
            System.err.println("[kafka-testee] scheduled task failed: " + e); // KafkaScheduler logs and goes on
            e.printStackTrace(System.err);
        }
    }

    /** LogManager.loadLog / getOrCreateLog for one partition, then Partition.makeLeader's HW (ISR of one). */
    JsonNode open(JsonNode args) throws Exception {
        if (!closed) {
            log.closeHandlers(); // the harness reopened without closing: drop the handles, write nothing
            closed = true;
        }
        if (scheduler != null) scheduler.shutdown();
        LogConfig config = config(args.path("config"));
        JsonNode tid = args.path("topic_id");
        Optional<Uuid> topicId = tid.isNull() || tid.isMissingNode() ? Optional.empty() : Optional.of(Uuid.fromString(tid.asText()));
        File dir = new File(args.get("dir").asText());
        glue = new LogDirGlue(dir);
        boolean lastShutdownClean = glue.takeCleanShutdownMarker();
        long recoveryPoint = glue.readCheckpoint(LogDirGlue.RECOVERY_POINT_CHECKPOINT);
        long logStartOffset = glue.readCheckpoint(LogDirGlue.LOG_START_OFFSET_CHECKPOINT);
        scheduler = new ManualScheduler(time, options.producerExpiration ? Set.of() : Set.of("PeriodicProducerExpirationCheck"));
        log = ReleaseLog.open(dir, config, logStartOffset, recoveryPoint, scheduler, time, MAX_TRANSACTION_TIMEOUT_MS,
                new ProducerStateManagerConfig(PRODUCER_ID_EXPIRATION_MS, options.transactionVerification),
                PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS, glue.channel, lastShutdownClean, topicId);
        closed = false;
        log.maybeIncrementHighWatermarkToLogEnd();
        if (options.checkpoints.equals("kafka")) {
            scheduleCheckpointTasks();
        } else {
            glue.checkpointBoth(log);
        }
        return state();
    }

    /** LogManager.startup: the two checkpoint tasks, 30 s after start, then every 60 s of the harness clock. */
    void scheduleCheckpointTasks() {
        scheduler.schedule("kafka-recovery-point-checkpoint", this::checkpointRecoveryOffsets, INITIAL_TASK_DELAY_MS,
                CHECKPOINT_INTERVAL_MS);
        scheduler.schedule("kafka-log-start-offset-checkpoint", this::checkpointLogStartOffsets, INITIAL_TASK_DELAY_MS,
                CHECKPOINT_INTERVAL_MS);
    }

    void checkpointRecoveryOffsets() {
        try {
            glue.checkpointRecoveryOffsets(log);
        } catch (RuntimeException e) {
            System.err.println("[kafka-testee] recovery checkpoint: " + e);
        }
    }

    void checkpointLogStartOffsets() {
        try {
            glue.checkpointLogStartOffsets(log);
        } catch (RuntimeException e) {
            System.err.println("[kafka-testee] log start checkpoint: " + e);
        }
    }

    /** Kafka's LogConfig from the protocol's keys (model.md Table 1), validated as a topic creation validates it. */
    LogConfig config(JsonNode cfg) {
        Map<String, String> props = new HashMap<>();
        long rollJitterMs = 0;
        long segmentMs = 604800000L;
        for (Iterator<Map.Entry<String, JsonNode>> it = cfg.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String key = e.getKey();
            if (key.equals("roll_jitter_ms")) {
                rollJitterMs = e.getValue().asLong();
                continue;
            }
            String kafkaKey = TOPIC_CONFIGS.get(key);
            if (kafkaKey == null) throw new Errors.OperationError("INVALID_ARGUMENT", "unknown config key " + key);
            String value = e.getValue().asText();
            if (e.getValue().isArray()) {
                List<String> names = new java.util.ArrayList<>();
                e.getValue().forEach(n -> names.add(n.asText()));
                value = String.join(",", names);
            }
            if (key.equals("segment_ms")) segmentMs = e.getValue().asLong();
            if (key.equals("segment_bytes")) kafkaKey = ReleaseLog.segmentBytesKey(e.getValue().asLong());
            props.put(kafkaKey, value);
        }
        // roll_jitter_ms is the model's own key (MODEL-9): 0, or >= 1 and < segment_ms
        if (rollJitterMs != 0 && (rollJitterMs < 1 || rollJitterMs >= segmentMs))
            throw new Errors.OperationError("INVALID_ARGUMENT", "roll_jitter_ms " + rollJitterMs);
        ReleaseLog.validateTopicConfig(props);
        if (options.fixedJitter) return new FixedJitterLogConfig(props, rollJitterMs);
        if (rollJitterMs != 0) props.put(TopicConfig.SEGMENT_JITTER_MS_CONFIG, Long.toString(rollJitterMs));
        return new LogConfig(props);
    }

    static final Map<String, String> TOPIC_CONFIGS = Map.ofEntries(
            Map.entry("segment_bytes", TopicConfig.SEGMENT_BYTES_CONFIG),
            Map.entry("segment_ms", TopicConfig.SEGMENT_MS_CONFIG),
            Map.entry("segment_index_bytes", TopicConfig.SEGMENT_INDEX_BYTES_CONFIG),
            Map.entry("index_interval_bytes", TopicConfig.INDEX_INTERVAL_BYTES_CONFIG),
            Map.entry("max_message_bytes", TopicConfig.MAX_MESSAGE_BYTES_CONFIG),
            Map.entry("message_timestamp_type", TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG),
            Map.entry("preallocate", TopicConfig.PREALLOCATE_CONFIG),
            Map.entry("flush_messages", TopicConfig.FLUSH_MESSAGES_INTERVAL_CONFIG),
            Map.entry("retention_ms", TopicConfig.RETENTION_MS_CONFIG),
            Map.entry("retention_bytes", TopicConfig.RETENTION_BYTES_CONFIG),
            Map.entry("file_delete_delay_ms", TopicConfig.FILE_DELETE_DELAY_MS_CONFIG),
            Map.entry("cleanup_policy", TopicConfig.CLEANUP_POLICY_CONFIG),
            Map.entry("min_cleanable_dirty_ratio", TopicConfig.MIN_CLEANABLE_DIRTY_RATIO_CONFIG),
            Map.entry("min_compaction_lag_ms", TopicConfig.MIN_COMPACTION_LAG_MS_CONFIG),
            Map.entry("max_compaction_lag_ms", TopicConfig.MAX_COMPACTION_LAG_MS_CONFIG),
            Map.entry("delete_retention_ms", TopicConfig.DELETE_RETENTION_MS_CONFIG));

    /** UnifiedLog.truncateTo, then LogManager.truncateTo's recovery-point checkpoint when it truncated. */
    boolean truncateTo(long offset) {
        boolean truncated = log.truncateTo(offset);
        log.maybeIncrementHighWatermarkToLogEnd();
        if (truncated) checkpointRecoveryOffsets();
        if (options.checkpoints.equals("reference")) glue.checkpointBoth(log);
        return truncated;
    }

    /** UnifiedLog.truncateFullyAndStartAt, then LogManager.truncateFullyAndStartAt's recovery-point checkpoint. */
    void truncateFullyAndStartAt(long offset, Optional<Long> logStartOffset) {
        log.truncateFullyAndStartAt(offset, logStartOffset);
        log.maybeIncrementHighWatermarkToLogEnd();
        checkpointRecoveryOffsets();
        if (options.checkpoints.equals("reference")) glue.checkpointBoth(log);
    }

    /**
     * UnifiedLog.read. The protocol's max_offset (an upper bound Kafka 4.x's read has no parameter for) lowers the
     * high watermark for the read, the bound both isolations take (the last stable offset is at most the HW), and the
     * HW goes back to the log end offset after it (MODEL-3).
     */
    FetchDataInfo read(long start, int maxBytes, FetchIsolation iso, boolean minOneMessage, Optional<Long> maxOffset) {
        if (maxOffset.isEmpty() || maxOffset.get() >= log.longValue("highWatermark"))
            return log.read(start, maxBytes, iso, minOneMessage);
        log.updateHighWatermark(maxOffset.get());
        try {
            return log.read(start, maxBytes, iso, minOneMessage);
        } finally {
            log.maybeIncrementHighWatermarkToLogEnd();
        }
    }

    /**
     * LogManager.shutdown for one log: (4.4: prepareActiveSegmentForClose,) flush(true), close, both checkpoints, then
     * the clean-shutdown marker.
     */
    void close() throws Exception {
        log.prepareActiveSegmentForClose();
        log.flush(true);
        log.close();
        closed = true;
        glue.checkpointRecoveryOffsets(log);
        glue.checkpointLogStartOffsets(log);
        glue.writeCleanShutdownMarker();
        scheduler.runDue();    // what close scheduled without delay
        scheduler.shutdown();  // delayed tasks are dropped, as KafkaScheduler drops them
    }

    ObjectNode state() {
        ObjectNode s = KafkaTestee.JSON.createObjectNode()
                .put("log_start_offset", log.longValue("logStartOffset"))
                .put("log_end_offset", log.longValue("logEndOffset"))
                .put("recovery_point", log.longValue("recoveryPoint"));
        ArrayNode segs = s.putArray("segments");
        for (LogSegment seg : log.logSegments())
            segs.addObject().put("base_offset", seg.baseOffset()).put("size_bytes", seg.size());
        s.put("last_stable_offset", log.longValue("lastStableOffset"));
        return s;
    }
}
