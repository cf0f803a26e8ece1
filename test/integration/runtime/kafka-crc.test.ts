// kafkajs checksums the record batches it produces with the native CRC-32C (src/runtime/kafka-crc.ts):
// the same value as its own JavaScript, and batches the real broker (which checks every batch's
// checksum and refuses a wrong one as corrupt) accepts and gives back whole.
import { kafkajs, nativeKafkaCrc } from '../../../src/runtime/kafka-crc.ts'; // first: before anything loads kafkajs
import test from 'ava';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { KafkaBus } from '../../../src/runtime/kafka-bus.ts';
import type { InRecord } from '../../../src/runtime/types.ts';
import { KAFKA_BROKERS } from '../../helpers/node.ts';

const require = createRequire(import.meta.url);

test('kafkajs checksums with the native CRC-32C, which equals its own', (t) => {
  t.truthy(kafkajs.Kafka);
  t.true(nativeKafkaCrc());
  const used = require('kafkajs/src/protocol/recordBatch/crc32C/index.js') as (b: Buffer) => number;
  // kafkajs's own JavaScript (signed), in the module that was not replaced.
  const own = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as (b: Buffer) => number;
  t.is(used(Buffer.from('123456789')), 0xe3069283); // the check value of CRC-32C (Castagnoli)
  for (const size of [0, 1, 7, 64, 1_000, 70_000, 300_000]) {
    const b = randomBytes(size);
    t.is(used(b), own(b) >>> 0, `${size} bytes`);
  }
});

test('kafka: batches checksummed natively are accepted by the broker and read back whole', async (t) => {
  const bus = new KafkaBus({ brokers: [KAFKA_BROKERS], clientId: 'crc-test' });
  t.teardown(() => bus.close());
  const topic = `crc${randomBytes(3).toString('hex')}`;
  await bus.ensureTopics([{ topic, partitions: 2 }]);
  // Small records in one batch, and one of 300 KB (its batch alone is larger than most).
  const values = [
    ...Array.from({ length: 500 }, (_, i) => `v${i}:${randomBytes(40).toString('hex')}`),
    randomBytes(150_000).toString('hex'),
  ];
  await bus.send(
    topic,
    values.map((value, i) => ({ key: `k${i % 7}`, value, headers: {} })),
  );
  const got: InRecord[] = [];
  const all = new Promise<void>((resolve) => {
    void bus
      .consume({
        groupId: `${topic}.g`,
        topics: [topic],
        fromBeginning: true,
        onBatch: async (b) => {
          got.push(...b.records);
          if (got.length >= values.length) resolve();
          return { done: true };
        },
      })
      .then((h) => t.teardown(() => h.stop()));
  });
  await all;
  t.deepEqual(got.map((r) => r.value).sort(), [...values].sort());
});
