// Time on the book: GTD orders ejected at expiration; at a market's start every order booked before
// it is ejected; orders arriving inside the start window answer `delayed` and enter at the start.
import test from 'ava';
import { call } from '../../helpers/node.ts';
import { order, superuser } from '../../helpers/clob.ts';
import { clobWorld } from '../../helpers/clob-world.ts';

const waitFor = async <T>(f: () => Promise<T>, ok: (v: T) => boolean, ms = 8000): Promise<T> => {
  const end = Date.now() + ms;
  let v = await f();
  while (!ok(v) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 200));
    v = await f();
  }
  return v;
};

// Both stores: the clock's probes run as prepared statements (PostgreSQL's pool, PGlite's engine).
const STORES: [string, Record<string, string>][] = [
  ['PostgreSQL on Kafka', {}],
  ['embedded (PGlite, in-process bus)', { DATABASE_URL: '', KAFKA_BROKERS: '' }],
];

for (const [store, env] of STORES)
  test(`${store}: a GTD order is ejected at its expiration`, async (t) => {
    const w = await clobWorld(env);
    t.teardown(() => w.close());
    const exp = Math.floor(Date.now() / 1000) + 2;
    const r = await call(w.node.url, 'POST', '/v1/order', {
      token: w.A,
      body: { order: order(w.alice, w.market.yes_token_id, 'BUY', '0.30', '2', { expiration: exp }), orderType: 'GTD' },
    });
    t.is(r.body.status, 'live');
    const oo = await waitFor(
      () => call(w.node.url, 'GET', `/v1/open-orders/${r.body.orderID}`, { token: w.A }),
      (x) => x.body.status === 'EXPIRED',
    );
    t.is(oo.body.status, 'EXPIRED');
    t.is((await call(w.node.url, 'GET', `/v1/orders/${r.body.orderID}`, { token: w.A })).status, 404);
  });

for (const [store, env] of STORES)
  test(`${store}: game start: orders booked before it are ejected; orders in the start window wait and then enter`, async (t) => {
    const w = await clobWorld(env);
    t.teardown(() => w.close());
    // The start is set once the world is up, so slow setup cannot eat into the window.
    const start = new Date(Date.now() + 5000);
    const patched = await call(w.node.url, 'PATCH', `/api/markets/admin/markets/${w.market.condition_id}/`, {
      token: superuser(),
      body: { start_time: start.toISOString(), delay_ms: 3000 },
    });
    t.is(patched.status, 200);
    const early = await call(w.node.url, 'POST', '/v1/order', {
      token: w.A,
      body: { order: order(w.alice, w.market.yes_token_id, 'BUY', '0.30', '2'), orderType: 'GTC' },
    });
    t.is(early.body.status, 'live');
    await new Promise((r) => setTimeout(r, Math.max(0, start.getTime() - 2500 - Date.now())));
    const held = await call(w.node.url, 'POST', '/v1/order', {
      token: w.B,
      body: { order: order(w.bob, w.market.yes_token_id, 'BUY', '0.31', '2'), orderType: 'GTC' },
    });
    t.is(held.body.status, 'delayed', JSON.stringify(held.body));
    t.is((await call(w.node.url, 'GET', `/v1/open-orders/${held.body.orderID}`, { token: w.B })).body.status, 'DELAYED');
    const ejected = await waitFor(
      () => call(w.node.url, 'GET', `/v1/open-orders/${early.body.orderID}`, { token: w.A }),
      (x) => x.body.status === 'EJECTED',
    );
    t.is(ejected.body.status, 'EJECTED');
    const entered = await waitFor(
      () => call(w.node.url, 'GET', `/v1/open-orders/${held.body.orderID}`, { token: w.B }),
      (x) => x.body.status === 'LIVE',
    );
    t.is(entered.body.status, 'LIVE');
    t.is((await call(w.node.url, 'GET', `/v1/orders/${held.body.orderID}`, { token: w.B })).status, 200);
  });

test('game start ejects a pre-start order even when its row was touched after the start', async (t) => {
  const w = await clobWorld();
  t.teardown(() => w.close());
  const start = new Date(Date.now() + 3000);
  t.is(
    (
      await call(w.node.url, 'PATCH', `/api/markets/admin/markets/${w.market.condition_id}/`, {
        token: superuser(),
        body: { start_time: start.toISOString(), delay_ms: 0 },
      })
    ).status,
    200,
  );
  const early = await call(w.node.url, 'POST', '/v1/order', {
    token: w.A,
    body: { order: order(w.alice, w.market.yes_token_id, 'BUY', '0.30', '2'), orderType: 'GTC' },
  });
  t.is(early.body.status, 'live');
  // Something (a fill, a settlement update) touches the row just after the start, before any tick
  // would have ejected it: the order is still one created before the start.
  const db = w.node.orm.em.fork() as any;
  await db.execute(`update open_orders set updated_at = ?::timestamptz + interval '1 hour' where id = ?`, [
    start.toISOString(),
    early.body.orderID,
  ]);
  const ejected = await waitFor(
    () => call(w.node.url, 'GET', `/v1/open-orders/${early.body.orderID}`, { token: w.A }),
    (x) => x.body.status === 'EJECTED',
  );
  t.is(ejected.body.status, 'EJECTED');
});

test('a GTD order held in the start window expires at its expiration, not at the start', async (t) => {
  const w = await clobWorld();
  t.teardown(() => w.close());
  const start = new Date(Date.now() + 10_000);
  t.is(
    (
      await call(w.node.url, 'PATCH', `/api/markets/admin/markets/${w.market.condition_id}/`, {
        token: superuser(),
        body: { start_time: start.toISOString(), delay_ms: 60_000 },
      })
    ).status,
    200,
  );
  const exp = Math.floor(Date.now() / 1000) + 3;
  const held = await call(w.node.url, 'POST', '/v1/order', {
    token: w.A,
    body: { order: order(w.alice, w.market.yes_token_id, 'BUY', '0.30', '2', { expiration: exp }), orderType: 'GTD' },
  });
  t.is(held.body.status, 'delayed', JSON.stringify(held.body));
  const expired = await waitFor(
    () => call(w.node.url, 'GET', `/v1/open-orders/${held.body.orderID}`, { token: w.A }),
    (x) => x.body.status === 'EXPIRED',
  );
  t.is(expired.body.status, 'EXPIRED');
  t.true(Date.now() < start.getTime(), 'expired while still held, before the start');
});
