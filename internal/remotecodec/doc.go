// Package remotecodec encodes and decodes the records of Kafka's internal
// topic __remote_log_metadata — the metadata of tiered storage (KIP-405):
// which segments of which partitions are in remote storage, in which state,
// and the deletion of a partition's remote data — exactly as Kafka 4.4's
// default RemoteLogMetadataManager, TopicBasedRemoteLogMetadataManager,
// writes and reads them (storage's RemoteLogMetadataSerde, over server-common's
// BytesApiMessageSerde and AbstractApiMessageSerde; the schemas
// RemoteLogSegmentMetadataRecord.json, RemoteLogSegmentMetadataUpdateRecord.json,
// RemotePartitionDeleteMetadataRecord.json and
// RemoteLogSegmentMetadataSnapshotRecord.json). It does no I/O: the log
// frames the values produced here as ordinary records of that topic
// (the record package), sends each to its partition ([PartitionFor]) and
// replays what it reads back.
//
// # Topic, keys and partitioning
//
// Kafka 4.4.0's ProducerManager sends every value with a null key to an
// explicit partition; the topic is created with cleanup.policy=delete and
// retention.ms=-1 (remote.log.metadata.topic.retention.ms), so nothing is
// compacted and nothing expires. Values are never null: Kafka writes no
// tombstones to this topic, and its consumer stops on a value it cannot
// deserialize.
//
// All records about one user partition go to partition
//
//	toPositive(murmur2(bigEndian4(Objects.hash(topicId.lsb, topicId.msb, partition)))) % numPartitions
//
// of the topic (RemoteLogMetadataTopicPartitioner.metadataPartition;
// [PartitionFor] gives the details). numPartitions is
// remote.log.metadata.topic.num.partitions, 50 by default
// ([DefaultRemoteLogMetadataTopicPartitions]), fixed when the topic is
// created; the topic name plays no part, only the topic id and the
// partition number.
//
// # Value framing
//
// Every value is a frame and then one record, in Kafka's flexible encoding:
//
//	+--------------------+----------------+-----------------+---------------+
//	| frame version      | apiKey         | version         | record fields |
//	| uvarint, always 1  | uvarint, 0–3   | uvarint         |               |
//	+--------------------+----------------+-----------------+---------------+
//
// (AbstractApiMessageSerde.write: DEFAULT_FRAME_VERSION 1, then
// message.apiKey(), then the version, then message.write). A reader refuses
// frame version 0 (the KRaft preview of Kafka 2.8) and any other, an
// apiKey that is not a record type, a version the record does not have, and
// bytes left after the record ("Found N byte(s) of garbage").
//
// Every record is flexible from version 0: strings and bytes are
// uvarint(n+1) and the bytes (0 = null), arrays a uvarint(n+1) count,
// uuids 16 bytes (the most significant long first), integers big-endian, a
// bool one byte; every structure — the record and each nested structure
// and array element — ends with tagged fields: a uvarint count, then per
// field a uvarint tag, a uvarint size and the data. Readers skip tags they
// do not know by their size. Nested structures:
//
//	TopicIdPartition    name string | id uuid | partition int32 | tags
//	RemoteLogSegmentId  TopicIdPartition | id uuid | tags
//	SegmentLeaderEpoch  leaderEpoch int32 | offset int64 | tags
//
// # Records
//
// apiKey 0, RemoteLogSegmentMetadataRecord ([RemoteLogSegmentMetadataRecord]),
// written by addRemoteLogSegmentMetadata in state COPY_SEGMENT_STARTED:
//
//	RemoteLogSegmentId | startOffset int64 | endOffset int64 | brokerId int32 |
//	maxTimestampMs int64 | eventTimestampMs int64 | segmentLeaderEpochs []SegmentLeaderEpoch |
//	segmentSizeInBytes int32 | customMetadata bytes, nullable | remoteLogSegmentState int8 |
//	tags: 0 txnIndexEmpty bool (written when true), 1 brokerLeaderEpoch int32 (version 1, written when not 0)
//
// apiKey 1, RemoteLogSegmentMetadataUpdateRecord
// ([RemoteLogSegmentMetadataUpdateRecord]), written by
// updateRemoteLogSegmentMetadata for every later state:
//
//	RemoteLogSegmentId | brokerId int32 | eventTimestampMs int64 |
//	customMetadata bytes, nullable | remoteLogSegmentState int8 | tags (none known)
//
// apiKey 2, RemotePartitionDeleteMetadataRecord
// ([RemotePartitionDeleteMetadataRecord]), written by
// putRemotePartitionDeleteMetadata:
//
//	TopicIdPartition | brokerId int32 | eventTimestampMs int64 |
//	remotePartitionDeleteState int8 | tags (none known)
//
// apiKey 3, RemoteLogSegmentMetadataSnapshotRecord
// ([RemoteLogSegmentMetadataSnapshotRecord]): read and written by the serde,
// published by nothing in Kafka 4.4.0:
//
//	segmentId uuid | startOffset int64 | endOffset int64 | brokerId int32 |
//	maxTimestampMs int64 | eventTimestampMs int64 | segmentLeaderEpochs []SegmentLeaderEpoch |
//	segmentSizeInBytes int32 | customMetadata bytes, nullable | remoteLogSegmentState int8 |
//	tags: 0 txnIndexEmpty bool (written when true)
//
// The states are Kafka's enum ids: [RemoteLogSegmentState] 0
// COPY_SEGMENT_STARTED, 1 COPY_SEGMENT_FINISHED, 2 DELETE_SEGMENT_STARTED,
// 3 DELETE_SEGMENT_FINISHED; [RemotePartitionDeleteState] 0
// DELETE_PARTITION_MARKED, 1 DELETE_PARTITION_STARTED, 2
// DELETE_PARTITION_FINISHED.
//
// # Versions written, and why
//
//	record                                  writes   reads   Kafka 4.4.0
//	RemoteLogSegmentMetadataRecord          0        0–1     version 0 only
//	RemoteLogSegmentMetadataUpdateRecord    0        0       version 0 only
//	RemotePartitionDeleteMetadataRecord     0        0       version 0 only
//	RemoteLogSegmentMetadataSnapshotRecord  0        0       version 0 only
//
// Each of Kafka's transforms writes its record's highestSupportedVersion,
// and every schema in Kafka 4.4.0 (the kafka-storage-4.4.0 jar) has
// validVersions "0", so Kafka 4.4 writes version 0 of everything; so does
// [AppendValue]. Kafka's development branch adds version 1 of apiKey 0,
// whose only change is tagged field 1, BrokerLeaderEpoch (int32, default
// 0). [ParseValue] reads it and [AppendValueVersion] writes it on request,
// but Kafka 4.4.0 refuses it (its generated nested structures read
// version 0 only), so a log that Kafka 4.4 replays must not contain it.
//
// # What the reader checks beyond the schema
//
// Kafka's serde turns each record into its storage-api object, whose
// constructors refuse an unknown state id, a segment with a negative start
// offset, an end offset below the start offset or no leader epochs, and a
// snapshot with no leader epochs; Kafka's metadata consumer stops on such a
// value. [ParseValue] refuses the same, and the encoders refuse to write
// them. Leader epochs are kept as listed: Kafka writes them in ascending
// epoch order and, reading, keeps the last offset of an epoch listed twice.
// Unknown tagged fields are skipped and not kept (Kafka's objects drop them
// too); a known tag of the wrong size fails, where Kafka's generated reader
// would misread the rest of the value.
//
// # Errors
//
// Decoders never panic and never trust a length: each length and count is
// checked against the bytes present before anything is allocated. Every
// decoding failure is a [*DecodeError] matching [ErrCorrupt] (and
// [ErrUnsupportedVersion] for a frame version or version Kafka does not
// read, [ErrUnknownAPIKey] for an unknown record type). Encoders fail with
// [ErrInvalid] for records Kafka cannot hold, appending nothing.
//
// Nothing in the package holds state; every function is safe for
// concurrent use.
package remotecodec
