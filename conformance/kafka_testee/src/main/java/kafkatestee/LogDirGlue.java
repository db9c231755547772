package kafkatestee;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.storage.internals.checkpoint.CleanShutdownFileHandler;
import org.apache.kafka.storage.internals.checkpoint.OffsetCheckpointFile;
import org.apache.kafka.storage.internals.log.LocalLog;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogSegment;

import java.io.File;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * LogManager's part for the one partition the testee serves, composed of Kafka's own classes (LogManager itself needs
 * a broker's configuration, metadata and thread pools): the parent log directory's clean-shutdown marker
 * ({@link CleanShutdownFileHandler}) and its two root offset checkpoints ({@link OffsetCheckpointFile}), read at open
 * and written at the moments LogManager writes them. Each method names the LogManager code it follows
 * (docs/conformance/kafka-testee.md lists them with their source).
 */
final class LogDirGlue {
    static final String RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint";
    static final String LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint";

    final File dir;
    final File logDir;
    final TopicPartition topicPartition;
    /** LogManager's channel: the checkpoints are read through it and the log gets it (LogManager.loadLogs). */
    final LogDirFailureChannel channel = new LogDirFailureChannel(1);

    LogDirGlue(File dir) {
        this.dir = dir;
        this.logDir = dir.getAbsoluteFile().getParentFile();
        this.topicPartition = parseTopicPartitionName(dir);
    }

    /** LogManager.loadLog parses the directory name before the log touches the directory (LocalLog's parser). */
    static TopicPartition parseTopicPartitionName(File dir) {
        try {
            return LocalLog.parseTopicPartitionName(dir);
        } catch (KafkaException e) {
            throw new Errors.OperationError("INVALID_FILE_NAME", e.getClass().getName() + ": " + e.getMessage());
        } catch (Exception e) {
            throw new Errors.OperationError("INVALID_FILE_NAME", e.toString());
        }
    }

    /** LogManager.loadLogs: the marker is read and deleted before the dir's logs load; a new log counts as clean. */
    boolean takeCleanShutdownMarker() throws Exception {
        if (!dir.isDirectory()) return true; // LogManager.getOrCreateLog: lastShutdownClean = true
        CleanShutdownFileHandler marker = new CleanShutdownFileHandler(logDir.getPath());
        if (!marker.exists()) return false;
        marker.delete();
        return true;
    }

    /** LogManager.loadLogs reads both root checkpoints through its channel; loadLog takes this partition's entry or 0. */
    long readCheckpoint(String name) {
        if (!dir.isDirectory()) return 0L; // getOrCreateLog: a new log starts at 0
        try {
            return new OffsetCheckpointFile(new File(logDir, name), channel).read().getOrDefault(topicPartition, 0L);
        } catch (Exception e) {
            // unreadable counts as empty; the read has already taken the dir offline in the channel
            System.err.println("[kafka-testee] checkpoint " + name + " unreadable, as empty: " + e);
            return 0L;
        }
    }

    /** LogManager.checkpointRecoveryOffsetsInDir: every log's recovery point (other partitions' entries kept as read). */
    void checkpointRecoveryOffsets(ReleaseLog log) {
        write(RECOVERY_POINT_CHECKPOINT, log.longValue("recoveryPoint"), true);
    }

    /** LogManager.checkpointLogStartOffsetsInDir: a log's start offset only when above its first segment's base. */
    void checkpointLogStartOffsets(ReleaseLog log) {
        long logStartOffset = log.longValue("logStartOffset");
        LogSegment first = log.logSegments().iterator().next();
        write(LOG_START_OFFSET_CHECKPOINT, logStartOffset, logStartOffset > first.baseOffset());
    }

    /** Both, swallowing a failure as LogManager's scheduled tasks do (the channel has recorded it). */
    void checkpointBoth(ReleaseLog log) {
        try {
            checkpointRecoveryOffsets(log);
            checkpointLogStartOffsets(log);
        } catch (RuntimeException e) {
            System.err.println("[kafka-testee] checkpoint: " + e);
        }
    }

    /** LogManager.shutdown's last step for the dir: the marker with broker epoch -1 (no broker registration here). */
    void writeCleanShutdownMarker() throws Exception {
        new CleanShutdownFileHandler(logDir.getPath()).write(-1L);
    }

    private void write(String name, long value, boolean include) {
        File file = new File(logDir, name);
        Map<TopicPartition, Long> entries = otherEntries(file);
        if (include) entries.put(topicPartition, value);
        try {
            new OffsetCheckpointFile(file, channel).write(entries);
        } catch (java.io.IOException e) {
            throw new KafkaException(e);
        }
    }

    /**
     * GLUE: Kafka writes these files from LogManager's map of every log of the dir; the testee has one log, so it keeps
     * the other partitions' entries as the file holds them, read through a private channel (a read Kafka never makes
     * must not take the dir offline).
     */
    private Map<TopicPartition, Long> otherEntries(File file) {
        Map<TopicPartition, Long> m = new LinkedHashMap<>();
        try {
            if (file.exists()) m.putAll(new OffsetCheckpointFile(file, new LogDirFailureChannel(1)).read());
        } catch (Exception e) {
            // unreadable: as empty
        }
        m.remove(topicPartition);
        return m;
    }
}
