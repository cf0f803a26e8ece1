// Replies, on both buses: on Kafka an ask answered by a worker of the asker's own node is handed
// over in the process (no reply record at all); the answers of one batch to an asker on another
// node travel as one reply record (a JSON array of answers) instead of one record each, and every
// ask gets its own answer; an asker that did not ask for batches (a node of an earlier version: no
// `reply-batch` header) still gets one record per ask, each a single answer.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { Asker, channel } from '../../../src/runtime/asker.ts';
import { MemoryBus } from '../../../src/runtime/memory-bus.ts';
import { KafkaBus } from '../../../src/runtime/kafka-bus.ts';
import { envelopeJson } from '../../../src/runtime/envelope.ts';
import { CORRELATION, REPLY_TO } from '../../../src/runtime/partition-worker.ts';
import type { Bus, InRecord } from '../../../src/runtime/types.ts';
import { startRuntime } from '../../helpers/runtime-rig.ts';
import { counter, recordsOn, type CounterCmd, type CounterProtocol } from '../../helpers/counter-kind.ts';
import { KAFKA_BROKERS } from '../../helpers/node.ts';

type Cmd = CounterCmd;
const high = recordsOn;

const buses: [string, () => Bus][] = [
  ['in-process', () => new MemoryBus(1)],
  ['kafka', () => new KafkaBus({ brokers: [KAFKA_BROKERS], clientId: 'reply-batch-test' })],
];

for (const [name, makeBus] of buses) {
  test(`${name}: answers to this node's asker stay in the process; those to another node's are one record per batch; an asker without batches gets one record per ask`, async (t) => {
    const bus = makeBus();
    const prefix = `rb${randomBytes(3).toString('hex')}.`;
    const topic = `${prefix}counters`;
    const { asker } = await startRuntime(t, { bus, prefix, nodeId: 'n1', kinds: [counter(topic)], partitions: { [topic]: 1 } });
    const ch = channel<CounterProtocol>(topic);
    const adds = (from: number, tag: string) =>
      Array.from({ length: 40 }, (_, i) => ({ key: 'k', cmd: { type: 'Add', n: from + i } as Cmd, id: `${tag}-${i}` }));
    const sums = (start: number) => Array.from({ length: 40 }, (_, i) => start + ((i + 1) * (i + 2)) / 2);

    // 40 asks at once to one partition (one key: answered in order) by the node that owns it: every
    // answer right; on Kafka not one reply record (handed over in the process), on the in-process
    // bus fewer records than asks.
    const before = await high(bus, asker.replyTopic);
    t.deepEqual(
      (await asker.askManyTo(ch, adds(1, 'add'))).map((a) => a.n),
      sums(0),
    );
    const own = (await high(bus, asker.replyTopic)) - before;
    if (bus.durable) t.is(own, 0, 'answered in the process');
    else t.true(own >= 1 && own < 40, `${own} reply records for 40 asks`);

    // Another node (its own connection to the broker) asks the same: fewer reply records than asks.
    if (bus.durable) {
      const other = new KafkaBus({ brokers: [KAFKA_BROKERS], clientId: 'reply-batch-test-2' });
      const remote = new Asker(other, `${prefix}n2`, 20_000);
      await remote.start();
      t.teardown(async () => {
        await remote.stop();
        await other.close();
      });
      const from = await high(bus, remote.replyTopic);
      t.deepEqual(
        (await remote.askManyTo(ch, adds(1, 'remote'))).map((a) => a.n),
        sums(820),
      );
      const replies = (await high(bus, remote.replyTopic)) - from;
      t.true(replies >= 1 && replies < 40, `${replies} reply records for 40 asks`);
    }

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
      Array.from({ length: 5 }, (_, i) => ({ corr: `old-${i}`, reply: { n: bus.durable ? 1640 : 820 } })),
    );
  });
}
