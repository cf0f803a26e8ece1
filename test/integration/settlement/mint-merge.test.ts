// Mint and merge as REST operations of the market makers' area (only with same-side matching off),
// reservations respected, and the allowance tool's set / show / revoke as the order book sees them.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { call, testNode } from '../../helpers/node.ts';
import { bearer, order } from '../../helpers/clob.ts';
import { settlementWorld, U } from '../../helpers/settlement-world.ts';
import { escrowOf } from '../../../src/chain/settlement-tx.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../../..');

async function allowance(args: string[]) {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli/allowance.ts', ...args], {
    cwd: root,
    env: { ...process.env, NODE_NO_WARNINGS: '1' },
  });
  return stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

test('the allowance tool sets, shows and revokes; the order book warns accordingly', async (t) => {
  const w = await settlementWorld({ CLOB_ENABLE_MINT_MERGE_MATCHING: '0' });
  t.teardown(() => w.close());
  const dir = mkdtempSync(path.join(tmpdir(), 'allowance-'));
  const file = path.join(dir, 'alice.json');
  writeFileSync(file, JSON.stringify(Array.from(w.alice.secretKey)));
  const m = w.market.condition_id;
  const common = ['--keypair', file, '--rpc', w.chain.url, '--service', w.node.url, '--market', m];
  const yes = w.yes.toBase58();
  const place = (o: any) => call(w.node.url, 'POST', '/v1/order', { token: w.A, body: { order: o, orderType: 'GTC' } });

  const shown = await allowance(['show', ...common]);
  t.deepEqual(shown.map((x) => x.mint).sort(), [w.collateral.toBase58(), w.yes.toBase58(), w.no.toBase58()].sort());
  t.true(shown.every((x) => x.delegate === null && x.is_settlement_delegate === false));
  t.deepEqual((await place(order(w.alice, yes, 'BUY', '0.10', '10'))).body.warnings, ['allowance']);

  const set = await allowance(['set', ...common, '--amount', '500']);
  t.true(
    set.every((x) => x.delegate === w.delegate.publicKey.toBase58() && x.delegated_amount === '500000000' && x.is_settlement_delegate),
  );
  t.is(w.account(w.alice.publicKey, w.collateral)!.delegatedAmount, 500n * U, 'on chain');
  t.deepEqual((await place(order(w.alice, yes, 'BUY', '0.11', '10'))).body.warnings, []);
  t.deepEqual((await place(order(w.alice, yes, 'SELL', '0.90', '10'))).body.warnings, []);
  // an allowance below the order's maker amount is short: a warning again
  const short = await place(order(w.alice, w.no.toBase58(), 'BUY', '0.60', '900')); // 540 collateral, allowance 500
  t.is(short.body.status, 'live');
  t.deepEqual(short.body.warnings, ['allowance']);

  const revoked = await allowance(['revoke', ...common]);
  t.true(revoked.every((x) => x.delegate === null && x.delegated_amount === '0'));
  t.deepEqual((await place(order(w.alice, yes, 'BUY', '0.12', '10'))).body.warnings, ['allowance']);
  t.is(
    (await allowance(['show', '--keypair', file, '--rpc', w.chain.url, '--mint', yes, '--delegate', w.delegate.publicKey.toBase58()]))[0]
      .is_settlement_delegate,
    false,
  );

  // clear errors
  const bad = await t.throwsAsync(allowance(['set', '--keypair', file, '--rpc', w.chain.url, '--mint', yes]));
  t.regex(String((bad as any).stderr), /set needs --amount/);
  const bad2 = await t.throwsAsync(allowance(['show', '--keypair', file, '--rpc', 'not a url']));
  t.regex(String((bad2 as any).stderr), /--rpc must be a URL/);

  // mint then merge round-trips balances exactly; what orders reserve is not theirs to spend
  await call(w.node.url, 'POST', '/v1/orders/cancel-all', { token: w.A });
  await allowance(['set', ...common, '--amount', 'max']);
  const snap = () => ({
    c: w.bal(w.alice.publicKey, w.collateral),
    yes: w.bal(w.alice.publicKey, w.yes),
    no: w.bal(w.alice.publicKey, w.no),
    escrow: w.chain.tokenBalance(escrowOf({ collateralMint: w.collateral, delegate: w.delegate.publicKey })),
  });
  const before = snap();
  const mm = (op: string, amount: bigint, tok = w.A) =>
    call(w.node.url, 'POST', `/v1/market-makers/${op}`, { token: tok, body: { market: m, amount: amount.toString() } });
  const minted = await mm('mint', 7n * U);
  t.is(minted.status, 200, JSON.stringify(minted.body));
  t.like(minted.body, { success: true, operation: 'mint_tokens', amount: '7000000' });
  t.deepEqual(snap(), { c: before.c - 7n * U, yes: before.yes + 7n * U, no: before.no + 7n * U, escrow: before.escrow + 7n * U });
  const merged = await mm('merge', 7n * U);
  t.is(merged.status, 200, JSON.stringify(merged.body));
  t.deepEqual(snap(), before, 'mint then merge: every balance as it was');

  // reservations: a resting BUY holds 995 of her 1000 collateral, so at most 5 can be minted
  t.is(before.c, 1_000n * U);
  t.is((await place(order(w.alice, yes, 'BUY', '0.50', '1990'))).body.status, 'live');
  const refused = await mm('mint', 6n * U);
  t.is(refused.status, 400);
  t.is(refused.body.error, 'INSUFFICIENT_BALANCE');
  t.is((await mm('mint', 5n * U)).status, 200);
  // a resting SELL holds 100 of her 105 YES, so at most 5 pairs can be merged
  t.is((await place(order(w.alice, yes, 'SELL', '0.90', '100'))).body.status, 'live');
  t.is((await mm('merge', 6n * U)).body.error, 'INSUFFICIENT_BALANCE');
  t.is((await mm('merge', 5n * U)).status, 200);
  t.is(w.bal(w.alice.publicKey, w.collateral), 1_000n * U);
  // without an allowance: refused with a clear error, nothing moves
  await allowance(['revoke', ...common]);
  const noAllowance = await mm('mint', 1n * U);
  t.is(noAllowance.status, 400);
  t.is(noAllowance.body.error, 'allowance');
  t.is((await mm('mint', 0n)).status, 400);
  t.is((await call(w.node.url, 'POST', '/v1/market-makers/mint', { body: { market: m, amount: '1' } })).status, 401);
});

test('the market makers area is 404 while same-side matching is on', async (t) => {
  const node = await testNode({});
  t.teardown(() => node.close());
  const { Keypair } = await import('@solana/web3.js');
  const tok = await bearer(node.url, Keypair.generate());
  for (const op of ['mint', 'merge']) {
    const r = await call(node.url, 'POST', `/v1/market-makers/${op}`, { token: tok, body: { market: `0x${'1'.repeat(64)}`, amount: '1' } });
    t.is(r.status, 404);
  }
});
