// The executor in the embedded mode (PGlite, in-process bus, no ledger relay): it takes its trades
// from the ledger table and settles them the same way.
import test from 'ava';
import { call } from '../../helpers/node.ts';
import { order } from '../../helpers/clob.ts';
import { settlementWorld, tradeOf, until, U } from '../../helpers/settlement-world.ts';

test('embedded: a trade settles to CONFIRMED with exact balances', async (t) => {
  const w = await settlementWorld({ DATABASE_URL: '', KAFKA_BROKERS: '' });
  t.teardown(() => w.close());
  t.is(w.node.config.databaseUrl, undefined);
  await w.approveAll(w.alice);
  await w.approveAll(w.bob);
  const yes = w.yes.toBase58();
  const c0 = w.bal(w.bob.publicKey, w.collateral);
  await call(w.node.url, 'POST', '/v1/order', { token: w.A, body: { order: order(w.alice, yes, 'SELL', '0.20', '5'), orderType: 'GTC' } });
  const r = await call(w.node.url, 'POST', '/v1/order', {
    token: w.B,
    body: { order: order(w.bob, yes, 'BUY', '0.20', '5', { feeRateBps: 100 }), orderType: 'GTC' },
  });
  const id = r.body.tradeIDs[0];
  const tr = await until(
    async () => {
      const x = await tradeOf(w.node.url, w.B, w.market.condition_id, id);
      return x?.status === 'CONFIRMED' ? x : null;
    },
    30_000,
    'confirmed',
  );
  t.truthy(tr.transaction_hash);
  // 0.20 × 5 = 1; fee 1% × 0.2 × 5 = 0.01
  t.is(c0 - w.bal(w.bob.publicKey, w.collateral), 1_010_000n);
  t.is(w.bal(w.bob.publicKey, w.yes), 105n * U);
  t.is(w.bal(w.feeRecipient.publicKey, w.collateral), 10_000n);
});
