// Issue 19, reproduction 10: one (signature, position among the transaction's events) is one event.
// A re-send with the same identity and another payload is a dead letter (`conflicting_event`), the
// first one stays; an identical re-send stays a no-op duplicate. Through the in-process bus (PGlite
// and PostgreSQL) and through Kafka.
import test, { type ExecutionContext } from 'ava';
import { Keypair } from '@solana/web3.js';
import { BN } from '@coral-xyz/anchor';
import { testNode, call, WEBHOOK_SECRET, KAFKA_BROKERS } from '../../helpers/node.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { eventLine, rawTx, sig } from '../../helpers/events.ts';
import type { ServiceNode } from '../../../src/node.ts';

const WEBHOOK = '/api/parlays/webhooks/indexer/';
const user = Keypair.generate().publicKey;

function created(parlayId: number, vaultBalance = 1_000_000_000) {
  return eventLine('ParlayCreated', {
    parlay_id: new BN(parlayId),
    user,
    stake: new BN(10_000_000),
    combined_probability: new BN(250_000_000_000),
    potential_payout: new BN(40_000_000),
    legs: [
      { market_id: new BN(101), market: user, outcome: 0, probability: 500_000 },
      { market_id: new BN(102), market: user, outcome: 1, probability: 500_000 },
    ],
    vault_balance: new BN(vaultBalance),
    total_staked: new BN(10_000_000),
    total_exposure: new BN(30_000_000),
    created_at: new BN(1_763_719_200),
  });
}

async function scenario(t: ExecutionContext, node: ServiceNode) {
  const post = (body: unknown) => call(node.url, 'POST', WEBHOOK, { auth: WEBHOOK_SECRET, body });
  const sql = (q: string, params: unknown[] = []) => (node.orm.em.fork() as any).execute(q, params) as Promise<any[]>;
  const parlays = async () =>
    (await sql('select parlay_id::int as id, tx_signature from parlays order by parlay_id')).map((r) => [r.id, r.tx_signature]);
  const conflicts = async (label: string) =>
    sql(`select source, reason, payload from dead_letters where source like ? order by id`, [`webhook:${sig(label)}:%`]);
  const S = sig('ident-1');

  const first = await post([rawTx('ident-1', 600, [created(21, 5_000_000_000)])]);
  t.deepEqual([first.status, first.body], [200, { processed: 1, skipped: 0 }]);
  t.deepEqual(await parlays(), [[21, S]]);

  // The same signature and event position, another parlay id (and a later slot with other vault values).
  const forged = await post([rawTx('ident-1', 601, [created(22, 7_000_000_000)])]);
  t.is(forged.status, 200, JSON.stringify(forged.body));
  t.deepEqual(forged.body, { processed: 1, skipped: 0 });
  t.deepEqual(await parlays(), [[21, S]], 'no second parlay');
  const rows = await conflicts('ident-1');
  t.is(rows.length, 1);
  t.regex(rows[0].reason, /^conflicting_event: ParlayCreated at .*:0 differs from the event first seen/);
  t.is(`Program data: ${rows[0].payload}`, created(22, 7_000_000_000), 'the conflicting event kept whole');
  t.true(rows[0].source.startsWith(`webhook:${S}:0:conflict:`));
  t.is(
    (await call(node.url, 'GET', '/api/parlays/vault/')).body.data.balance,
    5_000_000_000,
    'the vault values of the conflicting event are not applied',
  );

  // The identical re-send: a duplicate, nothing new (no dead letter either).
  const again = await post([rawTx('ident-1', 600, [created(21, 5_000_000_000)])]);
  t.deepEqual([again.status, again.body], [200, { processed: 1, skipped: 0 }]);
  t.deepEqual(await parlays(), [[21, S]]);
  t.is((await conflicts('ident-1')).length, 1);

  // Two payloads for one new identity in one delivery: the first stays, the second is a dead letter.
  const both = await post([rawTx('ident-2', 610, [created(23)]), rawTx('ident-2', 610, [created(24)])]);
  t.is(both.status, 200, JSON.stringify(both.body));
  t.deepEqual(
    (await parlays()).map(([id]) => id),
    [21, 23],
  );
  t.is((await conflicts('ident-2')).length, 1);

  // Two payloads for one new identity in concurrent deliveries: exactly one is applied.
  const racing = await Promise.all([post([rawTx('ident-3', 620, [created(25)])]), post([rawTx('ident-3', 620, [created(26)])])]);
  for (const r of racing) t.is(r.status, 200, JSON.stringify(r.body));
  const ids = (await parlays()).map(([id]) => id);
  t.is(ids.filter((id) => id === 25 || id === 26).length, 1, `one of 25, 26: ${ids}`);
  t.is((await conflicts('ident-3')).length, 1);

  // The second event of a transaction is its own identity: a re-send adding one applies the new one only.
  const grown = await post([rawTx('ident-1', 600, [created(21, 5_000_000_000), created(27)])]);
  t.deepEqual([grown.status, grown.body], [200, { processed: 1, skipped: 0 }]);
  t.true((await parlays()).some(([id]) => id === 27));
  t.is((await conflicts('ident-1')).length, 1);
  t.regex((await call(node.url, 'GET', '/metrics')).body, /dead_letters_total\{[^}]*reason="conflicting_event"[^}]*\} 3/);
}

test.serial('in-process bus on PGlite', async (t) => {
  const node = await testNode();
  t.teardown(() => node.close());
  await scenario(t, node);
});

test.serial('in-process bus on PostgreSQL', async (t) => {
  const db = await freshDatabase();
  const node = await testNode({ DATABASE_URL: db.url });
  t.teardown(async () => {
    await node.close();
    await db.drop();
  });
  await scenario(t, node);
});

test.serial('Kafka on PostgreSQL', async (t) => {
  const db = await freshDatabase();
  const node = await testNode({ KAFKA_BROKERS, DATABASE_URL: db.url });
  t.teardown(async () => {
    await node.close();
    await db.drop();
  });
  await scenario(t, node);
});
