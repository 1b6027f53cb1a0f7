# Produces n keyed records with kafka-python (acks=all, the codec given),
# then reads partition 0 back from the beginning with a groupless consumer
# and prints each record as key:value, one per line.
#
#   python3 kafkapython.py BOOTSTRAP TOPIC CODEC N
import sys

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

bootstrap, topic, codec, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all",
                         compression_type=None if codec == "none" else codec)
for i in range(n):
    producer.send(topic, key=b"k%d" % (i % 7), value=b"value %d" % i)
producer.flush()
producer.close()

consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None,
                         enable_auto_commit=False, consumer_timeout_ms=20000)
tp = TopicPartition(topic, 0)
consumer.assign([tp])
consumer.seek_to_beginning(tp)
got = 0
for m in consumer:
    sys.stdout.write("%s:%s\n" % (m.key.decode(), m.value.decode()))
    got += 1
    if got == n:
        break
consumer.close()
