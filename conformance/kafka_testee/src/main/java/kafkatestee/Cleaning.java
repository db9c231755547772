package kafkatestee;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;

import java.io.File;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The protocol's {@code clean}: one pass of Kafka's log cleaner thread over the open log, as
 * {@code LogCleaner.CleanerThread.cleanFilthiestLog} does it when this log is the broker's only one, with Kafka's own
 * classes of the release (4.1 and later, where they are Java in kafka-storage): {@code LogCleanerManager}
 * ({@code cleanableOffsets}, {@code grabFilthiestCompactedLog}, {@code doneCleaning}, the
 * {@code cleaner-offset-checkpoint}), {@code Cleaner.clean} with a {@code SkimpyOffsetMap} (MD5) and a
 * {@code Throttler} at CleanerConfig's defaults. Request and response are the shared testee's (its README): optional
 * {@code first_dirty_offset} (written to the checkpoint first), {@code dedupe_buffer_size} (4 MiB),
 * {@code io_buffer_size} (524288, the Cleaner gets half). 4.0's cleaner is Scala: not served (INVALID_REQUEST).
 * The manager is created at the first clean (it creates {@code cleaner-offset-checkpoint}).
 */
final class Cleaning {
    static final String PKG = "org.apache.kafka.storage.internals.log.";
    static final long DEFAULT_DEDUPE_BUFFER_SIZE = 4L * 1024 * 1024;
    static final int DEFAULT_IO_BUFFER_SIZE = 524288;
    static final int MAX_MESSAGE_SIZE = 1048588; // message.max.bytes default, the Cleaner's largest I/O buffer

    private Object manager;

    /** Whether this release's cleaner is served: Kafka's Java Cleaner (4.1+). */
    static boolean served() { return ReleaseLog.exists(PKG + "Cleaner"); }

    JsonNode clean(Session session, JsonNode args, Time time) throws Exception {
        if (!served())
            throw new Errors.OperationError("INVALID_REQUEST", "clean needs Kafka 4.1+ (4.0's log cleaner is Scala)");
        Object log = session.log.log;
        TopicPartition tp = session.glue.topicPartition;
        File logDir = session.glue.logDir;
        manager(session);
        if (args.hasNonNull("first_dirty_offset"))
            ReleaseLog.call(manager, "updateCheckpoints", logDir,
                    Optional.of(Map.entry(tp, args.get("first_dirty_offset").asLong())), Optional.empty());
        long now = time.milliseconds();
        @SuppressWarnings("unchecked")
        Map<TopicPartition, Long> checkpoints = (Map<TopicPartition, Long>) ReleaseLog.call(manager, "allCleanerCheckpoints");
        Object offsets = cleanableOffsets(log, Optional.ofNullable(checkpoints.get(tp)), now);
        Optional<?> picked = (Optional<?>) ReleaseLog.call(manager, "grabFilthiestCompactedLog", time,
                ReleaseLog.load(PKG + "PreCleanStats").getConstructor().newInstance());
        ObjectNode r = KafkaTestee.JSON.createObjectNode().put("cleaned", picked.isPresent());
        boolean compacted = ((org.apache.kafka.storage.internals.log.LogConfig) ReleaseLog.call(log, "config")).compact;
        putOffset(r, "first_dirty_offset", compacted ? ReleaseLog.call(offsets, "firstDirtyOffset") : null);
        putOffset(r, "first_uncleanable_dirty_offset", compacted ? ReleaseLog.call(offsets, "firstUncleanableDirtyOffset") : null);
        r.put("checkpoint_reset", compacted && (Boolean) ReleaseLog.call(offsets, "forceUpdateCheckpoint"));
        if (picked.isEmpty()) return compacted ? notPicked(r, log, offsets, now) : withStats(r, null, null, null, null, null);
        Object toClean = picked.get();
        Map.Entry<?, ?> done = (Map.Entry<?, ?>) ReleaseLog.call(cleaner(args, time), "clean", toClean);
        ReleaseLog.call(manager, "doneCleaning", tp, logDir, (Long) done.getKey());
        Object firstDirty = ReleaseLog.call(toClean, "firstDirtyOffset");
        r.put("first_dirty_offset", (Long) firstDirty);
        return withStats(r, ReleaseLog.call(toClean, "firstUncleanableOffset"), done.getKey(),
                ReleaseLog.call(toClean, "cleanableRatio"), maxCompactionDelay(log, (Long) firstDirty, now), done.getValue());
    }

    /**
     * A compacted log the pass did not pick (empty, or below min.cleanable.dirty.ratio with no compaction delay): the
     * figures grabFilthiestCompactedLog computed for it on the way, from Kafka's own LogToClean and maxCompactionDelay.
     */
    static ObjectNode notPicked(ObjectNode r, Object log, Object offsets, long now) throws Exception {
        long firstDirty = (Long) ReleaseLog.call(offsets, "firstDirtyOffset");
        long delay = (Long) maxCompactionDelay(log, firstDirty, now);
        Object ltc = ReleaseLog.load(PKG + "LogToClean").getConstructor(ReleaseLog.UNIFIED_LOG, long.class, long.class,
                boolean.class).newInstance(log, firstDirty, ReleaseLog.call(offsets, "firstUncleanableDirtyOffset"), delay > 0);
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
        if (manager == null && !new File(logDir, "cleaner-offset-checkpoint").exists()) return;
        long activeBase = (Long) ReleaseLog.call(ReleaseLog.call(session.log.log, "activeSegment"), "baseOffset");
        ReleaseLog.call(manager(session), "maybeTruncateCheckpoint", logDir, session.glue.topicPartition, activeBase);
    }

    /**
     * LogCleanerManager over this log dir and a map of the broker's logs holding the open log. GLUE: the other
     * partitions a checkpoint names count as logs of the same broker (their entries are kept, as the root checkpoints'
     * glue keeps them): the map answers containsKey for them, and only the open log is iterated, so only it is cleaned.
     */
    Object manager(Session session) throws Exception {
        if (manager == null) {
            TopicPartition tp = session.glue.topicPartition;
            ConcurrentHashMap<TopicPartition, Object> logs = new ConcurrentHashMap<>() {
                @Override public boolean containsKey(Object key) { return true; }
            };
            logs.put(tp, session.log.log);
            manager = ReleaseLog.load(PKG + "LogCleanerManager").getConstructor(List.class,
                    java.util.concurrent.ConcurrentMap.class, ReleaseLog.load(PKG + "LogDirFailureChannel"))
                    .newInstance(List.of(session.glue.logDir), logs, session.glue.channel);
        }
        return manager;
    }

    /** LogCleanerManager.cleanableOffsets (package-private in 4.4): Kafka's own, called by reflection. */
    static Object cleanableOffsets(Object log, Optional<Long> lastClean, long now) throws Exception {
        Method m = ReleaseLog.load(PKG + "LogCleanerManager").getDeclaredMethod("cleanableOffsets", ReleaseLog.UNIFIED_LOG,
                Optional.class, long.class);
        m.setAccessible(true);
        return m.invoke(null, log, lastClean, now);
    }

    /** LogCleanerManager.maxCompactionDelay (private): how long max.compaction.lag.ms has forced the pass, 0 if not. */
    static Object maxCompactionDelay(Object log, long firstDirtyOffset, long now) throws Exception {
        Method m = ReleaseLog.load(PKG + "LogCleanerManager").getDeclaredMethod("maxCompactionDelay", ReleaseLog.UNIFIED_LOG,
                long.class, long.class);
        m.setAccessible(true);
        return m.invoke(null, log, firstDirtyOffset, now);
    }

    /** The cleaner thread's Cleaner: LogCleaner's construction with CleanerConfig's defaults and one thread. */
    Object cleaner(JsonNode args, Time time) throws Exception {
        long dedupe = args.hasNonNull("dedupe_buffer_size") ? args.get("dedupe_buffer_size").asLong() : DEFAULT_DEDUPE_BUFFER_SIZE;
        int io = args.hasNonNull("io_buffer_size") ? args.get("io_buffer_size").asInt() : DEFAULT_IO_BUFFER_SIZE;
        Object offsetMap = ReleaseLog.load(PKG + "SkimpyOffsetMap").getConstructor(int.class, String.class)
                .newInstance((int) Math.min(dedupe, Integer.MAX_VALUE), "MD5");
        Object throttler = ReleaseLog.load("org.apache.kafka.storage.internals.utils.Throttler")
                .getConstructor(double.class, long.class, String.class, String.class, Time.class)
                .newInstance(Double.MAX_VALUE, 300L, "cleaner-io", "bytes", time);
        Consumer<TopicPartition> checkDone = tp -> { }; // nothing aborts a pass here
        for (Constructor<?> c : ReleaseLog.load(PKG + "Cleaner").getConstructors())
            if (c.getParameterCount() == 8)
                return c.newInstance(0, offsetMap, io / 2, MAX_MESSAGE_SIZE, 0.9d, throttler, time, checkDone);
        throw new IllegalStateException("this Kafka release has no 8-parameter Cleaner constructor");
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

    /** CleanerStats.mapBytesRead is a package-private field (no getter in 4.x). */
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
