// On Kafka a partition whose batch is slow does not hold the others back (kafkajs alone fetches in
// lockstep: every batch of a fetch is handled before the next fetch). A slow batch delays a
// command of another partition by at most the fetch pace, not by the slow batch's time.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { KafkaBus } from '../../../src/runtime/kafka-bus.ts';
import { partitionFor } from '../../../src/runtime/partitioner.ts';
import type { ActorKind } from '../../../src/runtime/types.ts';
import { KAFKA_BROKERS } from '../../helpers/node.ts';
import { startRuntime } from '../../helpers/runtime-rig.ts';

const SLOW_MS = 3_000;

test('kafka: a slow partition does not hold the others back', async (t) => {
  const bus = new KafkaBus({ brokers: [KAFKA_BROKERS], clientId: 'lockstep-test' });
  const prefix = `l${randomBytes(3).toString('hex')}.`;
  const topic = `${prefix}work`;
  const kind: ActorKind<{ n: number }, { slow: boolean }, { slow: boolean }, { done: true }> = {
    name: 'work',
    topic,
    decider: {
      initial: () => ({ n: 0 }),
      decide: (_s, c) => ({ events: [c], reply: { done: true } }),
      evolve: (s) => ({ n: s.n + 1 }),
    },
    parse: (c) => c as { slow: boolean },
    toSnapshot: (s) => s,
    fromSnapshot: (j) => j as { n: number },
    // A batch with a slow command takes SLOW_MS before its commit.
    project: async (_tx, applied) => {
      if (applied.some((a) => a.events.some((e) => e.slow))) await new Promise((r) => setTimeout(r, SLOW_MS));
    },
  };
  const { asker } = await startRuntime(t, { bus, prefix, nodeId: 'ls-1', kinds: [kind], partitions: { [topic]: 4 } });
  // Two keys on two partitions; both warmed (their workers loaded).
  const a = 'a0';
  const b = Array.from({ length: 50 }, (_, i) => `b${i}`).find((k) => partitionFor(k, 4) !== partitionFor(a, 4))!;
  await asker.ask({ topic, key: a, cmd: { slow: false } });
  await asker.ask({ topic, key: b, cmd: { slow: false } });

  const slow = asker.ask({ topic, key: a, cmd: { slow: true } });
  await new Promise((r) => setTimeout(r, 300)); // the slow batch is being handled
  const t0 = Date.now();
  await asker.ask({ topic, key: b, cmd: { slow: false } });
  const fast = Date.now() - t0;
  await slow;
  t.true(fast < SLOW_MS / 2, `a command of another partition answered in ${fast} ms while a batch took ${SLOW_MS} ms`);
});
