// Raw-transaction webhook delivery from the local chain to a small Koa server: shape, auth header,
// retry on 503 and timeouts, no retry on 403, shuffle and duplicate.
import test from 'ava';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Keypair, LAMPORTS_PER_SOL } from '@solana/web3.js';
import { coder, PARLAY_PROGRAM_ID } from '../../../src/chain/idl.ts';
import { programEventLines } from '../../../src/chain/logs.ts';
import { startLocalChain, type LocalChainOptions } from '../../../src/chain/local/index.ts';

const U = 1_000_000n;
const SECRET = 'test-webhook-secret';
const legs = [
  { marketId: 101, probability: 500_000 },
  { marketId: 102, probability: 400_000 },
];

interface Received {
  authorization?: string;
  contentType?: string;
  body: any[];
  status: number;
}

/** A Koa receiver whose answer to the n-th request (0-based) is `status(n)`. */
async function receiver(status: (n: number) => number = () => 200) {
  const received: Received[] = [];
  const app = new Koa();
  app.use(async (ctx) => {
    const chunks: Buffer[] = [];
    for await (const c of ctx.req) chunks.push(c as Buffer);
    const n = received.length;
    ctx.status = status(n);
    received.push({
      authorization: ctx.get('authorization'),
      contentType: ctx.get('content-type'),
      body: JSON.parse(Buffer.concat(chunks).toString()),
      status: ctx.status,
    });
    ctx.body = { ok: ctx.status < 300 };
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/parlays/webhooks/indexer/`;
  return { url, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

async function chainWith(url: string, opts: Partial<LocalChainOptions> = {}) {
  const chain = await startLocalChain({
    webhooks: [{ url, authorization: SECRET }],
    webhookOptions: { retryBaseMs: 10, retryMaxMs: 50, maxAttempts: 4, timeoutMs: 5000 },
    ...opts,
  });
  await chain.bootstrap();
  const alice = Keypair.generate();
  await chain.fundWallet(alice.publicKey, BigInt(LAMPORTS_PER_SOL), 1_000n * U);
  return { chain, alice };
}

const sigOf = (r: Received) => r.body[0].transaction.signatures[0] as string;

test('each landed transaction of the program is POSTed as [rawTx], failed ones too', async (t) => {
  const rx = await receiver();
  const { chain, alice } = await chainWith(rx.url);
  t.teardown(async () => {
    await chain.close();
    await rx.close();
  });
  const ok = await chain.createParlay(alice, { parlayId: 1, stake: 10n * U, legs });
  const bad = await chain.createParlay(alice, { parlayId: 2, stake: 10n * U, legs: legs.slice(0, 1) });
  await chain.webhooks.idle();

  // initialize_config, seed_vault, then the two create_parlay transactions; nothing else
  t.is(rx.received.length, 4);
  t.true(rx.received.every((r) => r.authorization === SECRET && r.contentType?.startsWith('application/json')));
  const delivered = rx.received.map(sigOf);
  t.deepEqual(delivered.slice(2), [ok.signature, bad.signature]);

  const raw = rx.received[2].body;
  t.true(Array.isArray(raw) && raw.length === 1);
  const tx = raw[0];
  t.is(typeof tx.slot, 'number');
  t.is(typeof tx.blockTime, 'number');
  t.is(tx.indexWithinBlock, 0);
  t.is(tx.meta.err, null);
  t.is(tx.meta.fee, 5000);
  t.true(tx.transaction.message.accountKeys.includes(PARLAY_PROGRAM_ID.toBase58()));
  const events = programEventLines(tx.meta.logMessages, PARLAY_PROGRAM_ID.toBase58()).events.map((e) => coder.events.decode(e.data)!.name);
  t.deepEqual(events, ['ParlayCreated']);

  const failed = rx.received[3].body[0];
  t.deepEqual(failed.meta.err, { InstructionError: [0, { Custom: 6002 }] });
  t.like(chain.webhooks.stats, { delivered: 4, retries: 0, failures: 0, rejected: 0 });
});

test('retries on 503 with backoff until delivered', async (t) => {
  const rx = await receiver((n) => (n < 3 ? 503 : 200));
  const { chain, alice } = await chainWith(rx.url);
  t.teardown(async () => {
    await chain.close();
    await rx.close();
  });
  await chain.webhooks.idle();
  const before = rx.received.length;
  const r = await chain.createParlay(alice, { parlayId: 1, stake: 10n * U, legs });
  await chain.webhooks.idle();
  t.true(before >= 2);
  t.is(chain.webhooks.stats.retries, 3);
  t.is(chain.webhooks.stats.delivered, 3);
  t.is(chain.webhooks.stats.failures, 0);
  t.true(rx.received.map(sigOf).includes(r.signature));
  // every attempt carried a full body; each transaction was finally accepted exactly once
  t.is(rx.received.length, 6);
  const accepted = rx.received.filter((x) => x.status === 200).map(sigOf);
  t.is(new Set(accepted).size, 3);
  t.deepEqual([...new Set(rx.received.map(sigOf))].sort(), [...accepted].sort());
});

test('never retries a 4xx (403)', async (t) => {
  const rx = await receiver(() => 403);
  const { chain, alice } = await chainWith(rx.url);
  t.teardown(async () => {
    await chain.close();
    await rx.close();
  });
  await chain.createParlay(alice, { parlayId: 1, stake: 10n * U, legs });
  await chain.webhooks.idle();
  t.is(rx.received.length, 3);
  t.like(chain.webhooks.stats, { delivered: 0, retries: 0, rejected: 3, failures: 0 });
});

test('retries connection errors and timeouts, then gives up after maxAttempts', async (t) => {
  const rx = await receiver();
  await rx.close(); // nothing listens there any more
  const { chain } = await chainWith(rx.url);
  t.teardown(() => chain.close());
  await chain.webhooks.idle();
  t.like(chain.webhooks.stats, { delivered: 0, failures: 2, retries: 6 });
  t.true(chain.webhooks.attempts.every((a) => a.error !== undefined));
});

test('duplicate: every delivery arrives twice', async (t) => {
  const rx = await receiver();
  const { chain, alice } = await chainWith(rx.url, { webhookDuplicate: true });
  t.teardown(async () => {
    await chain.close();
    await rx.close();
  });
  const r = await chain.createParlay(alice, { parlayId: 1, stake: 10n * U, legs });
  await chain.webhooks.idle();
  t.is(rx.received.length, 6);
  t.is(rx.received.filter((x) => sigOf(x) === r.signature).length, 2);
  t.is(chain.webhooks.stats.duplicates, 3);
});

test('shuffle: pending deliveries go out in a different order, none lost', async (t) => {
  const rx = await receiver();
  const { chain, alice } = await chainWith(rx.url, { webhookShuffle: true });
  t.teardown(async () => {
    await chain.close();
    await rx.close();
  });
  await chain.webhooks.idle();
  rx.received.length = 0;
  chain.webhooks.pause();
  const sigs: string[] = [];
  for (let i = 1; i <= 10; i++) sigs.push((await chain.createParlay(alice, { parlayId: i, stake: 2n * U, legs })).signature);
  t.is(chain.webhooks.pending, 10);
  chain.webhooks.resume();
  await chain.webhooks.idle();
  const got = rx.received.map(sigOf);
  t.deepEqual([...got].sort(), [...sigs].sort());
  t.notDeepEqual(got, sigs);
});
