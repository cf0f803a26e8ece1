// The ledger stream: gap-free per-market seq on the Kafka topics ledger.orders / ledger.trades, and
// the same messages as Server-Sent Events with resume from Last-Event-ID, exactly once and in order.
import test from 'ava';
import { Kafka, logLevel } from 'kafkajs';
import { fixKafkajsRequestQueue } from '../../../src/runtime/kafka-request-queue.ts';
import { call, KAFKA_BROKERS } from '../../helpers/node.ts';
import { order } from '../../helpers/clob.ts';
import { clobWorld } from '../../helpers/clob-world.ts';
import { sse } from '../../helpers/sse.ts';
import { TOPICS } from '../../../topics/names.ts';
import { FillBook } from '../../../examples/ledger-consumer.ts';
import { ledgerMessage } from '../../../topics/ledger.ts';

fixKafkajsRequestQueue();

test('ledger topics carry gap-free seq per market; SSE resumes from Last-Event-ID exactly once', async (t) => {
  const w = await clobWorld();
  t.teardown(() => w.close());
  const m = w.market.condition_id;
  const place = (tok: string, o: any) => call(w.node.url, 'POST', '/v1/order', { token: tok, body: { order: o, orderType: 'GTC' } });
  await place(w.A, order(w.alice, w.market.yes_token_id, 'BUY', '0.40', '5'));
  await place(w.A, order(w.alice, w.market.yes_token_id, 'BUY', '0.41', '5'));
  await place(w.B, order(w.bob, w.market.yes_token_id, 'SELL', '0.40', '7', { feeRateBps: 100 }));
  await call(w.node.url, 'POST', '/v1/orders/cancel-all', { token: w.A });

  // SSE from the beginning: read three events, drop the connection, resume from the last id.
  const url = `${w.node.url}/v1/stream?market=${m}&from=beginning`;
  const seen: any[] = [];
  const ac = new AbortController();
  let lastId = '';
  for await (const ev of sse(url, { authorization: `Bearer ${w.B}` }, ac.signal)) {
    seen.push(JSON.parse(ev.data));
    lastId = ev.id!;
    if (seen.length === 3) break;
  }
  ac.abort();
  const ac2 = new AbortController();
  const rest: any[] = [];
  const expected = Number(
    (await (w.node.orm.em.fork() as any).execute('select count(*)::int as n from ledger_messages where market = ?', [m]))[0].n,
  );
  const timer = setTimeout(() => ac2.abort(), 8000);
  try {
    for await (const ev of sse(
      url.replace('&from=beginning', ''),
      { authorization: `Bearer ${w.B}`, 'last-event-id': lastId },
      ac2.signal,
    )) {
      rest.push(JSON.parse(ev.data));
      if (seen.length + rest.length >= expected) break;
    }
  } catch {
    /* timed out */
  }
  ac2.abort();
  clearTimeout(timer);
  const all = [...seen, ...rest];
  t.is(all.length, expected, 'every message once');
  for (const topic of ['ledger.orders', 'ledger.trades']) {
    const seqs = all.filter((x) => x.topic === topic).map((x) => x.seq);
    t.deepEqual(
      seqs,
      seqs.map((_, i) => i + 1),
      `${topic}: in order, no gap, no repeat`,
    );
  }
  t.true(all.some((x) => x.type === 'trade_matched' && x.trade.maker_orders.length === 2));
  const othersOrder = all.find((x) => x.type === 'order_placed' && !x.order.owner);
  t.truthy(othersOrder, "another wallet's order is shown without its owner");
  t.true(
    all.some((x) => x.type === 'order_placed' && x.order.owner === w.bob.publicKey.toBase58()),
    'own orders in full',
  );
  t.is((await call(w.node.url, 'GET', `/v1/stream?market=${m}`, {})).status, 401);
  // The example consumer's record of Bob's fills equals the ledger's trades.
  const fills = new FillBook(w.bob.publicKey.toBase58());
  for (const x of all) t.true(fills.apply(x));
  const trades = (await call(w.node.url, 'GET', `/v1/trades?market=${m}`, { token: w.B })).body;
  t.deepEqual(
    [...fills.fills.values()].map((f) => [f.tradeId, f.role, f.amount]).sort(),
    trades.map((x: any) => [x.id, x.trader_side, x.size]).sort(),
  );
  t.false(new FillBook('x').apply({ ...all[1], seq: 5, topic: 'ledger.orders' }), 'a gap is noticed');

  // The Kafka topic: the relay publishes every message, seq gap-free per market.
  const kafka = new Kafka({ brokers: [KAFKA_BROKERS], logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `t-ledger-${Date.now()}` });
  await consumer.connect();
  await consumer.subscribe({ topics: [w.node.config.topicPrefix + TOPICS.ledgerOrders], fromBeginning: true });
  const got: any[] = [];
  const ordersExpected = all.filter((x) => x.topic === 'ledger.orders').length;
  await new Promise<void>((resolve) => {
    const stop = setTimeout(resolve, 15_000);
    void consumer.run({
      eachMessage: async ({ message }) => {
        const v = JSON.parse(message.value!.toString());
        if (v.market === m) got.push(v);
        if (got.length >= ordersExpected) {
          clearTimeout(stop);
          resolve();
        }
      },
    });
  });
  await consumer.disconnect();
  t.deepEqual(
    got.map((x) => x.seq),
    Array.from({ length: ordersExpected }, (_, i) => i + 1),
  );
  t.true(got.every((x) => x.v === 1 && x.market === m && typeof x.at === 'string'));
  // Every message on the topic (and every trade message of the SSE stream, which hides other
  // wallets' order owners) is one topics/ledger.ts describes.
  for (const x of [...got, ...all.filter((y) => y.topic === 'ledger.trades')]) {
    const r = ledgerMessage.safeParse(x);
    t.true(r.success, `${x.type}: ${r.success ? '' : JSON.stringify(r.error.issues).slice(0, 300)}`);
  }
});
