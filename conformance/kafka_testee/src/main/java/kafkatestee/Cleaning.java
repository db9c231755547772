package kafkatestee;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;

import java.io.File;
import java.util.Optional;

/**
 * The protocol's {@code clean}: one pass of Kafka's log cleaner thread over the open log, as
 * {@code LogCleaner.CleanerThread.cleanFilthiestLog} does it when this log is the broker's only one, with Kafka's own
 * classes of the release ({@link ReleaseCleaner}: Scala in kafka_2.13 on 4.0, Java in kafka-storage from 4.1):
 * {@code LogCleanerManager} ({@code cleanableOffsets}, {@code grabFilthiestCompactedLog}, {@code doneCleaning}, the
 * {@code cleaner-offset-checkpoint}), {@code Cleaner.clean} with a {@code SkimpyOffsetMap} (MD5) and a
 * {@code Throttler} at CleanerConfig's defaults. Request and response are the shared testee's (its README): optional
 * {@code first_dirty_offset} (written to the checkpoint first), {@code dedupe_buffer_size} (4 MiB),
 * {@code io_buffer_size} (524288, the Cleaner gets half). The manager is created at the first clean (it creates
 * {@code cleaner-offset-checkpoint}), or at a truncation when that file exists.
 */
final class Cleaning {
    static final String JAVA_PKG = ReleaseCleaner.JAVA;
    static final long DEFAULT_DEDUPE_BUFFER_SIZE = 4L * 1024 * 1024;
    static final int DEFAULT_IO_BUFFER_SIZE = 524288;
    static final int MAX_MESSAGE_SIZE = 1048588; // message.max.bytes default, the Cleaner's largest I/O buffer

    private Object manager;

    /** Whether this release's cleaner is served: every 4.x release (Scala on 4.0, Java from 4.1). */
    static boolean served() { return ReleaseCleaner.exists(); }

    JsonNode clean(Session session, JsonNode args, Time time) throws Exception {
        if (!served()) throw new Errors.OperationError("INVALID_REQUEST", "this Kafka release has no log cleaner class");
        Object log = session.log.log;
        TopicPartition tp = session.glue.topicPartition;
        File logDir = session.glue.logDir;
        // the Cleaner first: 4.0's refuses a too-small dedupe buffer at construction, before the manager creates
        // cleaner-offset-checkpoint, so a refused clean changes no file (MODEL-11)
        Object cleaner = cleaner(args, time);
        manager(session);
        if (args.hasNonNull("first_dirty_offset"))
            ReleaseCleaner.updateCheckpoint(manager, logDir, tp, args.get("first_dirty_offset").asLong());
        long now = time.milliseconds();
        Object offsets = ReleaseCleaner.cleanableOffsets(log, ReleaseCleaner.checkpoint(manager, tp), now);
        Optional<Object> picked = ReleaseCleaner.grabFilthiestCompactedLog(manager, time);
        ObjectNode r = KafkaTestee.JSON.createObjectNode().put("cleaned", picked.isPresent());
        boolean compacted = ((org.apache.kafka.storage.internals.log.LogConfig) ReleaseLog.call(log, "config")).compact;
        putOffset(r, "first_dirty_offset", compacted ? ReleaseLog.call(offsets, "firstDirtyOffset") : null);
        putOffset(r, "first_uncleanable_dirty_offset", compacted ? ReleaseLog.call(offsets, "firstUncleanableDirtyOffset") : null);
        r.put("checkpoint_reset", compacted && (Boolean) ReleaseLog.call(offsets, "forceUpdateCheckpoint"));
        if (picked.isEmpty()) return compacted ? notPicked(r, tp, log, offsets, now) : withStats(r, null, null, null, null, null);
        Object toClean = picked.get();
        Object[] done = ReleaseCleaner.clean(cleaner, toClean);
        ReleaseLog.call(manager, "doneCleaning", tp, logDir, (Long) done[0]);
        long firstDirty = (Long) ReleaseLog.call(toClean, "firstDirtyOffset");
        r.put("first_dirty_offset", firstDirty);
        return withStats(r, ReleaseLog.call(toClean, "firstUncleanableOffset"), done[0],
                ReleaseLog.call(toClean, "cleanableRatio"), ReleaseCleaner.maxCompactionDelay(log, firstDirty, now), done[1]);
    }

    /**
     * A compacted log the pass did not pick (empty, or below min.cleanable.dirty.ratio with no compaction delay): the
     * figures grabFilthiestCompactedLog computed for it on the way, from Kafka's own LogToClean and maxCompactionDelay.
     */
    static ObjectNode notPicked(ObjectNode r, TopicPartition tp, Object log, Object offsets, long now) throws Exception {
        long firstDirty = (Long) ReleaseLog.call(offsets, "firstDirtyOffset");
        long delay = ReleaseCleaner.maxCompactionDelay(log, firstDirty, now);
        Object ltc = ReleaseCleaner.logToClean(tp, log, firstDirty,
                (Long) ReleaseLog.call(offsets, "firstUncleanableDirtyOffset"), delay > 0);
        double ratio = (Double) ReleaseLog.call(ltc, "cleanableRatio");
        return withStats(r, ReleaseLog.call(ltc, "firstUncleanableOffset"), null, Double.isNaN(ratio) ? null : ratio,
                delay, null);
    }

    /**
     * LogManager.truncateTo (when the target is below the active segment's base) and truncateFullyAndStartAt:
     * LogCleanerManager.maybeTruncateCheckpoint to the new active segment's base offset (COMPACT-27). A broker's cleaner
     * exists from startup; here the manager is made when a {@code cleaner-offset-checkpoint} exists to be truncated.
     */
    void maybeTruncateCheckpoint(Session session) throws Exception {
        File logDir = session.glue.logDir;
        if (!served() || manager == null && !new File(logDir, "cleaner-offset-checkpoint").exists()) return;
        long activeBase = (Long) ReleaseLog.call(ReleaseLog.call(session.log.log, "activeSegment"), "baseOffset");
        ReleaseLog.call(manager(session), "maybeTruncateCheckpoint", logDir, session.glue.topicPartition, activeBase);
    }

    Object manager(Session session) throws Exception {
        if (manager == null)
            manager = ReleaseCleaner.manager(session.glue.logDir, session.glue.topicPartition, session.log.log,
                    session.glue.channel);
        return manager;
    }

    /** The cleaner thread's Cleaner: LogCleaner's construction with CleanerConfig's defaults and one thread. */
    Object cleaner(JsonNode args, Time time) throws Exception {
        long dedupe = args.hasNonNull("dedupe_buffer_size") ? args.get("dedupe_buffer_size").asLong() : DEFAULT_DEDUPE_BUFFER_SIZE;
        int io = args.hasNonNull("io_buffer_size") ? args.get("io_buffer_size").asInt() : DEFAULT_IO_BUFFER_SIZE;
        Object offsetMap = ReleaseLog.load(JAVA_PKG + "SkimpyOffsetMap").getConstructor(int.class, String.class)
                .newInstance((int) Math.min(dedupe, Integer.MAX_VALUE), "MD5");
        Object throttler = ReleaseLog.load("org.apache.kafka.storage.internals.utils.Throttler")
                .getConstructor(double.class, long.class, String.class, String.class, Time.class)
                .newInstance(Double.MAX_VALUE, 300L, "cleaner-io", "bytes", time);
        return ReleaseCleaner.cleaner(offsetMap, io / 2, MAX_MESSAGE_SIZE, 0.9d, throttler, time);
    }

    static ObjectNode withStats(ObjectNode r, Object firstUncleanable, Object end, Object ratio, Object delay, Object stats) {
        putOffset(r, "first_uncleanable_offset", firstUncleanable);
        putOffset(r, "end_offset", end);
        if (ratio == null) r.putNull("cleanable_ratio"); else r.put("cleanable_ratio", (Double) ratio);
        putOffset(r, "compaction_delay_ms", delay);
        for (String[] f : new String[][] {{"messages_read", "messagesRead"}, {"messages_written", "messagesWritten"},
                {"bytes_read", "bytesRead"}, {"bytes_written", "bytesWritten"}, {"invalid_messages_read", "invalidMessagesRead"},
                {"map_messages_read", "mapMessagesRead"}})
            r.put(f[0], stats == null ? 0L : (Long) ReleaseLog.call(stats, f[1]));
        r.put("map_bytes_read", stats == null ? 0L : mapBytesRead(stats));
        return r;
    }

    /** CleanerStats.mapBytesRead is a package-private field (no getter in 4.x's Java; Scala's is a private var). */
    static long mapBytesRead(Object stats) {
        try {
            java.lang.reflect.Field f = stats.getClass().getDeclaredField("mapBytesRead");
            f.setAccessible(true);
            return ((Number) f.get(stats)).longValue();
        } catch (ReflectiveOperationException e) {
            return 0L;
        }
    }

    static void putOffset(ObjectNode r, String name, Object value) {
        if (value == null) r.putNull(name); else r.put(name, ((Number) value).longValue());
    }
}
