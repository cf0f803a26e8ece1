// Reservations in the Wallet: a hold taken by a two-step Reserve (as mint/merge settlement takes
// them) whose order never reached its book lapses, a retried reserve counts once, and an order
// placed in one pass holds for good while it rests; fills release a taker's hold once, whole.
import test from 'ava';
import { call } from '../../helpers/node.ts';
import { order } from '../../helpers/clob.ts';
import { clobWorld, U } from '../../helpers/clob-world.ts';
import { TOPICS } from '../../../topics/names.ts';

test('a hold whose order never reached the book lapses; a repeated reserve counts once', async (t) => {
  const w = await clobWorld();
  t.teardown(() => w.close());
  const topic = w.node.config.topicPrefix + TOPICS.walletCommands;
  const wallet = w.alice.publicKey.toBase58();
  const holding = await w.node.parlays.chain()!.holding(wallet, (await call(w.node.url, 'GET', '/v1/config')).body.collateral_mint);
  // What a front door does before it dies: reserve 900 of the 1000 collateral, twice (a retry).
  const reserve = {
    type: 'Reserve',
    orderId: `0x${'cd'.repeat(32)}`,
    asset: 'collateral',
    amount: '900000000',
    market: w.market.condition_id,
    balance: { amount: holding.amount.toString(), slot: holding.slot },
    holdMs: 1500,
  };
  t.true(((await w.node.asker.ask({ topic, key: wallet, cmd: reserve, id: 'r1' })) as any).ok);
  t.true(((await w.node.asker.ask({ topic, key: wallet, cmd: reserve, id: 'r1-retry' })) as any).ok);
  // 200 collateral (a BUY of 400 at 0.50) does not fit while the hold stands...
  const blocked = await call(w.node.url, 'POST', '/v1/order', {
    token: w.A,
    body: { order: order(w.alice, w.market.yes_token_id, 'BUY', '0.50', '400'), orderType: 'GTC' },
  });
  t.is(blocked.body.code, 'INSUFFICIENT_BALANCE');
  t.regex(blocked.body.errorMsg, /unreserved balance 100000000/, 'the repeated reserve was counted once');
  // ...and fits once it lapsed: nothing leaked.
  await new Promise((r) => setTimeout(r, 1700));
  const ok = await call(w.node.url, 'POST', '/v1/order', {
    token: w.A,
    body: { order: order(w.alice, w.market.yes_token_id, 'BUY', '0.50', '400'), orderType: 'GTC' },
  });
  t.is(ok.status, 200, JSON.stringify(ok.body));
  t.is(ok.body.status, 'live');
  // A resting order's hold (one pass: held for good) does not lapse.
  await new Promise((r) => setTimeout(r, 1700));
  const still = await call(w.node.url, 'POST', '/v1/order', {
    token: w.A,
    body: { order: order(w.alice, w.market.yes_token_id, 'BUY', '0.50', '1700'), orderType: 'GTC' },
  });
  t.is(still.body.code, 'INSUFFICIENT_BALANCE');
});

test("an execution split into three trades by the maker cap releases the taker's reservation once, whole", async (t) => {
  const w = await clobWorld({ CLOB_MAX_MAKERS_PER_TRADE: '1', CLOB_MAX_MAKERS_PER_MINT_MERGE_TRADE: '1' });
  t.teardown(() => w.close());
  const place = (tok: string, o: unknown) => call(w.node.url, 'POST', '/v1/order', { token: tok, body: { order: o, orderType: 'GTC' } });
  // Bob bids NO 0.40 three times; Alice's BUY YES at 0.60 mints against each: one maker per trade.
  for (let i = 0; i < 3; i++) t.is((await place(w.B, order(w.bob, w.market.no_token_id, 'BUY', '0.40', '2'))).body.status, 'live');
  const r = await place(w.A, order(w.alice, w.market.yes_token_id, 'BUY', '0.60', '6', { feeRateBps: 100 }));
  t.is(r.body.status, 'matched', JSON.stringify(r.body));
  t.deepEqual(r.body.tradeIDs, [r.body.tradeIDs[0], `${r.body.tradeIDs[0]}:1`, `${r.body.tradeIDs[0]}:2`]);
  // The taker's three fills of one batch are one row change in the ledger: its last state, every trade in order.
  const oo = await call(w.node.url, 'GET', `/v1/open-orders/${r.body.orderID}`, { token: w.A });
  t.like(oo.body, { status: 'MATCHED', size_matched: '6' });
  t.deepEqual(oo.body.associate_trades, r.body.tradeIDs);
  // Nothing of Alice rests, so once the fill's release reached her wallet, all of her collateral is
  // unreserved again (no settlement runs here: the chain balance is unchanged).
  const collateral = (await call(w.node.url, 'GET', '/v1/config')).body.collateral_mint;
  const balance = (await w.node.parlays.chain()!.holding(w.alice.publicKey.toBase58(), collateral)).amount;
  let msg = '';
  for (let i = 0; i < 50 && !msg.includes(`unreserved balance ${balance}`); i++) {
    await new Promise((res) => setTimeout(res, 200));
    const big = await place(w.A, order(w.alice, w.market.yes_token_id, 'BUY', '0.50', String(Number(balance / U) * 2 + 2)));
    t.is(big.body.code, 'INSUFFICIENT_BALANCE');
    msg = big.body.errorMsg;
  }
  t.regex(msg, new RegExp(`unreserved balance ${balance}\\b`));
});
