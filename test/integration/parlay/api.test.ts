// The parlay REST routes on PostgreSQL: auth rules, SPEC 7 error rows, filters, pagination,
// vault edits, webhook edge cases, dead letters and late deliveries.
import test from 'ava';
import jwt from 'jsonwebtoken';
import { Keypair } from '@solana/web3.js';
import { BN } from '@coral-xyz/anchor';
import { testNode, call, token, JWT_SECRET, WEBHOOK_SECRET } from '../../helpers/node.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { fixture } from '../../helpers/fixtures.ts';
import { deliver, UNIT } from '../../helpers/scenario.ts';
import { eventLine, labelOf, rawTx, sig } from '../../helpers/events.ts';
import { decodeTransaction } from '../../../src/parlay/decode.ts';
import { PARLAY_PROGRAM_ID } from '../../../src/chain/idl.ts';
import type { ServiceNode } from '../../../src/node.ts';

const userOf = (name: string) => (decodeTransaction(fixture(name)[0], PARLAY_PROGRAM_ID.toBase58()).commands[0].cmd as any).user as string;
const ALICE = userOf('03');
const BOB = userOf('08');
const admin = token({ sub: 'root', is_superuser: true });

let node: ServiceNode;
let dropDb: () => Promise<void>;

test.before(async () => {
  const db = await freshDatabase();
  dropDb = db.drop;
  node = await testNode({ DATABASE_URL: db.url });
  for (const f of ['01', '02', '03', '04', '05', '06', '08', '07']) await deliver(node.url, f);
});
test.after.always(async () => {
  await node?.close();
  await dropDb?.();
});

test('user routes need a valid Platform JWT (401)', async (t) => {
  for (const opts of [
    {},
    { token: 'not-a-jwt' },
    { token: token({ sub: 'x' }, 'other-secret') },
    { token: token({ sub: 'x' }, undefined, -10) },
  ]) {
    const r = await call(node.url, 'GET', '/api/parlays/user/', opts);
    t.is(r.status, 401);
    t.is(r.body.error, 'unauthorized');
  }
  t.is((await call(node.url, 'GET', '/api/parlays/1/')).status, 401);
});

test('a user sees the parlays of its wallet, compared case-insensitively, newest first, filtered by status', async (t) => {
  const alice = token({ sub: 'u-alice', wallet: ALICE.toLowerCase() });
  const all = await call(node.url, 'GET', '/api/parlays/user/', { token: alice });
  t.is(all.status, 200);
  t.deepEqual(
    all.body.data.map((p: any) => p.parlay_id),
    [1],
  );
  t.is(all.body.data[0].user_wallet, ALICE);
  t.is((await call(node.url, 'GET', '/api/parlays/user/?status=claimed', { token: alice })).body.data.length, 1);
  t.is((await call(node.url, 'GET', '/api/parlays/user/?status=active', { token: alice })).body.data.length, 0);
  const bad = await call(node.url, 'GET', '/api/parlays/user/?status=bogus', { token: alice });
  t.is(bad.status, 400);
  t.is(bad.body.error, 'invalid_request');
  const bob = await call(node.url, 'GET', '/api/parlays/user/', { token: token({ sub: 'u-bob', wallet: BOB }) });
  t.deepEqual(
    bob.body.data.map((p: any) => [p.parlay_id, p.status]),
    [[3, 'lost']],
  );
});

test('the latest linked wallet is remembered from the claims', async (t) => {
  await call(node.url, 'GET', '/api/parlays/user/', { token: token({ sub: 'u-linked', wallet: BOB }) });
  const later = await call(node.url, 'GET', '/api/parlays/user/', { token: token({ sub: 'u-linked' }) });
  t.deepEqual(
    later.body.data.map((p: any) => p.parlay_id),
    [3],
  );
  const nobody = await call(node.url, 'GET', '/api/parlays/user/', { token: token({ sub: 'u-none' }) });
  t.deepEqual(nobody.body, { data: [] });
});

test('a foreign parlay gives the same 404 as a missing one', async (t) => {
  const bob = token({ sub: 'u-bob', wallet: BOB });
  const own = await call(node.url, 'GET', '/api/parlays/3/', { token: bob });
  t.is(own.status, 200);
  t.is(own.body.data.parlay_id, 3);
  t.is(own.body.data.legs.length, 2);
  t.is(own.body.data.legs[0].status, 'lost');
  const foreign = await call(node.url, 'GET', '/api/parlays/1/', { token: bob });
  const missing = await call(node.url, 'GET', '/api/parlays/999/', { token: bob });
  const junk = await call(node.url, 'GET', '/api/parlays/abc/', { token: bob });
  t.is(foreign.status, 404);
  t.deepEqual(foreign.body, missing.body);
  t.deepEqual(junk.body, missing.body);
});

test('admin routes need a superuser (403) and paginate 20 per page', async (t) => {
  const user = token({ sub: 'u1', wallet: ALICE });
  t.is((await call(node.url, 'GET', '/api/parlays/admin/', { token: user })).status, 403);
  t.is((await call(node.url, 'POST', '/api/parlays/admin/3/void/', { token: user })).status, 403);
  t.is((await call(node.url, 'PATCH', '/api/parlays/vault/', { token: user, body: { max_legs: 5 } })).status, 403);
  t.is((await call(node.url, 'POST', '/api/parlays/vault/sync/', { token: user })).status, 403);
  t.is((await call(node.url, 'GET', '/api/parlays/admin/')).status, 401);
  const p1 = await call(node.url, 'GET', '/api/parlays/admin/?page=1', { token: admin });
  t.is(p1.body.count, 2);
  t.is(p1.body.next, null);
  t.is(p1.body.previous, null);
  t.deepEqual(
    p1.body.results.map((p: any) => p.parlay_id),
    [3, 1],
  );
  const p2 = await call(node.url, 'GET', '/api/parlays/admin/?page=2', { token: admin });
  t.deepEqual(p2.body.results, []);
  t.truthy(p2.body.previous);
  t.deepEqual(
    (await call(node.url, 'GET', `/api/parlays/admin/?wallet=${BOB.toUpperCase()}`, { token: admin })).body.results.map(
      (p: any) => p.parlay_id,
    ),
    [3],
  );
  t.deepEqual(
    (await call(node.url, 'GET', '/api/parlays/admin/?status=claimed', { token: admin })).body.results.map((p: any) => p.parlay_id),
    [1],
  );
  t.is((await call(node.url, 'GET', '/api/parlays/admin/?page=0', { token: admin })).status, 400);
});

test('admin void of a parlay that is not active is 400; of a missing one 404', async (t) => {
  const r = await call(node.url, 'POST', '/api/parlays/admin/1/void/', { token: admin });
  t.is(r.status, 400);
  t.is(r.body.error, 'parlay_not_active');
  t.is((await call(node.url, 'POST', '/api/parlays/admin/77/void/', { token: admin })).status, 404);
});

test('vault: public read, validated superuser PATCH of the writable fields only', async (t) => {
  const v = await call(node.url, 'GET', '/api/parlays/vault/');
  t.is(v.status, 200);
  t.deepEqual(
    Object.keys(v.body.data).sort(),
    [
      'balance',
      'is_active',
      'max_legs',
      'max_payout_cap',
      'max_stake',
      'min_stake',
      'total_exposure',
      'total_paid_out',
      'total_staked',
      'updated_at',
      'vault_address',
    ].sort(),
  );
  for (const body of [
    {},
    { balance: 5 },
    { max_legs: -1 },
    { min_stake: 'abc' },
    { is_active: 'yes' },
    { vault_address: 'not base58 !' },
    { min_stake: 2_000 * UNIT },
  ]) {
    const r = await call(node.url, 'PATCH', '/api/parlays/vault/', { token: admin, body });
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error, 'invalid_request');
  }
  const ok = await call(node.url, 'PATCH', '/api/parlays/vault/', {
    token: admin,
    body: { max_legs: 6, min_stake: 2 * UNIT, is_active: false },
  });
  t.is(ok.status, 200);
  t.is(ok.body.data.max_legs, 6);
  t.is(ok.body.data.min_stake, 2 * UNIT);
  t.is(ok.body.data.is_active, false);
  t.is(ok.body.data.balance, 99_966 * UNIT, 'mirrored values untouched');
  const back = await call(node.url, 'PATCH', '/api/parlays/vault/', {
    token: admin,
    body: { max_legs: 8, min_stake: String(UNIT), is_active: true },
  });
  t.is(back.body.data.min_stake, UNIT);
});

test('webhook: unset secret 503, mismatch 403, malformed bodies 400, empty array 0/0', async (t) => {
  const none = await testNode({ PARLAY_WEBHOOK_AUTH_SECRET: '' });
  t.teardown(() => none.close());
  const r503 = await call(none.url, 'POST', '/api/parlays/webhooks/indexer/', { auth: 'x', body: [] });
  t.is(r503.status, 503);
  t.is(r503.body.error, 'webhook_not_configured');
  t.is((await call(node.url, 'POST', '/api/parlays/webhooks/indexer/', { auth: 'wrong', body: [] })).status, 403);
  t.is((await call(node.url, 'POST', '/api/parlays/webhooks/indexer/', { body: [] })).status, 403);
  t.is((await call(node.url, 'POST', '/api/parlays/webhooks/indexer/', { auth: `Bearer ${WEBHOOK_SECRET}`, body: [] })).status, 403);
  const broken = await call(node.url, 'POST', '/api/parlays/webhooks/indexer/', { auth: WEBHOOK_SECRET, raw: '[{"slot": 1,' });
  t.is(broken.status, 400);
  for (const body of [
    { hello: 1 },
    [{ slot: 1, meta: {}, transaction: { signatures: [] } }],
    'text',
    [{ slot: -1, meta: { err: null }, transaction: { signatures: ['s'] } }],
  ]) {
    const r = await call(node.url, 'POST', '/api/parlays/webhooks/indexer/', { auth: WEBHOOK_SECRET, body });
    t.is(r.status, 400, JSON.stringify(body));
  }
  t.deepEqual((await call(node.url, 'POST', '/api/parlays/webhooks/indexer/', { auth: WEBHOOK_SECRET, body: [] })).body, {
    processed: 0,
    skipped: 0,
  });
});

test('a transaction without events of the program is skipped; an undecodable event line is dead-lettered', async (t) => {
  const pid = PARLAY_PROGRAM_ID.toBase58();
  const base = {
    slot: 5000,
    indexWithinBlock: 0,
    meta: { err: null },
    transaction: { signatures: [sig('deadletter-sig-1')], message: { accountKeys: [] } },
  };
  const noEvents = {
    ...base,
    transaction: { signatures: [sig('noevents-sig')] },
    meta: {
      err: null,
      logMessages: [
        `Program ${pid} invoke [1]`,
        'Program data: aGVsbG8=',
        'Program Other111 invoke [2]',
        `Program Other111 success`,
        `Program ${pid} success`,
      ].slice(2, 4),
    },
  };
  const garbage = {
    ...base,
    meta: { err: null, logMessages: [`Program ${pid} invoke [1]`, 'Program data: AAAAAAAAAAAAAAAA', `Program ${pid} success`] },
  };
  const r = await call(node.url, 'POST', '/api/parlays/webhooks/indexer/', { auth: WEBHOOK_SECRET, body: [noEvents, garbage] });
  t.is(r.status, 200);
  t.deepEqual(r.body, { processed: 1, skipped: 1 });
  const rows = await (node.orm.em.fork() as any).execute(
    `select reason, payload from dead_letters where source like 'webhook:${sig('deadletter-sig-1')}%'`,
  );
  t.is(rows.length, 1);
  t.is(rows[0].payload, 'AAAAAAAAAAAAAAAA');
  const metrics = await call(node.url, 'GET', '/metrics');
  t.regex(metrics.body, /dead_letters_total\{[^}]*reason="undecodable_event"[^}]*\} 1/);
});

test('a truncated log is flagged: kept as a dead letter and counted, its events applied', async (t) => {
  const tx = structuredClone(fixture('08')[0]);
  tx.transaction.signatures = [sig('truncated-sig-1')];
  tx.meta.logMessages = [...tx.meta.logMessages.slice(0, -2), 'Log truncated']; // cut before the program's consumed/success lines
  const r = await call(node.url, 'POST', '/api/parlays/webhooks/indexer/', { auth: WEBHOOK_SECRET, body: [tx] });
  t.is(r.status, 200);
  t.deepEqual(r.body, { processed: 1, skipped: 0 });
  const rows = await (node.orm.em.fork() as any).execute(
    `select reason from dead_letters where source = 'webhook:${sig('truncated-sig-1')}:truncated'`,
  );
  t.deepEqual(
    rows.map((x: any) => x.reason),
    ['log truncated'],
  );
  t.regex((await call(node.url, 'GET', '/metrics')).body, /webhook_truncated_logs_total\{[^}]*\} 1/);
});

test('late deliveries never roll the mirror back', async (t) => {
  const db = await freshDatabase();
  const n = await testNode({ DATABASE_URL: db.url });
  t.teardown(async () => {
    await n.close();
    await db.drop();
  });
  for (const f of ['01', '02', '03', '05', '04']) t.is((await deliver(n.url, f)).status, 200);
  const list = await call(n.url, 'GET', '/api/parlays/admin/', { token: admin });
  const p1 = list.body.results[0];
  t.is(p1.status, 'claimed');
  t.is(p1.legs_won, 2);
  t.is(p1.legs_resolved, 2);
  t.deepEqual(
    p1.legs.map((l: any) => l.status),
    ['won', 'won'],
  );
  const v = (await call(n.url, 'GET', '/api/parlays/vault/')).body.data;
  t.is(v.total_exposure, 0);
  t.is(v.total_paid_out, 49 * UNIT);
});

test('health and readiness', async (t) => {
  t.deepEqual((await call(node.url, 'GET', '/healthz')).body, { status: 'ok' });
  const ready = await call(node.url, 'GET', '/readyz');
  t.is(ready.status, 200);
  t.is(ready.body.checks.database, 'ok');
});

test('a Platform JWT without exp is 401', async (t) => {
  const noExp = (claims: object) => jwt.sign(claims, JWT_SECRET, { algorithm: 'HS256' });
  const user = await call(node.url, 'GET', '/api/parlays/user/', { token: noExp({ sub: 'u-alice', wallet: ALICE }) });
  t.is(user.status, 401);
  t.is(user.body.error, 'unauthorized');
  t.regex(user.body.message, /exp/);
  t.is((await call(node.url, 'GET', '/api/parlays/admin/', { token: noExp({ sub: 'root', is_superuser: true }) })).status, 401);
  t.is(
    (await call(node.url, 'GET', '/api/parlays/user/', { token: token({ sub: 'u-alice', wallet: ALICE }) })).status,
    200,
    'the same claims with exp pass',
  );
});

test('a parlay id beyond the bigint range is a 404, as a missing parlay, never a 500', async (t) => {
  const bob = token({ sub: 'u-bob', wallet: BOB });
  const missing = await call(node.url, 'GET', '/api/parlays/999/', { token: bob });
  for (const id of ['99999999999999999999', '9223372036854775808', '18446744073709551615', '9223372036854775807']) {
    const one = await call(node.url, 'GET', `/api/parlays/${id}/`, { token: bob });
    t.is(one.status, 404, `GET ${id}: ${JSON.stringify(one.body)}`);
    t.deepEqual(one.body, missing.body);
    const v = await call(node.url, 'POST', `/api/parlays/admin/${id}/void/`, { token: admin });
    t.is(v.status, 404, `void ${id}: ${JSON.stringify(v.body)}`);
    t.is(v.body.error, 'not_found');
  }
});

test('vault PATCH: an amount beyond the bigint range is 400 with a clear message; the vault stays writable', async (t) => {
  for (const body of [
    { max_payout_cap: '9999999999999999999' },
    { min_stake: '9223372036854775808' },
    { max_stake: 2 ** 60 },
    { max_payout_cap: '99999999999999999999' },
  ]) {
    const r = await call(node.url, 'PATCH', '/api/parlays/vault/', { token: admin, body });
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error, 'invalid_request');
    t.regex(r.body.message, /must be an integer from 0 to 9223372036854775807/, JSON.stringify(r.body));
  }
  // The largest value is accepted and stored (a JSON number that large is not exact: read from the table), then set back.
  const top = await call(node.url, 'PATCH', '/api/parlays/vault/', { token: admin, body: { max_payout_cap: '9223372036854775807' } });
  t.is(top.status, 200, JSON.stringify(top.body));
  const [stored] = await (node.orm.em.fork() as any).execute('select max_payout_cap::text as v from vault');
  t.is(stored.v, '9223372036854775807');
  const back = await call(node.url, 'PATCH', '/api/parlays/vault/', { token: admin, body: { max_payout_cap: 50_000 * UNIT } });
  t.is(back.status, 200, JSON.stringify(back.body));
  t.is(back.body.data.max_payout_cap, 50_000 * UNIT);
});

test('webhook: the secret is checked before the body is read (403 wrong, 503 unset), a malformed body from an authorized caller is 400', async (t) => {
  const none = await testNode({ PARLAY_WEBHOOK_AUTH_SECRET: '' });
  t.teardown(() => none.close());
  const raw = '[{"slot": 1,';
  for (const auth of [undefined, 'wrong']) {
    const r = await call(node.url, 'POST', '/api/parlays/webhooks/indexer/', { auth, raw });
    t.is(r.status, 403, `auth ${auth}: ${JSON.stringify(r.body)}`);
    t.is(r.body.error, 'forbidden');
  }
  for (const auth of [undefined, 'anything', WEBHOOK_SECRET]) {
    const r = await call(none.url, 'POST', '/api/parlays/webhooks/indexer/', { auth, raw });
    t.is(r.status, 503, `unset, auth ${auth}: ${JSON.stringify(r.body)}`);
    t.is(r.body.error, 'webhook_not_configured');
  }
  const ok = await call(node.url, 'POST', '/api/parlays/webhooks/indexer/', { auth: WEBHOOK_SECRET, raw });
  t.is(ok.status, 400);
  t.is(ok.body.error, 'malformed_body');
  // Other routes still read the body first: their malformed bodies stay 400.
  t.is((await call(node.url, 'PATCH', '/api/parlays/vault/', { token: admin, raw })).status, 400);
});

test('before its first event the vault answers a timestamp: when the mirror was created', async (t) => {
  // The embedded database a newcomer's `npm start` runs on (PGlite): a mirror created now.
  const before = Date.now();
  const n = await testNode();
  t.teardown(() => n.close());
  const v = await call(n.url, 'GET', '/api/parlays/vault/');
  t.is(v.status, 200);
  t.is(typeof v.body.data.updated_at, 'string', JSON.stringify(v.body.data));
  t.regex(v.body.data.updated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const at = Date.parse(v.body.data.updated_at);
  t.true(at >= before - 2_000 && at <= Date.now(), `${v.body.data.updated_at}: the migrations of this database ran during the test`);
  t.deepEqual((await call(n.url, 'GET', '/api/parlays/vault/')).body.data.updated_at, v.body.data.updated_at, 'stable');
  t.is(v.body.data.balance, 0);
  t.is(v.body.data.vault_address, '');
  // From the first vault event on, the time of the latest change.
  t.is((await deliver(n.url, '01')).status, 200);
  const after = (await call(n.url, 'GET', '/api/parlays/vault/')).body.data;
  t.is(after.max_legs, 8);
  t.true(Date.parse(after.updated_at) >= at, `${after.updated_at} after ${v.body.data.updated_at}`);
});

test('program events whose u64 values do not fit a bigint are dead-lettered whole and counted; the partitions go on', async (t) => {
  const db = await freshDatabase();
  const n = await testNode({ DATABASE_URL: db.url, ASK_TIMEOUT_MS: '5000' });
  t.teardown(async () => {
    await n.close();
    await db.drop();
  });
  const U64_MAX = new BN('18446744073709551615');
  const user = Keypair.generate().publicKey;
  const created = (id: BN, stake: BN, createdAt = new BN(1_763_719_200)) =>
    eventLine('ParlayCreated', {
      parlay_id: id,
      user,
      stake,
      combined_probability: new BN(250_000_000_000),
      potential_payout: new BN(40_000_000),
      legs: [
        { market_id: new BN(101), market: user, outcome: 0, probability: 500_000 },
        { market_id: new BN(102), market: user, outcome: 1, probability: 500_000 },
      ],
      vault_balance: new BN(1_000_000_000),
      total_staked: new BN(10_000_000),
      total_exposure: new BN(30_000_000),
      created_at: createdAt,
    });
  const lines = {
    'overflow-id': created(U64_MAX, new BN(10_000_000)), // the parlay's partition
    'overflow-stake': created(new BN(41), new BN('9223372036854775808')),
    'overflow-time': created(new BN(42), new BN(10_000_000), new BN('9223372036854775807')), // an i64 time no timestamp holds
    'overflow-vault': eventLine('VaultSeeded', { depositor: user, amount: new BN(1), vault_balance: U64_MAX }), // the vault's partition
  };
  const txs = Object.entries(lines).map(([sig, line], i) => rawTx(sig, 100 + i, [line]));
  const r = await call(n.url, 'POST', '/api/parlays/webhooks/indexer/', { auth: WEBHOOK_SECRET, body: txs });
  t.is(r.status, 200, JSON.stringify(r.body));
  t.deepEqual(r.body, { processed: 4, skipped: 0 });
  const rows = (await (n.orm.em.fork() as any).execute("select source, reason, payload from dead_letters where source like 'webhook:%'"))
    .map((x: any) => ({ ...x, label: labelOf(x.source.split(':')[1]) }))
    .sort((a: any, b: any) => a.label.localeCompare(b.label));
  t.deepEqual(
    rows.map((x: any) => `${x.label}:${x.source.split(':')[2]}`),
    ['overflow-id:0', 'overflow-stake:0', 'overflow-time:0', 'overflow-vault:0'],
  );
  for (const row of rows) {
    t.is(`Program data: ${row.payload}`, lines[row.label as keyof typeof lines], 'the event line kept whole');
    t.regex(row.reason, /out of the range the mirror stores/);
  }
  t.regex((await call(n.url, 'GET', '/metrics')).body, /dead_letters_total\{[^}]*reason="undecodable_event"[^}]*\} 4/);
  // Both partitions still apply what comes next.
  for (const f of ['01', '02', '03']) t.is((await deliver(n.url, f)).status, 200, f);
  const v = (await call(n.url, 'GET', '/api/parlays/vault/')).body.data;
  t.is(v.max_legs, 8, '01 applied');
  t.is(v.balance, 100_010 * UNIT, '02 and 03 applied');
  const list = await call(n.url, 'GET', '/api/parlays/admin/', { token: admin });
  t.deepEqual(
    list.body.results.map((p: any) => p.parlay_id),
    [1],
  );
});

test('admin void without an authority key (production, PARLAY_AUTHORITY_KEYPAIR unset) is 503, a configuration error', async (t) => {
  // Production without DATABASE_URL runs on PGlite (here in memory, DATA_DIR=memory://).
  const n = await testNode({ APP_ENV: 'production', SOLANA_RPC_URL: 'http://127.0.0.1:9' }, { chain: undefined });
  t.teardown(() => n.close());
  for (const f of ['01', '02', '03']) t.is((await deliver(n.url, f)).status, 200, f);
  const r = await call(n.url, 'POST', '/api/parlays/admin/1/void/', { token: admin });
  t.is(r.status, 503, JSON.stringify(r.body));
  t.is(r.body.error, 'authority_not_configured');
  t.regex(r.body.message, /PARLAY_AUTHORITY_KEYPAIR/);
});
