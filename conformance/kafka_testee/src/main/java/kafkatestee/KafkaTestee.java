package kafkatestee;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.LogStartOffsetIncrementReason;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;

/**
 * The kafka-log-spec conformance protocol (docs/conformance/protocol.md) served by Apache Kafka's UnifiedLog of the
 * release on the class path. One request per stdin line, one response per stdout line; Kafka's log lines go to stderr.
 *
 * Flags: --checkpoints=kafka|reference (when the root offset checkpoints are written), --random-jitter (Kafka's
 * random segment jitter instead of the fixed roll_jitter_ms), --producer-expiration (UnifiedLog's periodic producer
 * expiration), --txn-verification (transaction.partition.verification.enable=true).
 */
public final class KafkaTestee {
    static final ObjectMapper JSON = new ObjectMapper();

    final Session session;
    /** LogCleanerManager of the open log; a new one at each open (its map of logs holds that log). */
    Cleaning cleaning = new Cleaning();

    KafkaTestee(Session.Options options) { this.session = new Session(options); }

    public static void main(String[] args) throws Exception {
        Session.Options options = new Session.Options();
        for (String a : args) {
            if (a.equals("--random-jitter")) options.fixedJitter = false;
            else if (a.equals("--producer-expiration")) options.producerExpiration = true;
            else if (a.equals("--txn-verification")) options.transactionVerification = true;
            else if (a.equals("--checkpoints=kafka") || a.equals("--checkpoints=reference"))
                options.checkpoints = a.substring("--checkpoints=".length());
            else {
                System.err.println("kafka-testee: unknown flag " + a);
                System.exit(2);
            }
        }
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err); // stray prints go to stderr, never into the protocol
        new KafkaTestee(options).serve(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)), out);
    }

    void serve(BufferedReader in, PrintStream out) throws Exception {
        for (String line; (line = in.readLine()) != null; ) {
            if (line.isBlank()) continue;
            JsonNode request = JSON.readTree(line);
            String op = request.path("op").asText();
            if (op.equals("crash")) Runtime.getRuntime().halt(137); // protocol.md: exit at once, no answer, no flush
            ObjectNode response = JSON.createObjectNode().put("id", request.path("id").asLong());
            try {
                JsonNode result = session.dispatch(op, request.path("args"), request.path("now_ms").asLong(), this);
                response.put("ok", true).set("result", result);
            } catch (Errors.OperationError e) {
                response.put("ok", false).putObject("error").put("code", e.code).put("message", String.valueOf(e.getMessage()));
            }
            out.println(JSON.writeValueAsString(response));
            out.flush();
        }
    }

    /** One operation on the open log; the Session has set the clock and runs the due scheduled tasks around it. */
    JsonNode run(String op, JsonNode args) throws Exception {
        switch (op) {
            case "hello": return hello();
            case "open":
                cleaning = new Cleaning();
                return session.open(args);
            case "append": return append(args);
            case "read": return read(args);
            case "roll": {
                LogSegment s = session.log.roll(optionalLong(args.path("expected_next_offset")));
                return JSON.createObjectNode().put("base_offset", s.baseOffset());
            }
            case "flush":
                session.log.flush(false); // UnifiedLog.flush(forceFlushActiveSegment = false): up to the LEO
                return JSON.createObjectNode();
            case "truncate_to": {
                long offset = args.get("offset").asLong();
                boolean belowActive = offset < session.log.logSegments().stream().mapToLong(LogSegment::baseOffset).max().orElse(0L);
                boolean truncated = session.truncateTo(offset);
                if (belowActive) cleaning.maybeTruncateCheckpoint(session); // LogManager.truncateTo's needToStopCleaner
                return JSON.createObjectNode().put("truncated", truncated);
            }
            case "truncate_fully_and_start_at":
                session.truncateFullyAndStartAt(args.get("offset").asLong(), optionalLong(args.path("log_start_offset")));
                cleaning.maybeTruncateCheckpoint(session);
                return JSON.createObjectNode();
            case "delete_segments_before":
                return JSON.createObjectNode().put("deleted_segments", deleteRecords(args.get("offset").asLong()));
            case "delete_old_segments":
                return JSON.createObjectNode().put("deleted_segments", session.log.deleteOldSegments());
            case "fetch_offset_by_timestamp": return fetchOffsetByTimestamp(args.get("timestamp").asLong());
            case "clean": return cleaning.clean(session, args, session.time);
            case "state": return session.state();
            case "close":
                session.close();
                return JSON.createObjectNode();
            default: throw new Errors.OperationError("INVALID_REQUEST", "unsupported op " + op);
        }
    }

    static JsonNode hello() {
        String version = kafkaVersion();
        ObjectNode r = JSON.createObjectNode();
        r.put("name", "kafka-testee (Apache Kafka " + version + " release jars: " + ReleaseLog.describe() + ")");
        r.put("version", version);
        r.put("language", "java");
        ArrayNode f = r.putArray("features");
        for (String feature : List.of("compression", "crash_recovery", "idempotence", "leader_epoch_checkpoint",
                "legacy_formats", "log_append_time", "preallocate", "producer_snapshots", "transaction_index"))
            f.add(feature);
        if (Cleaning.served()) f.add("compaction"); // clean: Kafka's own cleaner of the release (Cleaning)
        return r;
    }

    /** appendAsLeader (origin client or coordinator) or appendAsFollower, then the single-replica HW (MODEL-3). */
    JsonNode append(JsonNode args) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (JsonNode b : args.get("batches")) bytes.writeBytes(Base64.getDecoder().decode(b.asText()));
        Object records = ReleaseLog.memoryRecords(ByteBuffer.wrap(bytes.toByteArray()));
        String origin = args.path("origin").asText("client");
        int leaderEpoch = args.get("leader_epoch").asInt();
        LogAppendInfo info;
        if (args.get("assign_offsets").asBoolean()) {
            AppendOrigin o = origin.equals("coordinator") ? AppendOrigin.COORDINATOR : AppendOrigin.CLIENT;
            info = session.log.appendAsLeader(records, leaderEpoch, o);
        } else {
            if (!origin.equals("client")) throw new Errors.OperationError("INVALID_ARGUMENT", "origin of a follower append");
            // the follower's current leader epoch: the model has none (a follower appends what the leader sent), and
            // every release since the snapshot stops at a batch whose epoch is above it (hasHigherPartitionLeaderEpoch,
            // KAFKA-18723): a follower that has learnt the leader's epoch, so no batch is above it
            info = session.log.appendAsFollower(records, Integer.MAX_VALUE);
        }
        session.log.maybeIncrementHighWatermarkToLogEnd();
        boolean appended = info.validBytes() > 0;
        ObjectNode r = JSON.createObjectNode();
        r.put("first_offset", appended ? info.firstOffset() : -1);
        r.put("last_offset", appended ? info.lastOffset() : -1);
        r.put("max_timestamp", info.maxTimestamp());
        r.put("offset_of_max_timestamp", appended ? offsetOfMaxTimestamp(info, records, args.get("assign_offsets").asBoolean()) : -1L);
        r.put("log_append_time", info.logAppendTime());
        return r;
    }

    /**
     * NOT KAFKA'S ANSWER: no released LogAppendInfo carries the offset of the append's max timestamp (the 4.0 snapshot's
     * shallowOffsetOfMaxTimestamp is gone; LogSegment.append finds its own). The protocol requires the field, so the
     * adapter derives it by APPEND-24 from the input batches as Kafka's validation left them (LogValidator assigns
     * offsets and max timestamps in place, a duplicate's too): the last offset of the first batch carrying
     * info.maxTimestamp(); -1 when that is -1; a leader's compressed batch (rebuilt, not in place) its last offset.
     * It reads what Kafka did; it is not a decision of Kafka's (docs/conformance/kafka-testee.md).
     */
    static long offsetOfMaxTimestamp(LogAppendInfo info, Object records, boolean leader) {
        long maxTimestamp = info.maxTimestamp();
        for (Object batch : (Iterable<?>) ReleaseLog.call(records, "batches")) {
            boolean compressed = !String.valueOf(ReleaseLog.call(batch, "compressionType")).equalsIgnoreCase("none");
            if (leader && compressed) return info.lastOffset();
            if (maxTimestamp != -1L && (Long) ReleaseLog.call(batch, "maxTimestamp") == maxTimestamp)
                return (Long) ReleaseLog.call(batch, "lastOffset");
        }
        return -1L;
    }

    JsonNode read(JsonNode args) {
        String isolation = args.path("isolation").asText("high_watermark");
        FetchIsolation iso;
        if (isolation.equals("high_watermark")) iso = FetchIsolation.HIGH_WATERMARK;
        else if (isolation.equals("txn_committed")) iso = FetchIsolation.TXN_COMMITTED;
        else throw new Errors.OperationError("INVALID_ARGUMENT", "isolation " + isolation);
        FetchDataInfo f = session.read(args.get("start_offset").asLong(), args.get("max_bytes").asInt(), iso,
                args.path("min_one_message").asBoolean(false), optionalLong(args.path("max_offset")));
        ObjectNode r = JSON.createObjectNode();
        r.put("data", Base64.getEncoder().encodeToString(ReleaseLog.recordsBytes(f)));
        r.putObject("fetch_offset_metadata")
                .put("message_offset", f.fetchOffsetMetadata.messageOffset)
                .put("segment_base_offset", f.fetchOffsetMetadata.segmentBaseOffset)
                .put("relative_position_in_segment", f.fetchOffsetMetadata.relativePositionInSegment);
        r.put("first_entry_incomplete", f.firstEntryIncomplete);
        if (iso == FetchIsolation.TXN_COMMITTED) {
            ArrayNode a = r.putArray("aborted_transactions");
            for (Object t : f.abortedTransactions.orElse(new ArrayList<>()))
                a.addObject().put("producer_id", (Long) ReleaseLog.call(t, "producerId"))
                        .put("first_offset", (Long) ReleaseLog.call(t, "firstOffset"));
        }
        return r;
    }

    /**
     * Partition.deleteRecordsOnLeader (the offset -1 is the high watermark; a negative one is out of range), then the
     * log-start pass of the retention that Kafka's retention thread runs later (deleteLogStartOffsetBreachedSegments,
     * the first pass of deleteOldSegments), at once: RET-4's definition.
     */
    int deleteRecords(long offset) {
        long converted = offset == -1L ? session.log.longValue("highWatermark") : offset;
        if (converted < 0)
            throw new Errors.OperationError("OFFSET_OUT_OF_RANGE", "The offset " + converted + " for partition is not valid");
        session.log.maybeIncrementLogStartOffset(converted, LogStartOffsetIncrementReason.ClientRecordDeletion);
        int deleted = session.log.deleteLogStartOffsetBreachedSegments();
        session.log.maybeIncrementHighWatermarkToLogEnd();
        return deleted;
    }

    JsonNode fetchOffsetByTimestamp(long timestamp) {
        Optional<Object> found = session.log.fetchOffsetByTimestamp(timestamp);
        ObjectNode r = JSON.createObjectNode().put("found", found.isPresent());
        if (found.isPresent()) {
            Object t = found.get();
            r.put("timestamp", (Long) ReleaseLog.field(t, "timestamp"));
            r.put("offset", (Long) ReleaseLog.field(t, "offset"));
            Optional<?> epoch = (Optional<?>) ReleaseLog.field(t, "leaderEpoch");
            if (epoch.isPresent()) r.put("leader_epoch", (Integer) epoch.get());
            else r.putNull("leader_epoch");
        }
        return r;
    }

    /** The release's version as kafka-clients records it (kafka/kafka-version.properties, AppInfoParser's source). */
    static String kafkaVersion() {
        java.util.Properties p = new java.util.Properties();
        try (java.io.InputStream in = ReleaseLog.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            if (in != null) p.load(in);
        } catch (java.io.IOException e) {
            // unknown
        }
        return p.getProperty("version", "unknown");
    }

    static Optional<Long> optionalLong(JsonNode n) {
        return n.isNull() || n.isMissingNode() ? Optional.empty() : Optional.of(n.asLong());
    }
}
