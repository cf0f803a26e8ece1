// The parlay REST routes on PostgreSQL: auth rules, SPEC 7 error rows, filters, pagination,
// vault edits, webhook edge cases, dead letters and late deliveries.
import test from 'ava';
import { testNode, call, token, WEBHOOK_SECRET } from './helpers/node.ts';
import { freshDatabase } from './helpers/db.ts';
import { fixture } from './helpers/fixtures.ts';
import { deliver, UNIT } from './helpers/scenario.ts';
import { decodeTransaction } from '../src/parlay/decode.ts';
import { PARLAY_PROGRAM_ID } from '../src/chain/idl.ts';
import type { ServiceNode } from '../src/node.ts';

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
test.after.always(async () => { await node?.close(); await dropDb?.(); });

test('user routes need a valid Platform JWT (401)', async (t) => {
  for (const opts of [{}, { token: 'not-a-jwt' }, { token: token({ sub: 'x' }, 'other-secret') }, { token: token({ sub: 'x' }, undefined, -10) }]) {
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
  t.deepEqual(all.body.data.map((p: any) => p.parlay_id), [1]);
  t.is(all.body.data[0].user_wallet, ALICE);
  t.is((await call(node.url, 'GET', '/api/parlays/user/?status=claimed', { token: alice })).body.data.length, 1);
  t.is((await call(node.url, 'GET', '/api/parlays/user/?status=active', { token: alice })).body.data.length, 0);
  const bad = await call(node.url, 'GET', '/api/parlays/user/?status=bogus', { token: alice });
  t.is(bad.status, 400);
  t.is(bad.body.error, 'invalid_request');
  const bob = await call(node.url, 'GET', '/api/parlays/user/', { token: token({ sub: 'u-bob', wallet: BOB }) });
  t.deepEqual(bob.body.data.map((p: any) => [p.parlay_id, p.status]), [[3, 'lost']]);
});

test('the latest linked wallet is remembered from the claims', async (t) => {
  await call(node.url, 'GET', '/api/parlays/user/', { token: token({ sub: 'u-linked', wallet: BOB }) });
  const later = await call(node.url, 'GET', '/api/parlays/user/', { token: token({ sub: 'u-linked' }) });
  t.deepEqual(later.body.data.map((p: any) => p.parlay_id), [3]);
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
  t.deepEqual(p1.body.results.map((p: any) => p.parlay_id), [3, 1]);
  const p2 = await call(node.url, 'GET', '/api/parlays/admin/?page=2', { token: admin });
  t.deepEqual(p2.body.results, []);
  t.truthy(p2.body.previous);
  t.deepEqual((await call(node.url, 'GET', `/api/parlays/admin/?wallet=${BOB.toUpperCase()}`, { token: admin })).body.results.map((p: any) => p.parlay_id), [3]);
  t.deepEqual((await call(node.url, 'GET', '/api/parlays/admin/?status=claimed', { token: admin })).body.results.map((p: any) => p.parlay_id), [1]);
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
  t.deepEqual(Object.keys(v.body.data).sort(), ['balance', 'is_active', 'max_legs', 'max_payout_cap', 'max_stake', 'min_stake', 'total_exposure', 'total_paid_out', 'total_staked', 'updated_at', 'vault_address'].sort());
  for (const body of [{}, { balance: 5 }, { max_legs: -1 }, { min_stake: 'abc' }, { is_active: 'yes' }, { vault_address: 'not base58 !' }, { min_stake: 2_000 * UNIT }]) {
    const r = await call(node.url, 'PATCH', '/api/parlays/vault/', { token: admin, body });
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error, 'invalid_request');
  }
  const ok = await call(node.url, 'PATCH', '/api/parlays/vault/', { token: admin, body: { max_legs: 6, min_stake: 2 * UNIT, is_active: false } });
  t.is(ok.status, 200);
  t.is(ok.body.data.max_legs, 6);
  t.is(ok.body.data.min_stake, 2 * UNIT);
  t.is(ok.body.data.is_active, false);
  t.is(ok.body.data.balance, 99_966 * UNIT, 'mirrored values untouched');
  const back = await call(node.url, 'PATCH', '/api/parlays/vault/', { token: admin, body: { max_legs: 8, min_stake: String(UNIT), is_active: true } });
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
  for (const body of [{ hello: 1 }, [{ slot: 1, meta: {}, transaction: { signatures: [] } }], 'text', [{ slot: -1, meta: { err: null }, transaction: { signatures: ['s'] } }]]) {
    const r = await call(node.url, 'POST', '/api/parlays/webhooks/indexer/', { auth: WEBHOOK_SECRET, body });
    t.is(r.status, 400, JSON.stringify(body));
  }
  t.deepEqual((await call(node.url, 'POST', '/api/parlays/webhooks/indexer/', { auth: WEBHOOK_SECRET, body: [] })).body, { processed: 0, skipped: 0 });
});

test('a transaction without events of the program is skipped; an undecodable event line is dead-lettered', async (t) => {
  const pid = PARLAY_PROGRAM_ID.toBase58();
  const base = { slot: 5000, indexWithinBlock: 0, meta: { err: null }, transaction: { signatures: ['deadletter-sig-1'], message: { accountKeys: [] } } };
  const noEvents = { ...base, transaction: { signatures: ['noevents-sig'] }, meta: { err: null, logMessages: [`Program ${pid} invoke [1]`, 'Program data: aGVsbG8=', 'Program Other111 invoke [2]', `Program Other111 success`, `Program ${pid} success`].slice(2, 4) } };
  const garbage = { ...base, meta: { err: null, logMessages: [`Program ${pid} invoke [1]`, 'Program data: AAAAAAAAAAAAAAAA', `Program ${pid} success`] } };
  const r = await call(node.url, 'POST', '/api/parlays/webhooks/indexer/', { auth: WEBHOOK_SECRET, body: [noEvents, garbage] });
  t.is(r.status, 200);
  t.deepEqual(r.body, { processed: 1, skipped: 1 });
  const rows = await (node.orm.em.fork() as any).execute("select reason, payload from dead_letters where source like 'webhook:deadletter-sig-1%'");
  t.is(rows.length, 1);
  t.is(rows[0].payload, 'AAAAAAAAAAAAAAAA');
  const metrics = await call(node.url, 'GET', '/metrics');
  t.regex(metrics.body, /dead_letters_total\{[^}]*reason="undecodable_event"[^}]*\} 1/);
});

test('a truncated log is flagged: kept as a dead letter and counted, its events applied', async (t) => {
  const tx = structuredClone(fixture('08')[0]);
  tx.transaction.signatures = ['truncated-sig-1'];
  tx.meta.logMessages = [...tx.meta.logMessages.slice(0, -2), 'Log truncated']; // cut before the program's consumed/success lines
  const r = await call(node.url, 'POST', '/api/parlays/webhooks/indexer/', { auth: WEBHOOK_SECRET, body: [tx] });
  t.is(r.status, 200);
  t.deepEqual(r.body, { processed: 1, skipped: 0 });
  const rows = await (node.orm.em.fork() as any).execute("select reason from dead_letters where source = 'webhook:truncated-sig-1:truncated'");
  t.deepEqual(rows.map((x: any) => x.reason), ['log truncated']);
  t.regex((await call(node.url, 'GET', '/metrics')).body, /webhook_truncated_logs_total\{[^}]*\} 1/);
});

test('late deliveries never roll the mirror back', async (t) => {
  const db = await freshDatabase();
  const n = await testNode({ DATABASE_URL: db.url });
  t.teardown(async () => { await n.close(); await db.drop(); });
  for (const f of ['01', '02', '03', '05', '04']) t.is((await deliver(n.url, f)).status, 200);
  const list = await call(n.url, 'GET', '/api/parlays/admin/', { token: admin });
  const p1 = list.body.results[0];
  t.is(p1.status, 'claimed');
  t.is(p1.legs_won, 2);
  t.is(p1.legs_resolved, 2);
  t.deepEqual(p1.legs.map((l: any) => l.status), ['won', 'won']);
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
