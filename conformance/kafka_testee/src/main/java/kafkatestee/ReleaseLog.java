package kafkatestee;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.server.util.Scheduler;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogOffsetMetadata;
import org.apache.kafka.storage.internals.log.LogOffsetsListener;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.LogStartOffsetIncrementReason;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.VerificationGuard;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;
import org.apache.kafka.server.common.RequestLocal;

import java.io.File;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Kafka's UnifiedLog of the release on the class path, and the ONE place where the releases' APIs differ.
 *
 * <ul>
 *   <li>4.0: UnifiedLog is Scala ({@code kafka.log.UnifiedLog} in kafka_2.13), opened by its companion's
 *       {@code apply} (17 parameters, {@code scala.Option} for optional values, {@code keepPartitionMetadataFile});
 *       {@code appendAsLeader} has no 3-parameter overload from Java; {@code fetchOffsetByTimestamp} takes an
 *       {@code Option[RemoteLogManager]}.</li>
 *   <li>4.1 and later: UnifiedLog is Java ({@code org.apache.kafka.storage.internals.log.UnifiedLog} in kafka-storage),
 *       opened by {@code UnifiedLog.create}; {@code java.util.Optional}.</li>
 *   <li>4.3 and later: the record classes moved from {@code org.apache.kafka.common.record} to
 *       {@code org.apache.kafka.common.record.internal} (so {@code FetchDataInfo.records}' type changed).</li>
 *   <li>4.4: {@code UnifiedLog.closeHandlers()} is {@code closeQuietly()}; {@code LogConfig.validate} takes a
 *       {@code Map<String, String>} instead of {@code Properties}; LogManager.shutdown calls
 *       {@code prepareActiveSegmentForClose()} before {@code flush(true)} and {@code close()}.</li>
 *   <li>4.1 and later: segment.bytes below 1 MiB only through {@code internal.segment.bytes}.</li>
 * </ul>
 * Everything else the testee calls has one signature in every 4.x release, so it is compiled against directly; these
 * calls are made by reflection on the class that exists, and a release with another shape fails loudly at its first call.
 * No decision of the log is made here: every method forwards to the Kafka method of the same name.
 */
final class ReleaseLog {
    static final String JAVA_LOG = "org.apache.kafka.storage.internals.log.UnifiedLog";
    static final String SCALA_LOG = "kafka.log.UnifiedLog";
    /** 4.0's UnifiedLog is the Scala class; later releases keep a Java class of that name with statics only. */
    static final boolean SCALA = exists(SCALA_LOG) && findMethod(load(SCALA_LOG), "appendAsFollower", 2) != null;
    static final Class<?> UNIFIED_LOG = load(SCALA ? SCALA_LOG : JAVA_LOG);
    static final Class<?> MEMORY_RECORDS = load(exists("org.apache.kafka.common.record.internal.MemoryRecords")
            ? "org.apache.kafka.common.record.internal.MemoryRecords" : "org.apache.kafka.common.record.MemoryRecords");

    final Object log;

    private ReleaseLog(Object log) { this.log = log; }

    /** Which classes this release answers with (the testee's hello names them). */
    static String describe() {
        return UNIFIED_LOG.getName() + (SCALA ? " (Scala)" : "") + ", " + MEMORY_RECORDS.getName();
    }

    /** UnifiedLog.apply (4.0) / UnifiedLog.create (4.1+): Kafka's own factory, LogLoader and all. */
    static ReleaseLog open(File dir, LogConfig config, long logStartOffset, long recoveryPoint, Scheduler scheduler,
                           Time time, int maxTransactionTimeoutMs, ProducerStateManagerConfig producerStateManagerConfig,
                           int producerIdExpirationCheckIntervalMs, LogDirFailureChannel channel,
                           boolean lastShutdownClean, Optional<Uuid> topicId) {
        BrokerTopicStats stats = new BrokerTopicStats(false);
        if (SCALA) {
            Object module = staticField(load(SCALA_LOG + "$"), "MODULE$");
            return new ReleaseLog(call(module, "apply", dir, config, logStartOffset, recoveryPoint, scheduler, stats, time,
                    maxTransactionTimeoutMs, producerStateManagerConfig, producerIdExpirationCheckIntervalMs, channel,
                    lastShutdownClean, option(topicId), true /* keepPartitionMetadataFile: KRaft */,
                    new ConcurrentHashMap<String, Integer>(), false, LogOffsetsListener.NO_OP_OFFSETS_LISTENER));
        }
        return new ReleaseLog(callStatic(UNIFIED_LOG, "create", dir, config, logStartOffset, recoveryPoint, scheduler,
                stats, time, maxTransactionTimeoutMs, producerStateManagerConfig, producerIdExpirationCheckIntervalMs,
                channel, lastShutdownClean, topicId));
    }

    /** LogConfig.validate as a topic creation runs it: Properties (to 4.3) or Map (4.4). */
    static void validateTopicConfig(Map<String, String> props) {
        Class<?> logConfig = LogConfig.class;
        if (findMethod(logConfig, "validate", 1, Properties.class) != null) {
            Properties p = new Properties();
            p.putAll(props);
            callStatic(logConfig, "validate", p);
        } else {
            callStatic(logConfig, "validate", props);
        }
    }

    /**
     * The topic config that carries the protocol's segment_bytes. Since 4.1 segment.bytes is at least 1 MiB (KIP-1030)
     * and Kafka's own tests set smaller segments through {@code internal.segment.bytes}
     * (LogConfig.INTERNAL_SEGMENT_BYTES_CONFIG, which LogConfig.segmentSize() prefers); the testee does the same
     * from 14 bytes (4.0's minimum) to 1 MiB. 4.0 has no such key and takes segment.bytes from 14 bytes.
     */
    static String segmentBytesKey(long segmentBytes) {
        // at least 1 MiB, or below 14 (LegacyRecord.RECORD_OVERHEAD_V0, 4.0's minimum): segment.bytes, which accepts
        // or refuses it as a topic creation does
        if (segmentBytes >= 1024 * 1024 || segmentBytes < 14) return org.apache.kafka.common.config.TopicConfig.SEGMENT_BYTES_CONFIG;
        try {
            return (String) LogConfig.class.getField("INTERNAL_SEGMENT_BYTES_CONFIG").get(null);
        } catch (ReflectiveOperationException e) {
            return org.apache.kafka.common.config.TopicConfig.SEGMENT_BYTES_CONFIG;
        }
    }

    /** records: a MemoryRecords of this release ({@link #memoryRecords}). */
    LogAppendInfo appendAsLeader(Object records, int leaderEpoch, AppendOrigin origin) {
        if (SCALA) return (LogAppendInfo) call(log, "appendAsLeader", records, leaderEpoch, origin,
                RequestLocal.noCaching(), VerificationGuard.SENTINEL);
        if (findMethod(UNIFIED_LOG, "appendAsLeader", 6) != null)
            // 4.2+: a coordinator's markers need a transaction version; TV_0, the pre-KIP-890 markers the model has
            return (LogAppendInfo) call(log, "appendAsLeader", records, leaderEpoch, origin, RequestLocal.noCaching(),
                    VerificationGuard.SENTINEL, (short) 0);
        return (LogAppendInfo) call(log, "appendAsLeader", records, leaderEpoch, origin);
    }

    LogAppendInfo appendAsFollower(Object records, int leaderEpoch) {
        return (LogAppendInfo) call(log, "appendAsFollower", records, leaderEpoch);
    }

    FetchDataInfo read(long startOffset, int maxLength, FetchIsolation isolation, boolean minOneMessage) {
        return (FetchDataInfo) call(log, "read", startOffset, maxLength, isolation, minOneMessage);
    }

    /** The bytes of FetchDataInfo.records (a MemoryRecords or a FileRecords slice), read as a fetch would send them. */
    static byte[] recordsBytes(FetchDataInfo info) {
        Object records = field(info, "records");
        if (findMethod(records.getClass(), "buffer", 0) != null) {
            ByteBuffer b = ((ByteBuffer) call(records, "buffer")).duplicate();
            byte[] out = new byte[b.remaining()];
            b.get(out);
            return out;
        }
        int size = (Integer) call(records, "sizeInBytes");
        ByteBuffer b = ByteBuffer.allocate(size);
        call(records, "readInto", b, 0);
        return b.array();
    }

    LogSegment roll(Optional<Long> expectedNextOffset) {
        return (LogSegment) call(log, "roll", SCALA ? option(expectedNextOffset) : expectedNextOffset);
    }

    void flush(boolean forceFlushActiveSegment) { call(log, "flush", forceFlushActiveSegment); }

    boolean truncateTo(long targetOffset) { return (Boolean) call(log, "truncateTo", targetOffset); }

    void truncateFullyAndStartAt(long newOffset, Optional<Long> logStartOffset) {
        call(log, "truncateFullyAndStartAt", newOffset, SCALA ? option(logStartOffset) : logStartOffset);
    }

    boolean maybeIncrementLogStartOffset(long offset, LogStartOffsetIncrementReason reason) {
        return (Boolean) call(log, "maybeIncrementLogStartOffset", offset, reason);
    }

    int deleteOldSegments() { return (Integer) call(log, "deleteOldSegments"); }

    /**
     * The first of deleteOldSegments' three passes alone (segments wholly below the log start offset): Kafka's own
     * private UnifiedLog.deleteLogStartOffsetBreachedSegments, the same name in every 4.x release, called by reflection.
     */
    int deleteLogStartOffsetBreachedSegments() {
        try {
            Method m = UNIFIED_LOG.getDeclaredMethod("deleteLogStartOffsetBreachedSegments");
            m.setAccessible(true);
            return (Integer) m.invoke(log);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException) throw (RuntimeException) cause;
            throw new KafkaCheckedException(cause);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("this Kafka release has no UnifiedLog.deleteLogStartOffsetBreachedSegments", e);
        }
    }

    /** fetchOffsetByTimestamp without remote storage: the found (timestamp, offset, leader epoch), if any. */
    Optional<Object> fetchOffsetByTimestamp(long targetTimestamp) {
        Object holder = call(log, "fetchOffsetByTimestamp", targetTimestamp, SCALA ? option(Optional.empty()) : Optional.empty());
        return ((Optional<?>) call(holder, "timestampAndOffsetOpt")).map(o -> (Object) o);
    }

    /** Partition.maybeIncrementLeaderHW with an ISR of one (MODEL-3): the high watermark to the log end offset. */
    void maybeIncrementHighWatermarkToLogEnd() {
        call(log, "maybeIncrementHighWatermark", (LogOffsetMetadata) call(log, "logEndOffsetMetadata"));
    }

    long updateHighWatermark(long offset) { return (Long) call(log, "updateHighWatermark", offset); }

    void close() { call(log, "close"); }

    /**
     * 4.4's LogManager.shutdown calls prepareActiveSegmentForClose (the active segment's onBecomeInactiveSegment: the
     * last time index entry and the index trim) before flush(true) and close, as LogSegment.close itself no longer
     * does them; earlier releases have no such method and LogSegment.close does them.
     */
    void prepareActiveSegmentForClose() {
        if (findMethod(UNIFIED_LOG, "prepareActiveSegmentForClose", 0) != null) call(log, "prepareActiveSegmentForClose");
    }

    /** UnifiedLog.closeHandlers (to 4.3) / closeQuietly (4.4): drop the file handles without flushing or writing. */
    void closeHandlers() { call(log, findMethod(UNIFIED_LOG, "closeHandlers", 0) != null ? "closeHandlers" : "closeQuietly"); }

    long longValue(String getter) { return (Long) call(log, getter); }

    @SuppressWarnings("unchecked")
    Collection<LogSegment> logSegments() { return (Collection<LogSegment>) call(log, "logSegments"); }

    // ---- reflection ----

    static Object memoryRecords(ByteBuffer batches) { return callStatic(MEMORY_RECORDS, "readableRecords", batches); }

    static Object option(Optional<?> value) {
        return callStatic(load("scala.Option"), "apply", value.orElse(null));
    }

    static Object field(Object target, String name) {
        try {
            return target.getClass().getField(name).get(target);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("this Kafka release has no " + target.getClass().getName() + "." + name, e);
        }
    }

    static Object staticField(Class<?> c, String name) {
        try {
            return c.getField(name).get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("this Kafka release has no " + c.getName() + "." + name, e);
        }
    }

    static Object call(Object target, String name, Object... args) { return invoke(target.getClass(), target, name, args); }

    static Object callStatic(Class<?> c, String name, Object... args) { return invoke(c, null, name, args); }

    /** Kafka's own exception (an unchecked one, or an IOException wrapped in a RuntimeException) comes out as thrown. */
    static Object invoke(Class<?> c, Object target, String name, Object[] args) {
        Method m = findMethod(c, name, args.length, args);
        if (m == null)
            throw new IllegalStateException("this Kafka release has no " + c.getName() + "." + name + " of " + args.length
                    + " parameters taking these arguments");
        try {
            // a public method of a package-private class (DefaultFileChannelRecordBatch...): allowed on the class path
            if (!java.lang.reflect.Modifier.isPublic(m.getDeclaringClass().getModifiers())) m.setAccessible(true);
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException) throw (RuntimeException) cause;
            if (cause instanceof Error) throw (Error) cause;
            throw new KafkaCheckedException(cause);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A checked exception of Kafka's (IOException...) carried out of a reflective call; the testee maps its cause. */
    static final class KafkaCheckedException extends RuntimeException {
        KafkaCheckedException(Throwable cause) { super(cause); }
    }

    static Method findMethod(Class<?> c, String name, int arity, Object... args) {
        for (Method m : c.getMethods()) {
            if (!m.getName().equals(name) || m.getParameterCount() != arity) continue;
            if (args.length == 0 || accepts(m.getParameterTypes(), args)) return m;
        }
        return null;
    }

    static boolean accepts(Class<?>[] types, Object[] args) {
        if (args.length != types.length) return true; // a lookup by name and arity only
        for (int i = 0; i < types.length; i++) {
            if (args[i] instanceof Class) { if (!types[i].equals(args[i])) return false; continue; }
            if (args[i] == null) { if (types[i].isPrimitive()) return false; continue; }
            if (!box(types[i]).isInstance(args[i])) return false;
        }
        return true;
    }

    static Class<?> box(Class<?> t) {
        if (!t.isPrimitive()) return t;
        if (t == long.class) return Long.class;
        if (t == int.class) return Integer.class;
        if (t == boolean.class) return Boolean.class;
        if (t == short.class) return Short.class;
        if (t == double.class) return Double.class;
        return Object.class;
    }

    static boolean exists(String name) {
        try {
            Class.forName(name, false, ReleaseLog.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    static Class<?> load(String name) {
        try {
            return Class.forName(name, true, ReleaseLog.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("this Kafka release has no class " + name, e);
        }
    }
}
