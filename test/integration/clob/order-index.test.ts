// The order path's batched reads of the ledger (src/clob/order-index.ts), on PGlite and on
// PostgreSQL: the reads asked in one event-loop turn share one statement, and each still gets its
// own answer (an order already posted, a new one, a token no market trades; the rows a cancel
// names, unknown ids left out; one order alone by its key); a token's market is read again only
// after a while, or at once once this node edited it; with it in memory, whether an order was posted
// is read only for a while after its book asked for it (CHECK_LEDGER). On PostgreSQL, with the
// markets watched through `clob_markets` notifications (src/modules/market-watch.ts), a market stays
// in memory past the TTL and is forgotten as soon as any session changes its row; a lost
// notifications' connection forgets them all and brings the TTL back until it listens again.
import test, { type ExecutionContext } from 'ava';
import pg from 'pg';
import { watchMarkets } from '../../../src/modules/market-watch.ts';
import { NotifyListener } from '../../../src/store/notify-listener.ts';
import { openOrm, migrate, type Orm } from '../../../src/store/orm.ts';
import { openReader } from '../../../src/store/reader.ts';
import { OrderIndex } from '../../../src/clob/order-index.ts';
import { freshDatabase } from '../../helpers/db.ts';

import type { Db } from '../../../src/db.ts';

const YES = 'Yes1111111111111111111111111111111111111111';
const NO = 'No11111111111111111111111111111111111111111';
const POSTED = `0x${'a'.repeat(64)}`;
const FRESH = `0x${'b'.repeat(64)}`;

async function stand(t: ExecutionContext, engine: 'pglite' | 'postgresql', marketTtlMs?: number, watched?: () => boolean) {
  const pgDb = engine === 'postgresql' ? await freshDatabase('orderix') : null;
  const orm: Orm = await openOrm(pgDb ? { databaseUrl: pgDb.url } : { dataDir: 'memory://' });
  await migrate(orm, pgDb?.url);
  const reader = openReader(orm, pgDb?.url, 2);
  t.teardown(async () => {
    await reader.close();
    await orm.close();
    await pgDb?.drop();
  });
  const db = orm.em.getDriver() as unknown as Db;
  await db.execute(
    `insert into markets (condition_id, yes_token_id, no_token_id, tick_size, min_size, taker_fee_bps, status, created_at, updated_at)
     values ('m1', ?, ?, 10000, 1000000, 0, 'open', now(), now())`,
    [YES, NO],
  );
  await db.execute(
    `insert into open_orders (id, market, asset_id, owner, owner_lc, side, outcome, original_size, size_matched, price, status,
       associate_trades, type, fee_rate_bps, expiration, created_at, updated_at)
     values (?, 'm1', ?, 'Maker', 'maker', 'BUY', 'YES', 1, 0, 500000, 'LIVE', '[]', 'GTC', 0, 0, now(), now())`,
    [POSTED, YES],
  );
  // The statements the index sends, counted on the real reader.
  const sent: string[] = [];
  const counted = { query: (name: string, sql: string, params: unknown[]) => (sent.push(name), reader.query(name, sql, params)) };
  return { index: new OrderIndex(() => db, counted, marketTtlMs, watched), sent, url: pgDb?.url };
}

for (const engine of ['pglite', 'postgresql'] as const) {
  test(`${engine}: the orders asked in one turn share one statement, each with its own answer`, async (t) => {
    const { index, sent } = await stand(t, engine);
    const [posted, fresh, noMarket, freshNo] = await Promise.all([
      index.forOrder(YES, POSTED),
      index.forOrder(YES, FRESH),
      index.forOrder('Unknown111111111111111111111111111111111111', FRESH),
      index.forOrder(NO, FRESH),
    ]);
    t.deepEqual(sent, ['clob_orders_seen']);
    t.true(posted.seen);
    t.is(posted.market?.condition_id, 'm1');
    t.is(posted.market?.tick_size, 10000n);
    t.false(fresh.seen);
    t.is(fresh.market?.yes_token_id, YES);
    t.false(noMarket.seen);
    t.is(noMarket.market, null);
    t.is(freshNo.market?.no_token_id, NO);
    // A later turn is a statement of its own, and sees what was written meanwhile (a token no market
    // trades is not remembered).
    t.deepEqual(await index.forOrder('Unknown111111111111111111111111111111111111', POSTED), { seen: true, market: null });
    t.is(sent.length, 2);
  });

  test(`${engine}: a cancel's orders are read in one statement; unknown ids are left out`, async (t) => {
    const { index, sent } = await stand(t, engine);
    const [a, b] = await Promise.all([index.rowsOf([POSTED, FRESH]), index.rowsOf([FRESH])]);
    t.deepEqual(sent, ['clob_order_rows']);
    t.deepEqual([...a.values()], [{ id: POSTED, market: 'm1', owner_lc: 'maker', status: 'LIVE' }]);
    t.is(b.size, 0);
    // Alone in its turn, one order is read by its key: the same answers.
    t.deepEqual([...(await index.rowsOf([POSTED])).values()], [{ id: POSTED, market: 'm1', owner_lc: 'maker', status: 'LIVE' }]);
    t.is((await index.rowsOf([FRESH])).size, 0);
    t.deepEqual(sent, ['clob_order_rows', 'clob_order_row', 'clob_order_row']);
  });

  test(`${engine}: a token's market comes from memory for a while, whether the order was posted only once its book asked; an edit forgets it`, async (t) => {
    const { index, sent } = await stand(t, engine, 60_000); // (a TTL no slow run outlives)
    t.false((await index.forOrder(YES, FRESH)).seen);
    // The market in memory: nothing read, the order's book tells a duplicate itself.
    t.deepEqual(await index.forOrder(YES, POSTED), { seen: undefined, market: (await index.forOrder(YES, FRESH)).market });
    t.is((await index.forOrder(YES, POSTED)).market?.condition_id, 'm1');
    t.deepEqual(sent, ['clob_orders_seen']);
    // Its book asked for the ledger (CHECK_LEDGER): read, for this token's orders, first.
    t.true(await index.posted(POSTED));
    index.readLedgerFirst(YES);
    const posted = await index.forOrder(YES, POSTED);
    t.true(posted.seen);
    t.is(posted.market?.condition_id, 'm1');
    t.false((await index.forOrder(YES, FRESH)).seen);
    t.is((await index.forOrder(NO, FRESH)).seen, false, 'another token: its market read with the order');
    t.is((await index.forOrder(NO, FRESH)).seen, undefined);
    // One order alone is read by its key (a statement of its own), not as a list.
    t.deepEqual(sent, ['clob_orders_seen', 'clob_order_row', 'clob_order_row', 'clob_order_row', 'clob_orders_seen']);
    index.forgetMarket('M1');
    t.is((await index.forOrder(YES, FRESH)).market?.condition_id, 'm1');
    t.is(sent.at(-1), 'clob_orders_seen');
  });

  test(`${engine}: the market of an order placed through this node comes from memory, the others from their rows`, async (t) => {
    const { index, sent } = await stand(t, engine);
    const HERE = `0x${'c'.repeat(64)}`;
    index.placed(HERE, 'm9');
    const alone = await index.marketsOf([HERE]);
    t.deepEqual([...alone.markets], [[HERE, 'm9']]);
    t.is(alone.rows.size, 0);
    t.deepEqual(sent, [], 'nothing read');
    const mixed = await index.marketsOf([HERE, POSTED, FRESH]);
    t.deepEqual(Object.fromEntries(mixed.markets), { [HERE]: 'm9', [POSTED]: 'm1' });
    t.deepEqual([...mixed.rows.keys()], [POSTED]);
    t.is(sent.length, 1, 'the others in one statement');
  });

  test(`${engine}: a token's market is read again once it is older than the TTL`, async (t) => {
    const { index, sent } = await stand(t, engine, 50);
    await index.forOrder(NO, FRESH);
    await new Promise((r) => setTimeout(r, 80));
    await index.forOrder(NO, FRESH);
    t.deepEqual(sent, ['clob_orders_seen', 'clob_orders_seen']);
  });
}

test('postgresql: watched markets stay in memory until their row changes, whoever changes it; a lost connection forgets them', async (t) => {
  let watch: { listening(): boolean } | null = null;
  const { index, sent, url } = await stand(t, 'postgresql', 50, () => watch?.listening() ?? false);
  // As a node: one listening connection, started first, the markets' channel subscribed on it.
  const listener = new NotifyListener({ url: url!, channel: 'node_sync', log: { warn() {} } });
  await listener.start();
  t.teardown(() => listener.close());
  watch = watchMarkets(listener, () => index);
  const deadline0 = Date.now() + 5_000;
  while (!watch.listening() && Date.now() < deadline0) await new Promise((r) => setTimeout(r, 5));
  t.true(watch.listening());
  const other = new pg.Client({ connectionString: url });
  await other.connect();
  t.teardown(() => other.end());

  t.is((await index.forOrder(YES, FRESH)).market?.tick_size, 10000n);
  await new Promise((r) => setTimeout(r, 120)); // past the unwatched TTL
  await index.forOrder(YES, FRESH);
  t.deepEqual(sent, ['clob_orders_seen'], 'watched: no read after the TTL');

  // Another session edits the market: forgotten once its notification is in, then read afresh.
  await other.query(`update markets set tick_size = 1000 where condition_id = 'm1'`);
  await listener.sync();
  t.is((await index.forOrder(YES, FRESH)).market?.tick_size, 1000n);
  t.deepEqual(sent, ['clob_orders_seen', 'clob_orders_seen']);
  // A change of another market forgets only that one.
  await other.query(
    `insert into markets (condition_id, yes_token_id, no_token_id, tick_size, min_size, taker_fee_bps, status, created_at, updated_at)
     values ('m2', 'Yes2222222222222222222222222222222222222222', 'No22222222222222222222222222222222222222222', 10000, 1000000, 0, 'open', now(), now())`,
  );
  await listener.sync();
  await index.forOrder(YES, FRESH);
  t.is(sent.length, 2, 'm1 still in memory');

  // The notifications' connection is lost: everything forgotten, and the TTL applies until it listens again.
  await other.query(
    `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'listen:node_sync' and datname = current_database()`,
  );
  const deadline = Date.now() + 5_000;
  while (watch.listening() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.false(watch.listening());
  await index.forOrder(YES, FRESH);
  t.is(sent.length, 3, 'forgotten with the connection');
  await new Promise((r) => setTimeout(r, 120));
  if (!watch.listening()) {
    await index.forOrder(YES, FRESH);
    t.is(sent.length, 4, 'unwatched: read again after the TTL');
  }
  // It listens again (reconnecting after a second) and the markets are kept again.
  while (!watch.listening() && Date.now() < deadline + 5_000) await new Promise((r) => setTimeout(r, 20));
  t.true(watch.listening());
  const n = sent.length;
  await index.forOrder(YES, FRESH);
  await new Promise((r) => setTimeout(r, 120));
  await index.forOrder(YES, FRESH);
  t.is(sent.length, n + 1, 'one read after listening again, then kept');
});
