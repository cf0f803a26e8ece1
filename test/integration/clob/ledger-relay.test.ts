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
      `insert into ledger_messages (market, topic, seq, type, owner_lc, payload, at)
       select ?, 'orders', s, 'order_live', null, '{}'::jsonb, now() from generate_series(?::int, ?::int) s`,
      [market, from, from + n - 1],
    );
  const unpublished = async (market: string) =>
    (await (orm.em.fork() as any).execute('select count(*)::int as n from ledger_unpublished where market = ?', [market]))[0].n;

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
    `insert into ledger_messages (market, topic, seq, type, owner_lc, payload, at)
     select 'M' || (s % 3), case when s % 2 = 0 then 'orders' else 'trades' end, s, 'order_live', null, '{}'::jsonb, now()
     from generate_series(1, 600) s`,
  );
  const unpublished = async () => (await (orm.em.fork() as any).execute('select count(*)::int as n from ledger_unpublished'))[0].n;
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

test('publishing writes marks, never the ledger rows; ledger_append numbers each (market, topic) on from its last seq', async (t) => {
  const { orm, bus, seen, relays } = await stand(t);
  const relay = new LedgerRelay(orm, bus, (topic) => `l.${topic}`, pino({ level: 'silent' }), 60_000);
  relays.push(relay);
  const q = (sql: string, params: unknown[] = []) => (orm.em.fork() as any).execute(sql, params);
  const row = (market: string, topic: string, ord: number) => ({
    market,
    topic,
    type: topic === 'orders' ? 'order_live' : 'trade_matched',
    owner_lc: null,
    payload: { ord },
    at: new Date(0).toISOString(),
    ord,
  });
  await q('select ledger_append(?::jsonb)', [
    JSON.stringify([row('A', 'orders', 0), row('A', 'orders', 1), row('A', 'trades', 2), row('B', 'orders', 3)]),
  ]);
  await q('select ledger_append(?::jsonb)', [JSON.stringify([row('A', 'orders', 0), row('B', 'orders', 1), row('B', 'orders', 2)])]);
  const rows = async () =>
    q("select market, topic, seq::int, payload->>'ord' as ord, xmin::text as x from ledger_messages order by market, topic, seq");
  const before = await rows();
  t.deepEqual(
    before.map((r: any) => `${r.market} ${r.topic} ${r.seq}:${r.ord}`),
    ['A orders 1:0', 'A orders 2:1', 'A orders 3:0', 'A trades 1:2', 'B orders 1:3', 'B orders 2:1', 'B orders 3:2'],
    'gap-free per (market, topic), in the rows order within a call',
  );
  t.is(await relay.drainOnce(), 7);
  t.deepEqual(await rows(), before, 'the rows as written: none was updated (same xmin)');
  t.deepEqual(await q('select market, topic, seq::int from ledger_published order by market, topic'), [
    { market: 'A', topic: 'orders', seq: 3 },
    { market: 'A', topic: 'trades', seq: 1 },
    { market: 'B', topic: 'orders', seq: 3 },
  ]);
  await q('select ledger_append(?::jsonb)', [JSON.stringify([row('B', 'orders', 0)])]);
  t.is((await q('select count(*)::int as n from ledger_unpublished'))[0].n, 1);
  t.is(await relay.drainOnce(), 1, 'only what is past the marks');
  await sleep(100);
  t.is(seen.length, 8, 'every message once');
});

test('the migration to marks keeps what was published published', async (t) => {
  const db = await freshDatabase();
  const orm = await openOrm({ databaseUrl: db.url });
  t.teardown(async () => {
    await orm.close();
    await db.drop();
  });
  await orm.migrator.up({ to: 'Migration20261204100000' });
  const q = (sql: string) => (orm.em.fork() as any).execute(sql);
  // M: 1..4 published, 5..6 not; N trades: none published; N orders: all.
  await q(`insert into ledger_messages (market, topic, seq, type, owner_lc, payload, at, published)
    select 'M', 'orders', s, 'order_live', null, '{}'::jsonb, now(), s <= 4 from generate_series(1, 6) s
    union all select 'N', 'trades', s, 'trade_matched', null, '{}'::jsonb, now(), false from generate_series(1, 3) s
    union all select 'N', 'orders', s, 'order_live', null, '{}'::jsonb, now(), true from generate_series(1, 2) s`);
  await orm.migrator.up();
  t.deepEqual(await q('select market, topic, seq::int from ledger_published order by market, topic'), [
    { market: 'M', topic: 'orders', seq: 4 },
    { market: 'N', topic: 'orders', seq: 2 },
  ]);
  t.deepEqual(await q('select market, topic, seq::int from ledger_unpublished order by market, topic, seq'), [
    { market: 'M', topic: 'orders', seq: 5 },
    { market: 'M', topic: 'orders', seq: 6 },
    { market: 'N', topic: 'trades', seq: 1 },
    { market: 'N', topic: 'trades', seq: 2 },
    { market: 'N', topic: 'trades', seq: 3 },
  ]);
});
