package org.klogspec.broker;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The real-broker corpus's workloads, written by Kafka's own client (kafka-clients) to a broker
 * at {@code args[0]}: every topic of {@link #TOPICS}, then a consumer group that commits its
 * offsets. Prints {@code WORKLOAD DONE} when all of it is acknowledged; with {@code --flood} it
 * then keeps producing to the topic {@code flood} until killed (the corpus's SIGKILL copy is
 * made while that producer writes). The record counts are fixed; timestamps and producer ids
 * are the broker's and the clock's.
 */
public final class Workload {
    static final String GROUP = "klogspec-group";
    private static final long HOUR_MS = 3_600_000L;

    /** topic -> its topic configs; compression is the producer's choice (topic default). */
    static final Map<String, Map<String, String>> TOPICS = Map.ofEntries(
            Map.entry("plain", Map.of()),
            Map.entry("gzip", Map.of()),
            Map.entry("snappy", Map.of()),
            Map.entry("lz4", Map.of()),
            Map.entry("zstd", Map.of()),
            Map.entry("idempotent", Map.of()),
            Map.entry("transactional", Map.of()),
            Map.entry("compacted", Map.of("cleanup.policy", "compact",
                    "min.cleanable.dirty.ratio", "0.01", "delete.retention.ms", "0")),
            Map.entry("create-time", Map.of("message.timestamp.type", "CreateTime")),
            Map.entry("log-append-time", Map.of("message.timestamp.type", "LogAppendTime")),
            Map.entry("rolling", Map.of("segment.bytes", "1048576")),
            Map.entry("flood", Map.of()));

    private Workload() {}

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        boolean flood = args.length > 1 && args[1].equals("--flood");
        createTopics(bootstrap);
        for (String codec : List.of("none", "gzip", "snappy", "lz4", "zstd")) {
            String topic = codec.equals("none") ? "plain" : codec;
            produce(bootstrap, topic, codec, false, 200, 100, 0L);
        }
        produce(bootstrap, "idempotent", "none", true, 200, 100, 0L);
        produce(bootstrap, "create-time", "none", true, 100, 50, 2 * HOUR_MS);
        produce(bootstrap, "log-append-time", "none", true, 100, 50, 2 * HOUR_MS);
        produce(bootstrap, "rolling", "none", true, 2600, 1000, 0L);
        compacted(bootstrap);
        transactions(bootstrap);
        consumeAndCommit(bootstrap, "plain");
        System.out.println("WORKLOAD DONE");
        System.out.flush();
        if (flood) {
            floodUntilKilled(bootstrap);
        }
    }

    private static void createTopics(String bootstrap) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(props)) {
            List<NewTopic> topics = new ArrayList<>();
            TOPICS.forEach((name, configs) ->
                    topics.add(new NewTopic(name, 1, (short) 1).configs(configs)));
            admin.createTopics(topics).all().get();
        }
    }

    private static Properties producerProps(String bootstrap, String codec, boolean idempotent) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, Boolean.toString(idempotent));
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        return props;
    }

    /**
     * {@code count} records of {@code size} bytes in batches of 20 (one flush each); keys are
     * {@code k<i>}, a header on every record; with {@code ageMs} the record timestamps run from
     * that long ago up to now (the CreateTime a client chose, which a LogAppendTime topic
     * replaces).
     */
    static void produce(String bootstrap, String topic, String codec, boolean idempotent,
            int count, int size, long ageMs) throws Exception {
        long now = System.currentTimeMillis();
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(producerProps(bootstrap, codec, idempotent))) {
            List<Future<RecordMetadata>> acks = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                Long timestamp = ageMs == 0 ? null : now - ageMs + ageMs * i / count;
                ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, null,
                        timestamp, bytes("k" + i), value(topic, i, size));
                record.headers().add("workload", bytes(topic));
                acks.add(producer.send(record));
                if (i % 20 == 19) {
                    producer.flush();
                }
            }
            for (Future<RecordMetadata> ack : acks) {
                ack.get();
            }
        }
    }

    /** Keys k0..k9 written five times over, then tombstones (null values) for k0..k4. */
    private static void compacted(String bootstrap) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(producerProps(bootstrap, "none", true))) {
            for (int round = 0; round < 5; round++) {
                for (int k = 0; k < 10; k++) {
                    producer.send(new ProducerRecord<>("compacted", bytes("k" + k),
                            bytes("round " + round + " of k" + k)));
                }
                producer.flush();
            }
            for (int k = 0; k < 5; k++) {
                producer.send(new ProducerRecord<>("compacted", bytes("k" + k), null)).get();
            }
        }
    }

    /** Three transactions on one transactional id: committed, aborted, committed. */
    private static void transactions(String bootstrap) throws Exception {
        Properties props = producerProps(bootstrap, "none", true);
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "klogspec-txn");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            producer.initTransactions();
            for (String outcome : List.of("commit", "abort", "commit")) {
                producer.beginTransaction();
                for (int i = 0; i < 30; i++) {
                    producer.send(new ProducerRecord<>("transactional", bytes("k" + i),
                            bytes(outcome + " " + i)));
                }
                producer.flush();
                if (outcome.equals("commit")) {
                    producer.commitTransaction();
                } else {
                    producer.abortTransaction();
                }
            }
        }
    }

    /** A consumer group reads the topic from the start and commits its offsets (twice). */
    private static void consumeAndCommit(String bootstrap, String topic) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "120");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(topic));
            int seen = 0;
            long deadline = System.currentTimeMillis() + 60_000;
            while (seen < 200 && System.currentTimeMillis() < deadline) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(500));
                seen += records.count();
                if (!records.isEmpty()) {
                    consumer.commitSync();
                }
            }
            if (seen < 200) {
                throw new IllegalStateException("the group read " + seen + " of 200 records");
            }
        }
    }

    private static void floodUntilKilled(String bootstrap) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(producerProps(bootstrap, "none", true))) {
            for (long i = 0; ; i++) {
                producer.send(new ProducerRecord<>("flood", bytes("k" + i), value("flood", i, 500)));
            }
        }
    }

    private static byte[] value(String topic, long i, int size) {
        StringBuilder text = new StringBuilder(topic).append(' ').append(i).append(' ');
        while (text.length() < size) {
            text.append((char) ('a' + (text.length() % 26)));
        }
        return bytes(text.toString());
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
