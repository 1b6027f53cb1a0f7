# Produces n records with confluent-kafka (librdkafka) over SASL/OAUTHBEARER
# with librdkafka's unsecured JWT (principal alice, scope kafka), one a
# SPACING seconds, then reads them back in a consumer group; prints each
# value, one per line, in order.
#
#   python3 oauth_confluent.py BOOTSTRAP TOPIC N GROUP SPACING
import sys
import time

from confluent_kafka import Consumer, Producer

bootstrap, topic, n, group, spacing = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
sasl = {"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "OAUTHBEARER",
        "enable.sasl.oauthbearer.unsecure.jwt": True, "sasl.oauthbearer.config": "principal=alice scope=kafka"}
errors = []


def delivered(err, msg):
    if err is not None:
        errors.append(err)


p = Producer(dict(sasl, **{"linger.ms": 0}))
for i in range(n):
    p.produce(topic, value=b"%d" % i, on_delivery=delivered)
    p.flush(30)
    time.sleep(spacing)
if errors:
    sys.exit("delivery failed: %s" % errors[0])

c = Consumer(dict(sasl, **{"group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False}))
c.subscribe([topic])
got = []
deadline = time.time() + 60
while len(got) < n and time.time() < deadline:
    m = c.poll(0.5)
    if m is None:
        continue
    if m.error():
        sys.exit("consume failed: %s" % m.error())
    got.append(m.value().decode())
c.close()
for v in got:
    print(v)
