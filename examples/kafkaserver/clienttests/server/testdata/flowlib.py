# The client flows that flows_test.go checks, written once for the Python
# clients: flow_confluent.py (confluent-kafka) and flow_kafkapython.py
# (kafka-python) each hand main() a Client class, and every flow prints
# the same lines whatever the client (a record as "TAG PARTITION OFFSET
# KEY VALUE"); flows_test.go says what each flow does. Any error ends the
# script non-zero.
#
#   python3 flow_CLIENT.py features
#   python3 flow_CLIENT.py times BOOTSTRAP TOPIC BASE_MS
#   python3 flow_CLIENT.py group BOOTSTRAP TOPIC GROUP
#   python3 flow_CLIENT.py restart BOOTSTRAP TOPIC GROUP N plain|idempotent
#   python3 flow_CLIENT.py txn BOOTSTRAP TOPIC GROUP
#
# A Client(bootstrap) has FEATURES ({"idempotence": bool, "transactions":
# bool}), create(topic, partitions), producer(idempotent=None,
# transactional_id=None) and consumer(group=None, isolation=None).
# A producer has send(topic, key, value, partition, timestamp_or_None),
# flush() (raising if a delivery failed), init_transactions(), begin(),
# commit(), abort() and send_offsets(topic, partition, offset, consumer).
# A consumer has assign(topic, {partition: offset, or None for the
# earliest}), subscribe(topic, on_revoke=None), poll() (a list of
# (partition, offset, key, value)), partitions() (those it holds, sorted),
# commit() (False when the group no longer knows the member),
# offsets_for_times(topic, {partition: ms}) ({partition: offset, -1 for
# none}) and close(); it may have know(topic), which the group and
# transaction flows call before subscribing (flow_kafkapython.py says
# why).
import collections
import sys
import threading
import time

got = collections.Counter()  # records read, by consumer name
assigned = {}  # how many partitions each consumer holds, by name


def out(*words):
    print(*words, flush=True)


def send(p, topic, i, value=None, partition=None, timestamp=None):
    """Sends record i: key k<i>, value v<i>, to partition i%2 unless told."""
    p.send(topic, b"k%d" % i, (value or "v%d" % i).encode(), i % 2 if partition is None else partition, timestamp)


def pump(members, done, show=True):
    """Polls each consumer (name → consumer) in a thread of its own until
    done(), printing each record as NAME PARTITION OFFSET KEY VALUE;
    returns them. (kafka-python 2.0.2's poll blocks in a rejoin whatever
    its timeout: one thread polling two members would wait for itself.)"""
    recs, lock, end = [], threading.Lock(), time.time() + 60  # before the test gives up

    def run(name, c):
        while not done() and time.time() < end:
            for r in c.poll():
                with lock:
                    got[name] += 1
                    recs.append(r)
                    if show:
                        out(name, r[0], r[1], r[2].decode(), r[3].decode())
            assigned[name] = len(c.partitions())

    threads = [threading.Thread(target=run, args=m) for m in members.items()]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if not done():
        sys.exit("timed out; read %s" % dict(got))
    return recs


def times(k, topic, base):
    base = int(base)
    k.create(topic, 2)
    p = k.producer()
    for i in range(10):
        send(p, topic, i, timestamp=base + 10 * i)
    p.flush()
    c = k.consumer()
    c.assign(topic, {0: None, 1: None})
    pump({"earliest": c}, lambda: got["earliest"] == 10)
    found = {}
    for tag, ts in (("time", base + 40), ("late", base + 1000)):
        for part, offset in sorted(c.offsets_for_times(topic, {0: ts, 1: ts}).items()):
            out(tag, part, offset)
            if tag == "time":
                found[part] = offset
    c.assign(topic, found)
    pump({"bytime": c}, lambda: got["bytime"] == 6)
    c.close()


def group(k, topic, group_id):
    k.create(topic, 2)
    p = k.producer()

    def produce(numbers):
        for i in numbers:
            send(p, topic, i)
        p.flush()

    def member():
        c = k.consumer(group_id)
        know(c, topic)
        c.subscribe(topic)
        return c

    produce(range(10))
    c1 = member()
    pump({"c1": c1}, lambda: got["c1"] == 10)
    c1.commit()
    both = {"c1": c1, "c2": member()}
    pump(both, lambda: assigned.get("c1") == 1 and assigned.get("c2") == 1)
    for name, c in both.items():
        out("member", name, c.partitions()[0])
    produce(range(10, 20))
    pump(both, lambda: got["c1"] + got["c2"] == 20)
    for c in both.values():
        c.commit()
        c.close()
    produce(range(20, 30))
    c3 = member()
    pump({"c3": c3}, lambda: got["c3"] == 10)
    c3.commit()
    c3.close()


def restart(k, topic, group_id, n, mode):
    n = int(n)
    k.create(topic, 2)
    p = k.producer(idempotent=mode == "idempotent")
    c = k.consumer(group_id)
    restarted = []

    def lost(*_):  # Kafka's broker keeps a group's members across a restart
        if restarted:
            out("lost-member")

    c.subscribe(topic, on_revoke=lost)
    for i in range(n // 2):
        send(p, topic, i)
    p.flush()
    pump({"c1": c}, lambda: got["c1"] == n // 2)
    c.commit()
    for i in range(n // 2, n):
        send(p, topic, i)  # in flight across the restart when idempotent
    if mode != "idempotent":
        p.flush()
    out("restart")
    sys.stdin.readline()
    restarted.append(True)
    p.flush()
    pump({"c1": c}, lambda: got["c1"] == n)
    if not c.commit():
        lost()
    restarted.clear()  # closing revokes too
    c.close()


def txn(k, topic, group_id):
    k.create(topic, 1)
    k.create(topic + "-copy", 1)
    p = k.producer(transactional_id=topic + "-tx")
    p.init_transactions()
    for prefix, numbers, commit in (("c", range(5), True), ("a", range(5), False), ("c", range(5, 10), True)):
        p.begin()
        for i in numbers:
            send(p, topic, i, value="%s%d" % (prefix, i), partition=0)
        p.flush()  # the aborted records are written before the abort
        if commit:
            p.commit()
        else:
            p.abort()
    for tag, level, n in (("committed", "read_committed", 10), ("uncommitted", "read_uncommitted", 15)):
        c = k.consumer(isolation=level)
        c.assign(topic, {0: None})
        pump({tag: c}, lambda: got[tag] == n)
        c.close()
    # Consume, transform, produce: the copy and the group's offset commit
    # together.
    c = k.consumer(group_id, isolation="read_committed")
    know(c, topic)
    c.subscribe(topic)
    recs = pump({"copy": c}, lambda: got["copy"] == 10, show=False)
    p.begin()
    for part, offset, key, value in recs:
        p.send(topic + "-copy", key, b"copy " + value, 0, None)
    p.send_offsets(topic, 0, recs[-1][1] + 1, c)
    p.commit()
    p.flush()
    c.close()


class Wrapper:
    """A client's producer or consumer w, for a Client to give its methods
    the names above; the methods it does not define are w's own (close,
    init_transactions)."""

    def __init__(self, w):
        self.w = w

    def __getattr__(self, name):
        return getattr(self.w, name)


def main(client):
    mode = sys.argv[1]
    if mode == "features":
        for name, yes in sorted(client.FEATURES.items()):
            out(name, "yes" if yes else "no")
        return
    flow = {"times": times, "group": group, "restart": restart, "txn": txn}[mode]
    flow(client(sys.argv[2]), *sys.argv[3:])


def know(c, topic):
    """Lets a consumer that needs it learn topic's metadata before it
    subscribes (see know in flow_kafkapython.py)."""
    if hasattr(c, "know"):
        c.know(topic)
