// No chain read per order (issue 15): the Wallet actor keeps each wallet's balance and allowance,
// seeded by one read the first time the node sees the wallet, then kept current by account-change
// subscriptions on the local chain's WebSocket. The chain's reads are made to fail here, so that
// what the service knows can only have come through the subscription.
import test from 'ava';
import { PublicKey } from '@solana/web3.js';
import { createTransferInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { call } from '../../helpers/node.ts';
import { order } from '../../helpers/clob.ts';
import { approve } from '../../helpers/chain-market.ts';
import { clobWorld, U, type ClobWorld } from '../../helpers/clob-world.ts';
import type { Keypair } from '@solana/web3.js';

const place = (w: ClobWorld, who: 'A' | 'B', size: string, price = '0.50') =>
  call(w.node.url, 'POST', '/v1/order', {
    token: w[who],
    body: { order: order(who === 'A' ? w.alice : w.bob, w.market.yes_token_id, 'BUY', price, size), orderType: 'GTC' },
  });

async function until<T>(f: () => Promise<T | undefined | null | false>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The wallet actor's collateral balance as its latest snapshot holds it. */
async function recorded(w: ClobWorld, who: Keypair) {
  const rows = await (w.node.orm.em.fork() as any).execute("select state from actor_snapshots where kind = 'wallet' and key = ?", [
    who.publicKey.toBase58(),
  ]);
  const state = typeof rows[0]?.state === 'string' ? JSON.parse(rows[0].state) : rows[0]?.state;
  return state?.balances?.collateral as { amount: string; slot: number; delegate?: string | null; delegatedAmount?: string } | undefined;
}

/** A token transfer on the local chain, outside the service: `from` sends `amount` collateral to `to`. */
function transfer(w: ClobWorld, mint: PublicKey, from: Keypair, to: Keypair, amount: bigint) {
  const ata = (k: Keypair) => getAssociatedTokenAddressSync(mint, k.publicKey, true);
  const r = w.chain.dev.send([createTransferInstruction(ata(from), ata(to), from.publicKey, amount)], [from]);
  if (!r.landed || r.err) throw new Error(`transfer failed: ${JSON.stringify(r.err)}`);
}

const transports = [
  ['the in-process bus', { KAFKA_BROKERS: '' }],
  ['Kafka', {}],
] as const;

for (const [transport, bus] of transports)
  test(`on ${transport}: balances and allowances follow chain changes made outside the service, with no order placed and no chain read`, async (t) => {
    const w = await clobWorld({ ...bus, RUNTIME_CHECKPOINT_MS: '100' });
    t.teardown(() => w.close());
    const mint = new PublicKey((await call(w.node.url, 'GET', '/v1/config')).body.collateral_mint);
    // The first order the node takes for Alice reads her balance once and watches her account.
    const first = await place(w, 'A', '2');
    t.is(first.status, 200, JSON.stringify(first.body));
    t.true(first.body.warnings.includes('allowance'), 'no allowance set yet');
    t.deepEqual(
      (await call(w.node.url, 'POST', '/v1/orders/cancel', { token: w.A, body: { orderID: first.body.orderID } })).body.canceled,
      [first.body.orderID],
    );
    t.is((await until(() => recorded(w, w.alice), 10_000, 'the first snapshot')).amount, (1000n * U).toString());

    // From here on every chain read fails: only the account subscription can tell the service.
    w.chain.faults.rpcError({ method: 'getAccountInfo', count: 1_000 });

    // Alice sends 900 out: with no order placed, her wallet's actor learns she has 100 left.
    transfer(w, mint, w.alice, w.bob, 900n * U);
    await until(async () => (await recorded(w, w.alice))?.amount === (100n * U).toString(), 10_000, 'the balance after the transfer out');
    const blocked = await place(w, 'A', '400'); // 200 collateral
    t.is(blocked.body.code, 'INSUFFICIENT_BALANCE');
    t.regex(blocked.body.errorMsg, /unreserved balance 100000000\b/);
    t.is(w.chain.faults.stats.rpcErrors, 1, 'only the one re-read before the rejection was tried');

    // Bob sends 1500 back and Alice approves the delegate: both are seen without any read.
    transfer(w, mint, w.bob, w.alice, 1500n * U);
    await approve(w.chain, w.alice, mint, w.delegate.publicKey, 10_000n * U);
    await until(
      async () => {
        const b = await recorded(w, w.alice);
        return b?.amount === (1600n * U).toString() && b.delegate === w.delegate.publicKey.toBase58();
      },
      10_000,
      'the balance and allowance after the transfer in',
    );
    const fits = await place(w, 'A', '3000'); // 1500 collateral
    t.is(fits.status, 200, JSON.stringify(fits.body));
    t.is(fits.body.status, 'live');
    t.deepEqual(fits.body.warnings, [], 'the allowance seen through the subscription is enough');
    t.is(w.chain.faults.stats.rpcErrors, 1, 'the order needed no chain read');
  });

for (const [transport, bus] of transports)
  test(`on ${transport}: an RPC outage leaves a known wallet trading and answers 503 for a wallet never seen`, async (t) => {
    const w = await clobWorld({ ...bus });
    t.teardown(() => w.close());
    const seed = await place(w, 'A', '2');
    t.is(seed.status, 200, JSON.stringify(seed.body));

    // Every RPC call fails from now on (the HTTP endpoint; the subscriptions stay).
    w.chain.faults.rpcError({ count: 100_000 });
    // Alice is known: an order that fits the known balance goes on, and so do cancels and re-posts.
    const fits = await place(w, 'A', '1000'); // 500 of her 1000 collateral (1 held by the first)
    t.is(fits.status, 200, JSON.stringify(fits.body));
    t.is(fits.body.status, 'live');
    const c = await call(w.node.url, 'POST', '/v1/orders/cancel', { token: w.A, body: { orderID: fits.body.orderID } });
    t.deepEqual(c.body.canceled, [fits.body.orderID]);
    t.is((await place(w, 'A', '1996')).body.status, 'live', '998 of the 999 free: the cancel freed it at once');
    // One that does not fit the known balance is refused for balance (the re-read fails, the answer stands).
    const tooBig = await place(w, 'A', '10');
    t.is(tooBig.status, 400);
    t.is(tooBig.body.code, 'INSUFFICIENT_BALANCE');

    // Bob was never seen by the service: his balance cannot be known, a clear 503.
    const unknown = await place(w, 'B', '2');
    t.is(unknown.status, 503, JSON.stringify(unknown.body));
    t.is(unknown.body.error, 'balance_unavailable');
    t.regex(unknown.body.message, /not known yet/);

    // The RPC back: Bob's next order reads his balance and goes on.
    w.chain.faults.reset();
    const later = await place(w, 'B', '2');
    t.is(later.status, 200, JSON.stringify(later.body));
    t.is(later.body.status, 'live');
  });

/** Alice's outcome token balance as the market's book last snapshotted it (a SELL's tokens are held by its book). */
async function bookRecorded(w: ClobWorld, token: string) {
  const rows = await (w.node.orm.em.fork() as any).execute("select state from actor_snapshots where kind = 'market-book' and key = ?", [
    w.market.condition_id,
  ]);
  const state = typeof rows[0]?.state === 'string' ? JSON.parse(rows[0].state) : rows[0]?.state;
  const row = (state?.balances ?? []).find((b: [string, string, unknown]) => b[0] === w.alice.publicKey.toBase58() && b[1] === token);
  return row?.[2] as { amount: string; slot: number } | undefined;
}

const sell = (w: ClobWorld, size: string, price = '0.60') =>
  call(w.node.url, 'POST', '/v1/order', {
    token: w.A,
    body: { order: order(w.alice, w.market.yes_token_id, 'SELL', price, size), orderType: 'GTC' },
  });

for (const [transport, bus] of transports)
  test(`on ${transport}: a SELL's tokens are held by its book, follow the chain with no order placed, and are free again at once on cancel`, async (t) => {
    const w = await clobWorld({ ...bus, RUNTIME_CHECKPOINT_MS: '100' });
    t.teardown(() => w.close());
    const yes = new PublicKey(w.market.yes_token_id);
    // Alice has 100 YES: the first SELL reads them once; one of all 100 holds them all.
    let resting = await sell(w, '100');
    t.is(resting.status, 200, JSON.stringify(resting.body));
    t.is(resting.body.status, 'live');
    t.is((await sell(w, '1')).body.code, 'INSUFFICIENT_BALANCE', 'all of them are held');
    // Cancelled, through each route in turn: at once, the whole balance is free again.
    for (const [route, body] of [
      ['cancel', () => ({ orderID: resting.body.orderID })],
      ['cancel-batch', () => ({ orderIDs: [resting.body.orderID] })],
      ['cancel-all', () => undefined],
      ['cancel-market', () => ({ market: w.market.condition_id })],
    ] as const) {
      const c = await call(w.node.url, 'POST', `/v1/orders/${route}`, { token: w.A, body: body() });
      t.deepEqual(c.body.canceled, [resting.body.orderID], route);
      resting = await sell(w, '100');
      t.is(resting.body.status, 'live', `${route}: ${JSON.stringify(resting.body)}`);
    }
    t.deepEqual(
      (await call(w.node.url, 'POST', '/v1/orders/cancel', { token: w.A, body: { orderID: resting.body.orderID } })).body.canceled,
      [resting.body.orderID],
    );

    // From here on every chain read fails: only the account subscription can tell the book.
    w.chain.faults.rpcError({ method: 'getAccountInfo', count: 1_000 });
    transfer(w, yes, w.alice, w.bob, 70n * U);
    await until(async () => (await bookRecorded(w, w.market.yes_token_id))?.amount === (30n * U).toString(), 10_000, 'the 30 left');
    const blocked = await sell(w, '31');
    t.is(blocked.body.code, 'INSUFFICIENT_BALANCE');
    t.regex(blocked.body.errorMsg, /unreserved balance 30000000\b/);
    t.is(w.chain.faults.stats.rpcErrors, 1, 'only the one re-read before the rejection was tried');
    // An outage leaves Alice selling what is known; Bob, never seen selling, gets a clear 503.
    t.is((await sell(w, '30')).body.status, 'live');
    const unknown = await call(w.node.url, 'POST', '/v1/order', {
      token: w.B,
      body: { order: order(w.bob, w.market.yes_token_id, 'SELL', '0.70', '1'), orderType: 'GTC' },
    });
    t.is(unknown.status, 503, JSON.stringify(unknown.body));
    t.is(unknown.body.error, 'balance_unavailable');
  });
