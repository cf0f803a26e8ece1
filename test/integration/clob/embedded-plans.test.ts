// The embedded node (PGlite, in-process bus) keeps reading the tables that grow with its orders
// through their indexes while its housekeeping vacuums (src/store/pglite-housekeeping.ts). A vacuum
// of an empty table once told the planner "empty": the SQL functions' kept plans then scanned the
// whole ledger on every order, and the embedded path ran at half its speed with every test green.
// Counted on the engine's own statistics, not timed.
import test from 'ava';
import { call } from '../../helpers/node.ts';
import { order } from '../../helpers/clob.ts';
import { clobWorld, type ClobWorld } from '../../helpers/clob-world.ts';
import { pgliteEngineOf } from '../../../src/store/orm.ts';
import { readRows, runScript, type PgliteReadEngine } from '../../../src/store/pglite-script.ts';

const GROWING = ['ledger_messages', 'open_orders', 'trades', 'trade_parties'];

async function scans(e: PgliteReadEngine): Promise<Record<string, number>> {
  await runScript(e, 'select pg_stat_force_next_flush()');
  const rows = await readRows(
    e,
    `select relname, seq_scan::int as n from pg_stat_user_tables where relname in (${GROWING.map((t) => `'${t}'`).join(', ')})`,
    [],
  );
  return Object.fromEntries(rows.map((r) => [String(r.relname), Number(r.n)]));
}

/** Alice rests a BUY and cancels it; every fourth round Bob's SELL trades against a resting BUY of hers. */
async function rounds(w: ClobWorld, n: number, t: any): Promise<void> {
  for (let i = 0; i < n; i++) {
    const buy = await call(w.node.url, 'POST', '/v1/order', {
      token: w.A,
      body: { order: order(w.alice, w.market.yes_token_id, 'BUY', '0.40', '2'), orderType: 'GTC' },
    });
    t.is(buy.body.status, 'live', JSON.stringify(buy.body));
    if (i % 4 === 3) {
      const sell = await call(w.node.url, 'POST', '/v1/order', {
        token: w.B,
        body: { order: order(w.bob, w.market.yes_token_id, 'SELL', '0.40', '2', { feeRateBps: 100 }), orderType: 'GTC' },
      });
      t.is(sell.body.status, 'matched', JSON.stringify(sell.body));
    } else {
      const cancel = await call(w.node.url, 'POST', '/v1/orders/cancel', { token: w.A, body: { orderID: buy.body.orderID } });
      t.deepEqual(cancel.body.canceled, [buy.body.orderID]);
    }
  }
}

test('embedded: the tables that grow with the orders are never scanned whole with the housekeeping on', async (t) => {
  // The housekeeping as it runs by default, but a pass due every MB of WAL.
  const w = await clobWorld({ DATABASE_URL: '', KAFKA_BROKERS: '', PGLITE_VACUUM_WAL_MB: '1' });
  t.teardown(() => w.close());
  const e = (await pgliteEngineOf(w.node.orm)) as PgliteReadEngine;
  t.truthy(e, 'the node runs on PGlite');
  await rounds(w, 40, t);
  const before = await scans(e);
  await rounds(w, 80, t);
  const after = await scans(e);
  const grown = await readRows(
    e,
    `select (select count(*)::int from ledger_messages) as ledger, (select count(*)::int from trades) as trades`,
    [],
  );
  const vacuumed = await readRows(e, `select relname from pg_stat_user_tables where vacuum_count > 0 order by 1`, []);
  t.log(JSON.stringify({ before, after, ...grown[0], vacuumed: vacuumed.map((r) => r.relname) }));
  t.true(Number(grown[0].ledger) >= 240 && Number(grown[0].trades) >= 30, JSON.stringify(grown[0]));
  t.deepEqual(after, before, 'the last 80 rounds read these tables through their indexes only');
});
