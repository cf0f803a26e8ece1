// Acceptance of `ops reconcile` (issue 8, item 6): two mirrors of one local chain on real Kafka and
// PostgreSQL. Mirror A gets every webhook delivery; mirror B has deliveries withheld for good (the
// provider's answer was a 4xx, or its retries ran out) for most of a scripted parlay scenario. A
// reconcile run from the chain, interrupted with SIGINT and resumed from its cursor, brings B to
// exactly A's state; running it again (in-process or through the webhook endpoint) changes nothing.
import test from 'ava';
import { Keypair } from '@solana/web3.js';
import { Kafka, logLevel } from 'kafkajs';
import { fixKafkajsRequestQueue } from '../../../src/runtime/kafka-request-queue.ts';
import { startLocalChain, type LocalChain } from '../../../src/chain/local/index.ts';
import { Web3Gateway } from '../../../src/chain/gateway.ts';
import { testNode, call, token, WEBHOOK_SECRET, KAFKA_BROKERS } from '../../helpers/node.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { freePort } from '../../helpers/process-node.ts';
import { runOps, startOps } from '../../helpers/ops-cli.ts';
import type { ServiceNode } from '../../../src/node.ts';

fixKafkajsRequestQueue();

const UNIT = 1_000_000n;
const admin = token({ sub: 'root', is_superuser: true });

let chain: LocalChain;
let A: ServiceNode;
let B: ServiceNode;
const drops: (() => Promise<void>)[] = [];

test.before(async () => {
  const [pa, pb] = [await freePort(), await freePort()];
  chain = await startLocalChain({
    webhooks: [
      { url: `http://127.0.0.1:${pa}/api/parlays/webhooks/indexer/`, authorization: WEBHOOK_SECRET },
      { url: `http://127.0.0.1:${pb}/api/parlays/webhooks/indexer/`, authorization: WEBHOOK_SECRET },
    ],
    webhookOptions: { retryBaseMs: 20, retryMaxMs: 200, maxAttempts: 100 },
  });
  const boot = await chain.bootstrap();
  const [da, dbb] = [await freshDatabase(), await freshDatabase()];
  drops.push(da.drop, dbb.drop);
  A = await testNode({ DATABASE_URL: da.url, KAFKA_BROKERS, PORT: String(pa) }, { chain: new Web3Gateway(chain.url, boot.authority) });
  B = await testNode({ DATABASE_URL: dbb.url, KAFKA_BROKERS, PORT: String(pb) }, { chain: new Web3Gateway(chain.url, boot.authority) });
  await chain.webhooks.idle();
});
test.after.always(async () => {
  await A?.close();
  await B?.close();
  await chain?.close();
  for (const d of drops) await d().catch(() => undefined);
});

/** Withholds deliveries to B: its target answers 403, which the provider never retries. */
const withholdFromB = (on: boolean) => {
  chain.webhooks.targets[1].authorization = on ? 'withheld' : WEBHOOK_SECRET;
};

async function mirror(node: ServiceNode) {
  const list = await call(node.url, 'GET', '/api/parlays/admin/', { token: admin });
  const { updated_at: _u, ...vault } = (await call(node.url, 'GET', '/api/parlays/vault/')).body.data;
  return { count: list.body.count, parlays: list.body.results, vault };
}

const opsEnv = (node: ServiceNode) => ({
  DATABASE_URL: node.config.databaseUrl,
  KAFKA_BROKERS,
  TOPIC_PREFIX: node.config.topicPrefix,
  TOPIC_PARTITIONS: '4',
  SOLANA_RPC_URL: chain.url,
  PARLAY_WEBHOOK_AUTH_SECRET: WEBHOOK_SECRET,
  APP_ENV: 'development',
});

test.serial('a reconcile run after withheld deliveries brings the mirror to the state of full delivery', async (t) => {
  const alice = Keypair.generate();
  const bob = Keypair.generate();
  await chain.fundWallet(alice.publicKey, 10n ** 9n, 1_000n * UNIT);
  await chain.fundWallet(bob.publicKey, 10n ** 9n, 1_000n * UNIT);
  const legs = [
    { marketId: 101, probability: 500_000 },
    { marketId: 102, probability: 400_000, outcome: 1 },
  ];
  // Delivered to both.
  t.true((await chain.createParlay(alice, { parlayId: 1, stake: 10n * UNIT, legs })).landed);
  await chain.webhooks.idle();
  // Withheld from B: settlements, a claim, new parlays, a config update, a void, a failed create.
  withholdFromB(true);
  t.true((await chain.settleLeg(1, 0, 'won')).landed);
  t.true((await chain.settleLeg(1, 1, 'won')).landed);
  t.true((await chain.claimParlay(alice, 1)).landed);
  t.true((await chain.createParlay(bob, { parlayId: 2, stake: 5n * UNIT, legs })).landed);
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
  t.true((await chain.updateConfig({ maxPayoutCap: 10n ** 15n })).landed);
  t.truthy(
    (
      await chain.createParlay(alice, {
        parlayId: 4,
        stake: 900n * UNIT,
        legs: [
          { marketId: 301, probability: 100_000 },
          { marketId: 302, probability: 100_000 },
        ],
      })
    ).err,
    'ExposureLimitExceeded',
  );
  t.true((await chain.voidParlay(3)).landed);
  await chain.webhooks.idle();
  // Delivered again, but parlay 2's settlement waits for a creation B never got: deferred until the
  // provider gives up.
  withholdFromB(false);
  t.true((await chain.settleLeg(2, 0, 'lost')).landed);
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
  );
  await chain.webhooks.idle();

  const full = await mirror(A);
  t.is(full.count, 4, 'A: parlays 1, 2, 3 and 5');
  t.notDeepEqual(await mirror(B), full, 'B missed events');
  t.is(BigInt(full.vault.balance), chain.vaultBalance());

  // Reconcile B from slot 0, slowly (one transaction a step, paced), interrupted once with SIGINT.
  const env = opsEnv(B);
  const first = startOps(['reconcile', '--since-slot', '0', '--batch', '1', '--pace-ms', '120'], env);
  const deadline = Date.now() + 60_000;
  while (!/reconcile: applying .* [1-9]\d*\/\d+/.test(first.stderr()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  first.child.kill('SIGINT');
  const r1 = await first.done;
  t.is(r1.code, 130, r1.stderr);
  t.is(r1.json.status, 'interrupted');
  t.true(r1.json.applied >= 1 && r1.json.applied < r1.json.listed, JSON.stringify(r1.json));
  t.regex(r1.stderr, /run the same command again to resume/);

  const r2 = await runOps(['reconcile', '--since-slot', '0', '--batch', '4'], env);
  t.is(r2.code, 0, r2.stderr);
  t.like(r2.json, { status: 'done', resumed: true, deferred: [] });
  t.is(r2.json.applied, r2.json.listed);
  t.deepEqual(await mirror(B), full, 'B reconciled equals A fully delivered');

  // Idempotent: again from scratch, through the node's webhook endpoint this time.
  const r3 = await runOps(
    ['reconcile', '--since-slot', '0', '--restart', '--webhook-url', `${B.url}/api/parlays/webhooks/indexer/`, '--quiet'],
    env,
  );
  t.is(r3.code, 0, r3.stderr);
  t.like(r3.json, { status: 'done', resumed: false, deferred: [] });
  t.deepEqual(await mirror(B), full);
  t.is(r3.stderr, '', '--quiet: no progress output');

  // Every in-process run of this host answered on one reply topic (runs do not pile topics up).
  const admin = new Kafka({ brokers: KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  const replyTopics = (await admin.listTopics()).filter((x) => x.startsWith(`replies.${B.config.topicPrefix}ops-`));
  await admin.disconnect();
  t.is(replyTopics.length, 1, replyTopics.join(', '));

  const jobs = await runOps(['jobs'], env);
  t.is(jobs.code, 0, jobs.stderr);
  t.like(
    jobs.json.find((j: any) => j.id === 'reconcile'),
    { status: 'done', kind: 'reconcile' },
  );
});

test.serial('reconcile refuses without an RPC and explains usage errors', async (t) => {
  const env = { ...opsEnv(B), SOLANA_RPC_URL: '' };
  const noRpc = await runOps(['reconcile', '--since-slot', '0', '--quiet'], env);
  t.is(noRpc.code, 2);
  t.regex(noRpc.stderr, /SOLANA_RPC_URL/);
  const noSlot = await runOps(['reconcile'], opsEnv(B));
  t.is(noSlot.code, 2);
  t.regex(noSlot.stderr, /--since-slot is required/);
  const unknown = await runOps(['frobnicate'], opsEnv(B));
  t.is(unknown.code, 2);
});
