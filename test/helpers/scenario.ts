// The fixture scenario of test/fixtures/webhooks/README.md, against any running node.
import type { ExecutionContext } from 'ava';
import { call, token, WEBHOOK_SECRET } from './node.ts';
import { fixture } from './fixtures.ts';

export const UNIT = 1_000_000;
const ORDER = ['01', '02', '03', '04', '05', '06', '07', '08'];

export async function deliver(base: string, name: string) {
  return call(base, 'POST', '/api/parlays/webhooks/indexer/', { auth: WEBHOOK_SECRET, body: fixture(name) });
}

export async function runFixtureScenario(t: ExecutionContext, base: string) {
  const expected: Record<string, [number, number]> = {
    '01': [1, 0],
    '02': [1, 0],
    '03': [1, 0],
    '04': [1, 0],
    '05': [2, 0],
    '06': [0, 1],
    '08': [1, 0],
  };
  for (const name of ORDER) {
    const r = await deliver(base, name);
    if (name === '07') {
      t.is(r.status, 503, `07 deferred: ${JSON.stringify(r.body)}`);
      t.is(r.body.error, 'deferred');
      continue;
    }
    t.is(r.status, 200, `${name}: ${JSON.stringify(r.body)}`);
    t.deepEqual(r.body, { processed: expected[name][0], skipped: expected[name][1] }, name);
  }
  const again = await deliver(base, '07');
  t.is(again.status, 200, JSON.stringify(again.body));
  t.deepEqual(again.body, { processed: 1, skipped: 0 });
  await assertFinalState(t, base);
}

export async function assertFinalState(t: ExecutionContext, base: string) {
  const admin = token({ sub: 'admin', is_superuser: true });
  const list = await call(base, 'GET', '/api/parlays/admin/', { token: admin });
  t.is(list.status, 200);
  t.is(list.body.count, 2, 'parlays 1 and 3 exist; 2 never does');
  const byId = Object.fromEntries(list.body.results.map((p: any) => [p.parlay_id, p]));
  const p1 = byId[1];
  const p3 = byId[3];
  t.truthy(p1);
  t.truthy(p3);
  t.falsy(byId[2]);
  t.is(p1.status, 'claimed');
  t.is(p1.stake, 10 * UNIT);
  t.is(p1.combined_probability, '0.200000000000');
  t.is(p1.potential_payout, 49 * UNIT);
  t.is(p1.actual_payout, 49 * UNIT);
  t.is(p1.legs_won, 2);
  t.is(p1.legs_resolved, 2);
  t.not(p1.claim_tx_signature, '');
  t.truthy(p1.claimed_at);
  t.truthy(p1.settled_at);
  t.deepEqual(
    p1.legs.map((l: any) => [l.leg_index, l.on_chain_market_id, l.selected_outcome, l.probability_at_entry, l.status]),
    [
      [0, 101, 'YES', '0.500000', 'won'],
      [1, 102, 'NO', '0.400000', 'won'],
    ],
  );
  t.is(p3.status, 'lost');
  t.is(p3.legs_lost, 1);
  t.is(p3.legs[0].status, 'lost');
  const v = await call(base, 'GET', '/api/parlays/vault/');
  t.is(v.status, 200);
  t.is(v.body.data.balance, 99_966 * UNIT);
  t.is(v.body.data.total_staked, 15 * UNIT);
  t.is(v.body.data.total_paid_out, 49 * UNIT);
  t.is(v.body.data.total_exposure, 0);
  t.is(v.body.data.max_legs, 8);
  t.is(v.body.data.min_stake, 1 * UNIT);
  t.is(v.body.data.max_stake, 1_000 * UNIT);
  t.is(v.body.data.max_payout_cap, 50_000 * UNIT);
  t.is(v.body.data.is_active, true);
  // The owner's views (prepared statements on PostgreSQL, the ORM's connection on PGlite) agree with
  // the admin list; the wallet is compared case-insensitively.
  const owner = token({ sub: 'owner-1', wallet: String(p1.user_wallet).toUpperCase() });
  const mine = await call(base, 'GET', '/api/parlays/user/', { token: owner });
  t.is(mine.status, 200);
  t.true(
    mine.body.data.some((p: any) => p.parlay_id === p1.parlay_id),
    'the owner lists parlay 1',
  );
  t.deepEqual(
    mine.body.data.find((p: any) => p.parlay_id === p1.parlay_id),
    p1,
  );
  const claimed = await call(base, 'GET', '/api/parlays/user/?status=claimed', { token: owner });
  t.deepEqual(
    claimed.body.data.map((p: any) => p.status),
    claimed.body.data.map(() => 'claimed'),
  );
  t.true(claimed.body.data.length >= 1);
  const one = await call(base, 'GET', `/api/parlays/${p1.parlay_id}/`, { token: owner });
  t.is(one.status, 200);
  t.deepEqual(one.body.data, p1);
  return { p1, p3, vault: v.body.data };
}

/** Delivering every file again changes nothing. */
export async function redeliverAll(t: ExecutionContext, base: string) {
  const before = await snapshot(base);
  for (const name of ORDER) {
    const r = await deliver(base, name);
    t.is(r.status, 200, `redelivery of ${name}: ${JSON.stringify(r.body)}`);
  }
  t.deepEqual(await snapshot(base), before);
}

async function snapshot(base: string) {
  const admin = token({ sub: 'admin', is_superuser: true });
  const list = await call(base, 'GET', '/api/parlays/admin/', { token: admin });
  const v = await call(base, 'GET', '/api/parlays/vault/');
  const { updated_at: _u, ...vault } = v.body.data;
  return { parlays: list.body.results, vault };
}
