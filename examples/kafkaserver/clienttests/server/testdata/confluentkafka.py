# Produces n keyed records with confluent-kafka (librdkafka; acks=all,
# idempotent, the codec given), then reads the topic back in a consumer
# group from the earliest offset, commits, and prints each record as
# key:value, one per line, sorted.
#
#   python3 confluentkafka.py BOOTSTRAP TOPIC CODEC N GROUP
import sys

from confluent_kafka import Consumer, Producer

bootstrap, topic, codec, n, group = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
errors = []


def delivered(err, msg):
    if err is not None:
        errors.append(err)


p = Producer({"bootstrap.servers": bootstrap, "compression.type": codec, "enable.idempotence": True,
              "linger.ms": 5})
for i in range(n):
    p.produce(topic, key=b"k%d" % (i % 7), value=b"value %d" % i, on_delivery=delivered)
p.flush(30)
if errors:
    sys.exit("delivery failed: %s" % errors[0])

c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
              "enable.auto.commit": False})
c.subscribe([topic])
got = []
idle = 0
while len(got) < n and idle < 100:
    m = c.poll(0.2)
    if m is None:
        idle += 1
        continue
    if m.error():
        sys.exit("consume failed: %s" % m.error())
    got.append("%s:%s" % (m.key().decode(), m.value().decode()))
c.commit(asynchronous=False)
c.close()
for line in sorted(got):
    print(line)
