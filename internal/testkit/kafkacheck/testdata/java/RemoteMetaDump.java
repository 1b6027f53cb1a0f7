import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.StringJoiner;
import java.util.TreeMap;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.types.RawTaggedField;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.serialization.BytesApiMessageSerde;
import org.apache.kafka.server.log.remote.metadata.storage.RemoteLogMetadataTopicPartitioner;
import org.apache.kafka.server.log.remote.metadata.storage.RemoteLogSegmentMetadataSnapshot;
import org.apache.kafka.server.log.remote.metadata.storage.generated.MetadataRecordType;
import org.apache.kafka.server.log.remote.metadata.storage.generated.RemoteLogSegmentMetadataRecord;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogSegmentMetadataTransform;
import org.apache.kafka.server.log.remote.storage.RemoteLogMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata.CustomMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteMetadata;
import org.apache.kafka.server.log.remote.storage.RemotePartitionDeleteState;

/**
 * Kafka's own encoding and decoding of __remote_log_metadata record values
 * (tiered storage): what TopicBasedRemoteLogMetadataManager's producer and
 * consumer do with them, through RemoteLogMetadataSerde. Run by the Go
 * tests of internal/testkit/kafkacheck with Java's source-file launcher against
 * Kafka's jars. Output lines, fields tab-separated:
 *
 * <pre>
 * enc NAME HEX                      a fixed record, serialized by Kafka
 * part TOPICID PARTITION N RESULT   RemoteLogMetadataTopicPartitioner
 * dec NAME ok FIELDS                an argument NAME=HEX deserialized
 * dec NAME err EXCEPTION            or the exception deserializing it
 * ok
 * </pre>
 *
 * The fixed records are also built by the Go test (remotecodec_test.go):
 * the two lists must stay alike. FIELDS is one line of name=value pairs;
 * uuids and bytes are hex, "-" is null.
 */
public final class RemoteMetaDump {
    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    private static final HexFormat HEX = HexFormat.of();

    static final Uuid TOPIC_ID = new Uuid(0x5a4f1e2d3c4b5a69L, 0x78879605a4b3c2d1L);
    static final Uuid SEGMENT_ID = new Uuid(0x0102030405060708L, 0x8a9bacbdcedfe0f1L);
    static final Uuid TOPIC_ID_2 = new Uuid(0x7fffffffffffffffL, 0xffffffffffffffffL);
    static final Uuid SEGMENT_ID_2 = new Uuid(0xfedcba9876543210L, 0x0011223344556677L);
    static final TopicIdPartition ORDERS_3 = new TopicIdPartition(TOPIC_ID, new TopicPartition("orders", 3));
    static final TopicIdPartition T_0 = new TopicIdPartition(TOPIC_ID_2, new TopicPartition("t", 0));
    static final RemoteLogSegmentId SEGMENT = new RemoteLogSegmentId(ORDERS_3, SEGMENT_ID);
    static final RemoteLogSegmentId SEGMENT_2 = new RemoteLogSegmentId(T_0, SEGMENT_ID_2);
    static final byte[] CUSTOM = "bucket/orders-3/1200".getBytes(StandardCharsets.UTF_8);

    public static void main(String[] args) {
        RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
        for (Map.Entry<String, RemoteLogMetadata> e : records().entrySet()) {
            OUT.println("enc\t" + e.getKey() + "\t" + HEX.formatHex(serde.serialize(e.getValue())));
        }
        OUT.println("enc\tsegment-unknown-tags\t" + HEX.formatHex(segmentWithUnknownTags()));

        Uuid[] ids = {TOPIC_ID, TOPIC_ID_2, Uuid.ZERO_UUID, new Uuid(0x8000000000000000L, 1L), SEGMENT_ID};
        int[] partitions = {0, 3, 17, 2147483647};
        int[] counts = {50, 7, 1};
        for (Uuid id : ids) {
            for (int p : partitions) {
                for (int n : counts) {
                    int got = new RemoteLogMetadataTopicPartitioner(n).metadataPartition(new TopicIdPartition(id, new TopicPartition("x", p)));
                    OUT.println("part\t" + hex(id) + "\t" + p + "\t" + n + "\t" + got);
                }
            }
        }

        for (String arg : args) {
            int eq = arg.indexOf('=');
            String name = arg.substring(0, eq);
            try {
                OUT.println("dec\t" + name + "\tok\t" + fields(serde.deserialize(HEX.parseHex(arg.substring(eq + 1)))));
            } catch (Exception e) {
                OUT.println("dec\t" + name + "\terr\t" + describe(e));
            }
        }
        OUT.println("ok");
    }

    /** The fixed records, in order. */
    static Map<String, RemoteLogMetadata> records() {
        Map<String, RemoteLogMetadata> m = new LinkedHashMap<>();
        m.put("segment-copy-started", new RemoteLogSegmentMetadata(SEGMENT, 1200L, 4799L, 1700000000000L, 1,
            1700000005000L, 1048576, Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_STARTED, epochs(0, 1200L, 2, 3000L), false));
        m.put("segment-txn-index-empty", new RemoteLogSegmentMetadata(SEGMENT, 1200L, 4799L, 1700000000000L, 1,
            1700000005000L, 1048576, Optional.of(new CustomMetadata(CUSTOM)), RemoteLogSegmentState.COPY_SEGMENT_FINISHED,
            epochs(0, 1200L, 2, 3000L), true));
        m.put("segment-empty-custom", new RemoteLogSegmentMetadata(SEGMENT_2, 0L, 0L, -1L, 0, 0L, 0,
            Optional.of(new CustomMetadata(new byte[0])), RemoteLogSegmentState.COPY_SEGMENT_STARTED, epochs(5, 0L), false));
        m.put("update-copy-finished", new RemoteLogSegmentMetadataUpdate(SEGMENT, 1700000009000L,
            Optional.of(new CustomMetadata(CUSTOM)), RemoteLogSegmentState.COPY_SEGMENT_FINISHED, 1));
        m.put("update-delete-started", new RemoteLogSegmentMetadataUpdate(SEGMENT, 1700000100000L,
            Optional.empty(), RemoteLogSegmentState.DELETE_SEGMENT_STARTED, 2));
        m.put("update-delete-finished", new RemoteLogSegmentMetadataUpdate(SEGMENT, 1700000101000L,
            Optional.of(new CustomMetadata(new byte[0])), RemoteLogSegmentState.DELETE_SEGMENT_FINISHED, 2));
        m.put("delete-partition-marked", new RemotePartitionDeleteMetadata(ORDERS_3,
            RemotePartitionDeleteState.DELETE_PARTITION_MARKED, 1700000200000L, 3000));
        m.put("delete-partition-started", new RemotePartitionDeleteMetadata(ORDERS_3,
            RemotePartitionDeleteState.DELETE_PARTITION_STARTED, 1700000201000L, 1));
        m.put("delete-partition-finished", new RemotePartitionDeleteMetadata(T_0,
            RemotePartitionDeleteState.DELETE_PARTITION_FINISHED, 1700000202000L, 1));
        m.put("snapshot", new RemoteLogSegmentMetadataSnapshot(SEGMENT_ID, 1200L, 4799L, 1700000000000L, 1,
            1700000009000L, 1048576, Optional.of(new CustomMetadata(CUSTOM)), RemoteLogSegmentState.COPY_SEGMENT_FINISHED,
            epochs(0, 1200L, 2, 3000L), true));
        m.put("snapshot-no-custom", new RemoteLogSegmentMetadataSnapshot(SEGMENT_ID_2, 0L, 99L, 1700000000000L, 2,
            1700000300000L, 4096, Optional.empty(), RemoteLogSegmentState.DELETE_SEGMENT_STARTED, epochs(7, 0L), false));
        return m;
    }

    /**
     * segment-copy-started with txnIndexEmpty set and unknown tagged fields
     * in three places (the record, its topicIdPartition, its second leader
     * epoch), written by Kafka's generated RemoteLogSegmentMetadataRecord
     * through the serde's framing: what a later Kafka adding tags would write.
     */
    static byte[] segmentWithUnknownTags() {
        RemoteLogSegmentMetadata md = (RemoteLogSegmentMetadata) records().get("segment-copy-started");
        ApiMessageAndVersion mv = new RemoteLogSegmentMetadataTransform().toApiMessageAndVersion(md);
        RemoteLogSegmentMetadataRecord rec = (RemoteLogSegmentMetadataRecord) mv.message();
        rec.setTxnIndexEmpty(true);
        rec.unknownTaggedFields().add(new RawTaggedField(9, new byte[] {(byte) 0xca, (byte) 0xfe}));
        rec.remoteLogSegmentId().topicIdPartition().unknownTaggedFields().add(new RawTaggedField(3, new byte[] {1}));
        rec.segmentLeaderEpochs().get(1).unknownTaggedFields().add(new RawTaggedField(2, new byte[0]));
        BytesApiMessageSerde raw = new BytesApiMessageSerde() {
            @Override
            public ApiMessage apiMessageFor(short apiKey) {
                return MetadataRecordType.fromId(apiKey).newMetadataRecord();
            }
        };
        return raw.serialize(mv);
    }

    static Map<Integer, Long> epochs(Object... kv) {
        Map<Integer, Long> m = new TreeMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((Integer) kv[i], (Long) kv[i + 1]);
        }
        return m;
    }

    static String fields(RemoteLogMetadata md) {
        if (md instanceof RemoteLogSegmentMetadata m) {
            return "segment " + tip(m.remoteLogSegmentId().topicIdPartition())
                + " segmentId=" + hex(m.remoteLogSegmentId().id())
                + " startOffset=" + m.startOffset() + " endOffset=" + m.endOffset()
                + " brokerId=" + m.brokerId() + " maxTimestampMs=" + m.maxTimestampMs()
                + " eventTimestampMs=" + m.eventTimestampMs() + " segmentSizeInBytes=" + m.segmentSizeInBytes()
                + " customMetadata=" + custom(m.customMetadata()) + " state=" + m.state().id()
                + " txnIndexEmpty=" + m.isTxnIdxEmpty() + " epochs=" + epochs(m.segmentLeaderEpochs());
        }
        if (md instanceof RemoteLogSegmentMetadataUpdate u) {
            return "update " + tip(u.remoteLogSegmentId().topicIdPartition())
                + " segmentId=" + hex(u.remoteLogSegmentId().id())
                + " brokerId=" + u.brokerId() + " eventTimestampMs=" + u.eventTimestampMs()
                + " customMetadata=" + custom(u.customMetadata()) + " state=" + u.state().id();
        }
        if (md instanceof RemotePartitionDeleteMetadata d) {
            return "delete " + tip(d.topicIdPartition())
                + " brokerId=" + d.brokerId() + " eventTimestampMs=" + d.eventTimestampMs()
                + " state=" + d.state().id();
        }
        if (md instanceof RemoteLogSegmentMetadataSnapshot s) {
            return "snapshot segmentId=" + hex(s.segmentId())
                + " startOffset=" + s.startOffset() + " endOffset=" + s.endOffset()
                + " brokerId=" + s.brokerId() + " maxTimestampMs=" + s.maxTimestampMs()
                + " eventTimestampMs=" + s.eventTimestampMs() + " segmentSizeInBytes=" + s.segmentSizeInBytes()
                + " customMetadata=" + custom(s.customMetadata()) + " state=" + s.state().id()
                + " txnIndexEmpty=" + s.isTxnIdxEmpty() + " epochs=" + epochs(s.segmentLeaderEpochs());
        }
        return "unknown " + md.getClass().getName();
    }

    static String tip(TopicIdPartition tp) {
        return "topic=" + tp.topic() + " topicId=" + hex(tp.topicId()) + " partition=" + tp.partition();
    }

    static String hex(Uuid u) {
        return String.format("%016x%016x", u.getMostSignificantBits(), u.getLeastSignificantBits());
    }

    static String custom(Optional<CustomMetadata> c) {
        return c.map(m -> HEX.formatHex(m.value())).orElse("-");
    }

    static String epochs(Map<Integer, Long> m) {
        StringJoiner j = new StringJoiner(",");
        m.forEach((e, o) -> j.add(e + ":" + o));
        return j.toString();
    }

    static String describe(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (sb.length() > 0) {
                sb.append(" <- ");
            }
            sb.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
        }
        return sb.toString().replace('\t', ' ').replace('\n', ' ');
    }
}
