// Produces n keyed records with kafkajs (acks=all, idempotent, the codec
// given: kafkajs itself has none and gzip), then reads the topic back in
// a consumer group from the beginning and prints each record as
// key:value, one per line, sorted.
//
//   node check.js BOOTSTRAP TOPIC CODEC N GROUP
const { Kafka, CompressionTypes, logLevel } = require('kafkajs');

const [bootstrap, topic, codec, nArg, group] = process.argv.slice(2);
const n = parseInt(nArg, 10);
const kafka = new Kafka({ clientId: 'kafkajs-check', brokers: [bootstrap], logLevel: logLevel.ERROR });

async function main() {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
  await admin.disconnect();

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const messages = [];
  for (let i = 0; i < n; i++) {
    messages.push({ key: `k${i % 7}`, value: `value ${i}` });
  }
  await producer.send({ topic, acks: -1, compression: codec === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None, messages });
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: group });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${got.length} of ${n} records`)), 30000);
    consumer.run({
      eachMessage: async ({ message }) => {
        got.push(`${message.key.toString()}:${message.value.toString()}`);
        if (got.length === n) {
          clearTimeout(timer);
          resolve();
        }
      },
    }).catch(reject);
  });
  await consumer.disconnect();
  got.sort();
  process.stdout.write(got.join('\n') + '\n');
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
