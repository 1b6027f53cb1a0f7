// The client flows of kafkajs, one per mode, that flows_kafkajs_test.go
// runs against the server. The modes are those of the Python flow
// scripts (testdata/flow_confluent.py), printing the same lines (a
// record as "TAG PARTITION OFFSET KEY VALUE"), so that flows_test.go
// checks them; flows_kafkajs_test.go says where kafkajs differs. Any
// error ends the script non-zero.
//
//   node flows.js features
//   node flows.js times BOOTSTRAP TOPIC BASE_MS
//   node flows.js group BOOTSTRAP TOPIC GROUP
//   node flows.js restart BOOTSTRAP TOPIC GROUP N plain|idempotent
//   node flows.js txn BOOTSTRAP TOPIC GROUP
const readline = require('readline');
const { Kafka, logLevel } = require('kafkajs');

const flowTimeoutMs = 90000;
const got = {}; // records read, by consumer name

function out(...words) {
  process.stdout.write(words.join(' ') + '\n');
}

function client(bootstrap) {
  // Quick retries that outlast a restart of the server.
  return new Kafka({ clientId: 'kafkajs-flows', brokers: [bootstrap], logLevel: logLevel.ERROR,
    retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 20 } });
}

async function create(kafka, topic, partitions) {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
  await admin.disconnect();
}

// record is record i: key k<i>, value v<i> (or the value given), to
// partition i%2 unless told.
function record(i, { value, partition, timestamp } = {}) {
  const m = { key: `k${i}`, value: value || `v${i}`, partition: partition === undefined ? i % 2 : partition };
  if (timestamp !== undefined) {
    m.timestamp = String(timestamp);
  }
  return m;
}

function range(from, to) {
  return Array.from({ length: to - from }, (_, k) => from + k);
}

async function until(done, what) {
  const end = Date.now() + flowTimeoutMs;
  while (!done()) {
    if (Date.now() > end) {
      throw new Error(`timed out waiting for ${what}; read ${JSON.stringify(got)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// member is a consumer in a group that prints each record it reads as
// NAME PARTITION OFFSET KEY VALUE (unless show is false), keeps them,
// commits each synchronously before counting it (unless commit is
// false), and keeps its last assignment. onJoin is called at each join
// of the group, onCrash at each crash, onStop when the consumer stops
// after an error it does not restart after.
async function member(kafka, name, topic, group, { show = true, commit = true, readUncommitted = false, fromBeginning = true, onJoin, onCrash, onStop } = {}) {
  const c = kafka.consumer({ groupId: group, readUncommitted, heartbeatInterval: 100, maxWaitTimeInMs: 100 });
  const m = { consumer: c, assigned: null, messages: [] };
  got[name] = got[name] || 0;
  c.on(c.events.GROUP_JOIN, (e) => {
    m.assigned = e.payload.memberAssignment[topic] || [];
    if (onJoin) {
      onJoin(e);
    }
  });
  c.on(c.events.CRASH, (e) => {
    process.stderr.write(`${name}: crash: ${e.payload.error} (restart: ${e.payload.restart})\n`);
    if (onCrash) {
      onCrash(e);
    }
    if (!e.payload.restart && onStop) {
      onStop(e);
    }
  });
  await c.connect();
  await c.subscribe({ topic, fromBeginning });
  await c.run({
    autoCommit: false,
    eachMessage: async ({ partition, message }) => {
      if (commit) {
        await c.commitOffsets([{ topic, partition, offset: String(BigInt(message.offset) + 1n) }]);
      }
      m.messages.push({ partition, message });
      if (show) {
        out(name, partition, message.offset, message.key.toString(), message.value.toString());
      }
      got[name]++;
    },
  });
  return m;
}

async function times(bootstrap, topic, baseArg) {
  const base = parseInt(baseArg, 10);
  const kafka = client(bootstrap);
  await create(kafka, topic, 2);
  const p = kafka.producer();
  await p.connect();
  await p.send({ topic, acks: -1, messages: range(0, 10).map((i) => record(i, { timestamp: base + 10 * i })) });
  await p.disconnect();
  const earliest = await member(kafka, 'earliest', topic, `${topic}-earliest`, { commit: false });
  await until(() => got.earliest === 10, '10 records from the earliest offsets');
  await earliest.consumer.disconnect();

  const admin = kafka.admin();
  await admin.connect();
  let found;
  for (const [tag, ts] of [['time', base + 40], ['late', base + 1000]]) {
    const offsets = await admin.fetchTopicOffsetsByTimestamp(topic, ts);
    offsets.sort((a, b) => a.partition - b.partition);
    for (const { partition, offset } of offsets) {
      out(tag, partition, offset);
    }
    if (tag === 'time') {
      found = offsets;
    }
  }
  await admin.disconnect();
  const bytime = await member(kafka, 'bytime', topic, `${topic}-bytime`, { commit: false, fromBeginning: false });
  for (const { partition, offset } of found) {
    bytime.consumer.seek({ topic, partition, offset });
  }
  await until(() => got.bytime === 6, '6 records from the offsets for a time');
  await bytime.consumer.disconnect();
}

async function group(bootstrap, topic, groupId) {
  const kafka = client(bootstrap);
  await create(kafka, topic, 2);
  const p = kafka.producer();
  await p.connect();
  const send = (from, to) => p.send({ topic, acks: -1, messages: range(from, to).map((i) => record(i)) });
  await send(0, 10);
  const c1 = await member(kafka, 'c1', topic, groupId);
  await until(() => got.c1 === 10, 'c1 to read 10 records');
  const c2 = await member(kafka, 'c2', topic, groupId);
  await until(() => c1.assigned && c1.assigned.length === 1 && c2.assigned && c2.assigned.length === 1,
    'a partition each for c1 and c2');
  out('member', 'c1', c1.assigned[0]);
  out('member', 'c2', c2.assigned[0]);
  await send(10, 20);
  await until(() => got.c1 + got.c2 === 20, 'c1 and c2 to read 10 more records');
  await c1.consumer.disconnect();
  await c2.consumer.disconnect();
  await send(20, 30);
  const c3 = await member(kafka, 'c3', topic, groupId);
  await until(() => got.c3 === 10, 'c3 to read 10 records');
  await c3.consumer.disconnect();
  await p.disconnect();
}

async function restart(bootstrap, topic, groupId, nArg, mode) {
  const n = parseInt(nArg, 10);
  const kafka = client(bootstrap);
  await create(kafka, topic, 2);
  const idempotent = mode === 'idempotent';
  const p = kafka.producer({ idempotent, maxInFlightRequests: idempotent ? 1 : undefined });
  await p.connect();
  let restarted = false;
  // A member that joins again under a new id after the restart, or whose
  // commit fails (UNKNOWN_MEMBER_ID stops a kafkajs consumer for good: it
  // is then started again), was forgotten by the coordinator: Kafka's
  // broker keeps a group's members across a restart. kafkajs also starts
  // a consumer again by itself, as a new member (it leaves first), after
  // errors it retries that way: when a fetch's connection closes, it
  // drops the broker from its pool and finds no broker to fetch from;
  // that join is its own doing, not a loss.
  const lost = (why) => {
    if (restarted) {
      process.stderr.write(`c1 lost its membership: ${why}\n`);
      out('lost-member');
    }
  };
  let c;
  let memberId;
  let selfRestart = false;
  const join = async () => {
    c = await member(kafka, 'c1', topic, groupId, {
      onJoin: (e) => {
        if (selfRestart) {
          process.stderr.write(`c1 joined again as ${e.payload.memberId} after kafkajs restarted it\n`);
        } else if (memberId && e.payload.memberId !== memberId) {
          lost(`joined again as ${e.payload.memberId}, was ${memberId}`);
        }
        memberId = e.payload.memberId;
        selfRestart = false;
      },
      onCrash: (e) => {
        selfRestart = e.payload.restart;
      },
      onStop: (e) => {
        lost(`stopped: ${e.payload.error}`);
        join();
      },
    });
  };
  await join();
  await p.send({ topic, acks: -1, messages: range(0, n / 2).map((i) => record(i)) });
  await until(() => got.c1 === n / 2, `c1 to read ${n / 2} records`);
  // The second half in flight across the restart when idempotent: one
  // request per record, each sent once the one before is acknowledged
  // (kafkajs keeps the order of the records of one send, not of sends
  // made at once).
  const sending = (async () => {
    for (const i of range(n / 2, n)) {
      await p.send({ topic, acks: -1, messages: [record(i)] });
    }
  })();
  if (!idempotent) {
    await sending;
  }
  restarted = true;
  out('restart');
  await new Promise((resolve) => readline.createInterface({ input: process.stdin }).once('line', resolve));
  await sending;
  await until(() => got.c1 >= n, `c1 to read ${n} records`);
  restarted = false; // leaving is no loss
  await c.consumer.disconnect();
  await p.disconnect();
}

async function txn(bootstrap, topic, groupId) {
  const kafka = client(bootstrap);
  await create(kafka, topic, 1);
  await create(kafka, `${topic}-copy`, 1);
  const p = kafka.producer({ transactionalId: `${topic}-tx`, idempotent: true, maxInFlightRequests: 1 });
  await p.connect();
  for (const [prefix, numbers, commit] of [['c', range(0, 5), true], ['a', range(0, 5), false], ['c', range(5, 10), true]]) {
    const tx = await p.transaction();
    await tx.send({ topic, messages: numbers.map((i) => record(i, { value: `${prefix}${i}`, partition: 0 })) });
    if (commit) {
      await tx.commit();
    } else {
      await tx.abort();
    }
  }
  for (const [tag, readUncommitted, n] of [['committed', false, 10], ['uncommitted', true, 15]]) {
    const c = await member(kafka, tag, topic, `${topic}-${tag}`, { commit: false, readUncommitted });
    await until(() => got[tag] === n, `${n} ${tag} records`);
    await c.consumer.disconnect();
  }
  // Consume, transform, produce: the copy and the group's offset commit
  // together.
  const c = await member(kafka, 'copy', topic, groupId, { show: false, commit: false });
  await until(() => got.copy === 10, '10 records to copy');
  const tx = await p.transaction();
  await tx.send({ topic: `${topic}-copy`, messages: c.messages.map(({ message }) => ({ key: message.key,
    value: `copy ${message.value}`, partition: 0 })) });
  const last = c.messages[c.messages.length - 1].message.offset;
  await tx.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: String(BigInt(last) + 1n) }] }] });
  await tx.commit();
  await c.consumer.disconnect();
  await p.disconnect();
}

async function main() {
  const [mode, ...args] = process.argv.slice(2);
  if (mode === 'features') {
    out('idempotence yes');
    out('transactions yes');
    return;
  }
  await { times, group, restart, txn }[mode](...args);
}

main().then(() => process.exit(0), (err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
