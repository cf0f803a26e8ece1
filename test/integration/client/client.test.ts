// The typed client (src/client/) against a real node on Kafka, PostgreSQL and the local chain:
// token renewal on a timer inside a short lifetime, order hashing per contracts/clob.md, failover
// past dead and 503 nodes, an order whose answer was lost, and the stream resuming after a drop.
import test from 'ava';
import { createHash } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { createServer, connect, type Socket } from 'node:net';
import bs58 from 'bs58';
import nacl from 'tweetnacl';
import { clobWorld, type ClobWorld } from '../../helpers/clob-world.ts';
import { freePort } from '../../helpers/process-node.ts';
import { ClobClient, buildOrder, orderIdOf, UnavailableError, type ResponseInfo, type LedgerEvent } from '../../../src/client/index.ts';

let w: ClobWorld;
test.before(async () => {
  w = await clobWorld({ CLOB_TOKEN_TTL_SECONDS: '4' });
});
test.after.always(async () => {
  await w?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test.serial('the token is renewed on a timer well inside its lifetime: no request ever sees a 401', async (t) => {
  const statuses: number[] = [];
  const c = new ClobClient({
    urls: w.node.url,
    wallet: w.alice,
    onResponse: (r) => {
      if (r.route !== '/v1/auth/token') statuses.push(r.status);
    },
  });
  t.teardown(() => c.close());
  await c.signIn();
  t.is(c.signIns, 1);
  const until = Date.now() + 7_000;
  while (Date.now() < until) {
    await c.openOrders({ market: w.market.condition_id });
    await sleep(300);
  }
  t.true(c.signIns >= 3, `renewed ${c.signIns - 1} times in 7 s with a 4 s lifetime`);
  t.false(statuses.includes(401), 'never an expired token');
  c.close();
  const before = c.signIns;
  await sleep(2500);
  t.is(c.signIns, before, 'close() stops the timer');
});

test.serial('orders are built and hashed per clob.md; the id is the one the service answers', async (t) => {
  const c = new ClobClient({ urls: w.node.url, wallet: w.alice });
  t.teardown(() => c.close());
  const o = buildOrder(w.alice, {
    tokenId: w.market.yes_token_id,
    side: 'BUY',
    price: '0.35',
    size: '4',
    salt: '918273645',
    feeRateBps: 0,
  });
  t.is(o.makerAmount, '1400000');
  t.is(o.takerAmount, '4000000');
  t.is(o.maker, w.alice.publicKey.toBase58());
  // The hash written out from the contract: `clob-order-v1`, salt u64 LE, four 32-byte keys, amounts, expiration, nonce u64 LE, fee u16 LE, side u8.
  const u64 = (v: string) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    return b;
  };
  const fee = Buffer.alloc(2);
  fee.writeUInt16LE(Number(o.feeRateBps));
  const hash = createHash('sha256')
    .update(
      Buffer.concat([
        Buffer.from('clob-order-v1'),
        u64(o.salt),
        ...[o.maker, o.signer, o.taker, o.tokenId].map((k) => Buffer.from(bs58.decode(k))),
        u64(o.makerAmount),
        u64(o.takerAmount),
        u64(o.expiration),
        u64(o.nonce),
        fee,
        Buffer.from([0]),
      ]),
    )
    .digest();
  t.is(orderIdOf(o), `0x${hash.toString('hex')}`);
  t.true(nacl.sign.detached.verify(hash, bs58.decode(o.signature), w.alice.publicKey.toBytes()));
  const placed = await c.placeOrder(o);
  t.is(placed.orderID, orderIdOf(o));
  t.is(placed.status, 'live');
  await t.throwsAsync(c.placeOrder(o), { message: /DUPLICATE_ORDER/ });
  t.throws(() => buildOrder(w.alice, { tokenId: w.market.yes_token_id, side: 'BUY', price: '1.2', size: '1' }));
  t.deepEqual((await c.cancelAll()).canceled, [placed.orderID]);
});

test.serial('failover: a dead node and a 503 node are passed over; with none alive the client says so', async (t) => {
  const dead = `http://127.0.0.1:${await freePort()}`;
  const busy = createHttpServer((_req, res) => {
    res.writeHead(503, { 'content-type': 'application/json' });
    res.end('{"error":"unavailable","message":"busy"}');
  });
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => busy.close());
  const busyUrl = `http://127.0.0.1:${(busy.address() as any).port}`;
  const seen: ResponseInfo[] = [];
  const c = new ClobClient({
    urls: [dead, busyUrl, w.node.url],
    wallet: w.bob,
    retryDelayMs: 20,
    onResponse: (r) => {
      seen.push(r);
    },
  });
  t.teardown(() => c.close());
  const cfg = await c.config();
  t.truthy(cfg.collateral_mint);
  t.is(c.http.url, w.node.url);
  t.true(seen.some((r) => r.status === 503 && r.url.startsWith(busyUrl)));
  t.deepEqual(await c.openOrders(), []);
  const none = new ClobClient({ urls: [dead], wallet: w.bob, attempts: 3, retryDelayMs: 10 });
  await t.throwsAsync(none.config(), { instanceOf: UnavailableError });
});

test.serial('an order whose answer was lost (node answered 503 after placing it) is recovered, not doubled', async (t) => {
  // A front that passes the request on, drops the answer and says 503: the order did land.
  const lossy = createHttpServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const ch of req) chunks.push(ch as Buffer);
    await fetch(w.node.url + req.url, {
      method: req.method,
      headers: { authorization: req.headers.authorization ?? '', 'content-type': 'application/json' },
      body: req.method === 'GET' ? undefined : Buffer.concat(chunks),
    }).then((r) => r.text());
    res.writeHead(503, { 'content-type': 'application/json' });
    res.end('{"error":"unavailable","message":"lost"}');
  });
  await new Promise<void>((r) => lossy.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => lossy.close());
  const c = new ClobClient({ urls: w.node.url, wallet: w.bob, retryDelayMs: 20 });
  t.teardown(() => c.close());
  await c.signIn();
  (c.http as any).urls.unshift(`http://127.0.0.1:${(lossy.address() as any).port}`);
  (c.http as any).at = 0;
  const o = c.buildOrder({ tokenId: w.market.no_token_id, side: 'BUY', price: '0.15', size: '2' });
  const r = await c.placeOrder(o);
  t.true(r.recovered);
  t.is(r.orderID, orderIdOf(o));
  t.is(r.status, 'live');
  const mine = (await c.openOrders({ market: w.market.condition_id })).filter((x) => x.id === r.orderID);
  t.is(mine.length, 1, 'placed once');
  await c.cancelAll();
});

test.serial('the stream resumes after a dropped connection from the last event id: every message once, in order', async (t) => {
  // Ledger traffic first.
  const a = new ClobClient({ urls: w.node.url, wallet: w.alice });
  const b = new ClobClient({ urls: w.node.url, wallet: w.bob });
  t.teardown(() => {
    a.close();
    b.close();
  });
  for (let i = 0; i < 4; i++) await a.postOrder({ tokenId: w.market.yes_token_id, side: 'BUY', price: `0.2${i}`, size: '2' });
  await b.postOrder({ tokenId: w.market.yes_token_id, side: 'SELL', price: '0.20', size: '5', feeRateBps: w.market.taker_fee_bps });
  await a.cancelAll();
  const count = async () =>
    Number(
      (
        await (w.node.orm.em.fork() as any).execute('select count(*)::int as n from ledger_messages where market = ?', [
          w.market.condition_id,
        ])
      )[0].n,
    );
  let expected = await count();

  // A TCP relay in front of the node, cut after a few events; the client's second URL is the node.
  const sockets = new Set<Socket>();
  const relay = createServer((s) => {
    const port = Number(new URL(w.node.url).port);
    const up = connect(port, '127.0.0.1');
    sockets.add(s);
    sockets.add(up);
    s.pipe(up).pipe(s);
    s.on('error', () => undefined);
    up.on('error', () => undefined);
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => {
    relay.close();
    for (const s of sockets) s.destroy();
  });
  const relayUrl = `http://127.0.0.1:${(relay.address() as any).port}`;
  const c = new ClobClient({ urls: [relayUrl, w.node.url], wallet: w.bob });
  t.teardown(() => c.close());
  await c.signIn();
  const reconnects: string[] = [];
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 15_000);
  const got: LedgerEvent[] = [];
  for await (const ev of c.stream(w.market.condition_id, {
    from: 'beginning',
    signal: ac.signal,
    onReconnect: (why, last) => {
      reconnects.push(`${why} after ${last}`);
    },
  })) {
    got.push(ev);
    if (got.length === 3) {
      // Cut the connection (what it had delivered is already buffered), then more traffic.
      relay.close();
      for (const s of sockets) s.destroy();
      await a.postOrder({ tokenId: w.market.no_token_id, side: 'BUY', price: '0.10', size: '2' });
      await a.cancelAll();
      expected = await count();
    }
    if (got.length >= expected) break;
  }
  clearTimeout(timer);
  ac.abort();
  t.is(reconnects.length, 1, reconnects.join('; '));
  t.is(got.length, expected);
  for (const topic of ['ledger.orders', 'ledger.trades']) {
    const seqs = got.filter((x) => x.topic === topic).map((x) => x.seq);
    t.deepEqual(
      seqs,
      seqs.map((_, i) => i + 1),
      `${topic}: no gap, no repeat`,
    );
  }
  const trade = got.find((x) => x.type === 'trade_matched')!;
  t.is(trade.message.trade.maker_orders.length, 3);
});
