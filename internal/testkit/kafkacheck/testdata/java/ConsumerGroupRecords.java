import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupCurrentMemberAssignmentKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupCurrentMemberAssignmentValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMemberMetadataKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMemberMetadataValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMetadataKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMetadataValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupPartitionMetadataKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupPartitionMetadataValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupRegularExpressionKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupRegularExpressionValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMemberKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMemberValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMetadataKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMetadataValue;
import org.apache.kafka.server.common.ApiMessageAndVersion;

/**
 * Kafka's own encoding of the records of KIP-848 consumer groups in
 * __consumer_offsets, through the group coordinator's record serde
 * (GroupCoordinatorRecordSerde). Run by the Go tests of
 * internal/testkit/kafkacheck with Java's source-file launcher against
 * Kafka's jars. Output lines, fields tab-separated:
 *
 * <pre>
 * enc NAME KEYHEX VALUEHEX     a fixed record, serialized by Kafka ("-": null value)
 * dec NAME ok KEYHEX VALUEHEX  an argument NAME=KEYHEX:VALUEHEX deserialized
 *                              and serialized again by Kafka
 * dec NAME err EXCEPTION       or the exception deserializing it
 * ok
 * </pre>
 *
 * The fixed records are also built by the Go test (groupcodec_test.go):
 * the two lists must stay alike.
 */
public final class ConsumerGroupRecords {
    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    private static final HexFormat HEX = HexFormat.of();
    private static final GroupCoordinatorRecordSerde SERDE = new GroupCoordinatorRecordSerde();

    static final String GROUP = "orders-app";
    static final Uuid ORDERS = new Uuid(0xb1c40e5a7c2f4d3eL, 0x9a1b6c8d2e4f7081L);
    static final Uuid PAYMENTS = new Uuid(0x5a4f1e2d3c4b5a69L, 0x78879605a4b3c2d1L);

    static ApiMessageAndVersion v0(org.apache.kafka.common.protocol.ApiMessage m) {
        return new ApiMessageAndVersion(m, (short) 0);
    }

    static void enc(String name, CoordinatorRecord r) {
        byte[] value = SERDE.serializeValue(r);
        OUT.println("enc\t" + name + "\t" + HEX.formatHex(SERDE.serializeKey(r)) + "\t" + (value == null ? "-" : HEX.formatHex(value)));
    }

    public static void main(String[] args) {
        enc("consumer-group-metadata", CoordinatorRecord.record(
            new ConsumerGroupMetadataKey().setGroupId(GROUP),
            v0(new ConsumerGroupMetadataValue().setEpoch(12).setMetadataHash(0x0123456789abcdefL))));
        enc("consumer-group-metadata-no-hash", CoordinatorRecord.record(
            new ConsumerGroupMetadataKey().setGroupId(GROUP),
            v0(new ConsumerGroupMetadataValue().setEpoch(0))));
        enc("consumer-group-metadata-tombstone", CoordinatorRecord.tombstone(
            new ConsumerGroupMetadataKey().setGroupId(GROUP)));
        enc("consumer-group-partition-metadata", CoordinatorRecord.record(
            new ConsumerGroupPartitionMetadataKey().setGroupId(GROUP),
            v0(new ConsumerGroupPartitionMetadataValue().setTopics(List.of(
                new ConsumerGroupPartitionMetadataValue.TopicMetadata()
                    .setTopicId(ORDERS).setTopicName("orders").setNumPartitions(4)
                    .setPartitionMetadata(List.of(
                        new ConsumerGroupPartitionMetadataValue.PartitionMetadata().setPartition(0).setRacks(List.of("rack-a", "rack-b")),
                        new ConsumerGroupPartitionMetadataValue.PartitionMetadata().setPartition(1).setRacks(List.of()))))))));
        enc("consumer-group-member", CoordinatorRecord.record(
            new ConsumerGroupMemberMetadataKey().setGroupId(GROUP).setMemberId("m1"),
            v0(new ConsumerGroupMemberMetadataValue()
                .setInstanceId("i1").setRackId("rack-a").setClientId("c1").setClientHost("/10.0.0.1")
                .setSubscribedTopicNames(List.of("orders", "payments")).setSubscribedTopicRegex(null)
                .setRebalanceTimeoutMs(300000).setServerAssignor("uniform"))));
        enc("consumer-group-member-classic", CoordinatorRecord.record(
            new ConsumerGroupMemberMetadataKey().setGroupId(GROUP).setMemberId("m2"),
            v0(new ConsumerGroupMemberMetadataValue()
                .setInstanceId(null).setRackId(null).setClientId("c2").setClientHost("/10.0.0.2")
                .setSubscribedTopicNames(List.of()).setSubscribedTopicRegex("orders.*")
                .setRebalanceTimeoutMs(45000).setServerAssignor(null)
                .setClassicMemberMetadata(new ConsumerGroupMemberMetadataValue.ClassicMemberMetadata()
                    .setSessionTimeoutMs(45000)
                    .setSupportedProtocols(List.of(
                        new ConsumerGroupMemberMetadataValue.ClassicProtocol().setName("range").setMetadata(new byte[] {0, 3, 1, 2}),
                        new ConsumerGroupMemberMetadataValue.ClassicProtocol().setName("cooperative-sticky").setMetadata(new byte[0])))))));
        enc("consumer-group-target-assignment-metadata", CoordinatorRecord.record(
            new ConsumerGroupTargetAssignmentMetadataKey().setGroupId(GROUP),
            v0(new ConsumerGroupTargetAssignmentMetadataValue().setAssignmentEpoch(12).setAssignmentTimestamp(1700000000000L))));
        enc("consumer-group-target-assignment-member", CoordinatorRecord.record(
            new ConsumerGroupTargetAssignmentMemberKey().setGroupId(GROUP).setMemberId("m1"),
            v0(new ConsumerGroupTargetAssignmentMemberValue().setTopicPartitions(List.of(
                new ConsumerGroupTargetAssignmentMemberValue.TopicPartition().setTopicId(ORDERS).setPartitions(List.of(0, 2)),
                new ConsumerGroupTargetAssignmentMemberValue.TopicPartition().setTopicId(PAYMENTS).setPartitions(List.of(1)))))));
        enc("consumer-group-current-assignment", CoordinatorRecord.record(
            new ConsumerGroupCurrentMemberAssignmentKey().setGroupId(GROUP).setMemberId("m1"),
            v0(new ConsumerGroupCurrentMemberAssignmentValue()
                .setMemberEpoch(12).setPreviousMemberEpoch(11).setState((byte) 1)
                .setAssignedPartitions(List.of(
                    new ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions().setTopicId(ORDERS)
                        .setPartitions(List.of(0, 2)).setAssignmentEpochs(List.of(11, 12))))
                .setPartitionsPendingRevocation(List.of(
                    new ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions().setTopicId(PAYMENTS)
                        .setPartitions(List.of(1)))))));
        enc("consumer-group-regular-expression", CoordinatorRecord.record(
            new ConsumerGroupRegularExpressionKey().setGroupId(GROUP).setRegularExpression("orders.*"),
            v0(new ConsumerGroupRegularExpressionValue().setTopics(List.of("orders", "orders-eu"))
                .setVersion(42).setTimestamp(1700000000000L))));

        for (String arg : args) {
            int eq = arg.indexOf('=');
            String name = arg.substring(0, eq);
            String[] kv = arg.substring(eq + 1).split(":", -1);
            try {
                ByteBuffer value = kv[1].equals("-") ? null : ByteBuffer.wrap(HEX.parseHex(kv[1]));
                CoordinatorRecord r = SERDE.deserialize(ByteBuffer.wrap(HEX.parseHex(kv[0])), value);
                byte[] again = SERDE.serializeValue(r);
                OUT.println("dec\t" + name + "\tok\t" + HEX.formatHex(SERDE.serializeKey(r)) + "\t" + (again == null ? "-" : HEX.formatHex(again)));
            } catch (RuntimeException e) {
                OUT.println("dec\t" + name + "\terr\t" + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' '));
            }
        }
        OUT.println("ok");
    }
}
