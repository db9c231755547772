package kafkatestee;

import java.util.Map;

/**
 * Kafka's exceptions to the error codes of spec/behaviour/model.md Table 2. Matched by class simple name, walking
 * from the thrown class up its superclasses (the first listed name wins), so that one table serves every release
 * whatever package a class lives in (4.0's Scala {@code kafka.common.OffsetsOutOfOrderException}, the Java one
 * later): {@code OffsetOutOfRangeException} answers OFFSET_OUT_OF_RANGE before its superclass
 * {@code InvalidOffsetException} answers INVALID_OFFSET. An exception the table does not know answers
 * {@code UNMAPPED_<CLASS>} and its stack trace goes to stderr.
 */
final class Errors {
    static final class OperationError extends RuntimeException {
        final String code;

        OperationError(String code, String message) {
            super(message);
            this.code = code;
        }
    }

    private static final Map<String, String> CODES = Map.ofEntries(
            Map.entry("RecordBatchTooLargeException", "RECORD_BATCH_TOO_LARGE"),
            Map.entry("RecordTooLargeException", "RECORD_TOO_LARGE"),
            Map.entry("OffsetsOutOfOrderException", "OFFSETS_OUT_OF_ORDER"),
            Map.entry("UnexpectedAppendOffsetException", "UNEXPECTED_APPEND_OFFSET"),
            Map.entry("OffsetOutOfRangeException", "OFFSET_OUT_OF_RANGE"),
            Map.entry("InvalidOffsetException", "INVALID_OFFSET"),
            Map.entry("CorruptRecordException", "CORRUPT_MESSAGE"),
            Map.entry("InvalidRecordException", "INVALID_RECORD"),
            Map.entry("InvalidTimestampException", "INVALID_TIMESTAMP"),
            Map.entry("LogSegmentOffsetOverflowException", "OFFSET_OVERFLOW"),
            Map.entry("OutOfOrderSequenceException", "OUT_OF_ORDER_SEQUENCE_NUMBER"),
            Map.entry("InvalidProducerEpochException", "INVALID_PRODUCER_EPOCH"),
            Map.entry("InvalidTxnStateException", "INVALID_TXN_STATE"),
            Map.entry("TransactionCoordinatorFencedException", "TRANSACTION_COORDINATOR_FENCED"),
            Map.entry("InconsistentTopicIdException", "INCONSISTENT_TOPIC_ID"),
            // errors.md invalid_file_name: LogFileUtils.offsetFromFile during LogLoader.load
            Map.entry("NumberFormatException", "INVALID_FILE_NAME"),
            Map.entry("ConfigException", "INVALID_ARGUMENT"),
            Map.entry("InvalidConfigurationException", "INVALID_ARGUMENT"),
            Map.entry("IllegalArgumentException", "INVALID_ARGUMENT"),
            Map.entry("KafkaStorageException", "LOG_CLOSED"));

    private Errors() { }

    static OperationError of(Throwable e, String op) {
        e = unwrap(e);
        String code = codeOf(e);
        if (code == null) code = kafkaExceptionCode(e, op);
        if (code == null) code = "UNMAPPED_" + e.getClass().getSimpleName().toUpperCase();
        if (code.startsWith("UNMAPPED_") || code.equals("LOG_CLOSED")) {
            System.err.println("[kafka-testee] " + code + ":");
            e.printStackTrace(System.err);
        }
        return new OperationError(code, e.getClass().getName() + ": " + e.getMessage());
    }

    static Throwable unwrap(Throwable e) {
        while (true) {
            if (e instanceof ReleaseLog.KafkaCheckedException && e.getCause() != null) e = e.getCause();
            else if (e.getClass().getSimpleName().equals("RecordValidationException"))
                e = (Throwable) ReleaseLog.call(e, "invalidException");
            else return e;
        }
    }

    static String codeOf(Throwable e) {
        for (Class<?> c = e.getClass(); c != null; c = c.getSuperclass()) {
            String code = CODES.get(c.getSimpleName());
            if (code != null) return code;
        }
        return null;
    }

    /**
     * Kafka's generic KafkaException, told apart by the operation and Kafka's message: LocalLog.roll's two refusals
     * ("Trying to roll a new log segment ... start offset ... lower than" / "... already exists") are INVALID_ROLL_OFFSET.
     */
    static String kafkaExceptionCode(Throwable e, String op) {
        if (!e.getClass().getName().equals("org.apache.kafka.common.KafkaException")) return null;
        String message = String.valueOf(e.getMessage());
        if (op.equals("roll") && message.startsWith("Trying to roll a new log segment")) return "INVALID_ROLL_OFFSET";
        return null;
    }
}
