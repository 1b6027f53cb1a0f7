# The client flows of flowlib.py with kafka-python, for
# flows_kafkapython_test.go, which runs them with Debian's 2.0.2 (neither
# idempotence nor transactions: "features" says so) and PyPI's latest;
# flowlib.py lists the modes and their arguments:
#
#   python3 flow_kafkapython.py MODE [BOOTSTRAP ARGS...]
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.consumer.subscription_state import ConsumerRebalanceListener
from kafka.errors import CommitFailedError
from kafka.structs import OffsetAndMetadata

import flowlib


class Client:
    FEATURES = {"idempotence": "enable_idempotence" in KafkaProducer.DEFAULT_CONFIG,
                "transactions": hasattr(KafkaProducer, "init_transactions")}

    def __init__(self, bootstrap):
        self.bootstrap = bootstrap

    def create(self, topic, partitions):
        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap)
        admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])
        admin.close()

    def producer(self, idempotent=None, transactional_id=None):
        conf = {}
        if idempotent:
            conf["enable_idempotence"] = True
        elif idempotent is not None:  # one request in flight, so that a retry cannot reorder
            conf.update(retries=10, max_in_flight_requests_per_connection=1)
            if self.FEATURES["idempotence"]:
                conf["enable_idempotence"] = False
        if transactional_id:
            conf["transactional_id"] = transactional_id
        return Sender(KafkaProducer(bootstrap_servers=self.bootstrap, acks="all", linger_ms=5, **conf))

    def consumer(self, group=None, isolation=None):
        conf = {"isolation_level": isolation} if isolation else {}
        if group:
            # The rebalance timeout: a member closed in the middle of a
            # rebalance without leaving is kept that long, as Kafka's
            # broker keeps it; 20 s instead of the default 5 minutes keeps
            # the flows' waits (60 s each) above it.
            conf["max_poll_interval_ms"] = 20000
        return Reader(KafkaConsumer(bootstrap_servers=self.bootstrap, group_id=group, auto_offset_reset="earliest",
                                    enable_auto_commit=False, **conf))


class Sender(flowlib.Wrapper):
    sent = []

    def send(self, topic, key, value, partition, timestamp):
        self.sent.append(self.w.send(topic, key=key, value=value, partition=partition, timestamp_ms=timestamp))

    def flush(self):
        self.w.flush(60)
        for f in self.sent:
            if not f.succeeded():
                raise SystemExit("delivery failed: %s" % f.exception)

    def begin(self):
        self.w.begin_transaction()

    def commit(self):
        self.w.commit_transaction()

    def abort(self):
        self.w.abort_transaction()

    def send_offsets(self, topic, partition, offset, c):
        self.w.send_offsets_to_transaction({TopicPartition(topic, partition): OffsetAndMetadata(offset, "", -1)},
                                           c.w.group_metadata())


class Revoked(ConsumerRebalanceListener):
    def __init__(self, on_revoke):
        self.on_revoke = on_revoke

    def on_partitions_revoked(self, revoked):
        self.on_revoke()

    def on_partitions_lost(self, lost):
        self.on_revoke()

    def on_partitions_assigned(self, assigned):
        pass


class Reader(flowlib.Wrapper):
    def assign(self, topic, offsets):
        tps = [TopicPartition(topic, p) for p in offsets]
        self.w.assign(tps)
        for tp in tps:
            if offsets[tp.partition] is None:
                self.w.seek_to_beginning(tp)
            else:
                self.w.seek(tp, offsets[tp.partition])

    def know(self, topic):
        """Fetches the topic's metadata before a subscription (flowlib's
        group and transaction flows call it): kafka-python 3.0.12
        otherwise joins before it knows the topic's partitions, assigns
        nothing, joins again ~200 ms later, and at times then stops
        heartbeating and fetching for good (4 of 20 runs of the group flow
        here, and in the transaction flow; the server sees its session
        expire). Kafka's broker delays a new group's first rebalance 3 s
        (group.initial.rebalance.delay.ms), which hides it; this server's
        groups start at once. (The restart flow does without: primed, the
        client rejoined after every restart.)"""
        deadline = time.time() + 30
        while not self.w.partitions_for_topic(topic) and time.time() < deadline:
            time.sleep(0.05)

    def subscribe(self, topic, on_revoke=None):
        self.w.subscribe([topic], listener=Revoked(on_revoke) if on_revoke else None)

    def poll(self):
        return [(r.partition, r.offset, r.key, r.value) for rs in self.w.poll(timeout_ms=100).values() for r in rs]

    def partitions(self):
        return sorted(tp.partition for tp in self.w.assignment())

    def commit(self):
        try:
            self.w.commit()
        except CommitFailedError:
            return False
        return True

    def offsets_for_times(self, topic, times):
        found = self.w.offsets_for_times({TopicPartition(topic, p): ts for p, ts in times.items()})
        return {tp.partition: -1 if ot is None else ot.offset for tp, ot in found.items()}


flowlib.main(Client)
