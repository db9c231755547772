// A conformance testee in Java (17+, the JDK only): a Kafka log of one segment that passes
// milestone 1 of klogspec's suite (docs/conformance/index.md#milestones):
//
//   javac -d /tmp/testee conformance/skeletons/Testee.java
//   klogspec conformance --impl cmd:"java -cp /tmp/testee Testee" --only milestone:1
//
// It speaks the JSON-lines protocol (docs/conformance/protocol.md): one request a line on
// stdin, one response a line on stdout, logs on stderr. The log is the smallest that is
// Kafka's: one .log file of v2 record batches, offsets assigned by the leader (baseOffset,
// partitionLeaderEpoch, maxTimestamp rewritten and the CRC-32C recomputed), reads of whole
// batches by offset, the recovery-point and log-start-offset checkpoints and the clean
// shutdown marker, the offset and time indexes. Everything else answers INVALID_REQUEST:
// grow it milestone by milestone.
import java.io.*;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import java.util.regex.*;
import java.util.zip.CRC32C;

public final class Testee {
    // The record batch header (spec/formats/record-batch.md): offsets of its fields.
    static final int BASE_OFFSET = 0, BATCH_LENGTH = 8, LEADER_EPOCH = 12, CRC = 17, ATTRIBUTES = 21;
    static final int LAST_OFFSET_DELTA = 23, BASE_TIMESTAMP = 27, MAX_TIMESTAMP = 35;
    static final int RECORDS_COUNT = 57, RECORDS = 61, LOG_OVERHEAD = 12;
    static final long NO_TIMESTAMP = -1;

    /** A refusal: code is one of spec/behaviour/model.md Table 2 (or INVALID_REQUEST). */
    static final class OperationError extends Exception {
        final String code;
        OperationError(String code, String message) { super(message); this.code = code; }
    }

    record Batch(int position, int size, long baseOffset, long lastOffset, long maxTimestamp) {}

    /** The whole batches of a buffer; a partial entry ends them. */
    static List<Batch> batches(byte[] bytes) {
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        List<Batch> found = new ArrayList<>();
        int position = 0;
        while (position + LOG_OVERHEAD <= bytes.length) {
            int size = LOG_OVERHEAD + buf.getInt(position + BATCH_LENGTH);
            if (size < RECORDS || position + size > bytes.length) break;
            long base = buf.getLong(position + BASE_OFFSET);
            found.add(new Batch(position, size, base, base + buf.getInt(position + LAST_OFFSET_DELTA),
                    buf.getLong(position + MAX_TIMESTAMP)));
            position += size;
        }
        return found;
    }

    /** A zig-zag varint at pos[0], which moves past it. */
    static long varint(byte[] b, int[] pos) {
        long raw = 0;
        for (int shift = 0; ; shift += 7) {
            int v = b[pos[0]++] & 0xff;
            raw |= (long) (v & 0x7f) << shift;
            if ((v & 0x80) == 0) return (raw >>> 1) ^ -(raw & 1);
        }
    }

    /** The largest record timestamp of an uncompressed batch (-1 when none has one). */
    static long maxRecordTimestamp(ByteBuffer batch) {
        long first = batch.getLong(BASE_TIMESTAMP), max = NO_TIMESTAMP;
        int[] pos = {RECORDS};
        for (int i = 0; i < batch.getInt(RECORDS_COUNT); i++) {
            long length = varint(batch.array(), pos);
            int end = pos[0] + (int) length;
            pos[0] += 1; // the record's attributes
            max = Math.max(max, first + varint(batch.array(), pos));
            pos[0] = end;
        }
        return max;
    }

    /** An index file (spec/formats/index-files.md): fixed-size entries, preallocated while the
     *  segment is active, zero-filled past its entries, trimmed to them at close. */
    static final class Index {
        final Path file;
        final int entrySize;
        byte[] bytes;
        int entries;

        Index(Path file, int entrySize, int maxBytes, boolean create) throws IOException {
            this.file = file;
            this.entrySize = entrySize;
            byte[] existing = Files.exists(file) ? Files.readAllBytes(file) : new byte[0];
            entries = existing.length / entrySize;
            bytes = new byte[Math.max(maxBytes / entrySize, entries) * entrySize];
            System.arraycopy(existing, 0, bytes, 0, entries * entrySize);
            if (create) Files.write(file, bytes); // resized to the maximum, as an active segment's are
        }

        void append(ByteBuffer entry) throws IOException {
            if ((entries + 1) * entrySize > bytes.length) return; // full: Kafka rolls
            System.arraycopy(entry.array(), 0, bytes, entries * entrySize, entrySize);
            Files.write(file, bytes);
            entries++;
        }

        ByteBuffer last() { return entries == 0 ? null : ByteBuffer.wrap(bytes, (entries - 1) * entrySize, entrySize).slice(); }

        void trim() throws IOException { Files.write(file, Arrays.copyOf(bytes, entries * entrySize)); }
    }

    static final class Log {
        Index offsetIndex, timeIndex;
        long[] maxSoFar; // {timestamp, offset}: read from the time index when first needed
        int bytesSinceLastIndexEntry;
        Path dir, file;
        String topic, partition;
        Map<String, Object> config;
        byte[] data = new byte[0];
        long logEndOffset, recoveryPoint;

        Map<String, Object> open(String directory, Map<String, Object> config, String topicId) throws IOException {
            dir = Paths.get(directory);
            this.config = config;
            // <topic>-<partition>, or a deleted/future/stray one: <topic>-<partition>.<id>-delete
            Matcher m = Pattern.compile("^(.+)-(\\d+)(\\.\\w+-(?:delete|future|stray))?$")
                    .matcher(dir.getFileName().toString());
            if (!m.matches()) throw new IOException("not a partition directory: " + dir);
            topic = m.group(1);
            partition = m.group(2);
            Files.createDirectories(dir);
            if (topicId != null) Files.writeString(dir.resolve("partition.metadata"), "version: 0\ntopic_id: " + topicId);
            file = dir.resolve("00000000000000000000.log");
            if (!Files.exists(file)) Files.write(file, new byte[0]);
            data = Files.readAllBytes(file);
            logEndOffset = 0;
            for (Batch b : batches(data)) logEndOffset = b.lastOffset() + 1;
            recoveryPoint = readCheckpoint();
            writeCheckpoints();
            // A live log's active segment has its indexes at open; a directory being deleted
            // gets them (empty) only when it is closed.
            boolean retired = m.group(3) != null;
            int maxIndexBytes = retired ? 0 : ((Number) config.getOrDefault("segment_index_bytes", 10 << 20)).intValue();
            offsetIndex = new Index(dir.resolve("00000000000000000000.index"), 8, maxIndexBytes, !retired);
            timeIndex = new Index(dir.resolve("00000000000000000000.timeindex"), 12, maxIndexBytes, !retired);
            maxSoFar = null;
            bytesSinceLastIndexEntry = 0;
            return state();
        }

        /** INDEX-7: before a batch, an entry when more than index_interval_bytes were written since the last one. */
        void index(int position, long largestOffset, long largestTimestamp, long offsetOfMax, int size) throws IOException {
            if (maxSoFar == null) {
                ByteBuffer last = timeIndex.last();
                maxSoFar = last == null ? new long[] {NO_TIMESTAMP, 0} : new long[] {last.getLong(0), last.getInt(8)};
            }
            if (largestTimestamp > maxSoFar[0]) maxSoFar = new long[] {largestTimestamp, offsetOfMax};
            int interval = ((Number) config.getOrDefault("index_interval_bytes", 4096)).intValue();
            if (bytesSinceLastIndexEntry > interval) {
                offsetIndex.append(ByteBuffer.allocate(8).putInt(0, (int) largestOffset).putInt(4, position));
                maybeAppendTime();
                bytesSinceLastIndexEntry = 0;
            }
            bytesSinceLastIndexEntry += size;
        }

        /** A time index entry only for a larger timestamp than its last one. */
        void maybeAppendTime() throws IOException {
            ByteBuffer last = timeIndex.last();
            if (maxSoFar[0] <= (last == null ? NO_TIMESTAMP : last.getLong(0))) return;
            timeIndex.append(ByteBuffer.allocate(12).putLong(0, maxSoFar[0]).putInt(8, (int) maxSoFar[1]));
        }

        Map<String, Object> append(byte[] input, boolean assignOffsets, int leaderEpoch) throws IOException {
            List<Batch> found = batches(input);
            ByteArrayOutputStream written = new ByteArrayOutputStream();
            long maxTimestamp = NO_TIMESTAMP, offsetOfMax = -1;
            long firstOffset = found.isEmpty() ? -1 : assignOffsets ? logEndOffset : found.get(0).baseOffset();
            for (Batch b : found) {
                ByteBuffer batch = ByteBuffer.wrap(Arrays.copyOfRange(input, b.position(), b.position() + b.size()));
                long last = b.lastOffset(), max = b.maxTimestamp();
                if (assignOffsets) { // the leader: offsets from the log end, its epoch, the real max timestamp
                    last = logEndOffset + batch.getInt(RECORDS_COUNT) - 1;
                    batch.putLong(BASE_OFFSET, last - batch.getInt(LAST_OFFSET_DELTA));
                    batch.putInt(LEADER_EPOCH, leaderEpoch);
                    max = maxRecordTimestamp(batch);
                    batch.putLong(MAX_TIMESTAMP, max);
                    batch.putShort(ATTRIBUTES, (short) (batch.getShort(ATTRIBUTES) & ~0x08)); // CreateTime
                    CRC32C crc = new CRC32C();
                    crc.update(batch.array(), ATTRIBUTES, b.size() - ATTRIBUTES);
                    batch.putInt(CRC, (int) crc.getValue());
                }
                if (max > maxTimestamp) { maxTimestamp = max; offsetOfMax = last; }
                index(data.length + written.size(), last, max, last, b.size()); // per batch (KAFKA-806)
                written.write(batch.array());
                logEndOffset = last + 1;
            }
            byte[] bytes = written.toByteArray();
            Files.write(file, bytes, StandardOpenOption.APPEND);
            byte[] all = Arrays.copyOf(data, data.length + bytes.length);
            System.arraycopy(bytes, 0, all, data.length, bytes.length);
            data = all;
            Object every = config.get("flush_messages"); // flush.messages: flush after so many
            if (every != null && logEndOffset - recoveryPoint >= ((Number) every).longValue()) flush();
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("first_offset", firstOffset);
            r.put("last_offset", found.isEmpty() ? -1 : logEndOffset - 1);
            r.put("max_timestamp", maxTimestamp);
            r.put("offset_of_max_timestamp", offsetOfMax);
            r.put("log_append_time", -1);
            return r;
        }

        /** The batch holding offset, or null: where a read starts (Kafka's translateOffset). */
        Batch translate(long offset) {
            for (Batch b : batches(data)) if (b.lastOffset() >= offset) return b;
            return null;
        }

        Map<String, Object> read(long start, int maxBytes, Long maxOffset, boolean minOneMessage) throws OperationError {
            if (start > logEndOffset || start < 0)
                throw new OperationError("OFFSET_OUT_OF_RANGE", "offset " + start + " is not in the log");
            long bound = maxOffset == null || maxOffset >= logEndOffset ? logEndOffset : maxOffset;
            int boundPosition = bound == logEndOffset ? data.length : translate(bound).position();
            if (start == bound) return fetched(bound, boundPosition, "", false);
            Batch first = translate(start); // READ-11: its metadata names this batch's base offset
            if (first == null) return fetched(logEndOffset, data.length, "", false);
            if (start > bound) return fetched(first.baseOffset(), first.position(), "", false);
            int size = minOneMessage ? Math.max(maxBytes, first.size()) : maxBytes;
            if (size == 0) return fetched(first.baseOffset(), first.position(), "", false);
            int end = first.position() + Math.min(boundPosition - first.position(), size);
            String bytes = Base64.getEncoder().encodeToString(Arrays.copyOfRange(data, first.position(), end));
            return fetched(first.baseOffset(), first.position(), bytes, size < first.size());
        }

        static Map<String, Object> fetched(long offset, int position, String bytes, boolean incomplete) {
            Map<String, Object> meta = new LinkedHashMap<>();
            meta.put("message_offset", offset);
            meta.put("segment_base_offset", 0);
            meta.put("relative_position_in_segment", position);
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("data", bytes);
            r.put("fetch_offset_metadata", meta);
            r.put("first_entry_incomplete", incomplete);
            return r;
        }

        void flush() { recoveryPoint = logEndOffset; }

        void close() throws IOException {
            if (maxSoFar != null) maybeAppendTime(); // the final time index entry
            offsetIndex.trim();
            timeIndex.trim();
            flush();
            writeCheckpoints();
            Files.writeString(dir.getParent().resolve(".kafka_cleanshutdown"), "{\"version\":0,\"brokerEpoch\":-1}");
        }

        Map<String, Object> state() {
            Map<String, Object> segment = new LinkedHashMap<>();
            segment.put("base_offset", 0);
            segment.put("size_bytes", data.length);
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("log_start_offset", 0);
            s.put("log_end_offset", logEndOffset);
            s.put("recovery_point", recoveryPoint);
            s.put("segments", List.of(segment));
            return s;
        }

        // Checkpoints in the log directory (spec/formats/checkpoints.md): version 0, a count, entries.
        void writeCheckpoints() throws IOException {
            Path root = dir.getParent();
            Files.writeString(root.resolve("recovery-point-offset-checkpoint"),
                    "0\n1\n" + topic + " " + partition + " " + recoveryPoint + "\n");
            Files.writeString(root.resolve("log-start-offset-checkpoint"), "0\n0\n");
        }

        long readCheckpoint() throws IOException {
            Path checkpoint = dir.getParent().resolve("recovery-point-offset-checkpoint");
            if (!Files.exists(checkpoint)) return 0;
            for (String line : Files.readAllLines(checkpoint))
                if (line.startsWith(topic + " " + partition + " ")) return Long.parseLong(line.split(" ")[2]);
            return 0;
        }
    }

    @SuppressWarnings("unchecked")
    static Object dispatch(Log log, String op, Map<String, Object> args) throws Exception {
        switch (op) {
            case "hello": {
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("name", "skeleton-java");
                r.put("version", "0.1.0");
                r.put("language", "java");
                r.put("features", List.of());
                return r;
            }
            case "open":
                return log.open((String) args.get("dir"), (Map<String, Object>) args.getOrDefault("config", Map.of()),
                        (String) args.get("topic_id"));
            case "append": {
                ByteArrayOutputStream input = new ByteArrayOutputStream();
                for (Object b : (List<Object>) args.get("batches")) input.write(Base64.getDecoder().decode((String) b));
                return log.append(input.toByteArray(), (Boolean) args.get("assign_offsets"),
                        ((Number) args.get("leader_epoch")).intValue());
            }
            case "read": {
                Object max = args.get("max_offset");
                return log.read(((Number) args.get("start_offset")).longValue(), ((Number) args.get("max_bytes")).intValue(),
                        max == null ? null : ((Number) max).longValue(), Boolean.TRUE.equals(args.get("min_one_message")));
            }
            case "flush": log.flush(); return Map.of();
            case "state": return log.state();
            case "close": log.close(); return Map.of();
            default: throw new OperationError("INVALID_REQUEST", "unsupported op " + op);
        }
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] argv) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err); // a stray print goes to stderr, never into the protocol
        Log log = new Log();
        for (String line; (line = in.readLine()) != null; ) {
            if (line.isBlank()) continue;
            Map<String, Object> response = new LinkedHashMap<>();
            Object id = 0;
            try {
                Map<String, Object> request = (Map<String, Object>) new Json(line).value();
                id = request.get("id");
                response.put("id", id);
                Object args = request.getOrDefault("args", Map.of());
                response.put("result", dispatch(log, (String) request.get("op"), (Map<String, Object>) args));
                response.put("ok", true);
            } catch (Exception e) {
                boolean refused = e instanceof OperationError;
                if (!refused) e.printStackTrace();
                response.clear();
                response.put("id", id);
                response.put("ok", false);
                response.put("error", Map.of("code", refused ? ((OperationError) e).code : "INTERNAL_ERROR",
                        "message", String.valueOf(e.getMessage())));
            }
            out.println(Json.write(response));
            out.flush();
        }
    }

    /** Just enough JSON: objects, arrays, strings, integers (as Long), true, false, null. */
    static final class Json {
        final String text;
        int at;
        Json(String text) { this.text = text; }

        Object value() {
            skip();
            char c = text.charAt(at);
            if (c == '{') {
                Map<String, Object> map = new LinkedHashMap<>();
                at++;
                for (skip(); text.charAt(at) != '}'; skip()) {
                    String key = (String) value();
                    skip();
                    at++; // ':'
                    map.put(key, value());
                    skip();
                    if (text.charAt(at) == ',') at++;
                }
                at++;
                return map;
            }
            if (c == '[') {
                List<Object> list = new ArrayList<>();
                at++;
                for (skip(); text.charAt(at) != ']'; skip()) {
                    list.add(value());
                    skip();
                    if (text.charAt(at) == ',') at++;
                }
                at++;
                return list;
            }
            if (c == '"') return string();
            for (String word : new String[] {"true", "false", "null"})
                if (text.startsWith(word, at)) {
                    at += word.length();
                    return word.equals("null") ? null : Boolean.valueOf(word);
                }
            int start = at;
            while (at < text.length() && "-+0123456789.eE".indexOf(text.charAt(at)) >= 0) at++;
            return Long.parseLong(text.substring(start, at));
        }

        String string() {
            StringBuilder s = new StringBuilder();
            for (at++; text.charAt(at) != '"'; at++) {
                char c = text.charAt(at);
                if (c == '\\') {
                    char e = text.charAt(++at);
                    if (e == 'u') { s.append((char) Integer.parseInt(text.substring(at + 1, at + 5), 16)); at += 4; }
                    else s.append(switch (e) { case 'n' -> '\n'; case 't' -> '\t'; case 'r' -> '\r'; case 'b' -> '\b'; case 'f' -> '\f'; default -> e; });
                } else s.append(c);
            }
            at++;
            return s.toString();
        }

        void skip() { while (at < text.length() && Character.isWhitespace(text.charAt(at))) at++; }

        static String write(Object value) {
            if (value instanceof Map<?, ?> map) {
                StringJoiner j = new StringJoiner(",", "{", "}");
                map.forEach((k, v) -> j.add(write(k) + ":" + write(v)));
                return j.toString();
            }
            if (value instanceof List<?> list) {
                StringJoiner j = new StringJoiner(",", "[", "]");
                list.forEach(v -> j.add(write(v)));
                return j.toString();
            }
            if (value instanceof String s) {
                StringBuilder b = new StringBuilder("\"");
                for (char c : s.toCharArray())
                    if (c == '"' || c == '\\') b.append('\\').append(c);
                    else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                return b.append('"').toString();
            }
            return String.valueOf(value); // numbers, booleans, null
        }
    }
}
