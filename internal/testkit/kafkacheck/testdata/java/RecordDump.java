import java.io.File;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.Record;

/**
 * Prints every data record of the given .log files as Kafka's own record
 * classes (FileRecords, the batches' record iterators) decode them, for
 * what DumpLogSegments does not print: header values, and keys and values
 * as bytes. Run by the Go tests of internal/testkit/kafkacheck with Java's
 * source-file launcher against Kafka's jars. One line per record, fields
 * tab-separated, bytes base64-encoded, "-" for null:
 *
 * <pre>
 * rec FILE OFFSET TIMESTAMP KEY VALUE [HKEY HVALUE...]
 * </pre>
 *
 * Control batches are skipped; every batch's CRC is checked
 * (ensureValid). The last line is "ok".
 */
public final class RecordDump {
    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);

    public static void main(String[] args) throws Exception {
        for (String path : args) {
            try (FileRecords records = FileRecords.open(new File(path), false)) {
                for (FileChannelRecordBatch batch : records.batches()) {
                    batch.ensureValid();
                    if (batch.isControlBatch()) {
                        continue;
                    }
                    for (Record r : batch) {
                        StringBuilder line = new StringBuilder("rec\t").append(path).append('\t').append(r.offset())
                            .append('\t').append(r.timestamp()).append('\t').append(enc(r.hasKey() ? r.key() : null))
                            .append('\t').append(enc(r.hasValue() ? r.value() : null));
                        for (Header h : r.headers()) {
                            line.append('\t').append(enc(ByteBuffer.wrap(h.key().getBytes(StandardCharsets.UTF_8))))
                                .append('\t').append(enc(h.value() == null ? null : ByteBuffer.wrap(h.value())));
                        }
                        OUT.println(line);
                    }
                }
            }
        }
        OUT.println("ok");
    }

    private static String enc(ByteBuffer b) {
        if (b == null) {
            return "-";
        }
        byte[] bytes = new byte[b.remaining()];
        b.duplicate().get(bytes);
        return Base64.getEncoder().encodeToString(bytes);
    }
}
