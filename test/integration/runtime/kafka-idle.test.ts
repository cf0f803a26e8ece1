// A KafkaBus that has nothing to do does nothing (src/runtime/kafka-request-queue.ts): on the real
// broker, its connections' request queues are not checked a thousand times a second, and a record
// sent after the quiet still arrives at once. A consumer with a longer idle wait (a node's reply
// topic: ConsumeOptions.idleWaitMs) fetches and heartbeats less often while idle, and a record
// still ends its wait at once.
import test, { type ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import { KafkaBus } from '../../../src/runtime/kafka-bus.ts';
import { kafkajsRequestQueue } from '../../../src/runtime/kafka-request-queue.ts';
import { KAFKA_BROKERS } from '../../helpers/node.ts';

/**
 * A bus consuming a fresh topic (its first record already arrived), what arrived when, and the
 * number of request-queue checks (one per answer from the broker) from `counting()` on.
 */
async function quietConsumer(t: ExecutionContext, name: string, partitions: number, idleWaitMs?: number) {
  const bus = new KafkaBus({ brokers: [KAFKA_BROKERS], clientId: `${name}-test` });
  t.teardown(() => bus.close());
  const topic = `${name}${randomBytes(3).toString('hex')}`;
  await bus.ensureTopics([{ topic, partitions }]);
  const arrived: number[] = [];
  let wake: () => void = () => undefined;
  const handle = await bus.consume({
    groupId: `${topic}.g`,
    topics: [topic],
    fromBeginning: true,
    idleWaitMs,
    onBatch: async (b) => {
      for (const _ of b.records) arrived.push(performance.now());
      wake();
      return { done: true };
    },
  });
  t.teardown(() => handle.stop());
  /** Sends one record and resolves with how long after the send it arrived. */
  const sendOne = async (value: string) => {
    const n = arrived.length;
    const sent = performance.now();
    await bus.send(topic, [{ key: 'k', value, headers: {} }]);
    while (arrived.length <= n) await new Promise<void>((r) => (wake = r));
    return arrived[n] - sent;
  };
  await sendOne('first');
  const proto = kafkajsRequestQueue().prototype;
  const check = proto.checkPendingRequests;
  let checks = 0;
  const counting = () => {
    proto.checkPendingRequests = function (this: typeof proto) {
      checks++;
      return check.call(this);
    };
    t.teardown(() => {
      proto.checkPendingRequests = check;
    });
    return () => checks;
  };
  return { sendOne, counting };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test.serial('kafka: an idle consumer and producer check their request queues only when answered', async (t) => {
  const { sendOne, counting } = await quietConsumer(t, 'idle', 3);
  const checks = counting();
  await sleep(1500);
  // Each answer checks its queue once: fetches held by the broker (100 ms each) and heartbeats
  // (300 ms) are ~20 a second. kafkajs 2.2.4 as shipped: a check every millisecond per connection.
  t.log(`${checks()} checks in 1.5 s of quiet`);
  t.true(checks() < 100, `${checks()} checks in 1.5 s of quiet`);
  const delay = await sendOne('after the quiet');
  t.true(delay < 1000, `arrived ${delay} ms after it was sent`);
});

test.serial('kafka: a consumer with a long idle wait asks the broker less often, and a record still arrives at once', async (t) => {
  const { sendOne, counting } = await quietConsumer(t, 'idlewait', 1, 2000);
  const checks = counting();
  await sleep(3000);
  // Fetches held 2 s and heartbeats once a second (a third of the 3 s session): ~3 answers a second
  // at most. The default wait (100 ms fetches, 300 ms heartbeats): ~13 a second, ~40 here.
  t.log(`${checks()} checks in 3 s of quiet`);
  t.true(checks() <= 15, `${checks()} checks in 3 s of quiet`);
  // Sent while a fetch is held at the broker: the record ends the wait (not up to 2 s later).
  const delays: number[] = [];
  for (let i = 0; i < 3; i++) {
    await sleep(700);
    delays.push(await sendOne(`after the quiet ${i}`));
  }
  delays.sort((a, b) => a - b);
  t.true(delays[1] < 1000, `arrived ${delays.map((d) => Math.round(d)).join(', ')} ms after they were sent`);
});
