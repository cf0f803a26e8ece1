// Issue 19: one wallet cannot flood a book. Through the front door, Kafka, PostgreSQL and the
// local chain: past CLOB_MAX_OPEN_ORDERS_PER_MARKET a resting order is rejected, its hold freed,
// nothing written to the ledger; a cancel makes room again.
import test from 'ava';
import pg from 'pg';
import { call } from '../../helpers/node.ts';
import { order } from '../../helpers/clob.ts';
import { clobWorld } from '../../helpers/clob-world.ts';
import { orderHash, orderId } from '../../../src/clob/signed-order.ts';

test('a wallet at its open-order cap in a market is refused a resting order', async (t) => {
  const w = await clobWorld({ CLOB_MAX_OPEN_ORDERS_PER_MARKET: '2' });
  t.teardown(() => w.close());
  const yes = w.market.yes_token_id as string;
  const place = (o: any, orderType = 'GTC') => call(w.node.url, 'POST', '/v1/order', { token: w.A, body: { order: o, orderType } });
  const first = await place(order(w.alice, yes, 'BUY', '0.30', '5'));
  t.is(first.status, 200, JSON.stringify(first.body));
  t.is((await place(order(w.alice, yes, 'BUY', '0.31', '5'))).status, 200);
  const third = order(w.alice, yes, 'BUY', '0.32', '5');
  const refused = await place(third);
  t.is(refused.status, 400);
  t.deepEqual({ success: refused.body.success, code: refused.body.code }, { success: false, code: 'INVALID_ORDER' });
  t.regex(refused.body.errorMsg, /already has 2 open orders in this market/);
  const c = new pg.Client({ connectionString: w.node.config.databaseUrl });
  await c.connect();
  t.teardown(() => c.end());
  t.is((await c.query('select count(*) from open_orders where id = $1', [orderId(orderHash(third))])).rows[0].count, '0', 'no ledger row');

  const cancel = await call(w.node.url, 'POST', '/v1/orders/cancel', { token: w.A, body: { orderID: first.body.orderID } });
  t.deepEqual(cancel.body.canceled, [first.body.orderID]);
  const again = await place(order(w.alice, yes, 'BUY', '0.33', '5'));
  t.is(again.status, 200, JSON.stringify(again.body));
});
