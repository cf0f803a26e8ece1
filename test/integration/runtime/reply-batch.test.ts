// Replies in batches, on both buses: the answers of one batch to one asker travel as one reply
// record (a JSON array of answers) instead of one record each, and every ask gets its own answer;
// an asker that did not ask for batches (a node of an earlier version: no `reply-batch` header)
// still gets one record per ask, each a single answer.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { channel } from '../../../src/runtime/asker.ts';
import { MemoryBus } from '../../../src/runtime/memory-bus.ts';
import { KafkaBus } from '../../../src/runtime/kafka-bus.ts';
import { envelopeJson } from '../../../src/runtime/envelope.ts';
import { CORRELATION, REPLY_TO } from '../../../src/runtime/partition-worker.ts';
import type { ActorKind, Bus, InRecord } from '../../../src/runtime/types.ts';
import { startRuntime } from '../../helpers/runtime-rig.ts';
import { KAFKA_BROKERS } from '../../helpers/node.ts';

type Cmd = { type: 'Add'; n: number };
interface CounterProtocol {
  cmd: Cmd;
  replies: { Add: { n: number } };
}

function counter(topic: string): ActorKind<{ n: number }, Cmd, { type: 'Added'; n: number }, { n: number }> {
  return {
    name: 'counter',
    topic,
    decider: {
      initial: () => ({ n: 0 }),
      decide: (s, c) => ({ events: [{ type: 'Added', n: c.n }], reply: { n: s.n + c.n } }),
      evolve: (s, e) => ({ n: s.n + e.n }),
    },
    parse: (c: any) => {
      if (c?.type === 'Add' && Number.isInteger(c.n)) return { type: 'Add', n: c.n };
      throw new Error(`not a counter command: ${JSON.stringify(c)}`);
    },
    toSnapshot: (s) => s,
    fromSnapshot: (j) => j as { n: number },
    project: async () => undefined,
  };
}

const high = async (bus: Bus, topic: string) => (await bus.offsets!(topic)).reduce((s, o) => s + Number(o.high), 0);

const buses: [string, () => Bus][] = [
  ['in-process', () => new MemoryBus(1)],
  ['kafka', () => new KafkaBus({ brokers: [KAFKA_BROKERS], clientId: 'reply-batch-test' })],
];

for (const [name, makeBus] of buses) {
  test(`${name}: the answers of one batch to one asker are one reply record; an asker without batches gets one record per ask`, async (t) => {
    const bus = makeBus();
    const prefix = `rb${randomBytes(3).toString('hex')}.`;
    const topic = `${prefix}counters`;
    const { asker } = await startRuntime(t, { bus, prefix, nodeId: 'n1', kinds: [counter(topic)], partitions: { [topic]: 1 } });
    const ch = channel<CounterProtocol>(topic);

    // 40 asks at once to one partition (one key: answered in order): fewer reply records than asks.
    const before = await high(bus, asker.replyTopic);
    const answers = await asker.askManyTo(
      ch,
      Array.from({ length: 40 }, (_, i) => ({ key: 'k', cmd: { type: 'Add', n: i + 1 } as Cmd, id: `add-${i}` })),
    );
    t.deepEqual(
      answers.map((a) => a.n),
      Array.from({ length: 40 }, (_, i) => ((i + 1) * (i + 2)) / 2),
    );
    const replies = (await high(bus, asker.replyTopic)) - before;
    t.true(replies >= 1 && replies < 40, `${replies} reply records for 40 asks`);

    // An asker of an earlier version: no reply-batch header, its own reply topic read as it comes.
    const oldTopic = `replies.${prefix}old`;
    await bus.ensureTopics([{ topic: oldTopic, partitions: 1 }]);
    const got: InRecord[] = [];
    const consumer = await bus.consume({
      groupId: `${prefix}old`,
      topics: [oldTopic],
      fromBeginning: true,
      onBatch: async (b) => {
        got.push(...b.records);
        return { done: true };
      },
    });
    t.teardown(() => consumer.stop());
    await bus.send(
      topic,
      Array.from({ length: 5 }, (_, i) => ({
        key: 'k',
        value: envelopeJson({ type: 'Add', n: 0 }, { id: `old-${i}`, at: Date.now() }),
        headers: { [CORRELATION]: `old-${i}`, [REPLY_TO]: oldTopic },
      })),
    );
    const deadline = Date.now() + 20_000;
    while (got.length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    t.is(got.length, 5, 'one record per ask');
    t.deepEqual(
      got.map((r) => JSON.parse(r.value)).sort((a, b) => a.corr.localeCompare(b.corr)),
      Array.from({ length: 5 }, (_, i) => ({ corr: `old-${i}`, reply: { n: 820 } })),
    );
  });
}
