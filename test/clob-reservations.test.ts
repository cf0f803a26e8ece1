// Reservations across the two actors of the place saga: a node that dies between reserving in the
// Wallet and placing in the MarketBook leaks nothing (the hold lapses); a retried step counts once.
import test from 'ava';
import { call } from './helpers/node.ts';
import { order } from './helpers/clob.ts';
import { clobWorld } from './helpers/clob-world.ts';
import { TOPICS } from '../topics/names.ts';

test('a hold whose order never reached the book lapses; a repeated reserve counts once', async (t) => {
  const w = await clobWorld({ CLOB_RESERVATION_HOLD_MS: '1500' });
  t.teardown(() => w.close());
  const topic = w.node.config.topicPrefix + TOPICS.walletCommands;
  const wallet = w.alice.publicKey.toBase58();
  const holding = await w.node.parlays.chain()!.holding(wallet, (await call(w.node.url, 'GET', '/v1/config')).body.collateral_mint);
  // What a front door does before it dies: reserve 900 of the 1000 collateral, twice (a retry).
  const reserve = { type: 'Reserve', orderId: `0x${'cd'.repeat(32)}`, asset: 'collateral', amount: '900000000', market: w.market.condition_id, balance: { amount: holding.amount.toString(), slot: holding.slot }, holdMs: 1500 };
  t.true(((await w.node.asker.ask({ topic, key: wallet, cmd: reserve, id: 'r1' })) as any).ok);
  t.true(((await w.node.asker.ask({ topic, key: wallet, cmd: reserve, id: 'r1-retry' })) as any).ok);
  // 200 collateral (a BUY of 400 at 0.50) does not fit while the hold stands...
  const blocked = await call(w.node.url, 'POST', '/v1/order', { token: w.A, body: { order: order(w.alice, w.market.yes_token_id, 'BUY', '0.50', '400'), orderType: 'GTC' } });
  t.is(blocked.body.code, 'INSUFFICIENT_BALANCE');
  t.regex(blocked.body.errorMsg, /unreserved balance 100000000/, 'the repeated reserve was counted once');
  // ...and fits once it lapsed: nothing leaked.
  await new Promise((r) => setTimeout(r, 1700));
  const ok = await call(w.node.url, 'POST', '/v1/order', { token: w.A, body: { order: order(w.alice, w.market.yes_token_id, 'BUY', '0.50', '400'), orderType: 'GTC' } });
  t.is(ok.status, 200, JSON.stringify(ok.body));
  t.is(ok.body.status, 'live');
  // A resting order's hold was confirmed: it does not lapse.
  await new Promise((r) => setTimeout(r, 1700));
  const still = await call(w.node.url, 'POST', '/v1/order', { token: w.A, body: { order: order(w.alice, w.market.yes_token_id, 'BUY', '0.50', '1700'), orderType: 'GTC' } });
  t.is(still.body.code, 'INSUFFICIENT_BALANCE');
});
