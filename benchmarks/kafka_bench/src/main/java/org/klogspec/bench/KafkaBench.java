package org.klogspec.bench;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.Cleaner;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogToClean;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.SkimpyOffsetMap;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.internals.utils.Throttler;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * The Kafka side of benchmarks/run's Kafka baselines (benchmarks/bench_kafka_jvm.py): Kafka 4.4.0's own classes,
 * timed in this one JVM, so that the Python side can ask for the same job many times (the first time JIT-cold, later
 * ones warm) on the files it writes and resets between requests.
 *
 * <p>One request a line on stdin, one reply a line on stdout:
 * <ul>
 *   <li>{@code recover DIR}: {@code UnifiedLog.create} of a crashed partition directory (no clean shutdown,
 *       recovery point 0): LogLoader's unclean load, every segment recovered;</li>
 *   <li>{@code append DIR BATCHES EPOCH}: a new log in DIR, then {@code appendAsLeader} (origin CLIENT) of each
 *       client batch of the file BATCHES, one MemoryRecords each; topic defaults (index every 4 KiB, no flush);</li>
 *   <li>{@code read DIR MAX_BYTES}: a consumer's fetch loop over the log in DIR: {@code read} from offset 0 to the
 *       log end, MAX_BYTES a fetch, high-watermark isolation, each fetch's bytes copied into one buffer (what a
 *       fetch's send reads from the page cache) and walked for the next fetch offset;</li>
 *   <li>{@code clean DIR END_OFFSET}: one {@code Cleaner.clean} pass of the compacted log in DIR from offset 0 to the
 *       active segment, with the cleaner thread's defaults (4 MiB MD5 offset map, 256 KiB I/O buffer).</li>
 * </ul>
 * The reply is {@code ok CPU_NANOS WALL_NANOS DETAIL}: the process's CPU time ({@link #cpuNanos}: every JVM thread,
 * GC and JIT are Kafka's cost too) and the wall time of the timed part only (opening a log for append, read and clean, and
 * closing, are not timed), or {@code error MESSAGE}. A directory the JVM opens must not be open in another process:
 * Kafka takes a preallocated index file's whole length for entries unless a clean close trimmed it.
 */
public final class KafkaBench {
    static final int MAX_TRANSACTION_TIMEOUT_MS = 900_000;
    static final int PRODUCER_ID_EXPIRATION_MS = 86_400_000;
    static final int PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS = 600_000;

    private final KafkaScheduler scheduler = new KafkaScheduler(1);
    private final com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final String self = threadId(); // the main thread's: every request is served on it
    private List<ByteBuffer> batches;
    private byte[] original;
    private byte[] working;
    private String batchesPath;
    private final Map<File, UnifiedLog> readLogs = new HashMap<>();

    private KafkaBench() { scheduler.startup(); }

    public static void main(String[] args) throws Exception {
        KafkaBench bench = new KafkaBench();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] words = line.trim().split(" ");
            String reply;
            try {
                reply = bench.serve(words);
            } catch (Exception | AssertionError e) {
                reply = "error " + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' ');
            }
            System.out.println(reply);
            System.out.flush();
        }
        for (UnifiedLog log : bench.readLogs.values()) log.closeQuietly();
        bench.scheduler.shutdown();
    }

    String serve(String[] w) throws Exception {
        String reply;
        switch (w[0]) {
            case "recover": reply = recover(new File(w[1])); break;
            case "append": reply = append(new File(w[1]), w[2], Integer.parseInt(w[3])); break;
            case "read": reply = read(new File(w[1]), Integer.parseInt(w[2])); break;
            case "clean": reply = clean(new File(w[1]), Long.parseLong(w[2])); break;
            default: throw new IllegalArgumentException("unknown request " + w[0]);
        }
        // the log's background work of this request (LeaderEpochFileCache's checkpoint flush...) done before the reply,
        // untimed: the Python side then changes the files (one thread, delay 0 tasks run in the order scheduled)
        scheduler.scheduleOnce("klogspec-bench-barrier", () -> { }).get();
        return reply;
    }

    /** LogManager.loadLog's UnifiedLog.create: an unclean load recovers everything past recovery point 0. */
    String recover(File dir) throws IOException {
        long[] start = start();
        UnifiedLog log = open(dir, new Properties(), false);
        String reply = reply(start, log.logEndOffset());
        log.closeQuietly();
        return reply;
    }

    String append(File dir, String batchesFile, int leaderEpoch) throws IOException {
        List<ByteBuffer> input = clientBatches(batchesFile);
        // appendAsLeader assigns offsets in the client's buffer: every request starts from the client's bytes
        System.arraycopy(original, 0, working, 0, original.length);
        deleteTree(dir);
        UnifiedLog log = open(dir, new Properties(), false);
        long[] start = start();
        for (ByteBuffer batch : input)
            log.appendAsLeader(MemoryRecords.readableRecords(batch.duplicate()), leaderEpoch, AppendOrigin.CLIENT);
        String reply = reply(start, log.logEndOffset());
        log.closeQuietly();
        return reply;
    }

    /**
     * The log is opened at the first read of DIR and kept open for the next ones (a read changes nothing): opening
     * resizes the active segment's indexes to their preallocated size, which a later open after closeQuietly would
     * take for entries.
     */
    String read(File dir, int maxBytes) throws IOException {
        UnifiedLog log = readLogs.get(dir);
        if (log == null) {
            log = open(dir, new Properties(), true);
            log.updateHighWatermark(log.logEndOffset());
            readLogs.put(dir, log);
        }
        ByteBuffer buffer = ByteBuffer.allocate(maxBytes);
        long[] start = start();
        long offset = 0, bytes = 0, end = log.logEndOffset();
        while (offset < end) {
            FetchDataInfo info = log.read(offset, maxBytes, FetchIsolation.HIGH_WATERMARK, true);
            FileRecords records = (FileRecords) info.records;
            buffer.clear();
            records.readInto(buffer, 0);
            bytes += buffer.remaining();
            offset = nextOffset(buffer);
        }
        return reply(start, bytes);
    }

    /** The offset after the last whole batch in the buffer: a consumer's next fetch offset (v2 batch headers). */
    static long nextOffset(ByteBuffer b) {
        long next = -1;
        for (int pos = b.position(); pos + 27 <= b.limit(); ) {
            int size = b.getInt(pos + 8) + 12;
            if (pos + size > b.limit()) break;
            next = b.getLong(pos) + b.getInt(pos + 23) + 1;
            pos += size;
        }
        if (next < 0) throw new IllegalStateException("a fetch returned no whole batch");
        return next;
    }

    String clean(File dir, long endOffset) throws Exception {
        Properties props = new Properties();
        props.put("cleanup.policy", "compact");
        props.put("segment.bytes", Integer.toString(Integer.MAX_VALUE));
        UnifiedLog log = open(dir, props, true);
        Cleaner cleaner = new Cleaner(0, new SkimpyOffsetMap(4 * 1024 * 1024, "MD5"), 512 * 1024 / 2, 1048588, 0.9d,
                new Throttler(Double.MAX_VALUE, 300L, "cleaner-io", "bytes", Time.SYSTEM), Time.SYSTEM, tp -> { });
        long[] start = start();
        var done = cleaner.clean(new LogToClean(log, 0L, endOffset, false));
        String reply = reply(start, done.getValue().messagesWritten());
        log.closeQuietly();
        return reply;
    }

    UnifiedLog open(File dir, Properties props, boolean lastShutdownClean) throws IOException {
        return UnifiedLog.create(dir, new LogConfig(props), 0L, 0L, scheduler, new BrokerTopicStats(false), Time.SYSTEM,
                MAX_TRANSACTION_TIMEOUT_MS, new ProducerStateManagerConfig(PRODUCER_ID_EXPIRATION_MS, false),
                PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS, new LogDirFailureChannel(10), lastShutdownClean, Optional.empty());
    }

    /** The file's v2 batches, each a slice of one buffer, read once and kept (the requests repeat the same file). */
    List<ByteBuffer> clientBatches(String path) throws IOException {
        if (path.equals(batchesPath)) {
            return batches;
        }
        original = Files.readAllBytes(new File(path).toPath());
        working = original.clone();
        ByteBuffer all = ByteBuffer.wrap(working);
        List<ByteBuffer> out = new ArrayList<>();
        while (all.remaining() >= 12) {
            int size = all.getInt(all.position() + 8) + 12;
            out.add(all.slice(all.position(), size));
            all.position(all.position() + size);
        }
        batchesPath = path;
        batches = out;
        return out;
    }

    long[] start() { return new long[] {cpuNanos(), System.nanoTime()}; }

    String reply(long[] start, long detail) {
        long wall = System.nanoTime() - start[1];
        return "ok " + (cpuNanos() - start[0]) + " " + wall + " " + detail;
    }

    /**
     * The CPU time of every thread of this process, in nanoseconds: this thread's from {@code ThreadMXBean} (the
     * kernel's per-thread clock, exact), every other thread's (GC, JIT, the scheduler) from the first field of
     * /proc/self/task/{@literal *}/schedstat (Linux), which the kernel brings up to date when a thread leaves its core,
     * so it is exact for the threads not running and lags by at most a tick for one that is. getProcessCpuTime counts
     * in clock ticks (10 ms), too coarse for a fetch loop of 40 ms; it is the fallback where /proc has no schedstat.
     */
    long cpuNanos() {
        File[] tasks = new File("/proc/self/task").listFiles();
        if (tasks == null || self == null) return os.getProcessCpuTime();
        long sum = threads.getCurrentThreadCpuTime();
        for (File task : tasks) {
            if (task.getName().equals(self)) continue;
            try {
                String stat = Files.readString(new File(task, "schedstat").toPath());
                sum += Long.parseLong(stat.substring(0, stat.indexOf(' ')));
            } catch (IOException | RuntimeException e) {
                // a thread that ended between the listing and the read: its time is gone with it
            }
        }
        return sum;
    }

    /** The kernel's id of the calling thread (/proc/thread-self links to {@code <pid>/task/<tid>}), or null. */
    static String threadId() {
        try {
            return Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString();
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }

    static void deleteTree(File f) throws IOException {
        File[] children = f.listFiles();
        if (children != null) for (File c : children) deleteTree(c);
        Files.deleteIfExists(f.toPath());
    }
}
