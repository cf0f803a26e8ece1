// The ledger relay (src/clob/ledger-stream.ts) on PostgreSQL: a poke names the markets a book just
// wrote, and the drain looks at those only; rows of markets nobody pokes (another node's, left
// behind when it died) are still published, also while pokes keep coming, each market in seq order.
// A drain whose send fails leaves its rows unpublished (the take and its marks roll back), and two
// relays draining together send every message once, each market's in seq order.
import test, { type ExecutionContext } from 'ava';
import pino from 'pino';
import { LedgerRelay } from '../../../src/clob/ledger-stream.ts';
import { MemoryBus } from '../../../src/runtime/memory-bus.ts';
import { openOrm, migrate } from '../../../src/store/orm.ts';
import { freshDatabase } from '../../helpers/db.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A fresh database, an in-process bus with the two ledger topics, and what a reader of both saw. */
async function stand(t: ExecutionContext) {
  const db = await freshDatabase();
  const orm = await openOrm({ databaseUrl: db.url });
  await migrate(orm, db.url);
  const bus = new MemoryBus(2);
  await bus.ensureTopics([
    { topic: 'l.orders', partitions: 2 },
    { topic: 'l.trades', partitions: 2 },
  ]);
  const seen: { market: string; topic: string; seq: number }[] = [];
  const consumer = await bus.consume({
    groupId: 'reader',
    topics: ['l.orders', 'l.trades'],
    fromBeginning: true,
    onBatch: async (b) => {
      for (const r of b.records) seen.push({ market: r.key, topic: b.topic, seq: Number(JSON.parse(r.value).seq) });
      return { done: true };
    },
  });
  /** Relays stopped first at teardown. */
  const relays: LedgerRelay[] = [];
  t.teardown(async () => {
    for (const r of relays) await r.stop();
    await consumer.stop();
    await bus.close();
    await orm.close();
    await db.drop();
  });
  return { orm, bus, seen, relays };
}

test('poked markets are drained alone; the others still go out under a steady stream of pokes, in seq order', async (t) => {
  const { orm, bus, seen, relays } = await stand(t);
  const relay = new LedgerRelay(orm, bus, (topic) => `l.${topic}`, pino({ level: 'silent' }), 60_000);
  relays.push(relay);
  const write = (market: string, from: number, n: number) =>
    (orm.em.fork() as any).execute(
      `insert into ledger_messages (market, topic, seq, type, owner_lc, payload, at, published)
       select ?, 'orders', s, 'order_live', null, '{}'::jsonb, now(), false from generate_series(?::int, ?::int) s`,
      [market, from, from + n - 1],
    );
  const unpublished = async (market: string) =>
    (await (orm.em.fork() as any).execute('select count(*)::int as n from ledger_messages where market = ? and not published', [market]))[0]
      .n;

  await write('left-behind', 1, 5); // another node's rows: nobody pokes this market
  relay.start(); // the first drain searches the whole table
  await sleep(300);
  t.is(await unpublished('left-behind'), 0, 'found by the first (whole-table) drain');

  await write('left-behind', 6, 5);
  // Pokes for market B only, every 20 ms: the drains look at B, and at least every 500 ms at everything.
  let seq = 1;
  const until = Date.now() + 1_500;
  while (Date.now() < until) {
    await write('B', seq, 2);
    seq += 2;
    relay.poke(['B']);
    await sleep(20);
  }
  await sleep(200);
  t.is(await unpublished('B'), 0);
  t.is(await unpublished('left-behind'), 0, 'published within the whole-table drains under load');
  for (const m of ['B', 'left-behind']) {
    const seqs = seen.filter((s) => s.market === m).map((s) => s.seq);
    t.deepEqual(
      seqs,
      [...seqs].sort((a, b) => a - b),
      `${m} in seq order`,
    );
    t.is(new Set(seqs).size, m === 'B' ? seq - 1 : 10, `${m}: every message once`);
  }
});

test('a drain whose send fails publishes nothing; the next one sends it all; two relays never interleave a market', async (t) => {
  const { orm, bus, seen, relays } = await stand(t);
  // A bus whose sends fail while `down` (the broker unreachable).
  let down = true;
  const flaky = Object.create(bus, {
    send: { value: (topic: string, recs: any[]) => (down ? Promise.reject(new Error('broker down')) : bus.send(topic, recs)) },
  });
  const a = new LedgerRelay(orm, flaky, (topic) => `l.${topic}`, pino({ level: 'silent' }), 60_000, 37);
  const b = new LedgerRelay(orm, flaky, (topic) => `l.${topic}`, pino({ level: 'silent' }), 60_000, 37);
  relays.push(a, b);
  await (orm.em.fork() as any).execute(
    `insert into ledger_messages (market, topic, seq, type, owner_lc, payload, at, published)
     select 'M' || (s % 3), case when s % 2 = 0 then 'orders' else 'trades' end, s, 'order_live', null, '{}'::jsonb, now(), false
     from generate_series(1, 600) s`,
  );
  const unpublished = async () =>
    (await (orm.em.fork() as any).execute('select count(*)::int as n from ledger_messages where not published'))[0].n;
  await t.throwsAsync(a.drainOnce(), { message: 'broker down' });
  t.is(await unpublished(), 600, 'a failed send marks nothing published');
  t.deepEqual(seen, []);
  down = false;
  // Both relays drain at once, in small takes (37 rows), until nothing is left.
  const drainAll = async (r: LedgerRelay) => {
    for (let i = 0; i < 100 && (await unpublished()) > 0; i++) await r.drainOnce();
  };
  await Promise.all([drainAll(a), drainAll(b)]);
  await sleep(200);
  t.is(await unpublished(), 0);
  t.is(seen.length, 600, 'every message sent once');
  for (const m of ['M0', 'M1', 'M2'])
    for (const topic of ['l.orders', 'l.trades']) {
      const seqs = seen.filter((s) => s.market === m && s.topic === topic).map((s) => s.seq);
      t.deepEqual(
        seqs,
        [...seqs].sort((x, y) => x - y),
        `${m} ${topic} in seq order`,
      );
    }
});
