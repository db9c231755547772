// A conformance testee in JavaScript (Node.js 18+, no dependencies): a Kafka log of one
// segment that passes milestone 1 of klogspec's suite (docs/conformance/index.md#milestones):
//
//   klogspec conformance --impl cmd:"node conformance/skeletons/testee.mjs" --only milestone:1
//
// It speaks the JSON-lines protocol (docs/conformance/protocol.md): one request a line on
// stdin, one response a line on stdout, logs on stderr. The log is the smallest that is
// Kafka's: one .log file of v2 record batches, offsets assigned by the leader (baseOffset,
// partitionLeaderEpoch, maxTimestamp rewritten and the CRC-32C recomputed), reads of whole
// batches by offset, the recovery-point and log-start-offset checkpoints and the clean
// shutdown marker, the offset and time indexes. Everything else answers INVALID_REQUEST:
// grow it milestone by milestone.
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";

// --- the record batch header (spec/formats/record-batch.md): offsets of its fields ---
const BASE_OFFSET = 0, BATCH_LENGTH = 8, LEADER_EPOCH = 12, MAGIC = 16, CRC = 17;
const ATTRIBUTES = 21, LAST_OFFSET_DELTA = 23, BASE_TIMESTAMP = 27, MAX_TIMESTAMP = 35;
const RECORDS_COUNT = 57, RECORDS = 61, LOG_OVERHEAD = 12, NO_TIMESTAMP = -1n;

class OperationError extends Error {
  constructor(code, message) { super(message); this.code = code; }
}

// CRC-32C (Castagnoli), the checksum of a v2 batch from its attributes to its end.
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32c(bytes) {
  let crc = 0xffffffff;
  for (const b of bytes) crc = CRC_TABLE[(crc ^ b) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** The whole batches of a buffer: {position, size, baseOffset, lastOffset, maxTimestamp}. */
function* batches(buf) {
  let position = 0;
  while (position + LOG_OVERHEAD <= buf.length) {
    const size = LOG_OVERHEAD + buf.readInt32BE(position + BATCH_LENGTH);
    if (size < RECORDS || position + size > buf.length) return; // a partial entry ends them
    const baseOffset = buf.readBigInt64BE(position + BASE_OFFSET);
    const lastOffset = baseOffset + BigInt(buf.readInt32BE(position + LAST_OFFSET_DELTA));
    const maxTimestamp = buf.readBigInt64BE(position + MAX_TIMESTAMP);
    yield { position, size, baseOffset, lastOffset, maxTimestamp };
    position += size;
  }
}

function varint(buf, at) { // zig-zag varint: [value, next position]
  let shift = 0n, raw = 0n;
  for (;;) {
    const b = buf[at++];
    raw |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return [(raw >> 1n) ^ -(raw & 1n), at];
    shift += 7n;
  }
}

/** The largest record timestamp of an uncompressed batch (-1 when none has one). */
function maxRecordTimestamp(batch) {
  const first = batch.readBigInt64BE(BASE_TIMESTAMP);
  let at = RECORDS, max = NO_TIMESTAMP;
  for (let i = 0; i < batch.readInt32BE(RECORDS_COUNT); i++) {
    const [length, body] = varint(batch, at);
    const [delta] = varint(batch, body + 1); // after the record's attributes
    if (first + delta > max) max = first + delta;
    at = body + Number(length);
  }
  return max;
}

// An index file (spec/formats/index-files.md): fixed-size entries, preallocated while the
// segment is active, zero-filled past its entries, trimmed to them at close.
class Index {
  constructor(file, entrySize, maxBytes, create = true) {
    this.file = file;
    this.entrySize = entrySize;
    const existing = fs.existsSync(file) ? fs.readFileSync(file) : Buffer.alloc(0);
    this.entries = Math.floor(existing.length / entrySize);
    this.bytes = Buffer.alloc(Math.max(Math.floor(maxBytes / entrySize), this.entries) * entrySize);
    existing.copy(this.bytes, 0, 0, this.entries * entrySize);
    if (create) fs.writeFileSync(file, this.bytes); // resized to the maximum, as an active segment's are
  }
  append(entry) {
    if ((this.entries + 1) * this.entrySize > this.bytes.length) return; // full: Kafka rolls
    entry.copy(this.bytes, this.entries * this.entrySize);
    fs.writeFileSync(this.file, this.bytes);
    this.entries++;
  }
  last() { return this.entries ? this.bytes.subarray((this.entries - 1) * this.entrySize, this.entries * this.entrySize) : null; }
  trim() { fs.writeFileSync(this.file, this.bytes.subarray(0, this.entries * this.entrySize)); }
}

class Log {
  open(dir, config, topicId) {
    this.dir = dir;
    this.config = config;
    // <topic>-<partition>, or a deleted/future/stray one: <topic>-<partition>.<id>-delete
    const [, topic, partition, retired] = path.basename(dir).match(/^(.+)-(\d+)(\.\w+-(?:delete|future|stray))?$/);
    [this.topic, this.partition] = [topic, partition];
    fs.mkdirSync(dir, { recursive: true });
    if (topicId) fs.writeFileSync(path.join(dir, "partition.metadata"), `version: 0\ntopic_id: ${topicId}`);
    this.file = path.join(dir, "00000000000000000000.log");
    if (!fs.existsSync(this.file)) fs.writeFileSync(this.file, Buffer.alloc(0));
    this.data = fs.readFileSync(this.file);
    this.logEndOffset = 0n;
    for (const b of batches(this.data)) this.logEndOffset = b.lastOffset + 1n;
    this.recoveryPoint = this.readCheckpoint() ?? 0n;
    this.writeCheckpoints(this.recoveryPoint);
    // A live log's active segment has its indexes at open; a directory being deleted gets
    // them (empty) only when it is closed.
    const maxIndexBytes = retired ? 0 : config.segment_index_bytes ?? 10 * 1024 * 1024;
    const index = (suffix, size) => new Index(this.file.replace(/\.log$/, suffix), size, maxIndexBytes, !retired);
    this.offsetIndex = index(".index", 8);
    this.timeIndex = index(".timeindex", 12);
    this.maxSoFar = null; // [timestamp, offset]: read from the time index when first needed
    this.bytesSinceLastIndexEntry = 0;
    return this.state();
  }

  /** INDEX-7: before a batch, an entry when more than index_interval_bytes were written since the last one. */
  index(position, largestOffset, largestTimestamp, offsetOfMax, size) {
    const last = this.timeIndex.last();
    this.maxSoFar ??= last ? [last.readBigInt64BE(0), BigInt(last.readInt32BE(8))] : [NO_TIMESTAMP, 0n];
    if (largestTimestamp > this.maxSoFar[0]) this.maxSoFar = [largestTimestamp, offsetOfMax];
    if (this.bytesSinceLastIndexEntry > (this.config.index_interval_bytes ?? 4096)) {
      const entry = Buffer.alloc(8);
      entry.writeInt32BE(Number(largestOffset), 0);
      entry.writeInt32BE(position, 4);
      this.offsetIndex.append(entry);
      this.maybeAppendTime();
      this.bytesSinceLastIndexEntry = 0;
    }
    this.bytesSinceLastIndexEntry += size;
  }

  /** A time index entry only for a larger timestamp than its last one. */
  maybeAppendTime() {
    const last = this.timeIndex.last();
    if (this.maxSoFar[0] <= (last ? last.readBigInt64BE(0) : NO_TIMESTAMP)) return;
    const entry = Buffer.alloc(12);
    entry.writeBigInt64BE(this.maxSoFar[0], 0);
    entry.writeInt32BE(Number(this.maxSoFar[1]), 8);
    this.timeIndex.append(entry);
  }

  append(input, assignOffsets, leaderEpoch) {
    const found = [...batches(input)];
    const written = [];
    let writtenBytes = 0;
    let maxTimestamp = NO_TIMESTAMP, offsetOfMax = -1n;
    const firstOffset = found.length ? (assignOffsets ? this.logEndOffset : found[0].baseOffset) : -1n;
    for (const b of found) {
      const batch = Buffer.from(input.subarray(b.position, b.position + b.size));
      let last = b.lastOffset, max = b.maxTimestamp;
      if (assignOffsets) { // the leader: offsets from the log end, its epoch, the real max timestamp
        last = this.logEndOffset + BigInt(batch.readInt32BE(RECORDS_COUNT)) - 1n;
        batch.writeBigInt64BE(last - BigInt(batch.readInt32BE(LAST_OFFSET_DELTA)), BASE_OFFSET);
        batch.writeInt32BE(leaderEpoch, LEADER_EPOCH);
        max = maxRecordTimestamp(batch);
        batch.writeBigInt64BE(max, MAX_TIMESTAMP);
        batch.writeInt16BE(batch.readInt16BE(ATTRIBUTES) & ~0x08, ATTRIBUTES); // CreateTime
        batch.writeUInt32BE(crc32c(batch.subarray(ATTRIBUTES)), CRC);
      }
      if (max > maxTimestamp) { maxTimestamp = max; offsetOfMax = last; }
      this.index(this.data.length + writtenBytes, last, max, last, batch.length); // per batch (KAFKA-806)
      writtenBytes += batch.length;
      written.push(batch);
      this.logEndOffset = last + 1n;
    }
    const bytes = Buffer.concat(written);
    fs.appendFileSync(this.file, bytes);
    this.data = Buffer.concat([this.data, bytes]);
    const every = this.config.flush_messages; // flush.messages: flush after so many messages
    if (every !== undefined && this.logEndOffset - this.recoveryPoint >= BigInt(every)) this.flush();
    return {
      first_offset: firstOffset, last_offset: found.length ? this.logEndOffset - 1n : -1n,
      max_timestamp: maxTimestamp, offset_of_max_timestamp: offsetOfMax, log_append_time: -1,
    };
  }

  /** The batch holding offset, or null: where a read starts (Kafka's translateOffset). */
  translate(offset) {
    for (const b of batches(this.data)) if (b.lastOffset >= offset) return b;
    return null;
  }

  read(start, maxBytes, maxOffset, minOneMessage) {
    if (start > this.logEndOffset || start < 0n) {
      throw new OperationError("OFFSET_OUT_OF_RANGE", `offset ${start} is not in the log`);
    }
    const bound = maxOffset === null || maxOffset >= this.logEndOffset ? this.logEndOffset : maxOffset;
    const boundPosition = bound === this.logEndOffset ? this.data.length : this.translate(bound).position;
    const at = (offset, position) => ({ message_offset: offset, segment_base_offset: 0, relative_position_in_segment: position });
    const nothing = (meta) => ({ data: "", fetch_offset_metadata: meta, first_entry_incomplete: false });
    if (start === bound) return nothing(at(bound, boundPosition));
    const first = this.translate(start); // READ-11: its metadata names this batch's base offset
    if (first === null) return nothing(at(this.logEndOffset, this.data.length));
    if (start > bound) return nothing(at(first.baseOffset, first.position));
    const size = minOneMessage ? Math.max(maxBytes, first.size) : maxBytes;
    if (size === 0) return nothing(at(first.baseOffset, first.position));
    const end = first.position + Math.min(boundPosition - first.position, size);
    return {
      data: this.data.subarray(first.position, end).toString("base64"),
      fetch_offset_metadata: at(first.baseOffset, first.position),
      first_entry_incomplete: size < first.size,
    };
  }

  flush() { this.recoveryPoint = this.logEndOffset; }

  close() {
    if (this.maxSoFar !== null) this.maybeAppendTime(); // the final time index entry
    this.offsetIndex.trim();
    this.timeIndex.trim();
    this.flush();
    this.writeCheckpoints(this.recoveryPoint);
    fs.writeFileSync(path.join(path.dirname(this.dir), ".kafka_cleanshutdown"), '{"version":0,"brokerEpoch":-1}');
  }

  state() {
    return {
      log_start_offset: 0, log_end_offset: this.logEndOffset, recovery_point: this.recoveryPoint,
      segments: [{ base_offset: 0, size_bytes: this.data.length }],
    };
  }

  // Checkpoints in the log directory (spec/formats/checkpoints.md): version 0, a count, entries.
  writeCheckpoints(recoveryPoint) {
    const root = path.dirname(this.dir);
    fs.writeFileSync(path.join(root, "recovery-point-offset-checkpoint"), `0\n1\n${this.topic} ${this.partition} ${recoveryPoint}\n`);
    fs.writeFileSync(path.join(root, "log-start-offset-checkpoint"), "0\n0\n");
  }

  readCheckpoint() {
    const file = path.join(path.dirname(this.dir), "recovery-point-offset-checkpoint");
    if (!fs.existsSync(file)) return null;
    const entry = fs.readFileSync(file, "utf8").split("\n").slice(2).find((line) => line.startsWith(`${this.topic} ${this.partition} `));
    return entry ? BigInt(entry.split(" ")[2]) : null;
  }
}

function dispatch(log, op, args) {
  const big = (value) => (value === undefined || value === null ? null : BigInt(value));
  switch (op) {
    case "hello": return { name: "skeleton-js", version: "0.1.0", language: "javascript", features: [] };
    case "open": return log.open(args.dir, args.config ?? {}, args.topic_id);
    case "append": {
      const input = Buffer.concat(args.batches.map((b) => Buffer.from(b, "base64")));
      return log.append(input, args.assign_offsets, args.leader_epoch);
    }
    case "read": return log.read(big(args.start_offset), args.max_bytes, big(args.max_offset), Boolean(args.min_one_message));
    case "flush": log.flush(); return {};
    case "state": return log.state();
    case "close": log.close(); return {};
    default: throw new OperationError("INVALID_REQUEST", `unsupported op ${op}`);
  }
}

// JSON numbers of offsets and timestamps exceed 2^53: BigInts are written as plain integers.
const toJson = (value) => JSON.stringify(value, (_, v) => (typeof v === "bigint" ? `@@${v}@@` : v)).replace(/"@@(-?\d+)@@"/g, "$1");
const bigInts = (text) => JSON.parse(text.replace(/(?<=[:\[,]\s*)(-?\d{16,})(?=\s*[,\]}])/g, '"$1"'));

const log = new Log();
const lines = readline.createInterface({ input: process.stdin, terminal: false });
lines.on("line", (line) => {
  if (!line.trim()) return;
  let request = {};
  let response;
  try {
    request = bigInts(line);
    response = { id: request.id, ok: true, result: dispatch(log, request.op, request.args ?? {}) };
  } catch (error) {
    const code = error instanceof OperationError ? error.code : "INTERNAL_ERROR";
    if (!(error instanceof OperationError)) console.error(error);
    response = { id: request.id ?? 0, ok: false, error: { code, message: String(error.message) } };
  }
  process.stdout.write(toJson(response) + "\n");
});
