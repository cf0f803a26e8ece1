// The user channel's start: a wallet that connected is sent its order lines committed after it
// connected, even those committed before the feed's first turn looked at the markets (on a busy
// node that turn comes late: an order placed right after the `auth` answer was skipped, and the
// client test `subscribeUser` failed once under CI load). PGlite and real PostgreSQL.
import test from 'ava';
import pino from 'pino';
import { MarketFeed } from '../../../src/clob/market-feed.ts';
import type { Db } from '../../../src/db.ts';
import { storeDb } from '../../helpers/store-db.ts';

const at = (ms: number) => new Date(ms).toISOString();

for (const on of ['PGlite', 'PostgreSQL'] as const) {
  test(`${on}: lines committed between a wallet's connection and the feed's first look at the markets reach it; older ones do not`, async (t) => {
    const orm = await storeDb(t, on);
    const driver = orm.em.getDriver() as unknown as Db;
    await driver.execute(
      `insert into markets (condition_id, yes_token_id, no_token_id, tick_size, min_size, taker_fee_bps, status, created_at, updated_at)
       values ('m1', 'Y1', 'N1', 10000, 1000000, 0, 'open', now() - interval '1 hour', now())`,
    );
    const placed = (id: string, ms: number, ord: number) => ({
      market: 'm1',
      topic: 'orders',
      type: 'order_placed',
      owner_lc: 'alice',
      payload: { order: { id, asset_id: 'Y1', side: 'BUY', price: '0.45', original_size: '3', size_matched: '0', status: 'LIVE' } },
      at: at(ms),
      ord,
    });
    const connectedAt = Date.now();
    await driver.execute('select ledger_append(?::jsonb)', [JSON.stringify([placed('before', connectedAt - 60_000, 0)])]);

    // The feed's look at the markets waits until a line is committed after the wallet connected.
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const db: Db = {
      execute: async (sql, params) => {
        if (sql.includes('from markets m')) await gate;
        return driver.execute(sql, params);
      },
    };
    const feed = new MarketFeed({
      db: () => db,
      mintMerge: true,
      ringSize: 100,
      lingerMs: 60_000,
      pollMs: 50,
      nodeId: 'n1',
      log: pino({ level: 'silent' }),
      now: () => connectedAt,
    });
    t.teardown(() => feed.stop());
    const got: any[] = [];
    feed.addWallet('Alice', { deliver: (text) => got.push(JSON.parse(text)) });
    await driver.execute('select ledger_append(?::jsonb)', [JSON.stringify([placed('after', connectedAt + 5, 0)])]);
    open();
    const deadline = Date.now() + 10_000;
    while (!got.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 200)); // anything else would have come by now
    t.deepEqual(
      got.map((m) => [m.event_type, m.type, m.id]),
      [['order', 'PLACEMENT', 'after']],
    );
  });
}
