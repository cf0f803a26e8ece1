// Parlay templates on the embedded setup (in-process bus, PGlite): what `npm start` runs by default.
import test from 'ava';
import { Keypair } from '@solana/web3.js';
import { call, testNode, WEBHOOK_SECRET } from '../../helpers/node.ts';
import { createMarket, superuser } from '../../helpers/clob.ts';
import { fixture } from '../../helpers/fixtures.ts';
import type { ServiceNode } from '../../../src/node.ts';

let node: ServiceNode;
test.before(async () => {
  node = await testNode();
});
test.after.always(async () => {
  await node?.close();
});

test('templates priced from reference prices, suggested with an ETag, on PGlite and the in-process bus', async (t) => {
  t.is((await call(node.url, 'POST', '/api/parlays/webhooks/indexer/', { auth: WEBHOOK_SECRET, body: fixture('01') })).status, 200);
  const addr = () => Keypair.generate().publicKey.toBase58();
  const a = await createMarket(node.url, { on_chain_market_id: 1, market_address: addr(), reference_price: '0.25' });
  const b = await createMarket(node.url, { on_chain_market_id: 2, market_address: addr(), reference_price: '0.4' });
  const r = await call(node.url, 'POST', '/api/markets/admin/parlay-templates/', {
    token: superuser(),
    body: {
      name: 'Embedded',
      legs: [
        { condition_id: a.condition_id, selected_outcome: 'YES' },
        { condition_id: b.condition_id, selected_outcome: 'NO' },
        { demo: true, market_id: -9, question: 'Demo?', selected_outcome: 'NO', probability: '0.5' },
      ],
    },
  });
  t.is(r.status, 201, JSON.stringify(r.body));
  t.like(r.body.data, { combined_probability: '0.075000000000', payout_per_unit: '13.066666', stale: false, submittable: false });
  const s = await fetch(`${node.url}/api/markets/parlay-suggestions/`);
  t.is(s.status, 200);
  const body = await s.json();
  t.deepEqual(
    body.data.map((x: any) => x.legs.map((l: any) => l.market_id)),
    [[1, 2, -9]],
  );
  t.is((await fetch(`${node.url}/api/markets/parlay-suggestions/`, { headers: { 'if-none-match': s.headers.get('etag')! } })).status, 304);
  const q = await call(node.url, 'POST', '/api/markets/parlay-quote/', {
    body: {
      legs: [
        { condition_id: a.condition_id, selected_outcome: 'YES' },
        { condition_id: b.condition_id, selected_outcome: 'NO' },
      ],
      stake: 2_000_000,
    },
  });
  t.is(q.status, 200, JSON.stringify(q.body));
  t.is(q.body.data.potential_payout, 13_066_666); // 2 × 0.98 / 0.15
});
