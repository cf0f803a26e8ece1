// A market edited through one node is taken at once by another node's front door: every change of a
// market row is announced on PostgreSQL's `clob_markets` (Migration20261206100000), and each node's
// order index forgets that market as the notification arrives (src/modules/market-watch.ts). Until
// 2026-12-02 the other node kept the market as it had read it for up to a second, refusing an order
// at a tick the market had just been given. Two nodes, real Kafka, PostgreSQL and the local chain.
import test from 'ava';
import { Keypair } from '@solana/web3.js';
import { call } from '../../helpers/node.ts';
import { bearer, order, superuser } from '../../helpers/clob.ts';
import { clobWorld, secondNode, U, type ClobWorld } from '../../helpers/clob-world.ts';
import type { ServiceNode } from '../../../src/node.ts';

let w: ClobWorld;
let n2: ServiceNode;

test.before(async () => {
  w = await clobWorld();
  n2 = await secondNode(w);
});
test.after.always(async () => {
  await n2?.close();
  await w?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a tick made finer through node 1 is taken by node 2 as soon as the change is announced', async (t) => {
  const kp = Keypair.generate();
  await w.chain.fundWallet(kp.publicKey, 10n ** 9n, 1_000n * U);
  const tok = await bearer(w.node.url, kp);
  const yes = w.market.yes_token_id as string;
  const post = (price: string) =>
    call(n2.url, 'POST', '/v1/order', { token: tok, body: { order: order(kp, yes, 'BUY', price, '1'), orderType: 'GTC' } });

  // Node 2 reads the market (tick 0.01) with an order, and refuses a price between its ticks.
  const first = await post('0.40');
  t.is(first.status, 200, JSON.stringify(first.body));
  const between = await post('0.401');
  t.is(between.status, 400);
  t.is(between.body.code, 'INVALID_TICK_SIZE');

  // Node 1 makes the tick 0.001 (its book is configured before the edit is answered).
  const patched = await call(w.node.url, 'PATCH', `/api/markets/admin/markets/${w.market.condition_id}/`, {
    token: superuser(),
    body: { tick_size: '0.001' },
  });
  t.is(patched.status, 200, JSON.stringify(patched.body));
  const edited = Date.now();

  // Node 2 takes the new tick within the notification's delay, well before the second it used to
  // keep a market it had read (it read this one a moment before the edit).
  let answer = await post('0.401');
  while (answer.status === 400 && answer.body.code === 'INVALID_TICK_SIZE' && Date.now() - edited < 5_000) {
    await sleep(20);
    answer = await post('0.401');
  }
  const took = Date.now() - edited;
  t.is(answer.status, 200, JSON.stringify(answer.body));
  t.is(answer.body.status, 'live');
  t.true(took < 500, `node 2 took the new tick ${took} ms after the edit`);
});
