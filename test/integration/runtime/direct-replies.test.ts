// Direct replies on Kafka (src/runtime/direct-replies.ts): an asker with a reply server gets the
// answers of another node's workers over TCP, not through its reply topic; while that connection
// is not up, or when the server refuses it (a wrong secret), every answer still comes, through the
// reply topic. Real broker, real sockets.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { Asker, channel } from '../../../src/runtime/asker.ts';
import { KafkaBus } from '../../../src/runtime/kafka-bus.ts';
import { startRuntime } from '../../helpers/runtime-rig.ts';
import { counter, recordsOn, type CounterCmd, type CounterProtocol } from '../../helpers/counter-kind.ts';
import { KAFKA_BROKERS } from '../../helpers/node.ts';

type Cmd = CounterCmd;
const high = recordsOn;
const SECRET = 'direct-replies:test';

async function world(t: any, remoteSecret: string) {
  const bus = new KafkaBus({ brokers: [KAFKA_BROKERS], clientId: 'direct-replies-test' });
  const prefix = `dr${randomBytes(3).toString('hex')}.`;
  const topic = `${prefix}counters`;
  const { asker: owner } = await startRuntime(t, {
    bus,
    prefix,
    nodeId: 'n1',
    kinds: [counter(topic)],
    partitions: { [topic]: 1 },
    direct: { secret: SECRET },
  });
  const other = new KafkaBus({ brokers: [KAFKA_BROKERS], clientId: 'direct-replies-test-2' });
  const remote = new Asker(other, `${prefix}n2`, 20_000, { secret: remoteSecret });
  await remote.start();
  t.teardown(async () => {
    await remote.stop();
    await other.close();
  });
  const ch = channel<CounterProtocol>(topic);
  let next = 0;
  /** `count` asks at once; the answers' sums, and the reply records they left on the remote asker's topic. */
  const ask = async (count: number) => {
    const before = await high(bus, remote.replyTopic);
    const answers = await remote.askManyTo(
      ch,
      Array.from({ length: count }, () => ({ key: 'k', cmd: { type: 'Add', n: 1 } as Cmd, id: `add-${next++}` })),
    );
    return { sums: answers.map((a) => a.n), records: (await high(bus, remote.replyTopic)) - before };
  };
  return { remote, owner, ask, total: () => next };
}

test('kafka: another node’s answers come straight to the asker’s reply server, none through its reply topic', async (t) => {
  const w = await world(t, SECRET);
  t.regex(w.remote.replyVia ?? '', /^127\.0\.0\.1:\d+$/);
  // The first answer opens the connection (and goes through the reply topic meanwhile).
  const first = await w.ask(1);
  t.deepEqual(first.sums, [1]);
  let records = -1;
  for (let i = 0; i < 50 && records !== 0; i++) {
    const r = await w.ask(1);
    t.deepEqual(r.sums, [w.total()]);
    records = r.records;
    if (records) await new Promise((r) => setTimeout(r, 100));
  }
  t.is(records, 0, 'answered over the direct connection');
  const base = w.total();
  const many = await w.ask(40);
  t.deepEqual(
    many.sums,
    Array.from({ length: 40 }, (_, i) => base + i + 1),
  );
  t.is(many.records, 0, 'no reply record for 40 answers');
  // The owner's count (runtime_direct_replies_total): the 40 answers went direct.
  t.true(w.owner.replyCounts().direct >= 1, JSON.stringify(w.owner.replyCounts()));
  t.true(w.owner.replyCounts().topic >= 1, 'the answers before the connection was up went through the topic');
});

test('kafka: a reply server that refuses the worker (another secret) still gets every answer, through the reply topic', async (t) => {
  const w = await world(t, 'direct-replies:another');
  for (let i = 0; i < 3; i++) {
    const r = await w.ask(10);
    t.deepEqual(
      r.sums,
      Array.from({ length: 10 }, (_, k) => i * 10 + k + 1),
    );
    t.true(r.records >= 1, `${r.records} reply records for 10 answers`);
    await new Promise((r) => setTimeout(r, 200));
  }
  t.is(w.owner.replyCounts().direct, 0);
  t.true(w.owner.replyCounts().topic >= 3);
});
