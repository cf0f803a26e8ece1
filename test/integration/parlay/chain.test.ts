// The mirror fed purely by the local chain's own webhook deliveries (in order, and shuffled with
// duplicates), vault sync and admin void against the chain, end to end.
import test from 'ava';
import { Keypair, PublicKey } from '@solana/web3.js';
import pino from 'pino';
import { startLocalChain, type LocalChain } from '../../../src/chain/local/index.ts';
import { Web3Gateway } from '../../../src/chain/gateway.ts';
import { testNode, call, token, WEBHOOK_SECRET } from '../../helpers/node.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { freePort } from '../../helpers/process-node.ts';
import type { ServiceNode } from '../../../src/node.ts';

const UNIT = 1_000_000n;
const admin = token({ sub: 'root', is_superuser: true });

async function world(t: any, opts: { shuffle?: boolean; duplicate?: boolean } = {}) {
  const db = await freshDatabase();
  const port = await freePort();
  const chain = await startLocalChain({
    webhooks: [{ url: `http://127.0.0.1:${port}/api/parlays/webhooks/indexer/`, authorization: WEBHOOK_SECRET }],
    webhookShuffle: opts.shuffle,
    webhookDuplicate: opts.duplicate,
    webhookOptions: { retryBaseMs: 20, retryMaxMs: 200, maxAttempts: 200 },
  });
  const boot = await chain.bootstrap();
  const node = await testNode({ DATABASE_URL: db.url, PORT: String(port) }, { chain: new Web3Gateway(chain.url, boot.authority) });
  t.teardown(async () => {
    await node.close();
    await chain.close();
    await db.drop();
  });
  return { chain, node, boot };
}

/** create, settle, claim, a lost parlay, a voided one (admin), an exposure-limit failure. */
async function scenario(t: any, chain: LocalChain, node: ServiceNode) {
  const alice = Keypair.generate();
  const bob = Keypair.generate();
  await chain.fundWallet(alice.publicKey, 10n ** 9n, 1_000n * UNIT);
  await chain.fundWallet(bob.publicKey, 10n ** 9n, 1_000n * UNIT);
  const legs = [
    { marketId: 101, probability: 500_000 },
    { marketId: 102, probability: 400_000, outcome: 1 },
  ];
  t.true((await chain.createParlay(alice, { parlayId: 1, stake: 10n * UNIT, legs })).landed);
  t.true((await chain.settleLeg(1, 0, 'won')).landed);
  t.true((await chain.settleLeg(1, 1, 'won')).landed);
  t.true((await chain.claimParlay(alice, 1)).landed);
  t.true((await chain.createParlay(bob, { parlayId: 2, stake: 5n * UNIT, legs })).landed);
  t.true((await chain.settleLeg(2, 0, 'lost')).landed);
  t.true(
    (
      await chain.createParlay(bob, {
        parlayId: 3,
        stake: 20n * UNIT,
        legs: [
          { marketId: 201, probability: 900_000 },
          { marketId: 202, probability: 900_000 },
        ],
      })
    ).landed,
  );
  // Exposure limit: with the payout cap raised, a parlay paying more than the vault's headroom fails on chain.
  t.true((await chain.updateConfig({ maxPayoutCap: 10n ** 15n })).landed);
  const tooBig = await chain.createParlay(alice, {
    parlayId: 4,
    stake: 900n * UNIT,
    legs: [
      { marketId: 301, probability: 100_000 },
      { marketId: 302, probability: 100_000 },
    ],
  });
  t.deepEqual(tooBig.err, { InstructionError: [tooBig.err ? (tooBig.err as any).InstructionError[0] : 0, { Custom: 6000 }] });
  t.true(
    (
      await chain.createParlay(alice, {
        parlayId: 5,
        stake: 2n * UNIT,
        legs: [
          { marketId: 301, probability: 500_000 },
          { marketId: 302, probability: 500_000 },
        ],
      })
    ).landed,
    'a small one still fits',
  );
  await chain.webhooks.idle();
  // Admin void of parlay 3 through the service: 202 once the void_parlay transaction is confirmed.
  const v = await call(node.url, 'POST', '/api/parlays/admin/3/void/', { token: admin });
  t.is(v.status, 202, JSON.stringify(v.body));
  t.is(v.body.data.parlay_id, 3);
  t.truthy(v.body.data.tx_signature);
  const again = await call(node.url, 'POST', '/api/parlays/admin/3/void/', { token: admin });
  t.is(again.status, 400);
  await chain.webhooks.idle();
  return { alice, bob };
}

async function assertMirrorsChain(t: any, chain: LocalChain, node: ServiceNode) {
  const list = await call(node.url, 'GET', '/api/parlays/admin/', { token: admin });
  const byId = Object.fromEntries(list.body.results.map((p: any) => [p.parlay_id, p]));
  t.is(list.body.count, 4, 'parlays 1, 2, 3 and 5; the refused 4 never exists');
  t.falsy(byId[4]);
  t.is(byId[5].status, 'active');
  t.is(byId[1].status, 'claimed');
  t.is(byId[1].combined_probability, '0.200000000000');
  t.is(byId[1].actual_payout, 49_000_000);
  t.not(byId[1].claim_tx_signature, '');
  t.is(byId[2].status, 'lost');
  t.is(byId[3].status, 'refunded');
  t.is(byId[3].actual_payout, 20_000_000);
  for (const id of [1, 2, 3]) t.is(byId[id].legs_resolved, chain.readParlay(id)!.legStatus.filter((s: number) => s !== 0).length);
  const vault = (await call(node.url, 'GET', '/api/parlays/vault/')).body.data;
  t.is(BigInt(vault.balance), chain.vaultBalance());
  t.is(vault.max_payout_cap, 10 ** 15, 'ConfigUpdated mirrored');
  const cfg = chain.readConfig()!;
  t.is(BigInt(vault.total_exposure), BigInt(cfg.totalExposure.toString()));
  t.is(BigInt(vault.total_paid_out), BigInt(cfg.totalPaidOut.toString()));
  t.is(BigInt(vault.total_staked), BigInt(cfg.totalStaked.toString()));
}

test('the mirror follows the chain from its own webhook deliveries; admin void and vault sync', async (t) => {
  const { chain, node, boot } = await world(t);
  await scenario(t, chain, node);
  await assertMirrorsChain(t, chain, node);
  const vault = (await call(node.url, 'GET', '/api/parlays/vault/')).body.data;
  t.is(vault.vault_address, boot.vault.toBase58());
  // vault sync re-reads the token account over RPC; an RPC failure answers 502
  chain.faults.rpcError({ method: 'getTokenAccountBalance' });
  const failed = await call(node.url, 'POST', '/api/parlays/vault/sync/', { token: admin });
  t.is(failed.status, 502);
  t.is(failed.body.error, 'rpc_error');
  const synced = await call(node.url, 'POST', '/api/parlays/vault/sync/', { token: admin });
  t.is(synced.status, 200);
  t.is(BigInt(synced.body.data.balance), chain.vaultBalance());
});

test('shuffled and duplicated webhook deliveries reach the same mirror', async (t) => {
  const { chain, node } = await world(t, { shuffle: true, duplicate: true });
  await scenario(t, chain, node);
  await assertMirrorsChain(t, chain, node);
  t.true(chain.webhooks.stats.duplicates > 0);
});

test('development with SOLANA_RPC_URL and no PARLAY_AUTHORITY_KEYPAIR: a generated authority signs void (logged once); the chain refuses it, no missing-key 502', async (t) => {
  const db = await freshDatabase();
  const port = await freePort();
  const chain = await startLocalChain({
    webhooks: [{ url: `http://127.0.0.1:${port}/api/parlays/webhooks/indexer/`, authorization: WEBHOOK_SECRET }],
    webhookOptions: { retryBaseMs: 20, retryMaxMs: 200, maxAttempts: 200 },
  });
  const boot = await chain.bootstrap();
  const lines: any[] = [];
  const log = pino(
    { level: 'info' },
    {
      write: (l: string) => {
        lines.push(JSON.parse(l));
      },
    },
  );
  const node = await testNode({ DATABASE_URL: db.url, PORT: String(port), SOLANA_RPC_URL: chain.url }, { chain: undefined, log });
  t.teardown(async () => {
    await node.close();
    await chain.close();
    await db.drop();
  });
  const generated = lines.filter((l) => /PARLAY_AUTHORITY_KEYPAIR unset/.test(l.msg ?? ''));
  t.is(generated.length, 1, 'logged once');
  t.not(generated[0].authority, boot.authority.publicKey.toBase58());
  const alice = Keypair.generate();
  await chain.fundWallet(alice.publicKey, 10n ** 9n, 100n * UNIT);
  t.true(
    (
      await chain.createParlay(alice, {
        parlayId: 9,
        stake: 10n * UNIT,
        legs: [
          { marketId: 1, probability: 500_000 },
          { marketId: 2, probability: 500_000 },
        ],
      })
    ).landed,
  );
  await chain.webhooks.idle();
  await chain.fundWallet(new PublicKey(generated[0].authority), 10n ** 9n, 0n); // its fees
  const v = await call(node.url, 'POST', '/api/parlays/admin/9/void/', { token: admin });
  t.is(v.status, 409, JSON.stringify(v.body));
  t.is(v.body.error, 'chain_rejected', 'signed and sent: the program config names another authority');
  t.regex(v.body.message, /Unauthorized|6012/);
});
