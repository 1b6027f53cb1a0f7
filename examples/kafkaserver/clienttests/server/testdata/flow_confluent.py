# The client flows of flowlib.py with confluent-kafka (librdkafka), for
# flows_librdkafka_test.go; flowlib.py lists the modes and their
# arguments. FLOW_ASSIGNOR in the environment, when set, is the group
# members' partition.assignment.strategy (librdkafka's default: range,
# roundrobin); FLOW_GROUP_PROTOCOL=consumer makes them KIP-848 members
# (group.protocol=consumer), FLOW_ASSIGNOR then their
# group.remote.assignor.
#
#   [FLOW_GROUP_PROTOCOL=consumer] [FLOW_ASSIGNOR=cooperative-sticky] python3 flow_confluent.py MODE [BOOTSTRAP ARGS...]
import os
import sys

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

import flowlib


class Client:
    FEATURES = {"idempotence": True, "transactions": True}

    def __init__(self, bootstrap):
        self.conf = {"bootstrap.servers": bootstrap}

    def create(self, topic, partitions):
        admin = AdminClient(self.conf)  # kept alive until its answer
        admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)

    def producer(self, idempotent=None, transactional_id=None):
        conf = dict(self.conf, **{"linger.ms": 5, "acks": "all"})
        if idempotent is not None:
            conf["enable.idempotence"] = idempotent
        if transactional_id:
            conf["transactional.id"] = transactional_id
        return Sender(Producer(conf))

    def consumer(self, group=None, isolation=None):
        conf = dict(self.conf, **{"group.id": group or "flow-unused", "auto.offset.reset": "earliest",
                                  "enable.auto.commit": False})
        if isolation:
            conf["isolation.level"] = isolation
        if os.environ.get("FLOW_GROUP_PROTOCOL") == "consumer":
            # KIP-848: the coordinator assigns; librdkafka refuses the
            # classic protocol's assignor setting with it.
            conf["group.protocol"] = "consumer"
            if os.environ.get("FLOW_ASSIGNOR"):
                conf["group.remote.assignor"] = os.environ["FLOW_ASSIGNOR"]
        elif os.environ.get("FLOW_ASSIGNOR"):
            conf["partition.assignment.strategy"] = os.environ["FLOW_ASSIGNOR"]
        return Reader(Consumer(conf))


class Sender(flowlib.Wrapper):
    failed = []

    def send(self, topic, key, value, partition, timestamp):
        self.w.produce(topic, key=key, value=value, partition=partition, timestamp=timestamp or 0,
                       on_delivery=lambda err, _: err and self.failed.append(err))

    def flush(self):
        if self.w.flush(60) or self.failed:
            sys.exit("delivery failed: %s" % (self.failed or "timed out"))

    def init_transactions(self):
        self.w.init_transactions(30)

    def begin(self):
        self.w.begin_transaction()

    def commit(self):
        self.w.commit_transaction(30)

    def abort(self):
        self.w.abort_transaction(30)

    def send_offsets(self, topic, partition, offset, c):
        self.w.send_offsets_to_transaction([TopicPartition(topic, partition, offset)], c.w.consumer_group_metadata(), 30)


class Reader(flowlib.Wrapper):
    def assign(self, topic, offsets):
        self.w.assign([TopicPartition(topic, p, OFFSET_BEGINNING if o is None else o) for p, o in offsets.items()])

    def subscribe(self, topic, on_revoke=None):
        if on_revoke:
            self.w.subscribe([topic], on_revoke=on_revoke, on_lost=on_revoke)
        else:
            self.w.subscribe([topic])

    def poll(self):
        m = self.w.poll(0.1)
        if m is None:
            return []
        if m.error():
            if m.error().fatal():
                raise KafkaException(m.error())
            print("consumer: %s" % m.error(), file=sys.stderr)  # a broker down, for one
            return []
        return [(m.partition(), m.offset(), m.key(), m.value())]

    def partitions(self):
        return sorted(tp.partition for tp in self.w.assignment())

    def commit(self):
        try:
            self.w.commit(asynchronous=False)
        except KafkaException as e:
            if e.args[0].code() not in (KafkaError.UNKNOWN_MEMBER_ID, KafkaError.ILLEGAL_GENERATION):
                raise
            return False
        return True

    def offsets_for_times(self, topic, times):
        found = self.w.offsets_for_times([TopicPartition(topic, p, ts) for p, ts in times.items()], 30)
        return {tp.partition: tp.offset for tp in found}


flowlib.main(Client)
