// Read your writes on cancel (issue 15): a cancel answers only once the cancelled orders' holds are
// free, so an order using the freed amount right after it is accepted — through each cancel route,
// on the in-process bus and on the real Kafka broker, in the same market (the hold stays there as
// the wallet's credit) and in another (that credit is recalled before the wallet would refuse).
// Nothing is freed twice.
import test from 'ava';
import { call } from '../../helpers/node.ts';
import { createMarket, order } from '../../helpers/clob.ts';
import { OutcomeTokens } from '../../helpers/chain-market.ts';
import { clobWorld, type ClobWorld } from '../../helpers/clob-world.ts';

const place = (w: ClobWorld, size: string, price = '0.50', token: string = w.market.yes_token_id) =>
  call(w.node.url, 'POST', '/v1/order', {
    token: w.A,
    body: { order: order(w.alice, token, 'BUY', price, size), orderType: 'GTC' },
  });

/** Each cancel route, cancelling the one resting order `id` of Alice. */
const cancels: [string, (w: ClobWorld, id: string) => Promise<{ status: number; body: any }>][] = [
  ['cancel', (w, id) => call(w.node.url, 'POST', '/v1/orders/cancel', { token: w.A, body: { orderID: id } })],
  ['cancel-batch', (w, id) => call(w.node.url, 'POST', '/v1/orders/cancel-batch', { token: w.A, body: { orderIDs: [id] } })],
  ['cancel-all', (w) => call(w.node.url, 'POST', '/v1/orders/cancel-all', { token: w.A })],
  ['cancel-market', (w) => call(w.node.url, 'POST', '/v1/orders/cancel-market', { token: w.A, body: { market: w.market.condition_id } })],
];

for (const [transport, env] of [
  ['the in-process bus', { KAFKA_BROKERS: '' }],
  ['Kafka', {}],
] as const) {
  test(`on ${transport}: a cancel followed at once by an order using the freed amount is accepted`, async (t) => {
    const w = await clobWorld(env);
    t.teardown(() => w.close());
    // Alice holds 1000 collateral: a BUY of 2000 at 0.50 takes all of it.
    let resting = await place(w, '2000');
    t.is(resting.status, 200, JSON.stringify(resting.body));
    t.is(resting.body.status, 'live');
    t.is((await place(w, '1')).body.code, 'INSUFFICIENT_BALANCE', 'all of it is held');
    for (let round = 0; round < 2; round++) {
      for (const [name, cancel] of cancels) {
        const c = await cancel(w, resting.body.orderID);
        t.is(c.status, 200, `${name}: ${JSON.stringify(c.body)}`);
        t.deepEqual(c.body.canceled, [resting.body.orderID], name);
        // At once, no waiting: the whole balance is free again.
        resting = await place(w, '2000');
        t.is(resting.status, 200, `${name}: ${JSON.stringify(resting.body)}`);
        t.is(resting.body.status, 'live', name);
      }
    }
    // Once the outbox has relayed the books' own releases of all those cancelled orders, what the
    // last order holds still counts: nothing was freed twice.
    await new Promise((r) => setTimeout(r, 1500));
    const more = await place(w, '1');
    t.is(more.body.code, 'INSUFFICIENT_BALANCE');
    t.regex(more.body.errorMsg, /unreserved balance 0\b/);

    // In another market: cancelled here, the freed collateral is the first book's credit; the other
    // book's BUY is refused by the wallet only after that credit was recalled, so it is accepted.
    const other = await new OutcomeTokens(w.chain).create();
    const m2 = await createMarket(w.node.url, {
      yes_token_id: other.yes.publicKey.toBase58(),
      no_token_id: other.no.publicKey.toBase58(),
      min_size: '1',
    });
    t.is((await cancels[0][1](w, resting.body.orderID)).body.canceled[0], resting.body.orderID);
    const elsewhere = await place(w, '2000', '0.50', m2.yes_token_id);
    t.is(elsewhere.status, 200, JSON.stringify(elsewhere.body));
    t.is(elsewhere.body.status, 'live');
    const back = await place(w, '1');
    t.is(back.body.code, 'INSUFFICIENT_BALANCE', 'and the first market has none of it any more');
    t.regex(back.body.errorMsg, /unreserved balance 0\b/);
  });
}
