// Issue 19, reproductions 2 and 3 (the webhook's edge): a delivery whose values the mirror cannot
// store is answered by the contract (400 for a malformed body, a dead letter for an event line that
// is unusable), never a 5xx the provider retries forever, and never a partition stalled behind it.
import test from 'ava';
import { Keypair } from '@solana/web3.js';
import { BN } from '@coral-xyz/anchor';
import { testNode, call, token, WEBHOOK_SECRET } from '../../helpers/node.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { eventLine, rawTx, sig } from '../../helpers/events.ts';
import type { ServiceNode } from '../../../src/node.ts';

const WEBHOOK = '/api/parlays/webhooks/indexer/';
const admin = token({ sub: 'root', is_superuser: true });
const user = Keypair.generate().publicKey;
const market = Keypair.generate().publicKey;

let node: ServiceNode;
let dropDb: () => Promise<void>;

test.before(async () => {
  const db = await freshDatabase();
  dropDb = db.drop;
  // Asks answered within 5 s: a stalled partition shows as a 503 here, not as a hung test.
  node = await testNode({ DATABASE_URL: db.url, ASK_TIMEOUT_MS: '5000' });
});
test.after.always(async () => {
  await node?.close();
  await dropDb?.();
});

const post = (body: unknown) => call(node.url, 'POST', WEBHOOK, { auth: WEBHOOK_SECRET, body });
const sql = (q: string, params: unknown[] = []) => (node.orm.em.fork() as any).execute(q, params) as Promise<any[]>;

type Leg = { market_id: BN; market: typeof market; outcome: number; probability: number };
const leg = (id: number, o: Partial<Leg> = {}): Leg => ({ market_id: new BN(id), market, outcome: 0, probability: 500_000, ...o });

function created(parlayId: number, legs: Leg[] = [leg(101), leg(102, { outcome: 1 })]) {
  return eventLine('ParlayCreated', {
    parlay_id: new BN(parlayId),
    user,
    stake: new BN(10_000_000),
    combined_probability: new BN(250_000_000_000),
    potential_payout: new BN(40_000_000),
    legs,
    vault_balance: new BN(1_000_000_000),
    total_staked: new BN(10_000_000),
    total_exposure: new BN(30_000_000),
    created_at: new BN(1_763_719_200),
  });
}

function settled(parlayId: number, legStatus: number, parlayStatus = 0) {
  return eventLine('LegSettled', {
    parlay_id: new BN(parlayId),
    leg_index: 0,
    market_id: new BN(101),
    leg_status: legStatus,
    parlay_status: parlayStatus,
    legs_won: 1,
    legs_lost: 0,
    legs_resolved: 1,
    actual_payout: new BN(0),
    total_exposure: new BN(1),
    settled_at: new BN(1_763_719_300),
  });
}

/** A transaction of the program with the given signature text, whatever it is. */
function txWithSignature(signature: string, slot: number, lines: string[]) {
  const tx = rawTx('unused', slot, lines);
  tx.transaction.signatures = [signature];
  return tx;
}

const parlayIds = async () => (await sql('select parlay_id::int as id from parlays order by parlay_id')).map((r) => r.id);
const deadLetters = async (like: string) =>
  sql('select source, reason, payload from dead_letters where source like ? order by source', [like]);

test.serial('a 300-character signature is a 400 at the edge, nothing is stored, and the partition applies the next delivery', async (t) => {
  const poison = txWithSignature('A'.repeat(300), 100, [created(7)]);
  const r = await post([poison]);
  t.is(r.status, 400, JSON.stringify(r.body));
  t.is(r.body.error, 'malformed_body');
  t.regex(r.body.message, /signature/);
  t.deepEqual(await parlayIds(), [], 'no parlay stored');
  t.deepEqual(await sql('select source from dead_letters'), [], 'no dead letter either: the body was refused whole');
  // Other signatures that are not one: too long by one, outside the base58 alphabet, not 64 bytes.
  for (const s of ['2'.repeat(89), `0OIl${sig('x').slice(4)}`, '2'.repeat(40), '1'.repeat(70)]) {
    const bad = await post([txWithSignature(s, 101, [created(7)])]);
    t.is(bad.status, 400, s);
  }
  // The same parlay (so the same partition), validly signed: applied at once.
  const ok = await post([rawTx('valid-7', 102, [created(7)])]);
  t.is(ok.status, 200, JSON.stringify(ok.body));
  t.deepEqual(ok.body, { processed: 1, skipped: 0 });
  t.deepEqual(await parlayIds(), [7]);
  const [row] = await sql('select tx_signature from parlays where parlay_id = 7');
  t.is(row.tx_signature, sig('valid-7'));
});

test.serial(
  'an undecodable data line: with a 300-character signature a 400; with a real one a dead letter whose source fits its column',
  async (t) => {
    const garbage = 'Program data: AAAAAAAAAAAAAAAA';
    const r = await post([txWithSignature('B'.repeat(300), 200, [garbage])]);
    t.is(r.status, 400, JSON.stringify(r.body));
    t.deepEqual(await deadLetters('webhook:B%'), []);
    const ok = await post([rawTx('undecodable-1', 201, [garbage, created(8)])]);
    t.is(ok.status, 200, JSON.stringify(ok.body));
    t.deepEqual(ok.body, { processed: 1, skipped: 0 });
    const rows = await deadLetters(`webhook:${sig('undecodable-1')}%`);
    t.deepEqual(
      rows.map((x) => [x.source, x.payload]),
      [[`webhook:${sig('undecodable-1')}:0`, 'AAAAAAAAAAAAAAAA']],
    );
    t.true(rows[0].source.length <= 255);
    t.true((await parlayIds()).includes(8), 'the other event of the transaction applied');
  },
);

test.serial('a Program data line with a NUL byte is a 400, never a database error', async (t) => {
  for (const line of [
    'Program data: AAAA\u0000AAAA',
    `Program data: ${created(9).slice('Program data: '.length)}\u0000`,
    'Program log: \u0000',
  ]) {
    const r = await post([rawTx(`nul-${line.length}`, 300, [line, created(9)])]);
    t.is(r.status, 400, JSON.stringify(r.body));
    t.is(r.body.error, 'malformed_body');
    t.regex(r.body.message, /NUL/);
  }
  t.false((await parlayIds()).includes(9), 'nothing of the refused delivery applied');
  t.deepEqual(await deadLetters(`webhook:${sig('nul-')}%`), []);
  // A lone surrogate (no UTF-8 text holds it) likewise.
  t.is((await post([rawTx('surrogate', 301, ['Program log: \ud800', created(9)])])).status, 400);
});

test.serial(
  'decodable events with values the program never emits are dead letters with a reason; the rest of the delivery applies',
  async (t) => {
    const txs = [
      rawTx('range-ok', 400, [created(10)]),
      rawTx('range-probability', 401, [created(11, [leg(101, { probability: 4_000_000_000 }), leg(102)])]),
      rawTx('range-outcome', 402, [created(12, [leg(101), leg(102, { outcome: 2 })])]),
      // One transaction: a bad LegSettled and a good ParlayCreated.
      rawTx('range-status', 403, [settled(10, 255), created(13)]),
      rawTx('range-parlay-status', 404, [settled(10, 1, 9)]),
    ];
    const r = await post(txs);
    t.is(r.status, 200, JSON.stringify(r.body));
    t.deepEqual(r.body, { processed: 5, skipped: 0 });
    const reasonOf = async (label: string) => (await deadLetters(`webhook:${sig(label)}:%`)).map((x) => x.reason);
    const [prob] = await reasonOf('range-probability');
    t.regex(prob, /^event ParlayCreated unusable: leg 0 probability 4000000000 /);
    t.regex((await reasonOf('range-outcome'))[0], /leg 1 outcome 2 /);
    t.deepEqual(
      (await deadLetters(`webhook:${sig('range-status')}:%`)).map((x) => x.source),
      [`webhook:${sig('range-status')}:0`],
    );
    t.regex((await reasonOf('range-status'))[0], /^event LegSettled unusable: leg_status 255 /);
    t.regex((await reasonOf('range-parlay-status'))[0], /parlay_status 9 /);
    for (const x of await sql("select reason from dead_letters where source like 'webhook:%'")) t.true(x.reason.length <= 500);
    t.deepEqual(
      (await parlayIds()).filter((id) => id >= 10),
      [10, 13],
      'the valid events applied, the unusable ones not',
    );
    const legs = await sql('select status from parlay_legs where parlay_id = 10 order by leg_index');
    t.deepEqual(
      legs.map((l) => l.status),
      ['pending', 'pending'],
      'no LegSettled with a status the program never emits',
    );
    t.regex((await call(node.url, 'GET', '/metrics')).body, /dead_letters_total\{[^}]*reason="undecodable_event"[^}]*\} \d+/);
    // The partitions go on.
    const next = await post([rawTx('range-after', 405, [settled(10, 1)])]);
    t.is(next.status, 200, JSON.stringify(next.body));
    t.is((await sql('select status from parlay_legs where parlay_id = 10 and leg_index = 0'))[0].status, 'won');
  },
);

test.serial('a Log truncated line with an extra field nested 20,000 levels deep: answered by the contract, never a 5xx', async (t) => {
  const tx: any = rawTx('deep-truncated', 500, [created(14)]);
  tx.meta.logMessages = [...tx.meta.logMessages.slice(0, -1), 'Log truncated'];
  const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
  const text = JSON.stringify([{ ...tx, meta: { ...tx.meta, innerInstructions: '@DEEP@' }, extra: '@DEEP@' }]).replaceAll('"@DEEP@"', deep);
  const r = await call(node.url, 'POST', WEBHOOK, { auth: WEBHOOK_SECRET, raw: text });
  t.log(`answered ${r.status}`);
  t.true(r.status === 200 || r.status === 400, `${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
  if (r.status === 200) {
    // Kept as a truncated-log dead letter without the fields the mirror does not read.
    const rows = await deadLetters(`webhook:${sig('deep-truncated')}:truncated`);
    t.is(rows.length, 1);
    t.false(rows[0].payload.includes('[[['), 'the nested field is not kept');
    t.deepEqual(JSON.parse(rows[0].payload).logMessages, tx.meta.logMessages);
    t.true((await parlayIds()).includes(14));
  }
  t.is((await call(node.url, 'GET', '/healthz')).status, 200);
});

test.serial('a list of parlays is still served after all of it', async (t) => {
  const list = await call(node.url, 'GET', '/api/parlays/admin/', { token: admin });
  t.is(list.status, 200);
  t.true(list.body.count >= 4);
});
