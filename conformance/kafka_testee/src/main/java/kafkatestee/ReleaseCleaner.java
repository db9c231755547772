package kafkatestee;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;

import java.io.File;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Consumer;

/**
 * The one place where the releases' log cleaner APIs differ (as {@link ReleaseLog} is for UnifiedLog); every method
 * forwards to the Kafka method of the same name, no decision of the cleaner is made here.
 *
 * <ul>
 *   <li>4.0: the cleaner is Scala in kafka_2.13: {@code kafka.log.LogCleanerManager} (a {@code Seq} of log dirs, a
 *       {@code kafka.utils.Pool} of logs, {@code scala.Option}/{@code Tuple2} arguments, a Scala {@code Map} of
 *       checkpoints), the statics {@code cleanableOffsets}/{@code maxCompactionDelay} on its companion object,
 *       {@code kafka.log.Cleaner} (a {@code Function1} checkDone; {@code clean} answers a {@code Tuple2}),
 *       {@code kafka.log.LogToClean}, {@code kafka.log.PreCleanStats}.</li>
 *   <li>4.1 and later: the same classes in Java in kafka-storage ({@code org.apache.kafka.storage.internals.log}):
 *       {@code java.util.Optional}, {@code Map.Entry}, a {@code Consumer} checkDone.</li>
 * </ul>
 * The offset map ({@code SkimpyOffsetMap}) and the {@code Throttler} are the same Java classes in every 4.x release.
 */
final class ReleaseCleaner {
    static final String JAVA = "org.apache.kafka.storage.internals.log.";
    static final boolean SCALA = !ReleaseLog.exists(JAVA + "Cleaner") && ReleaseLog.exists("kafka.log.Cleaner");
    static final String PKG = SCALA ? "kafka.log." : JAVA;

    private ReleaseCleaner() { }

    static boolean exists() { return ReleaseLog.exists(PKG + "Cleaner"); }

    /**
     * LogCleanerManager over one log dir and the broker's logs: the open log. GLUE: the other partitions a checkpoint
     * names count as logs of the same broker (their entries are kept, as the root checkpoints' glue keeps them): the
     * map answers containsKey for them, and only the open log is iterated, so only it is cleaned.
     */
    static Object manager(File logDir, TopicPartition tp, Object log, Object channel) throws Exception {
        ConcurrentHashMap<Object, Object> logs = new ConcurrentHashMap<>() {
            @Override public boolean containsKey(Object key) { return true; }
        };
        logs.put(tp, log);
        Class<?> manager = ReleaseLog.load(PKG + "LogCleanerManager");
        Class<?> channelClass = ReleaseLog.load(JAVA + "LogDirFailureChannel");
        if (!SCALA)
            return manager.getConstructor(List.class, ConcurrentMap.class, channelClass).newInstance(List.of(logDir), logs, channel);
        Class<?> poolClass = ReleaseLog.load("kafka.utils.Pool");
        Object pool = poolClass.getConstructor(ReleaseLog.load("scala.Option")).newInstance(ReleaseLog.option(Optional.empty()));
        Field inner = poolClass.getDeclaredField("kafka$utils$Pool$$pool"); // Pool's private ConcurrentMap
        inner.setAccessible(true);
        inner.set(pool, logs);
        Object dirs = ReleaseLog.call(ReleaseLog.callStatic(ReleaseLog.load("scala.jdk.javaapi.CollectionConverters"),
                "asScala", List.of(logDir)), "toSeq");
        return manager.getConstructor(ReleaseLog.load("scala.collection.Seq"), poolClass, channelClass)
                .newInstance(dirs, pool, channel);
    }

    /** LogCleanerManager.updateCheckpoints(dir, Some(tp -> offset), None). */
    static void updateCheckpoint(Object manager, File logDir, TopicPartition tp, long offset) throws Exception {
        if (!SCALA) {
            ReleaseLog.call(manager, "updateCheckpoints", logDir, Optional.of(Map.entry(tp, offset)), Optional.empty());
            return;
        }
        Object pair = ReleaseLog.load("scala.Tuple2").getConstructor(Object.class, Object.class).newInstance(tp, offset);
        ReleaseLog.call(manager, "updateCheckpoints", logDir, ReleaseLog.option(Optional.of(pair)),
                ReleaseLog.option(Optional.empty()));
    }

    /** The partition's entry of LogCleanerManager.allCleanerCheckpoints. */
    static Optional<Long> checkpoint(Object manager, TopicPartition tp) {
        Object all = ReleaseLog.call(manager, "allCleanerCheckpoints");
        if (!SCALA) return Optional.ofNullable((Long) ((Map<?, ?>) all).get(tp));
        return fromOption(ReleaseLog.call(all, "get", tp)).map(v -> (Long) v);
    }

    /** LogCleanerManager.cleanableOffsets (package-private in Java, on the companion object in Scala). */
    static Object cleanableOffsets(Object log, Optional<Long> lastClean, long now) throws Exception {
        if (SCALA) return ReleaseLog.call(companion(), "cleanableOffsets", log, ReleaseLog.option(lastClean), now);
        Method m = ReleaseLog.load(PKG + "LogCleanerManager").getDeclaredMethod("cleanableOffsets", ReleaseLog.UNIFIED_LOG,
                Optional.class, long.class);
        m.setAccessible(true);
        return m.invoke(null, log, lastClean, now);
    }

    /** LogCleanerManager.maxCompactionDelay (private): how long max.compaction.lag.ms has forced the pass, 0 if not. */
    static long maxCompactionDelay(Object log, long firstDirtyOffset, long now) throws Exception {
        if (SCALA) // a private method of the companion object, name-mangled by scalac
            return (Long) ReleaseLog.call(companion(), "kafka$log$LogCleanerManager$$maxCompactionDelay", log,
                    firstDirtyOffset, now);
        Method m = ReleaseLog.load(PKG + "LogCleanerManager").getDeclaredMethod("maxCompactionDelay", ReleaseLog.UNIFIED_LOG,
                long.class, long.class);
        m.setAccessible(true);
        return (Long) m.invoke(null, log, firstDirtyOffset, now);
    }

    /** LogCleanerManager.grabFilthiestCompactedLog with new PreCleanStats. */
    static Optional<Object> grabFilthiestCompactedLog(Object manager, Time time) throws Exception {
        Object picked = ReleaseLog.call(manager, "grabFilthiestCompactedLog", time,
                ReleaseLog.load(PKG + "PreCleanStats").getConstructor().newInstance());
        return SCALA ? fromOption(picked) : ((Optional<?>) picked).map(o -> (Object) o);
    }

    static Object logToClean(TopicPartition tp, Object log, long firstDirty, long uncleanable, boolean now) throws Exception {
        Class<?> c = ReleaseLog.load(PKG + "LogToClean");
        if (SCALA)
            return c.getConstructor(TopicPartition.class, ReleaseLog.UNIFIED_LOG, long.class, long.class, boolean.class)
                    .newInstance(tp, log, firstDirty, uncleanable, now);
        return c.getConstructor(ReleaseLog.UNIFIED_LOG, long.class, long.class, boolean.class)
                .newInstance(log, firstDirty, uncleanable, now);
    }

    /** new Cleaner(0, offsetMap, ioBufferSize, maxIoBufferSize, loadFactor, throttler, time, checkDone = nothing). */
    static Object cleaner(Object offsetMap, int ioBufferSize, int maxIoBufferSize, double loadFactor, Object throttler,
                          Time time) throws Exception {
        Object checkDone = SCALA ? scalaNoOp() : (Consumer<TopicPartition>) tp -> { };
        for (Constructor<?> c : ReleaseLog.load(PKG + "Cleaner").getConstructors()) {
            if (c.getParameterCount() != 8) continue;
            try {
                return c.newInstance(0, offsetMap, ioBufferSize, maxIoBufferSize, loadFactor, throttler, time, checkDone);
            } catch (InvocationTargetException e) { // 4.0's require on the map's size: Kafka's exception, as thrown
                if (e.getCause() instanceof RuntimeException) throw (RuntimeException) e.getCause();
                throw e;
            }
        }
        throw new IllegalStateException("this Kafka release has no 8-parameter Cleaner constructor");
    }

    /** Cleaner.clean(cleanable): {the end offset, the CleanerStats}. */
    static Object[] clean(Object cleaner, Object toClean) {
        Object done = ReleaseLog.call(cleaner, "clean", toClean);
        if (SCALA) return new Object[] {ReleaseLog.call(done, "_1"), ReleaseLog.call(done, "_2")};
        Map.Entry<?, ?> e = (Map.Entry<?, ?>) done;
        return new Object[] {e.getKey(), e.getValue()};
    }

    static Object companion() { return ReleaseLog.staticField(ReleaseLog.load("kafka.log.LogCleanerManager$"), "MODULE$"); }

    static Optional<Object> fromOption(Object option) {
        return (Boolean) ReleaseLog.call(option, "isDefined") ? Optional.of(ReleaseLog.call(option, "get")) : Optional.empty();
    }

    /** A scala.Function1 that does nothing (nothing aborts a pass here), made without compiling against Scala. */
    static Object scalaNoOp() {
        Class<?> function1 = ReleaseLog.load("scala.Function1");
        Object unit = ReleaseLog.staticField(ReleaseLog.load("scala.runtime.BoxedUnit"), "UNIT");
        return Proxy.newProxyInstance(function1.getClassLoader(), new Class<?>[] {function1}, (proxy, method, args) -> {
            switch (method.getName()) {
                case "apply": return unit;
                case "hashCode": return System.identityHashCode(proxy);
                case "equals": return proxy == args[0];
                default: return "checkDone (nothing aborts the pass)";
            }
        });
    }
}
