# A confluent-kafka (librdkafka) share consumer in explicit acknowledgement
# mode: it polls the topic in the share group until the file STOP exists,
# acknowledges each record as the Go test's plan says (a fifth released
# at their first delivery, a tenth rejected, the others accepted; FNV-1a
# of the key, modulo 10: 0 and 1 release, 2 rejects), commits after each
# poll, and prints "key delivery_count ack" per record as it goes, then
# "ERROR ..." for each acknowledgement the group refused, then closes.
#
#   python3 shareconsumer_confluent.py BOOTSTRAP GROUP TOPIC STOP
import os
import sys

from confluent_kafka import AcknowledgeType, ShareConsumer

bootstrap, group, topic, stop = sys.argv[1:5]


def plan(key, count):
    h = 0x811C9DC5
    for b in key:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    if count > 1:
        return AcknowledgeType.ACCEPT
    return {0: AcknowledgeType.RELEASE, 1: AcknowledgeType.RELEASE, 2: AcknowledgeType.REJECT}.get(
        h % 10, AcknowledgeType.ACCEPT)


errors = []


def committed(offsets, err):
    if err is not None:
        errors.append("%s %s" % (offsets, err))


c = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group, "share.acknowledgement.mode": "explicit",
                   "client.id": "librdkafka"})
c.set_acknowledgement_commit_callback(committed)
c.subscribe([topic])
while not os.path.exists(stop):
    msgs = c.poll(0.2)
    for m in msgs:
        if m.error():
            sys.exit("poll failed: %s" % m.error())
        ack = plan(m.key(), m.delivery_count())
        c.acknowledge(m, ack)
        print("%s %d %d" % (m.key().decode(), m.delivery_count(), int(ack)), flush=True)
    if len(msgs) > 0:
        for tp, err in c.commit_sync(30).items():
            if err is not None:
                errors.append("%s %s" % (tp, err))
c.close()
for e in errors:
    print("ERROR %s" % e, flush=True)
