import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The harness's Kafka client: the cases Kafka's own command-line tools
 * cannot express, driven by the Go tests of internal/testkit/kafkacheck through
 * arguments and tab-separated lines. Bytes travel base64-encoded, "-" is
 * null. Every command prints "ok" as its last line when it succeeded.
 *
 * <pre>
 * ready BOOTSTRAP                                   wait until the broker serves
 * create-topic BOOTSTRAP TOPIC PARTITIONS [k=v...]  create a topic with configs
 * create-topics BOOTSTRAP                           stdin lines "TOPIC PARTITIONS [k=v...]": create them all
 * produce BOOTSTRAP [k=v...]                        producer properties; stdin lines:
 *     send TOPIC PARTITION KEY VALUE [HKEY HVALUE...]   prints "ack PARTITION OFFSET"
 *     send-at TOPIC PARTITION TIMESTAMP KEY VALUE [HKEY HVALUE...]   send with the record's timestamp
 *     flush | init | begin | commit | abort
 *     offsets GROUP TOPIC PARTITION OFFSET           sendOffsetsToTransaction
 *     use NAME [k=v...]                              the following lines go to producer NAME, made on
 *                                                    first use with these properties on top of the
 *                                                    command's (lines before the first use go to a
 *                                                    producer with the command's properties); every
 *                                                    producer is flushed and closed at the end
 * share-pair BOOTSTRAP TOPIC RECORDS GROUP         two KafkaShareConsumers (explicit acknowledgement, a 2 s
 *     acquisition lock) share TOPIC's one partition of RECORDS records ("v" + N): N % 10 == 0 rejected,
 *     N % 7 == 0 released at its first delivery, the rest accepted; member a sleeps past the lock once,
 *     before its third commit; prints "rec MEMBER OFFSET DELIVERYCOUNT" per delivery, "done MEMBER OFFSET
 *     TYPE" per acknowledgement of a commit that succeeded, "error ..." for refusals; produces the first
 *     half, prints "half" once it is done (and a's late commit returned), produces the second half when
 *     stdin says "more", prints "done-all" once all are done; closes the consumers when stdin closes
 * consume BOOTSTRAP TOPIC ISOLATION [GROUP]         read every partition to its end offsets:
 *     prints "rec PARTITION OFFSET TIMESTAMP TYPE KEY VALUE [HKEY HVALUE...]";
 *     with GROUP, subscribes, and commits once caught up
 * read BOOTSTRAP TOPIC...                           read every partition of the topics to its end offsets at
 *     both isolation levels (assigned, no group): prints "end ISOLATION TOPIC PARTITION OFFSET"
 *     per partition, then "record ISOLATION TOPIC PARTITION OFFSET LEADER_EPOCH TIMESTAMP TYPE
 *     KEY VALUE [HKEY HVALUE...]" per record (LEADER_EPOCH -1 when unknown)
 * group-offsets BOOTSTRAP GROUP                     prints "off TOPIC PARTITION OFFSET METADATA"
 * committed BOOTSTRAP GROUP...                      prints "committed GROUP TOPIC PARTITION OFFSET
 *     LEADER_EPOCH METADATA" (LEADER_EPOCH -1 when unknown) for each group's committed offsets
 * try-lock FILE                                     takes and releases the lock a broker's LogManager takes
 *     on its log directory's .lock (Kafka's FileLock.tryLock): prints "acquired" or "locked"
 * end-offsets BOOTSTRAP TOPIC ISOLATION             prints "end PARTITION OFFSET"
 * by-time BOOTSTRAP TOPIC[,TOPIC...] TIMESTAMP...   the consumer's offsetsForTimes: prints "at TIMESTAMP TOPIC
 *     PARTITION OFFSET RECORD_TIMESTAMP" per timestamp and partition ("-" for both when no record is that
 *     late), then seeks every partition to the first timestamp's offsets (the end where there is none) and
 *     reads to the end offsets: prints "from TOPIC PARTITION OFFSET TIMESTAMP TYPE KEY VALUE [HKEY HVALUE...]"
 * group-pair BOOTSTRAP TOPIC PARTITIONS GROUP       two consumers of one group (client ids member-a, member-b,
 *     each in its thread, committing what it polled and, on revocation, what it consumed): creates the
 *     topic and sends it 10 records a partition; member a consumes them all and prints "caught-up a";
 *     member b joins while a polls, and once the partitions are split between them prints "assigned
 *     MEMBER PARTITION,..." for each; then sends 10 more a partition, and once both members consumed and
 *     committed theirs prints "stable"; they keep polling until stdin ends. Prints "rec MEMBER
 *     PARTITION OFFSET VALUE" per record as it comes.
 * stream BOOTSTRAP TOPIC PARTITIONS GROUP           an idempotent producer (acks=all) and two consumers from
 *     the earliest offsets, meant to carry on across a restart of the server: "x" (assigned the partitions,
 *     no group) and "y" (subscribed in GROUP, committing after each poll). Creates the topic; stdin lines:
 *     send FROM TO                                   sends records i in [FROM, TO) to partition i % PARTITIONS,
 *                                                    key "k<i>", value "r<i>"
 *     wait N                                         waits until x and y received N records each (y counted
 *                                                    without repeats), then prints "received N"
 *     at the end of stdin, prints "ack I PARTITION OFFSET" for each record i, waits until both consumers
 *     received them all and y committed them, and prints "committed PARTITION OFFSET" for GROUP's
 *     committed offsets once y closed. Meanwhile prints "rec CONSUMER PARTITION OFFSET VALUE" per record
 *     as it comes (repeats included) and "commit-failed REASON" per failed commit of y.
 * acl-table BOOTSTRAP                               who may do what: stdin lines "ROW USER OP ARGS...", each
 *     run with fresh clients logged in with SASL/SCRAM-SHA-256 as USER (password USER-secret); prints
 *     "row ROW RESULT": "ok" (with what was listed, for list-topics and describe-acls) or the simple class
 *     name of the exception Kafka's client threw (the first AuthorizationException among its causes).
 *     OPs: produce TOPIC (not idempotent) | read TOPIC (assigned, until a record comes) |
 *     consume TOPIC GROUP (until assigned, then commitSync) | list-topics | describe-topic TOPIC |
 *     create-topic TOPIC | delete-topic TOPIC | describe-configs topic|broker NAME (broker "-": the first
 *     node) | group-offsets GROUP | init-txn TXNID | txn TXNID TOPIC GROUP (a record and GROUP's offset
 *     in one transaction) | describe-acls | create-acl TOPIC (ALL on TOPIC for USER)
 * ctp BOOTSTRAP IN OUT GROUP TXNID N PAUSE_MS       a consume-transform-produce loop (transactions, read_committed,
 *     the group's offsets sent to each transaction) from IN to OUT, partition to the same partition, value
 *     "t:" + the input's, up to 25 records a transaction, each transaction kept open PAUSE_MS after its
 *     sends (the application's work), until GROUP's committed offsets of IN add up to N; it carries on
 *     through failures of the broker as an application would: aborts the transaction (or makes a new
 *     producer with the same TXNID when the producer cannot abort) and rewinds to the committed offsets;
 *     the producer's calls time out after 5 s (max.block.ms).
 *     Prints "committed SUM" per committed transaction, "aborted REASON" per abandoned one, "new-producer"
 *     per producer replaced, and at the end "done COMMITS ABORTED PRODUCERS".
 * </pre>
 */
public final class KafkaCheck {
    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            throw new IllegalArgumentException("usage: KafkaCheck COMMAND BOOTSTRAP ...");
        }
        String bootstrap = args[1];
        switch (args[0]) {
            case "ready" -> ready(bootstrap);
            case "create-topic" -> createTopic(bootstrap, args);
            case "create-topics" -> createTopics(bootstrap);
            case "produce" -> produce(bootstrap, args);
            case "consume" -> consume(bootstrap, args);
            case "read" -> read(bootstrap, args);
            case "group-offsets" -> groupOffsets(bootstrap, args[2]);
            case "committed" -> committed(bootstrap, args);
            case "try-lock" -> tryLock(args[1]);
            case "end-offsets" -> endOffsets(bootstrap, args[2], args[3]);
            case "by-time" -> byTime(bootstrap, args);
            case "group-pair" -> groupPair(bootstrap, args[2], Integer.parseInt(args[3]), args[4], "classic");
            case "group-pair-consumer" -> groupPair(bootstrap, args[2], Integer.parseInt(args[3]), args[4], "consumer");
            case "stream" -> stream(bootstrap, args[2], Integer.parseInt(args[3]), args[4], "classic");
            case "stream-consumer" -> stream(bootstrap, args[2], Integer.parseInt(args[3]), args[4], "consumer");
            case "share-pair" -> sharePair(bootstrap, args[2], Integer.parseInt(args[3]), args[4]);
            case "acl-table" -> aclTable(bootstrap);
            case "ctp" -> consumeTransformProduce(bootstrap, args[2], args[3], args[4], args[5], Integer.parseInt(args[6]),
                    Integer.parseInt(args[7]));
            default -> throw new IllegalArgumentException("unknown command " + args[0]);
        }
        OUT.println("ok");
    }

    private static Admin admin(String bootstrap) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
        return Admin.create(p);
    }

    private static void ready(String bootstrap) throws Exception {
        long deadline = System.currentTimeMillis() + 60_000;
        try (Admin a = admin(bootstrap)) {
            while (true) {
                try {
                    if (!a.describeCluster().nodes().get().isEmpty()) {
                        return;
                    }
                } catch (ExecutionException e) {
                    if (System.currentTimeMillis() > deadline) {
                        throw e;
                    }
                }
                Thread.sleep(100);
            }
        }
    }

    private static Map<String, String> props(String[] args, int from) {
        Map<String, String> m = new HashMap<>();
        for (int i = from; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            m.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        return m;
    }

    private static void createTopic(String bootstrap, String[] args) throws Exception {
        NewTopic t = new NewTopic(args[2], Integer.parseInt(args[3]), (short) 1).configs(props(args, 4));
        try (Admin a = admin(bootstrap)) {
            a.createTopics(List.of(t)).all().get();
        }
    }

    private static void createTopics(String bootstrap) throws Exception {
        List<NewTopic> topics = new ArrayList<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            String[] f = line.split("\t", -1);
            topics.add(new NewTopic(f[0], Integer.parseInt(f[1]), (short) 1).configs(props(f, 2)));
        }
        try (Admin a = admin(bootstrap)) {
            a.createTopics(topics).all().get();
        }
    }

    private static byte[] dec(String s) {
        return s.equals("-") ? null : Base64.getDecoder().decode(s);
    }

    private static String enc(byte[] b) {
        return b == null ? "-" : Base64.getEncoder().encodeToString(b);
    }

    private static void produce(String bootstrap, String[] args) throws Exception {
        Properties p = new Properties();
        p.putAll(props(args, 2));
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        Map<String, KafkaProducer<byte[], byte[]>> named = new java.util.LinkedHashMap<>();
        Map<String, List<java.util.concurrent.Future<RecordMetadata>>> pendingOf = new HashMap<>();
        named.put("", new KafkaProducer<>(p));
        pendingOf.put("", new ArrayList<>());
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            KafkaProducer<byte[], byte[]> producer = named.get("");
            List<java.util.concurrent.Future<RecordMetadata>> pending = pendingOf.get("");
            String line;
            while ((line = in.readLine()) != null) {
                String[] f = line.split("\t", -1);
                switch (f[0]) {
                    case "use" -> {
                        if (!named.containsKey(f[1])) {
                            Properties q = new Properties();
                            q.putAll(p);
                            q.putAll(props(f, 2));
                            named.put(f[1], new KafkaProducer<>(q));
                            pendingOf.put(f[1], new ArrayList<>());
                        }
                        producer = named.get(f[1]);
                        pending = pendingOf.get(f[1]);
                    }
                    case "send", "send-at" -> {
                        // send-at has the timestamp after the partition.
                        int at = f[0].equals("send-at") ? 1 : 0;
                        Long timestamp = at == 1 ? Long.valueOf(f[3]) : null;
                        List<Header> headers = new ArrayList<>();
                        for (int i = 5 + at; i + 1 < f.length; i += 2) {
                            headers.add(new RecordHeader(new String(dec(f[i]), StandardCharsets.UTF_8), dec(f[i + 1])));
                        }
                        Integer partition = f[2].equals("-") ? null : Integer.valueOf(f[2]);
                        pending.add(producer.send(new ProducerRecord<>(f[1], partition, timestamp, dec(f[3 + at]), dec(f[4 + at]), headers)));
                    }
                    case "flush" -> {
                        producer.flush();
                        drain(pending);
                    }
                    case "init" -> producer.initTransactions();
                    case "begin" -> producer.beginTransaction();
                    case "commit" -> {
                        producer.commitTransaction();
                        drain(pending);
                    }
                    case "abort" -> {
                        producer.abortTransaction();
                        pending.clear(); // aborted sends fail or complete; either way not acknowledged
                    }
                    case "offsets" -> producer.sendOffsetsToTransaction(
                            Map.of(new TopicPartition(f[2], Integer.parseInt(f[3])), new OffsetAndMetadata(Long.parseLong(f[4]))),
                            new org.apache.kafka.clients.consumer.ConsumerGroupMetadata(f[1]));
                    default -> throw new IllegalArgumentException("unknown produce line " + line);
                }
            }
            for (Map.Entry<String, KafkaProducer<byte[], byte[]>> e : named.entrySet()) {
                e.getValue().flush();
                drain(pendingOf.get(e.getKey()));
            }
        } finally {
            for (KafkaProducer<byte[], byte[]> pr : named.values()) {
                pr.close();
            }
        }
    }

    private static void drain(List<java.util.concurrent.Future<RecordMetadata>> pending) throws Exception {
        for (java.util.concurrent.Future<RecordMetadata> f : pending) {
            RecordMetadata md = f.get();
            OUT.println("ack\t" + md.partition() + "\t" + md.offset());
        }
        pending.clear();
    }

    private static KafkaConsumer<byte[], byte[]> consumer(String bootstrap, String isolation, String group) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        if (group != null) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        }
        return new KafkaConsumer<>(p);
    }

    private static void consume(String bootstrap, String[] args) throws Exception {
        String topic = args[2];
        String group = args.length > 4 ? args[4] : null;
        try (KafkaConsumer<byte[], byte[]> c = consumer(bootstrap, args[3], group)) {
            List<TopicPartition> tps = new ArrayList<>();
            c.partitionsFor(topic).forEach(pi -> tps.add(new TopicPartition(topic, pi.partition())));
            Map<TopicPartition, Long> ends = c.endOffsets(tps);
            if (group != null) {
                c.subscribe(List.of(topic));
            } else {
                c.assign(tps);
                c.seekToBeginning(tps);
            }
            long deadline = System.currentTimeMillis() + 60_000;
            while (true) {
                ConsumerRecords<byte[], byte[]> recs = c.poll(Duration.ofMillis(200));
                for (ConsumerRecord<byte[], byte[]> r : recs) {
                    OUT.println(recLine(r));
                }
                Set<TopicPartition> assigned = c.assignment();
                boolean done = assigned.size() == tps.size();
                for (TopicPartition tp : assigned) {
                    done = done && c.position(tp) >= ends.get(tp);
                }
                if (done) {
                    break;
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("not caught up with " + ends + " after 60 s");
                }
            }
            if (group != null) {
                c.commitSync();
            }
        }
    }

    /** recLine is the "rec PARTITION OFFSET TIMESTAMP TYPE KEY VALUE [HKEY HVALUE...]" line of r. */
    private static String recLine(ConsumerRecord<byte[], byte[]> r) {
        StringBuilder b = new StringBuilder("rec\t").append(r.partition()).append('\t').append(r.offset())
                .append('\t').append(r.timestamp()).append('\t').append(r.timestampType().name)
                .append('\t').append(enc(r.key())).append('\t').append(enc(r.value()));
        for (Header h : r.headers()) {
            b.append('\t').append(enc(h.key().getBytes(StandardCharsets.UTF_8))).append('\t').append(enc(h.value()));
        }
        return b.toString();
    }

    private static void read(String bootstrap, String[] args) throws Exception {
        for (String isolation : List.of("read_uncommitted", "read_committed")) {
            try (KafkaConsumer<byte[], byte[]> c = consumer(bootstrap, isolation, null)) {
                List<TopicPartition> tps = new ArrayList<>();
                for (int i = 2; i < args.length; i++) {
                    String topic = args[i];
                    c.partitionsFor(topic).forEach(pi -> tps.add(new TopicPartition(topic, pi.partition())));
                }
                tps.sort(BY_TOPIC_PARTITION);
                Map<TopicPartition, Long> ends = c.endOffsets(tps);
                for (TopicPartition tp : tps) {
                    OUT.println("end\t" + isolation + "\t" + tp.topic() + "\t" + tp.partition() + "\t" + ends.get(tp));
                }
                c.assign(tps);
                c.seekToBeginning(tps);
                pollUntilCaughtUp(c, tps, ends, r -> {
                    StringBuilder b = new StringBuilder("record\t").append(isolation).append('\t').append(r.topic())
                            .append('\t').append(r.partition()).append('\t').append(r.offset())
                            .append('\t').append(r.leaderEpoch().orElse(-1))
                            .append('\t').append(r.timestamp()).append('\t').append(r.timestampType().name)
                            .append('\t').append(enc(r.key())).append('\t').append(enc(r.value()));
                    for (Header h : r.headers()) {
                        b.append('\t').append(enc(h.key().getBytes(StandardCharsets.UTF_8))).append('\t').append(enc(h.value()));
                    }
                    OUT.println(b);
                });
            }
        }
    }

    /** BY_TOPIC_PARTITION orders partitions by topic, then by number. */
    private static final Comparator<TopicPartition> BY_TOPIC_PARTITION =
            Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);

    /**
     * pollUntilCaughtUp polls c, assigned tps, passing each record to each, until its position in
     * every partition of tps has reached ends; it fails after 60 s.
     */
    private static void pollUntilCaughtUp(KafkaConsumer<byte[], byte[]> c, List<TopicPartition> tps,
            Map<TopicPartition, Long> ends, java.util.function.Consumer<ConsumerRecord<byte[], byte[]>> each) {
        long deadline = System.currentTimeMillis() + 60_000;
        while (true) {
            boolean done = true;
            for (TopicPartition tp : tps) {
                done = done && c.position(tp) >= ends.get(tp);
            }
            if (done) {
                return;
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("not caught up with " + ends + " after 60 s");
            }
            for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                each.accept(r);
            }
        }
    }

    private static void committed(String bootstrap, String[] args) throws Exception {
        try (Admin a = admin(bootstrap)) {
            for (int i = 2; i < args.length; i++) {
                String group = args[i];
                committedOffsets(a, group).forEach((tp, om) ->
                        OUT.println("committed\t" + group + "\t" + tp.topic() + "\t" + tp.partition() + "\t" + om.offset()
                                + "\t" + om.leaderEpoch().orElse(-1) + "\t" + om.metadata()));
            }
        }
    }

    /** committedOffsets returns group's committed offsets, ordered by topic and partition. */
    private static Map<TopicPartition, OffsetAndMetadata> committedOffsets(Admin a, String group) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> sorted = new TreeMap<>(BY_TOPIC_PARTITION);
        a.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().forEach((tp, om) -> {
            if (om != null) {
                sorted.put(tp, om);
            }
        });
        return sorted;
    }

    private static void tryLock(String file) throws Exception {
        org.apache.kafka.server.util.FileLock lock = new org.apache.kafka.server.util.FileLock(new java.io.File(file));
        try {
            OUT.println(lock.tryLock() ? "acquired" : "locked");
        } finally {
            lock.unlockAndClose();
        }
    }

    private static void groupOffsets(String bootstrap, String group) throws Exception {
        try (Admin a = admin(bootstrap)) {
            committedOffsets(a, group).forEach((tp, om) ->
                    OUT.println("off\t" + tp.topic() + "\t" + tp.partition() + "\t" + om.offset() + "\t" + om.metadata()));
        }
    }

    private static void endOffsets(String bootstrap, String topic, String isolation) throws Exception {
        try (Admin a = admin(bootstrap)) {
            int n = a.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
            Map<TopicPartition, OffsetSpec> q = new HashMap<>();
            for (int i = 0; i < n; i++) {
                q.put(new TopicPartition(topic, i), OffsetSpec.latest());
            }
            org.apache.kafka.clients.admin.ListOffsetsOptions o = new org.apache.kafka.clients.admin.ListOffsetsOptions(
                    isolation.equals("read_committed") ? org.apache.kafka.common.IsolationLevel.READ_COMMITTED : org.apache.kafka.common.IsolationLevel.READ_UNCOMMITTED);
            var res = a.listOffsets(q, o).all().get();
            for (int i = 0; i < n; i++) {
                OUT.println("end\t" + i + "\t" + res.get(new TopicPartition(topic, i)).offset());
            }
        }
    }

    /** partitionsOf lists the partitions of topic, by number. */
    private static List<TopicPartition> partitionsOf(KafkaConsumer<byte[], byte[]> c, String topic) {
        List<TopicPartition> tps = new ArrayList<>();
        c.partitionsFor(topic).forEach(pi -> tps.add(new TopicPartition(topic, pi.partition())));
        tps.sort((x, y) -> Integer.compare(x.partition(), y.partition()));
        return tps;
    }

    private static void byTime(String bootstrap, String[] args) throws Exception {
        try (KafkaConsumer<byte[], byte[]> c = consumer(bootstrap, "read_uncommitted", null)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (String topic : args[2].split(",")) {
                tps.addAll(partitionsOf(c, topic));
            }
            Map<TopicPartition, Long> ends = c.endOffsets(tps);
            Map<TopicPartition, Long> start = null;
            for (int i = 3; i < args.length; i++) {
                long ts = Long.parseLong(args[i]);
                Map<TopicPartition, Long> q = new HashMap<>();
                tps.forEach(tp -> q.put(tp, ts));
                Map<TopicPartition, org.apache.kafka.clients.consumer.OffsetAndTimestamp> found = c.offsetsForTimes(q);
                Map<TopicPartition, Long> at = new HashMap<>();
                for (TopicPartition tp : tps) {
                    var ot = found.get(tp);
                    OUT.println("at\t" + ts + "\t" + tp.topic() + "\t" + tp.partition() + "\t" + (ot == null ? "-\t-" : ot.offset() + "\t" + ot.timestamp()));
                    at.put(tp, ot == null ? ends.get(tp) : ot.offset());
                }
                if (start == null) {
                    start = at;
                }
            }
            c.assign(tps);
            for (TopicPartition tp : tps) {
                c.seek(tp, start.get(tp));
            }
            pollUntilCaughtUp(c, tps, ends,
                    r -> OUT.println("from\t" + r.topic() + "\t" + recLine(r).substring("rec\t".length())));
        }
    }

    /**
     * Member is a consumer polling in its own thread until stopped: in a
     * group (subscribed) when its properties name one, else assigned the
     * given partitions from the earliest offsets. It prints "rec NAME
     * PARTITION OFFSET VALUE" per record as it comes; in a group it commits
     * its positions after every poll that returned records and, when
     * partitions are revoked, before it gives them away. A tolerant member
     * prints "commit-failed REASON" for a failed commit and carries on;
     * any other member fails.
     */
    private static final class Member extends Thread {
        final String name;
        final String topic;
        final Properties props;
        final List<TopicPartition> assign;
        final boolean tolerant;
        /** The assigned partitions and their positions, after each poll. */
        volatile Map<TopicPartition, Long> positions = Map.of();
        /** The offsets last committed, by partition. */
        final Map<TopicPartition, Long> committed = new java.util.concurrent.ConcurrentHashMap<>();
        /** Every "PARTITION:OFFSET" received. */
        final Set<String> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
        volatile boolean stop;
        volatile Throwable failed;

        Member(String name, String topic, Properties props, List<TopicPartition> assign, boolean tolerant) {
            super("member-" + name);
            this.name = name;
            this.topic = topic;
            this.props = props;
            this.assign = assign;
            this.tolerant = tolerant;
        }

        private void commit(KafkaConsumer<byte[], byte[]> c) {
            Map<TopicPartition, OffsetAndMetadata> offs = new HashMap<>();
            for (TopicPartition tp : c.assignment()) {
                offs.put(tp, new OffsetAndMetadata(c.position(tp)));
            }
            try {
                c.commitSync(offs);
            } catch (org.apache.kafka.common.KafkaException e) {
                if (!tolerant) {
                    throw e;
                }
                OUT.println("commit-failed\t" + e.getClass().getSimpleName() + ": " + e.getMessage());
                return;
            }
            offs.forEach((tp, om) -> committed.put(tp, om.offset()));
        }

        @Override
        public void run() {
            try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props)) {
                if (assign != null) {
                    c.assign(assign);
                    c.seekToBeginning(assign);
                } else {
                    c.subscribe(List.of(topic), new org.apache.kafka.clients.consumer.ConsumerRebalanceListener() {
                        @Override
                        public void onPartitionsRevoked(java.util.Collection<TopicPartition> parts) {
                            commit(c);
                        }

                        @Override
                        public void onPartitionsAssigned(java.util.Collection<TopicPartition> parts) {
                        }
                    });
                }
                while (!stop) {
                    ConsumerRecords<byte[], byte[]> recs = c.poll(Duration.ofMillis(100));
                    for (ConsumerRecord<byte[], byte[]> r : recs) {
                        OUT.println("rec\t" + name + "\t" + r.partition() + "\t" + r.offset() + "\t" + new String(r.value(), StandardCharsets.UTF_8));
                        seen.add(r.partition() + ":" + r.offset());
                    }
                    if (assign == null && !recs.isEmpty()) {
                        commit(c);
                    }
                    Map<TopicPartition, Long> pos = new HashMap<>();
                    try {
                        for (TopicPartition tp : c.assignment()) {
                            pos.put(tp, c.position(tp, Duration.ofSeconds(5)));
                        }
                    } catch (org.apache.kafka.common.errors.TimeoutException e) {
                        continue; // a position to look up while the server is away: the next round
                    }
                    positions = pos;
                }
            } catch (Throwable e) {
                failed = e;
            }
        }

        /** caughtUp: assigned some partitions, each at or past its end offset. */
        boolean caughtUp(Map<TopicPartition, Long> ends) {
            Map<TopicPartition, Long> pos = positions;
            return !pos.isEmpty() && pos.entrySet().stream().allMatch(e -> e.getValue() >= ends.get(e.getKey()));
        }

        /** committedTo: the committed offsets of all partitions are at or past ends. */
        boolean committedTo(Map<TopicPartition, Long> ends) {
            return ends.entrySet().stream().allMatch(e -> committed.getOrDefault(e.getKey(), -1L) >= e.getValue());
        }

        void finish() throws Exception {
            stop = true;
            join();
            if (failed != null) {
                throw new IllegalStateException("member " + name + " failed", failed);
            }
        }
    }

    private static Properties memberProps(String bootstrap, String group, String clientId) {
        return memberProps(bootstrap, group, clientId, "classic");
    }

    /**
     * memberProps with the group protocol: "consumer" is KIP-848's, whose
     * session and heartbeat settings are the coordinator's
     * (group.consumer.*), so the consumer refuses its own.
     */
    private static Properties memberProps(String bootstrap, String group, String clientId, String protocol) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        if (group != null && protocol.equals("consumer")) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        } else if (group != null) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            // Heartbeats often, so that a member learns of a rebalance soon.
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
        }
        return p;
    }

    /** await waits up to 120 s for cond, failing early when a member failed. */
    private static void await(String what, java.util.function.BooleanSupplier cond, Member... members) throws Exception {
        long deadline = System.currentTimeMillis() + 120_000;
        while (!cond.getAsBoolean()) {
            for (Member m : members) {
                if (m.failed != null) {
                    throw new IllegalStateException("member " + m.name + " failed while waiting until " + what, m.failed);
                }
            }
            if (System.currentTimeMillis() > deadline) {
                StringBuilder b = new StringBuilder();
                for (Member m : members) {
                    b.append(' ').append(m.name).append(": positions ").append(m.positions).append(" committed ").append(m.committed);
                }
                throw new IllegalStateException("not " + what + " after 120 s;" + b);
            }
            Thread.sleep(20);
        }
    }

    private static void createTopic(String bootstrap, String topic, int partitions) throws Exception {
        try (Admin a = admin(bootstrap)) {
            a.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        }
    }

    /** sendRound sends n records to each partition, values "P-N", and returns the end offsets their acks give. */
    private static Map<TopicPartition, Long> sendRound(KafkaProducer<byte[], byte[]> p, String topic, int partitions, int from, int n) throws Exception {
        List<java.util.concurrent.Future<RecordMetadata>> fs = new ArrayList<>();
        for (int i = from; i < from + n; i++) {
            for (int part = 0; part < partitions; part++) {
                byte[] v = (part + "-" + i).getBytes(StandardCharsets.UTF_8);
                fs.add(p.send(new ProducerRecord<>(topic, part, null, v)));
            }
        }
        Map<TopicPartition, Long> ends = new HashMap<>();
        for (var f : fs) {
            RecordMetadata md = f.get();
            ends.merge(new TopicPartition(topic, md.partition()), md.offset() + 1, Math::max);
        }
        return ends;
    }

    private static KafkaProducer<byte[], byte[]> idempotentProducer(String bootstrap) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        return new KafkaProducer<>(p);
    }

    private static String partitionList(Map<TopicPartition, Long> positions) {
        List<Integer> ps = new ArrayList<>();
        positions.keySet().forEach(tp -> ps.add(tp.partition()));
        ps.sort(null);
        StringBuilder b = new StringBuilder();
        for (int p : ps) {
            b.append(b.length() == 0 ? "" : ",").append(p);
        }
        return b.toString();
    }

    /** split: the members' assignments are disjoint, none empty, and cover all partitions. */
    private static boolean split(int partitions, Member... members) {
        Set<TopicPartition> all = new java.util.HashSet<>();
        int n = 0;
        for (Member m : members) {
            Map<TopicPartition, Long> pos = m.positions;
            if (pos.isEmpty()) {
                return false;
            }
            all.addAll(pos.keySet());
            n += pos.size();
        }
        return n == partitions && all.size() == partitions;
    }

    private static void groupPair(String bootstrap, String topic, int partitions, String group, String protocol) throws Exception {
        createTopic(bootstrap, topic, partitions);
        try (KafkaProducer<byte[], byte[]> p = idempotentProducer(bootstrap)) {
            Map<TopicPartition, Long> ends = sendRound(p, topic, partitions, 0, 10);
            Member a = new Member("a", topic, memberProps(bootstrap, group, "member-a", protocol), null, false);
            Member b = new Member("b", topic, memberProps(bootstrap, group, "member-b", protocol), null, false);
            try {
                a.start();
                final Map<TopicPartition, Long> first = ends;
                await("member a consumed the first round", () -> a.positions.size() == partitions && a.caughtUp(first), a);
                OUT.println("caught-up\ta");
                b.start();
                await("the partitions are split between a and b", () -> split(partitions, a, b), a, b);
                OUT.println("assigned\ta\t" + partitionList(a.positions));
                OUT.println("assigned\tb\t" + partitionList(b.positions));
                final Map<TopicPartition, Long> second = sendRound(p, topic, partitions, 10, 10);
                await("a and b consumed and committed the second round",
                        () -> split(partitions, a, b) && a.caughtUp(second) && b.caughtUp(second), a, b);
                OUT.println("stable");
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                while (in.readLine() != null) {
                    // the test describes the group meanwhile
                }
            } finally {
                a.stop = true;
                b.stop = true;
            }
            a.finish();
            b.finish();
        }
    }

    private static void sharePair(String bootstrap, String topic, int total, String group) throws Exception {
        createTopic(bootstrap, topic, 1);
        try (Admin a = admin(bootstrap)) {
            var r = new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.GROUP, group);
            var set = org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET;
            a.incrementalAlterConfigs(Map.of(r, List.of(
                    new org.apache.kafka.clients.admin.AlterConfigOp(new org.apache.kafka.clients.admin.ConfigEntry("share.auto.offset.reset", "earliest"), set),
                    new org.apache.kafka.clients.admin.AlterConfigOp(new org.apache.kafka.clients.admin.ConfigEntry("share.record.lock.duration.ms", "2000"), set)))).all().get();
        }
        produceShareRecords(bootstrap, topic, 0, total / 2);
        java.util.Set<Long> finished = java.util.concurrent.ConcurrentHashMap.newKeySet();
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicBoolean stalled = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicBoolean stallDone = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicBoolean half = new java.util.concurrent.atomic.AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (String name : List.of("a", "b")) {
            Thread th = new Thread(() -> {
                Properties props = new Properties();
                props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
                props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
                props.put(ConsumerConfig.CLIENT_ID_CONFIG, "share-" + name);
                props.put("share.acknowledgement.mode", "explicit");
                props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5");
                try (var c = new org.apache.kafka.clients.consumer.KafkaShareConsumer<byte[], byte[]>(props,
                        new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                    c.subscribe(List.of(topic));
                    int polls = 0;
                    while (!stop.get()) {
                        ConsumerRecords<byte[], byte[]> recs;
                        try {
                            recs = c.poll(Duration.ofMillis(100));
                        } catch (org.apache.kafka.common.KafkaException e) {
                            OUT.println("error\t" + name + "\tpoll\t" + e);
                            continue;
                        }
                        if (recs.isEmpty()) {
                            continue;
                        }
                        polls++;
                        Map<Long, String> acked = new TreeMap<>();
                        for (ConsumerRecord<byte[], byte[]> r : recs) {
                            int n = Integer.parseInt(new String(r.value(), StandardCharsets.UTF_8).substring(1));
                            short dc = r.deliveryCount().orElse((short) -1);
                            OUT.println("rec\t" + name + "\t" + r.offset() + "\t" + dc);
                            var type = org.apache.kafka.clients.consumer.AcknowledgeType.ACCEPT;
                            if (n % 10 == 0) {
                                type = org.apache.kafka.clients.consumer.AcknowledgeType.REJECT;
                            } else if (n % 7 == 0 && dc == 1) {
                                type = org.apache.kafka.clients.consumer.AcknowledgeType.RELEASE;
                            }
                            c.acknowledge(r, type);
                            acked.put(r.offset(), type.name());
                        }
                        if (name.equals("a") && polls == 3 && stalled.compareAndSet(false, true)) {
                            // Past the acquisition lock: these records go to b,
                            // and a's acknowledgements are refused.
                            Thread.sleep(3000);
                        }
                        boolean stalling = name.equals("a") && stalled.get() && !stallDone.get();
                        Map<org.apache.kafka.common.TopicIdPartition, java.util.Optional<org.apache.kafka.common.KafkaException>> res;
                        try {
                            res = c.commitSync();
                        } catch (org.apache.kafka.common.KafkaException e) {
                            OUT.println("error\t" + name + "\tcommit\t" + e);
                            continue;
                        } finally {
                            if (stalling) {
                                stallDone.set(true);
                            }
                        }
                        boolean ok = !res.isEmpty();
                        for (var e : res.values()) {
                            if (e.isPresent()) {
                                ok = false;
                                OUT.println("error\t" + name + "\tcommit\t" + e.get());
                            }
                        }
                        if (ok) {
                            for (var e : acked.entrySet()) {
                                OUT.println("done\t" + name + "\t" + e.getKey() + "\t" + e.getValue());
                                if (!e.getValue().equals("RELEASE")) {
                                    finished.add(e.getKey());
                                }
                            }
                        }
                        if (finished.size() == total / 2 && stallDone.get() && half.compareAndSet(false, true)) {
                            OUT.println("half");
                        }
                    }
                } catch (Throwable e) {
                    OUT.println("error\t" + name + "\tfatal\t" + e);
                }
            });
            th.start();
            threads.add(th);
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line = in.readLine(); // "more": the server restarted meanwhile
        if (!"more".equals(line)) {
            stop.set(true);
            throw new IllegalStateException("share-pair wants \"more\" once half is done, got " + line);
        }
        produceShareRecords(bootstrap, topic, total / 2, total);
        long deadline = System.currentTimeMillis() + 180_000;
        while (finished.size() < total) {
            if (System.currentTimeMillis() > deadline) {
                stop.set(true);
                throw new IllegalStateException("the share consumers finished " + finished.size() + " of " + total + " records");
            }
            Thread.sleep(20);
        }
        OUT.println("done-all");
        while (in.readLine() != null) {
            // the test describes the group meanwhile
        }
        stop.set(true);
        for (Thread th : threads) {
            th.join();
        }
    }

    /** produceShareRecords sends "v" + from .. "v" + (to - 1) to partition 0 of topic, in batches of 5. */
    private static void produceShareRecords(String bootstrap, String topic, int from, int to) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = idempotentProducer(bootstrap)) {
            for (int i = from; i < to; i++) {
                p.send(new ProducerRecord<>(topic, 0, null, ("v" + i).getBytes(StandardCharsets.UTF_8)));
                if (i % 5 == 4) {
                    p.flush(); // batches of 5: a fetch acquires about max.poll.records
                }
            }
            p.flush();
        }
    }

    private static void stream(String bootstrap, String topic, int partitions, String group, String protocol) throws Exception {
        createTopic(bootstrap, topic, partitions);
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < partitions; i++) {
            tps.add(new TopicPartition(topic, i));
        }
        Member x = new Member("x", topic, memberProps(bootstrap, null, "stream-x"), tps, false);
        Member y = new Member("y", topic, memberProps(bootstrap, group, "stream-y", protocol), null, true);
        x.start();
        y.start();
        List<java.util.concurrent.Future<RecordMetadata>> sent = new ArrayList<>();
        try {
            try (KafkaProducer<byte[], byte[]> p = idempotentProducer(bootstrap)) {
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                String line;
                while ((line = in.readLine()) != null) {
                    String[] f = line.split("\t", -1);
                    switch (f[0]) {
                        case "send" -> {
                            for (int i = Integer.parseInt(f[1]); i < Integer.parseInt(f[2]); i++) {
                                if (i != sent.size()) {
                                    throw new IllegalArgumentException("send " + i + " after " + sent.size() + " records");
                                }
                                byte[] k = ("k" + i).getBytes(StandardCharsets.UTF_8);
                                byte[] v = ("r" + i).getBytes(StandardCharsets.UTF_8);
                                sent.add(p.send(new ProducerRecord<>(topic, i % partitions, k, v)));
                            }
                        }
                        case "wait" -> {
                            int n = Integer.parseInt(f[1]);
                            await("x and y received " + n + " records", () -> x.seen.size() >= n && y.seen.size() >= n, x, y);
                            OUT.println("received\t" + n);
                        }
                        default -> throw new IllegalArgumentException("unknown stream line " + line);
                    }
                }
                p.flush();
                for (int i = 0; i < sent.size(); i++) {
                    RecordMetadata md = sent.get(i).get();
                    OUT.println("ack\t" + i + "\t" + md.partition() + "\t" + md.offset());
                }
            }
            Map<TopicPartition, Long> ends = new HashMap<>();
            for (TopicPartition tp : tps) {
                ends.put(tp, (long) (sent.size() / partitions + (tp.partition() < sent.size() % partitions ? 1 : 0)));
            }
            await("x and y received every record, and y committed them", () -> x.caughtUp(ends) && x.positions.size() == partitions
                    && x.seen.size() >= sent.size() && y.seen.size() >= sent.size() && y.committedTo(ends), x, y);
        } finally {
            x.stop = true;
            y.stop = true;
        }
        x.finish();
        y.finish();
        try (Admin a = admin(bootstrap)) {
            Map<TopicPartition, OffsetAndMetadata> m = a.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            for (TopicPartition tp : tps) {
                OffsetAndMetadata om = m.get(tp);
                OUT.println("committed\t" + tp.partition() + "\t" + (om == null ? -1 : om.offset()));
            }
        }
    }

    /** scram is the client properties of a SASL/SCRAM-SHA-256 login as user, password user + "-secret". */
    private static Properties scram(String bootstrap, String user) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", "SCRAM-SHA-256");
        p.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + user
                + "\" password=\"" + user + "-secret\";");
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        return p;
    }

    private static KafkaProducer<byte[], byte[]> userProducer(String bootstrap, String user, String txnID) {
        Properties p = scram(bootstrap, user);
        p.remove(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        if (txnID != null) {
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnID);
        } else {
            // Without idempotence a refused write is the topic's refusal
            // alone (an idempotent producer also needs WRITE on some topic
            // or IDEMPOTENT_WRITE on the cluster for its producer id).
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        }
        return new KafkaProducer<>(p);
    }

    private static KafkaConsumer<byte[], byte[]> userConsumer(String bootstrap, String user, String group) {
        Properties p = scram(bootstrap, user);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        if (group != null) {
            p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        }
        return new KafkaConsumer<>(p);
    }

    /** refusal names what e says: the first AuthorizationException among its causes, else e's own class. */
    private static String refusal(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof org.apache.kafka.common.errors.AuthorizationException) {
                return c.getClass().getSimpleName();
            }
        }
        Throwable c = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
        return c.getClass().getSimpleName() + " (" + String.valueOf(c.getMessage()).replace('\t', ' ').replace('\n', ' ') + ")";
    }

    private static void aclTable(String bootstrap) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            String[] f = line.split("\t", -1);
            String result;
            try {
                result = aclRow(bootstrap, f[1], f[2], f);
            } catch (Exception e) {
                result = refusal(e);
            }
            OUT.println("row\t" + f[0] + "\t" + result);
        }
    }

    private static String aclRow(String bootstrap, String user, String op, String[] f) throws Exception {
        switch (op) {
            case "produce" -> {
                try (KafkaProducer<byte[], byte[]> p = userProducer(bootstrap, user, null)) {
                    p.send(new ProducerRecord<>(f[3], 0, null, "v".getBytes(StandardCharsets.UTF_8))).get();
                }
            }
            case "read" -> {
                try (KafkaConsumer<byte[], byte[]> c = userConsumer(bootstrap, user, null)) {
                    TopicPartition tp = new TopicPartition(f[3], 0);
                    c.assign(List.of(tp));
                    c.seekToBeginning(List.of(tp));
                    long deadline = System.currentTimeMillis() + 20_000;
                    while (c.poll(Duration.ofMillis(200)).isEmpty()) {
                        if (System.currentTimeMillis() > deadline) {
                            return "no record after 20 s";
                        }
                    }
                }
            }
            case "consume" -> {
                try (KafkaConsumer<byte[], byte[]> c = userConsumer(bootstrap, user, f[4])) {
                    c.subscribe(List.of(f[3]));
                    long deadline = System.currentTimeMillis() + 30_000;
                    while (c.assignment().isEmpty()) {
                        c.poll(Duration.ofMillis(200));
                        if (System.currentTimeMillis() > deadline) {
                            return "no assignment after 30 s";
                        }
                    }
                    c.commitSync(Duration.ofSeconds(20));
                }
            }
            case "list-topics" -> {
                try (Admin a = Admin.create(scram(bootstrap, user))) {
                    List<String> names = new ArrayList<>(a.listTopics().names().get());
                    names.sort(Comparator.naturalOrder());
                    return "ok " + String.join(",", names);
                }
            }
            case "describe-topic" -> {
                try (Admin a = Admin.create(scram(bootstrap, user))) {
                    a.describeTopics(List.of(f[3])).allTopicNames().get();
                }
            }
            case "create-topic" -> {
                try (Admin a = Admin.create(scram(bootstrap, user))) {
                    a.createTopics(List.of(new NewTopic(f[3], 1, (short) 1))).all().get();
                }
            }
            case "delete-topic" -> {
                try (Admin a = Admin.create(scram(bootstrap, user))) {
                    a.deleteTopics(List.of(f[3])).all().get();
                }
            }
            case "describe-configs" -> {
                org.apache.kafka.common.config.ConfigResource.Type type = f[3].equals("broker")
                        ? org.apache.kafka.common.config.ConfigResource.Type.BROKER
                        : org.apache.kafka.common.config.ConfigResource.Type.TOPIC;
                try (Admin a = Admin.create(scram(bootstrap, user))) {
                    // A broker named "-" is the cluster's first node.
                    String name = f[4].equals("-") ? a.describeCluster().nodes().get().iterator().next().idString() : f[4];
                    a.describeConfigs(List.of(new org.apache.kafka.common.config.ConfigResource(type, name))).all().get();
                }
            }
            case "group-offsets" -> {
                try (Admin a = Admin.create(scram(bootstrap, user))) {
                    a.listConsumerGroupOffsets(f[3]).partitionsToOffsetAndMetadata().get();
                }
            }
            case "init-txn" -> {
                try (KafkaProducer<byte[], byte[]> p = userProducer(bootstrap, user, f[3])) {
                    p.initTransactions();
                }
            }
            case "txn" -> {
                try (KafkaProducer<byte[], byte[]> p = userProducer(bootstrap, user, f[3])) {
                    p.initTransactions();
                    p.beginTransaction();
                    java.util.concurrent.Future<RecordMetadata> sent = p.send(new ProducerRecord<>(f[4], 0, null, "t".getBytes(StandardCharsets.UTF_8)));
                    p.sendOffsetsToTransaction(Map.of(new TopicPartition(f[4], 0), new OffsetAndMetadata(0)),
                            new org.apache.kafka.clients.consumer.ConsumerGroupMetadata(f[5]));
                    p.commitTransaction();
                    sent.get();
                }
            }
            case "describe-acls" -> {
                try (Admin a = Admin.create(scram(bootstrap, user))) {
                    return "ok " + a.describeAcls(org.apache.kafka.common.acl.AclBindingFilter.ANY).values().get().size();
                }
            }
            case "create-acl" -> {
                try (Admin a = Admin.create(scram(bootstrap, user))) {
                    a.createAcls(List.of(new org.apache.kafka.common.acl.AclBinding(
                            new org.apache.kafka.common.resource.ResourcePattern(org.apache.kafka.common.resource.ResourceType.TOPIC, f[3],
                                    org.apache.kafka.common.resource.PatternType.LITERAL),
                            new org.apache.kafka.common.acl.AccessControlEntry("User:" + user, "*",
                                    org.apache.kafka.common.acl.AclOperation.ALL, org.apache.kafka.common.acl.AclPermissionType.ALLOW)))).all().get();
                }
            }
            default -> throw new IllegalArgumentException("unknown acl-table op " + op);
        }
        return "ok";
    }

    private static KafkaProducer<byte[], byte[]> ctpProducer(String bootstrap, String txnID) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnID);
        // A broker away longer than 5 s times the transaction's calls out.
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "5000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "3000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "8000");
        p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");
        KafkaProducer<byte[], byte[]> pr = new KafkaProducer<>(p);
        long deadline = System.currentTimeMillis() + 120_000;
        while (true) {
            try {
                pr.initTransactions();
                return pr;
            } catch (org.apache.kafka.common.errors.TimeoutException e) {
                // The broker is down: initTransactions may be called again.
                if (System.currentTimeMillis() > deadline) {
                    pr.close(Duration.ZERO);
                    throw e;
                }
            }
        }
    }

    private static void consumeTransformProduce(String bootstrap, String inTopic, String outTopic, String group, String txnID, int n,
            int pauseMs) throws Exception {
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        cp.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "25");
        cp.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        cp.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "15000");
        cp.put(ConsumerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");
        int commits = 0, aborted = 0, producers = 1;
        long deadline = System.currentTimeMillis() + 300_000;
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(cp)) {
            c.subscribe(List.of(inTopic));
            KafkaProducer<byte[], byte[]> p = ctpProducer(bootstrap, txnID);
            try {
                long done = 0;
                while (done < n) {
                    if (System.currentTimeMillis() > deadline) {
                        throw new IllegalStateException("only " + done + " of " + n + " committed after 300 s");
                    }
                    ConsumerRecords<byte[], byte[]> recs;
                    try {
                        recs = c.poll(Duration.ofMillis(200));
                    } catch (org.apache.kafka.common.KafkaException e) {
                        OUT.println("poll-failed\t" + refusal(e));
                        continue;
                    }
                    if (recs.isEmpty()) {
                        done = committedSum(c, inTopic, done);
                        continue;
                    }
                    Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
                    boolean began = false;
                    try {
                        p.beginTransaction();
                        began = true;
                        for (ConsumerRecord<byte[], byte[]> r : recs) {
                            byte[] v = ("t:" + new String(r.value(), StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8);
                            p.send(new ProducerRecord<>(outTopic, r.partition(), r.key(), v));
                            next.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                        }
                        p.sendOffsetsToTransaction(next, c.groupMetadata());
                        Thread.sleep(pauseMs);
                        p.commitTransaction();
                        commits++;
                        long sum = 0;
                        for (TopicPartition tp : c.assignment()) {
                            sum += c.position(tp);
                        }
                        OUT.println("committed\t" + sum);
                        done = Math.max(done, sum);
                        continue;
                    } catch (org.apache.kafka.common.errors.ProducerFencedException
                             | org.apache.kafka.common.errors.InvalidProducerEpochException
                             | org.apache.kafka.common.errors.OutOfOrderSequenceException
                             | org.apache.kafka.common.errors.AuthorizationException
                             | org.apache.kafka.common.errors.UnsupportedVersionException
                             | IllegalStateException fatal) {
                        OUT.println("aborted\t" + refusal(fatal));
                    } catch (org.apache.kafka.common.KafkaException e) {
                        OUT.println("aborted\t" + refusal(e));
                        if (began) {
                            try {
                                p.abortTransaction();
                                aborted++;
                                rewind(c);
                                continue;
                            } catch (org.apache.kafka.common.KafkaException | IllegalStateException ae) {
                                // IllegalStateException: a commit timed out (it
                                // may only be retried).
                                OUT.println("abort-failed\t" + refusal(ae));
                            }
                        }
                    }
                    // The producer cannot go on: a new one with the same
                    // transactional id ends what the old one left open.
                    aborted++;
                    p.close(Duration.ZERO);
                    p = ctpProducer(bootstrap, txnID);
                    producers++;
                    OUT.println("new-producer");
                    rewind(c);
                }
            } finally {
                p.close(Duration.ofSeconds(5));
            }
        }
        OUT.println("done\t" + commits + "\t" + aborted + "\t" + producers);
    }

    /** committedSum is the sum of the group's committed offsets of topic, or was when the broker cannot say. */
    private static long committedSum(KafkaConsumer<byte[], byte[]> c, String topic, long was) {
        try {
            Set<TopicPartition> tps = new java.util.HashSet<>();
            c.partitionsFor(topic).forEach(pi -> tps.add(new TopicPartition(topic, pi.partition())));
            long sum = 0;
            for (OffsetAndMetadata om : c.committed(tps).values()) {
                sum += om == null ? 0 : om.offset();
            }
            return sum;
        } catch (org.apache.kafka.common.KafkaException e) {
            return was;
        }
    }

    /** rewind seeks every assigned partition back to its committed offset, retrying while the broker is away. */
    private static void rewind(KafkaConsumer<byte[], byte[]> c) {
        long deadline = System.currentTimeMillis() + 120_000;
        while (true) {
            try {
                Set<TopicPartition> assigned = c.assignment();
                Map<TopicPartition, OffsetAndMetadata> committed = c.committed(assigned);
                for (TopicPartition tp : assigned) {
                    OffsetAndMetadata om = committed.get(tp);
                    if (om == null) {
                        c.seekToBeginning(List.of(tp));
                    } else {
                        c.seek(tp, om.offset());
                    }
                }
                return;
            } catch (org.apache.kafka.common.KafkaException e) {
                if (System.currentTimeMillis() > deadline) {
                    throw e;
                }
                OUT.println("rewind-retry\t" + refusal(e));
            }
        }
    }
}
