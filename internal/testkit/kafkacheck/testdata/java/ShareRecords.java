import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecordSerde;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde;
import org.apache.kafka.coordinator.group.generated.ShareGroupCurrentMemberAssignmentKey;
import org.apache.kafka.coordinator.group.generated.ShareGroupCurrentMemberAssignmentValue;
import org.apache.kafka.coordinator.group.generated.ShareGroupMemberMetadataKey;
import org.apache.kafka.coordinator.group.generated.ShareGroupMemberMetadataValue;
import org.apache.kafka.coordinator.group.generated.ShareGroupMetadataKey;
import org.apache.kafka.coordinator.group.generated.ShareGroupMetadataValue;
import org.apache.kafka.coordinator.group.generated.ShareGroupStatePartitionMetadataKey;
import org.apache.kafka.coordinator.group.generated.ShareGroupStatePartitionMetadataValue;
import org.apache.kafka.coordinator.group.generated.ShareGroupTargetAssignmentMemberKey;
import org.apache.kafka.coordinator.group.generated.ShareGroupTargetAssignmentMemberValue;
import org.apache.kafka.coordinator.group.generated.ShareGroupTargetAssignmentMetadataKey;
import org.apache.kafka.coordinator.group.generated.ShareGroupTargetAssignmentMetadataValue;
import org.apache.kafka.coordinator.share.ShareCoordinatorRecordSerde;
import org.apache.kafka.coordinator.share.generated.ShareSnapshotKey;
import org.apache.kafka.coordinator.share.generated.ShareSnapshotValue;
import org.apache.kafka.coordinator.share.generated.ShareUpdateKey;
import org.apache.kafka.coordinator.share.generated.ShareUpdateValue;
import org.apache.kafka.server.common.ApiMessageAndVersion;

/**
 * Kafka's own encoding of the records of share groups (KIP-932): those the
 * group coordinator writes in __consumer_offsets (GroupCoordinatorRecordSerde,
 * "group") and those the share coordinator writes in __share_group_state
 * (ShareCoordinatorRecordSerde, "share"). Run by the Go tests of
 * internal/testkit/kafkacheck with Java's source-file launcher against
 * Kafka's jars. Output lines, fields tab-separated:
 *
 * <pre>
 * enc SERDE NAME KEYHEX VALUEHEX     a fixed record, serialized by Kafka ("-": null value)
 * dec NAME ok KEYHEX VALUEHEX KEYJSON VALUEJSON
 *                                    an argument SERDE/NAME=KEYHEX:VALUEHEX deserialized
 *                                    and serialized again by Kafka, and the fields
 *                                    Kafka read, as its JsonConverters write them
 * dec NAME err EXCEPTION             or the exception deserializing it
 * ok
 * </pre>
 *
 * The fixed records are also built by the Go tests of internal/groupcodec
 * (sharegroup_test.go) and internal/sharecodec (kafka_test.go): the lists
 * must stay alike.
 */
public final class ShareRecords {
    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    private static final HexFormat HEX = HexFormat.of();
    private static final GroupCoordinatorRecordSerde GROUP_SERDE = new GroupCoordinatorRecordSerde();
    private static final ShareCoordinatorRecordSerde SHARE_SERDE = new ShareCoordinatorRecordSerde();

    static final String GROUP = "orders-app";
    static final Uuid ORDERS = new Uuid(0xb1c40e5a7c2f4d3eL, 0x9a1b6c8d2e4f7081L);
    static final Uuid PAYMENTS = new Uuid(0x5a4f1e2d3c4b5a69L, 0x78879605a4b3c2d1L);

    static ApiMessageAndVersion v0(org.apache.kafka.common.protocol.ApiMessage m) {
        return new ApiMessageAndVersion(m, (short) 0);
    }

    static void enc(String serde, String name, CoordinatorRecord r) {
        CoordinatorRecordSerde s = serde.equals("group") ? GROUP_SERDE : SHARE_SERDE;
        byte[] value = s.serializeValue(r);
        OUT.println("enc\t" + serde + "\t" + name + "\t" + HEX.formatHex(s.serializeKey(r)) + "\t" + (value == null ? "-" : HEX.formatHex(value)));
    }

    static ShareSnapshotValue.StateBatch snapBatch(long first, long last, int state, int count) {
        return new ShareSnapshotValue.StateBatch().setFirstOffset(first).setLastOffset(last)
            .setDeliveryState((byte) state).setDeliveryCount((short) count);
    }

    static ShareUpdateValue.StateBatch updBatch(long first, long last, int state, int count) {
        return new ShareUpdateValue.StateBatch().setFirstOffset(first).setLastOffset(last)
            .setDeliveryState((byte) state).setDeliveryCount((short) count);
    }

    public static void main(String[] args) {
        // __share_group_state.
        enc("share", "share-snapshot", CoordinatorRecord.record(
            new ShareSnapshotKey().setGroupId(GROUP).setTopicId(ORDERS).setPartition(3),
            v0(new ShareSnapshotValue().setSnapshotEpoch(2).setStateEpoch(1).setLeaderEpoch(5).setStartOffset(100)
                .setDeliveryCompleteCount(7).setCreateTimestamp(1700000000000L).setWriteTimestamp(1700000001000L)
                .setStateBatches(List.of(
                    snapBatch(100, 104, 0, 1), snapBatch(105, 105, 1, 1), snapBatch(106, 110, 2, 2),
                    snapBatch(111, 111, 3, 3), snapBatch(112, 120, 4, 5))))));
        enc("share", "share-snapshot-empty", CoordinatorRecord.record(
            new ShareSnapshotKey().setGroupId(GROUP).setTopicId(PAYMENTS).setPartition(0),
            v0(new ShareSnapshotValue().setSnapshotEpoch(0).setStateEpoch(0).setLeaderEpoch(0).setStartOffset(-1)
                .setCreateTimestamp(1700000000000L).setWriteTimestamp(1700000000000L).setStateBatches(List.of()))));
        enc("share", "share-snapshot-tombstone", CoordinatorRecord.tombstone(
            new ShareSnapshotKey().setGroupId(GROUP).setTopicId(ORDERS).setPartition(3)));
        enc("share", "share-update", CoordinatorRecord.record(
            new ShareUpdateKey().setGroupId(GROUP).setTopicId(ORDERS).setPartition(3),
            v0(new ShareUpdateValue().setSnapshotEpoch(2).setLeaderEpoch(5).setStartOffset(-1)
                .setStateBatches(List.of(updBatch(121, 130, 0, 1), updBatch(131, 131, 4, 5))))));
        enc("share", "share-update-empty", CoordinatorRecord.record(
            new ShareUpdateKey().setGroupId(GROUP).setTopicId(PAYMENTS).setPartition(7),
            v0(new ShareUpdateValue().setSnapshotEpoch(3).setLeaderEpoch(6).setStartOffset(120)
                .setDeliveryCompleteCount(0).setStateBatches(List.of()))));

        // __consumer_offsets.
        enc("group", "share-group-member", CoordinatorRecord.record(
            new ShareGroupMemberMetadataKey().setGroupId(GROUP).setMemberId("m1"),
            v0(new ShareGroupMemberMetadataValue().setRackId("rack-a").setClientId("c1").setClientHost("/10.0.0.1")
                .setSubscribedTopicNames(List.of("orders", "payments")))));
        enc("group", "share-group-member-no-rack", CoordinatorRecord.record(
            new ShareGroupMemberMetadataKey().setGroupId(GROUP).setMemberId("m2"),
            v0(new ShareGroupMemberMetadataValue().setRackId(null).setClientId("c2").setClientHost("/10.0.0.2")
                .setSubscribedTopicNames(List.of()))));
        enc("group", "share-group-metadata", CoordinatorRecord.record(
            new ShareGroupMetadataKey().setGroupId(GROUP),
            v0(new ShareGroupMetadataValue().setEpoch(12).setMetadataHash(0x0123456789abcdefL))));
        enc("group", "share-group-metadata-tombstone", CoordinatorRecord.tombstone(
            new ShareGroupMetadataKey().setGroupId(GROUP)));
        enc("group", "share-group-target-assignment-metadata", CoordinatorRecord.record(
            new ShareGroupTargetAssignmentMetadataKey().setGroupId(GROUP),
            v0(new ShareGroupTargetAssignmentMetadataValue().setAssignmentEpoch(12).setAssignmentTimestamp(1700000000000L))));
        enc("group", "share-group-target-assignment-member", CoordinatorRecord.record(
            new ShareGroupTargetAssignmentMemberKey().setGroupId(GROUP).setMemberId("m1"),
            v0(new ShareGroupTargetAssignmentMemberValue().setTopicPartitions(List.of(
                new ShareGroupTargetAssignmentMemberValue.TopicPartition().setTopicId(ORDERS).setPartitions(List.of(0, 2)),
                new ShareGroupTargetAssignmentMemberValue.TopicPartition().setTopicId(PAYMENTS).setPartitions(List.of(1)))))));
        enc("group", "share-group-current-assignment", CoordinatorRecord.record(
            new ShareGroupCurrentMemberAssignmentKey().setGroupId(GROUP).setMemberId("m1"),
            v0(new ShareGroupCurrentMemberAssignmentValue().setMemberEpoch(12).setPreviousMemberEpoch(11).setState((byte) 0)
                .setAssignedPartitions(List.of(
                    new ShareGroupCurrentMemberAssignmentValue.TopicPartitions().setTopicId(ORDERS).setPartitions(List.of(0, 2)))))));
        enc("group", "share-group-state-partition-metadata", CoordinatorRecord.record(
            new ShareGroupStatePartitionMetadataKey().setGroupId(GROUP),
            v0(new ShareGroupStatePartitionMetadataValue()
                .setInitializingTopics(List.of(
                    new ShareGroupStatePartitionMetadataValue.TopicPartitionsInfo().setTopicId(PAYMENTS).setTopicName("payments")
                        .setPartitions(List.of(0, 1))))
                .setInitializedTopics(List.of(
                    new ShareGroupStatePartitionMetadataValue.TopicPartitionsInfo().setTopicId(ORDERS).setTopicName("orders")
                        .setPartitions(List.of(0, 1, 2, 3))))
                .setDeletingTopics(List.of(
                    new ShareGroupStatePartitionMetadataValue.TopicInfo().setTopicId(Uuid.ONE_UUID).setTopicName("old"))))));
        enc("group", "share-group-state-partition-metadata-empty", CoordinatorRecord.record(
            new ShareGroupStatePartitionMetadataKey().setGroupId(GROUP),
            v0(new ShareGroupStatePartitionMetadataValue())));

        for (String arg : args) {
            int slash = arg.indexOf('/');
            int eq = arg.indexOf('=');
            CoordinatorRecordSerde s = arg.substring(0, slash).equals("group") ? GROUP_SERDE : SHARE_SERDE;
            String name = arg.substring(slash + 1, eq);
            String[] kv = arg.substring(eq + 1).split(":", -1);
            try {
                ByteBuffer value = kv[1].equals("-") ? null : ByteBuffer.wrap(HEX.parseHex(kv[1]));
                CoordinatorRecord r = s.deserialize(ByteBuffer.wrap(HEX.parseHex(kv[0])), value);
                byte[] again = s.serializeValue(r);
                boolean group = s == GROUP_SERDE;
                String keyJson = (group
                    ? org.apache.kafka.coordinator.group.generated.CoordinatorRecordJsonConverters.writeRecordKeyAsJson(r.key())
                    : org.apache.kafka.coordinator.share.generated.CoordinatorRecordJsonConverters.writeRecordKeyAsJson(r.key())).toString();
                String valueJson = "-";
                if (r.value() != null) {
                    valueJson = (group
                        ? org.apache.kafka.coordinator.group.generated.CoordinatorRecordJsonConverters.writeRecordValueAsJson(r.value().message(), r.value().version())
                        : org.apache.kafka.coordinator.share.generated.CoordinatorRecordJsonConverters.writeRecordValueAsJson(r.value().message(), r.value().version())).toString();
                }
                OUT.println("dec\t" + name + "\tok\t" + HEX.formatHex(s.serializeKey(r)) + "\t" + (again == null ? "-" : HEX.formatHex(again))
                    + "\t" + keyJson + "\t" + valueJson);
            } catch (RuntimeException e) {
                OUT.println("dec\t" + name + "\terr\t" + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' '));
            }
        }
        OUT.println("ok");
    }
}
