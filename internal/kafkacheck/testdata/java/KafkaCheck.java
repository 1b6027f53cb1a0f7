import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
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
 * cannot express, driven by the Go tests of internal/kafkacheck through
 * arguments and tab-separated lines. Bytes travel base64-encoded, "-" is
 * null. Every command prints "ok" as its last line when it succeeded.
 *
 * <pre>
 * ready BOOTSTRAP                                   wait until the broker serves
 * create-topic BOOTSTRAP TOPIC PARTITIONS [k=v...]  create a topic with configs
 * create-topics BOOTSTRAP                           stdin lines "TOPIC PARTITIONS [k=v...]": create them all
 * produce BOOTSTRAP [k=v...]                        producer properties; stdin lines:
 *     send TOPIC PARTITION KEY VALUE [HKEY HVALUE...]   prints "ack PARTITION OFFSET"
 *     flush | init | begin | commit | abort
 *     offsets GROUP TOPIC PARTITION OFFSET           sendOffsetsToTransaction
 *     use NAME [k=v...]                              the following lines go to producer NAME, made on
 *                                                    first use with these properties on top of the
 *                                                    command's (lines before the first use go to a
 *                                                    producer with the command's properties); every
 *                                                    producer is flushed and closed at the end
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
                    case "send" -> {
                        List<Header> headers = new ArrayList<>();
                        for (int i = 5; i + 1 < f.length; i += 2) {
                            headers.add(new RecordHeader(new String(dec(f[i]), StandardCharsets.UTF_8), dec(f[i + 1])));
                        }
                        Integer partition = f[2].equals("-") ? null : Integer.valueOf(f[2]);
                        pending.add(producer.send(new ProducerRecord<>(f[1], partition, null, dec(f[3]), dec(f[4]), headers)));
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
                    StringBuilder b = new StringBuilder("rec\t").append(r.partition()).append('\t').append(r.offset())
                            .append('\t').append(r.timestamp()).append('\t').append(r.timestampType().name)
                            .append('\t').append(enc(r.key())).append('\t').append(enc(r.value()));
                    for (Header h : r.headers()) {
                        b.append('\t').append(enc(h.key().getBytes(StandardCharsets.UTF_8))).append('\t').append(enc(h.value()));
                    }
                    OUT.println(b);
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

    private static void read(String bootstrap, String[] args) throws Exception {
        for (String isolation : List.of("read_uncommitted", "read_committed")) {
            try (KafkaConsumer<byte[], byte[]> c = consumer(bootstrap, isolation, null)) {
                List<TopicPartition> tps = new ArrayList<>();
                for (int i = 2; i < args.length; i++) {
                    String topic = args[i];
                    c.partitionsFor(topic).forEach(pi -> tps.add(new TopicPartition(topic, pi.partition())));
                }
                tps.sort((x, y) -> x.topic().equals(y.topic()) ? Integer.compare(x.partition(), y.partition()) : x.topic().compareTo(y.topic()));
                Map<TopicPartition, Long> ends = c.endOffsets(tps);
                for (TopicPartition tp : tps) {
                    OUT.println("end\t" + isolation + "\t" + tp.topic() + "\t" + tp.partition() + "\t" + ends.get(tp));
                }
                c.assign(tps);
                c.seekToBeginning(tps);
                long deadline = System.currentTimeMillis() + 60_000;
                while (true) {
                    boolean done = true;
                    for (TopicPartition tp : tps) {
                        done = done && c.position(tp) >= ends.get(tp);
                    }
                    if (done) {
                        break;
                    }
                    if (System.currentTimeMillis() > deadline) {
                        throw new IllegalStateException("not caught up with " + ends + " after 60 s");
                    }
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                        StringBuilder b = new StringBuilder("record\t").append(isolation).append('\t').append(r.topic())
                                .append('\t').append(r.partition()).append('\t').append(r.offset())
                                .append('\t').append(r.leaderEpoch().orElse(-1))
                                .append('\t').append(r.timestamp()).append('\t').append(r.timestampType().name)
                                .append('\t').append(enc(r.key())).append('\t').append(enc(r.value()));
                        for (Header h : r.headers()) {
                            b.append('\t').append(enc(h.key().getBytes(StandardCharsets.UTF_8))).append('\t').append(enc(h.value()));
                        }
                        OUT.println(b);
                    }
                }
            }
        }
    }

    private static void committed(String bootstrap, String[] args) throws Exception {
        try (Admin a = admin(bootstrap)) {
            for (int i = 2; i < args.length; i++) {
                String group = args[i];
                Map<TopicPartition, OffsetAndMetadata> m = a.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
                List<TopicPartition> tps = new ArrayList<>(m.keySet());
                tps.sort((x, y) -> x.topic().equals(y.topic()) ? Integer.compare(x.partition(), y.partition()) : x.topic().compareTo(y.topic()));
                for (TopicPartition tp : tps) {
                    OffsetAndMetadata om = m.get(tp);
                    if (om != null) {
                        OUT.println("committed\t" + group + "\t" + tp.topic() + "\t" + tp.partition() + "\t" + om.offset()
                                + "\t" + om.leaderEpoch().orElse(-1) + "\t" + om.metadata());
                    }
                }
            }
        }
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
            Map<TopicPartition, OffsetAndMetadata> m = a.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            List<TopicPartition> tps = new ArrayList<>(m.keySet());
            tps.sort((x, y) -> x.topic().equals(y.topic()) ? Integer.compare(x.partition(), y.partition()) : x.topic().compareTo(y.topic()));
            for (TopicPartition tp : tps) {
                OffsetAndMetadata om = m.get(tp);
                if (om != null) {
                    OUT.println("off\t" + tp.topic() + "\t" + tp.partition() + "\t" + om.offset() + "\t" + om.metadata());
                }
            }
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
}
