// A pipeline stage (Decision.forward), on both buses: a command one actor hands on is answered to
// the asker by the actor it went to, once; its outbox row is gone once its worker sent it, and a
// forward its worker could not send is sent by the outbox relay when it is due.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { channel } from '../../../src/runtime/asker.ts';
import { MemoryBus } from '../../../src/runtime/memory-bus.ts';
import { KafkaBus } from '../../../src/runtime/kafka-bus.ts';
import { OutboxRelay } from '../../../src/store/outbox.ts';
import type { ActorKind, Bus } from '../../../src/runtime/types.ts';
import { KAFKA_BROKERS } from '../../helpers/node.ts';
import { startRuntime } from '../../helpers/runtime-rig.ts';

type Cmd = { n: number };

/** Holds: counts what it was given, and hands each command on to the `placed` topic under the same key. */
function holder(topic: string, to: string): ActorKind<{ held: number }, Cmd, { n: number }, unknown> {
  return {
    name: 'holder',
    topic,
    decider: {
      initial: () => ({ held: 0 }),
      decide: (s, c) =>
        c.n < 0
          ? { events: [], reply: { refused: true } }
          : { events: [{ n: c.n }], reply: { held: s.held + c.n }, forward: { topic: to, key: 'k', id: `placed:${c.n}`, cmd: { n: c.n } } },
      evolve: (s, e) => ({ held: s.held + e.n }),
    },
    parse: (c) => c as Cmd,
    toSnapshot: (s) => s,
    fromSnapshot: (j) => j as { held: number },
    project: async () => undefined,
  };
}

/** Places: answers with what it holds in all, each command once. */
function placer(topic: string): ActorKind<{ total: number; seen: number[] }, Cmd, { n: number }, unknown> {
  return {
    name: 'placer',
    topic,
    decider: {
      initial: () => ({ total: 0, seen: [] }),
      decide: (s, c) => ({ events: [{ n: c.n }], reply: { placed: c.n, total: s.total + c.n, by: 'placer' } }),
      evolve: (s, e) => ({ total: s.total + e.n, seen: [...s.seen, e.n] }),
    },
    parse: (c) => c as Cmd,
    toSnapshot: (s) => s,
    fromSnapshot: (j) => j as { total: number; seen: number[] },
    project: async () => undefined,
  };
}

const buses: [string, () => Bus][] = [
  ['in-process', () => new MemoryBus(2)],
  ['kafka', () => new KafkaBus({ brokers: [KAFKA_BROKERS], clientId: 'forward-test' })],
];

for (const [name, makeBus] of buses) {
  test(`${name}: a forwarded command is answered by the actor it went to, once; its outbox row goes; an unsent one is relayed when due`, async (t) => {
    const bus = makeBus();
    const prefix = `f${randomBytes(3).toString('hex')}.`;
    const [hold, place] = [`${prefix}hold`, `${prefix}place`];
    const { orm, asker } = await startRuntime(t, {
      bus,
      prefix,
      nodeId: 'fw-1',
      kinds: [holder(hold, place), placer(place)],
      partitions: { [hold]: 2, [place]: 2 },
    });
    const outbox = async () => (await orm.em.fork().execute('select msg_key from outbox')).map((r: any) => r.msg_key);

    t.deepEqual(await asker.ask({ topic: hold, key: 'w1', cmd: { n: 5 }, id: 'h5' }), { placed: 5, total: 5, by: 'placer' });
    t.deepEqual(await asker.ask({ topic: hold, key: 'w2', cmd: { n: 7 }, id: 'h7' }), { placed: 7, total: 12, by: 'placer' });
    t.deepEqual(await asker.ask({ topic: hold, key: 'w1', cmd: { n: -1 }, id: 'h-1' }), { refused: true }, 'not handed on: answered here');
    // Asked again (a retry): handed on again, and answered from the placer's inbox, not placed twice.
    t.deepEqual(await asker.ask({ topic: hold, key: 'w1', cmd: { n: 5 }, id: 'h5' }), { placed: 5, total: 5, by: 'placer' });
    let left = await outbox();
    for (let i = 0; i < 100 && left.length; i++) {
      await new Promise((r) => setTimeout(r, 20));
      left = await outbox();
    }
    t.deepEqual(left, [], 'sent by their workers: their rows are gone');

    // Commands of a bulk record are handed on too (nothing held is left behind); the bulk answer
    // carries the holder's replies, the placer applies them.
    const bulk = await asker.askBulkSettledTo(channel<any>(hold), [
      { key: 'w3', cmd: { n: 100 } },
      { key: 'w4', cmd: { n: 200 } },
    ]);
    t.deepEqual(
      bulk.map((r) => (r.status === 'fulfilled' ? r.value : r.reason)),
      [{ held: 100 }, { held: 200 }],
    );
    let placed = 0;
    for (let i = 0; i < 100 && placed !== 312; i++) {
      await new Promise((r) => setTimeout(r, 20));
      placed = ((await asker.ask({ topic: place, key: 'k', cmd: { n: 0 } })) as any).total;
    }
    t.is(placed, 312, 'both placed');

    // A forward its worker never sent (a crash between the commit and the send): the relay sends it
    // once it is due, with the asker's reply headers, and the placer applies it once.
    await orm.em
      .fork()
      .execute(
        `insert into outbox (topic, key, value, headers, msg_key, created_at, relay_after) values (?, 'k', ?, null, 'placed:11', now(), now() + interval '300 milliseconds')`,
        [place, JSON.stringify({ v: 1, id: 'placed:11', at: Date.now(), cmd: { n: 11 } })],
      );
    const relay = new OutboxRelay(orm, bus, pino({ level: 'silent' }), 50);
    t.is(await relay.drainOnce(), 0, 'not due yet: its worker may still send it');
    relay.start();
    t.teardown(() => relay.stop());
    let total = 0;
    for (let i = 0; i < 200 && total !== 323; i++) {
      await new Promise((r) => setTimeout(r, 25));
      total = ((await asker.ask({ topic: place, key: 'k', cmd: { n: 0 } })) as any).total;
    }
    t.is(total, 323, 'relayed and placed once');
    t.deepEqual(await outbox(), []);
  });
}
