// A KafkaBus that has nothing to do does nothing (src/runtime/kafka-request-queue.ts): on the real
// broker, its connections' request queues are not checked a thousand times a second, and a record
// sent after the quiet still arrives at once.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { KafkaBus } from '../../../src/runtime/kafka-bus.ts';
import { kafkajsRequestQueue } from '../../../src/runtime/kafka-request-queue.ts';
import { KAFKA_BROKERS } from '../../helpers/node.ts';

test('kafka: an idle consumer and producer check their request queues only when answered', async (t) => {
  const bus = new KafkaBus({ brokers: [KAFKA_BROKERS], clientId: 'idle-test' });
  t.teardown(() => bus.close());
  const topic = `idle${randomBytes(3).toString('hex')}`;
  await bus.ensureTopics([{ topic, partitions: 3 }]);
  const arrived: number[] = [];
  let wake: () => void = () => undefined;
  const handle = await bus.consume({
    groupId: `${topic}.g`,
    topics: [topic],
    fromBeginning: true,
    onBatch: async (b) => {
      for (const _ of b.records) arrived.push(performance.now());
      wake();
      return { done: true };
    },
  });
  t.teardown(() => handle.stop());
  await bus.send(topic, [{ key: 'a', value: 'first', headers: {} }]);
  while (!arrived.length) await new Promise<void>((r) => (wake = r));

  const proto = kafkajsRequestQueue().prototype;
  const check = proto.checkPendingRequests;
  let checks = 0;
  proto.checkPendingRequests = function (this: typeof proto) {
    checks++;
    return check.call(this);
  };
  t.teardown(() => {
    proto.checkPendingRequests = check;
  });
  await new Promise((r) => setTimeout(r, 1500));
  // Each answer checks its queue once: fetches held by the broker (100 ms each) and heartbeats
  // (300 ms) are ~20 a second. kafkajs 2.2.4 as shipped: a check every millisecond per connection.
  t.log(`${checks} checks in 1.5 s of quiet`);
  t.true(checks < 100, `${checks} checks in 1.5 s of quiet`);

  const sent = performance.now();
  await bus.send(topic, [{ key: 'b', value: 'after the quiet', headers: {} }]);
  while (arrived.length < 2) await new Promise<void>((r) => (wake = r));
  t.true(arrived[1] - sent < 1000, `arrived ${arrived[1] - sent} ms after it was sent`);
});
