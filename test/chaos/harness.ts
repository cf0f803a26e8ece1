// Chaos harness: a broker of its own, N service nodes as processes sharing one consumer group and
// one PostgreSQL database, a webhook provider driving parlay lifecycles at them (at least once,
// retrying 503s and dead connections), a killer SIGKILLing a random node every few seconds and
// restarting it, one broker restart, then checks: every acknowledged event reflected once, and the
// cluster's state equal to a single-node replay of the same input.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import pg from 'pg';
import { freshDatabase } from '../helpers/db.ts';
import { startProcessNode, type ProcessNode } from '../helpers/process-node.ts';
import { labelOf, parlayLife } from '../helpers/events.ts';
import { JWT_SECRET, WEBHOOK_SECRET } from '../helpers/node.ts';
import { startLocalChain } from '../../src/chain/local/index.ts';
import { approve, OutcomeTokens } from '../helpers/chain-market.ts';
import { AuthorityType, createSetAuthorityInstruction } from '@solana/spl-token';
import { bearer, createMarket, order } from '../helpers/clob.ts';
import { orderHash, orderId } from '../../src/clob/signed-order.ts';
import { replayAndDump } from './log-replay.ts';
import { checkBook, fromSnapshot } from '../../actors/market-book/index.ts';

const hashOf = (body: any) => orderId(orderHash(body.order));

export interface ChaosOptions {
  nodes: number;
  parlays: number;
  /** signed orders placed (and some cancelled) alongside the webhook load */
  orders?: number;
  killEveryMs: number;
  minKills: number;
  restartBroker: boolean;
  brokerPort: number;
  concurrency: number;
  log?: (line: string) => void;
}

export interface ChaosReport {
  deliveries: number;
  transactions: number;
  orders: number;
  ordersAcked: number;
  ordersRejected: number;
  seconds: number;
  retries: number;
  kills: number;
  restarts: number;
  brokerRestarts: number;
  takeovers: { partition: string; ms: number }[];
  checks: { name: string; ok: boolean; detail?: string }[];
}

const root = new URL('../..', import.meta.url).pathname;
const kafka = (...args: string[]) =>
  execFileSync('bash', ['deploy/kafka.sh', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  // Whatever fails, no node process, chain or broker outlives the run.
  const cleanup: (() => Promise<unknown> | unknown)[] = [];
  try {
    return await run(o, cleanup);
  } finally {
    for (const f of cleanup.reverse()) {
      try {
        await f();
      } catch {
        /* best effort */
      }
    }
  }
}

async function run(o: ChaosOptions, cleanup: (() => Promise<unknown> | unknown)[]): Promise<ChaosReport> {
  const log = o.log ?? (() => undefined);
  kafka('start', '--port', String(o.brokerPort));
  cleanup.push(() => kafka('stop', '--port', String(o.brokerPort)));
  const db = await freshDatabase('chaos');
  cleanup.push(() => db.drop());
  const chain = await startLocalChain();
  cleanup.push(() => chain.close());
  const boot = await chain.bootstrap();
  const prefix = `c${randomBytes(3).toString('hex')}.`;
  // Settlement: the delegate's key is on every node, so every node runs the executor on its share
  // of ledger.trades; it pays fees and holds the outcome mints' authority (MINT and MERGE trades).
  const delegate = Keypair.generate();
  const feeRecipient = Keypair.generate();
  await chain.fundWallet(delegate.publicKey, 10n ** 11n, 0n);
  const env = {
    KAFKA_BROKERS: `127.0.0.1:${o.brokerPort}`,
    DATABASE_URL: db.url,
    TOPIC_PREFIX: prefix,
    TOPIC_PARTITIONS: '6',
    PLATFORM_JWT_SECRET: JWT_SECRET,
    PARLAY_WEBHOOK_AUTH_SECRET: WEBHOOK_SECRET,
    ASK_TIMEOUT_MS: '6000',
    DATABASE_POOL_MAX: '4',
    SOLANA_RPC_URL: chain.url,
    CLOB_COLLATERAL_MINT: boot.collateralMint.toBase58(),
    CLOB_DELEGATE_KEYPAIR: JSON.stringify(Array.from(delegate.secretKey)),
    CLOB_FEE_RECIPIENT: feeRecipient.publicKey.toBase58(),
    CLOB_SETTLEMENT_POLL_MS: '100',
  };
  const nodes: (ProcessNode | null)[] = [];
  cleanup.push(async () => {
    for (const n of nodes) await n?.kill('SIGKILL');
  });
  const ids = Array.from({ length: o.nodes }, (_, i) => `chaos-${i + 1}`);
  for (const id of ids) nodes.push(await startProcessNode({ ...env, NODE_ID: id }));
  log(`${o.nodes} nodes up`);

  // The order book side: a market with real outcome mints, funded wallets signed in, pre-signed orders.
  const orderQueue: { wallet: number; body: unknown; tries: number; id?: string }[] = [];
  const toks: string[] = [];
  let walletKeys: Keypair[] = [];
  const ackedOrders = new Set<string>();
  let ordersRejected = 0;
  // Cancels: a third of the orders that rest get cancelled by their owner; a cancel the service
  // acknowledged in `canceled` must end as CANCELED on the ledger.
  const cancelQueue: { wallet: number; id: string; tries: number }[] = [];
  const cancelsAcked = new Set<string>();
  let cancelsRefused = 0;
  let tradersRunning = 0;
  let marketId = '';
  // Reads during the run: answered or refused as retryable, never a 500.
  const reads = { ok: 0, retryable: 0, failed: 0, lost: 0 };
  const nOrders = o.orders ?? 0;
  if (nOrders) {
    const mints = await new OutcomeTokens(chain).create();
    const first = nodes[0]!;
    const market = await createMarket(first.url, {
      yes_token_id: mints.yes.publicKey.toBase58(),
      no_token_id: mints.no.publicKey.toBase58(),
      taker_fee_bps: 0,
      min_size: '1',
    });
    marketId = market.condition_id;
    const wallets = Array.from({ length: 6 }, () => Keypair.generate());
    walletKeys = wallets;
    for (const w of wallets) {
      await chain.fundWallet(w.publicKey, 10n ** 9n, 100_000n * 1_000_000n);
      await mints.give(w.publicKey, mints.yes.publicKey, 10_000n * 1_000_000n);
      await mints.give(w.publicKey, mints.no.publicKey, 10_000n * 1_000_000n);
      // Every YES+NO pair in circulation is backed by a unit of collateral in the escrow (the
      // delegate's collateral account), as if minted there: MERGE trades pay out of it.
      await chain.fundWallet(delegate.publicKey, 0n, 10_000n * 1_000_000n);
      for (const m of [boot.collateralMint, mints.yes.publicKey, mints.no.publicKey])
        await approve(chain, w, m, delegate.publicKey, 10n ** 12n);
      toks.push(await bearer(first.url, w));
    }
    // The delegate mints and burns YES+NO pairs (MINT and MERGE trades): it becomes the mints' authority.
    for (const m of [mints.yes, mints.no]) {
      const r = chain.dev.send(
        [createSetAuthorityInstruction(m.publicKey, mints.authority.publicKey, AuthorityType.MintTokens, delegate.publicKey)],
        [mints.authority],
      );
      if (r.err) throw new Error(`set authority failed: ${JSON.stringify(r.err)}`);
    }
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (let i = 0; i < nOrders; i++) {
      const k = Math.floor(rnd() * wallets.length);
      const yes = rnd() < 0.5;
      const side = rnd() < 0.5 ? 'BUY' : 'SELL';
      const price = (0.3 + Math.floor(rnd() * 40) / 100).toFixed(2);
      const signed = order(wallets[k], yes ? market.yes_token_id : market.no_token_id, side, price, String(1 + Math.floor(rnd() * 5)), {
        feeRateBps: 0,
        salt: String(1_000_000 + i),
      });
      orderQueue.push({ wallet: k, body: { order: signed, orderType: 'GTC' }, tries: 0 });
    }
  }

  // The input: each parlay's life as single-transaction deliveries, interleaved across parlays.
  const users = Array.from({ length: 20 }, () => Keypair.generate().publicKey);
  const lives = Array.from({ length: o.parlays }, (_, i) => parlayLife(i + 1, users[i % users.length], 10_000 + i * 10));
  const queue: { tx: unknown; tries: number }[] = [];
  for (let step = 0; lives.some((l) => l.length > step); step++) for (const l of lives) if (l[step]) queue.push({ tx: l[step], tries: 0 });
  const total = queue.length;
  let acked = 0;
  let retries = 0;

  const started = Date.now();
  let done = false;
  // Takeover: for each partition the victim owned when it died, the time until the next commit on
  // it (by whichever node took it over, possibly the victim restarted).
  const takeovers: { partition: string; ms: number }[] = [];
  const orphans = new Map<string, number>(); // partition -> killed at
  const watcher = new pg.Client({ connectionString: db.url });
  await watcher.connect();
  cleanup.push(() => watcher.end().catch(() => undefined));
  const ownedBy = async (owner: string) =>
    (await watcher.query('select topic, partition from consumer_offsets where owner = $1', [owner])).rows.map(
      (r) => `${r.topic}/${r.partition}`,
    );
  const watch = (async () => {
    while (!done || orphans.size) {
      if (orphans.size) {
        const rows = (
          await watcher.query('select topic, partition, (extract(epoch from updated_at) * 1000)::bigint::text as at from consumer_offsets')
        ).rows;
        for (const r of rows) {
          const k = `${r.topic}/${r.partition}`;
          const killed = orphans.get(k);
          if (killed !== undefined && Number(r.at) > killed) {
            takeovers.push({ partition: k, ms: Number(r.at) - killed });
            orphans.delete(k);
          }
        }
      }
      if (done && Date.now() - started > 600_000) break;
      await sleep(100);
    }
  })();

  let kills = 0;
  let restarts = 0;
  let brokerRestarts = 0;
  const chaos = (async () => {
    while (!done) {
      await sleep(o.killEveryMs);
      // Enough kills once the load is through: let the rest drain on a stable cluster.
      if (done || (kills >= o.minKills && !queue.length && !orderQueue.length && !cancelQueue.length)) break;
      const i = Math.floor(Math.random() * nodes.length);
      const victim = nodes[i];
      if (!victim) continue;
      nodes[i] = null;
      const owned = await ownedBy(ids[i]);
      await victim.kill('SIGKILL');
      const at = Date.now();
      if (queue.length) for (const k of owned) orphans.set(k, at); // only meaningful while load goes on
      kills++;
      log(`killed ${ids[i]} (${acked}/${total} acked)`);
      if (o.restartBroker && brokerRestarts === 0 && kills === 2) {
        orphans.clear(); // a broker restart stalls every partition: not a takeover
        kafka('stop', '--port', String(o.brokerPort));
        kafka('start', '--port', String(o.brokerPort), '--keep');
        brokerRestarts++;
        log('broker restarted');
      }
      await sleep(300);
      nodes[i] = await startProcessNode({ ...env, NODE_ID: ids[i] });
      restarts++;
    }
  })();

  const provider = async () => {
    while (queue.length) {
      const item = queue.shift()!;
      const live = nodes.filter((n): n is ProcessNode => n !== null);
      const target = live[Math.floor(Math.random() * live.length)];
      let ok = false;
      if (target) {
        try {
          const r = await fetch(`${target.url}/api/parlays/webhooks/indexer/`, {
            method: 'POST',
            headers: { authorization: WEBHOOK_SECRET, 'content-type': 'application/json' },
            body: JSON.stringify([item.tx]),
            signal: AbortSignal.timeout(15_000),
          });
          ok = r.status === 200;
          await r.arrayBuffer();
        } catch {
          ok = false;
        }
      }
      if (ok) {
        acked++;
        continue;
      }
      if (item.tries >= 200) throw new Error(`delivery never acknowledged after ${item.tries} tries`);
      retries++;
      item.tries++;
      queue.push(item); // the provider retries (503, timeout, connection refused)
      await sleep(Math.min(500, 20 * item.tries));
    }
  };
  /** POSTs as a wallet to a random live node; status 0 when no node answered. */
  const postAsWallet = async (path: string, wallet: number, payload: unknown) => {
    const live = nodes.filter((n): n is ProcessNode => n !== null);
    const target = live[Math.floor(Math.random() * live.length)];
    let status = 0;
    let body: any = null;
    if (target) {
      try {
        const r = await fetch(`${target.url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${toks[wallet]}`, 'content-type': 'application/json' },
          body: JSON.stringify(payload),
          signal: AbortSignal.timeout(15_000),
        });
        status = r.status;
        body = await r.json().catch(() => null);
      } catch {
        status = 0;
      }
    }
    return { target, status, body };
  };
  const trader = async () => {
    while (orderQueue.length) {
      const item = orderQueue.shift()!;
      const { target, status, body } = await postAsWallet('/v1/order', item.wallet, item.body);
      if (status === 200) {
        ackedOrders.add(body.orderID);
        if (body.status === 'live' && ackedOrders.size % 3 === 0) cancelQueue.push({ wallet: item.wallet, id: body.orderID, tries: 0 });
        continue;
      }
      // A retried order that already landed answers DUPLICATE_ORDER: it was acknowledged after all.
      if (status === 400 && body?.code === 'DUPLICATE_ORDER' && item.tries > 0) {
        ackedOrders.add(hashOf(item.body));
        continue;
      }
      if (status === 400) {
        ordersRejected++;
        continue;
      }
      // A client signs in again when its token runs out (signing is local).
      if (status === 401 && target) {
        try {
          toks[item.wallet] = await bearer(target.url, walletKeys[item.wallet]);
        } catch {
          /* node gone: retried below */
        }
      }
      if (item.tries >= 200)
        throw new Error(`order never acknowledged after ${item.tries} tries: ${status} ${JSON.stringify(body)?.slice(0, 200)}`);
      if (item.tries === 3) log(`order retried 3 times: ${status} ${JSON.stringify(body)?.slice(0, 200)}`);
      retries++;
      item.tries++;
      orderQueue.push(item);
      await sleep(Math.min(500, 20 * item.tries));
    }
  };
  const canceller = async () => {
    while (tradersRunning > 0 || cancelQueue.length) {
      const item = cancelQueue.shift();
      if (!item) {
        await sleep(20);
        continue;
      }
      const { target, status, body } = await postAsWallet('/v1/orders/cancel', item.wallet, { orderID: item.id });
      if (status === 200) {
        if (body.canceled.includes(item.id)) cancelsAcked.add(item.id);
        // A retried cancel that already went through the first time answers "already cancelled".
        else if (item.tries > 0 && /cancel/i.test(String(body.not_canceled[item.id]))) cancelsAcked.add(item.id);
        else cancelsRefused++; // filled before the cancel arrived
        continue;
      }
      if (status === 401 && target) {
        try {
          toks[item.wallet] = await bearer(target.url, walletKeys[item.wallet]);
        } catch {
          /* retried */
        }
      }
      if (item.tries >= 200) throw new Error(`cancel never answered after ${item.tries} tries: ${status}`);
      retries++;
      item.tries++;
      cancelQueue.push(item);
      await sleep(Math.min(500, 20 * item.tries));
    }
  };
  const reader = async () => {
    const paths = () =>
      marketId
        ? ['/api/parlays/vault/', `/v1/orders?market=${marketId}`, `/v1/trades?market=${marketId}`, `/v1/open-orders?market=${marketId}`]
        : ['/api/parlays/vault/'];
    while (!loadDone) {
      const live = nodes.filter((n): n is ProcessNode => n !== null);
      const target = live[Math.floor(Math.random() * live.length)];
      const ps = paths();
      const path = ps[Math.floor(Math.random() * ps.length)];
      if (target) {
        try {
          const auth = path.startsWith('/v1/') && toks.length ? { authorization: `Bearer ${toks[0]}` } : undefined;
          const r = await fetch(`${target.url}${path}`, { headers: auth, signal: AbortSignal.timeout(15_000) });
          await r.arrayBuffer();
          if (r.status === 200) reads.ok++;
          else if (r.status === 503 || r.status === 401) reads.retryable++;
          else {
            reads.failed++;
            log(`read ${path}: ${r.status}`);
          }
        } catch {
          reads.lost++; /* the node died under the request */
        }
      }
      await sleep(25);
    }
  };
  let loadDone = false;
  const traders = Array.from({ length: nOrders ? 2 : 0 }, () => {
    tradersRunning++;
    return trader().finally(() => {
      tradersRunning--;
    });
  });
  const readers = Array.from({ length: 2 }, reader);
  await Promise.all([...Array.from({ length: o.concurrency }, provider), ...traders, ...(nOrders ? [canceller()] : [])]);
  loadDone = true;
  await Promise.all(readers);
  await chaos;
  done = true;
  await chaos;
  orphans.clear(); // partitions without traffic after the load ended have nothing to take over
  await watch;
  const seconds = (Date.now() - started) / 1000;
  log(`all ${total} deliveries acknowledged in ${seconds.toFixed(1)} s`);

  // Checks.
  const checks: ChaosReport['checks'] = [];
  checks.push({
    name: 'reads under failover: none failed (5xx other than 503, 4xx)',
    ok: reads.failed === 0 && reads.ok > 0,
    detail: `${reads.ok} ok, ${reads.retryable} retryable, ${reads.lost} cut by a kill`,
  });
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  cleanup.push(() => c.end().catch(() => undefined));
  const q = async (sql: string) => (await c.query(sql)).rows;
  const parlays = await q(
    'select parlay_id::int as id, status, legs_won, legs_lost, legs_resolved, actual_payout::text, claim_tx_signature from parlays order by parlay_id',
  );
  const expectStatus = (id: number) => (id % 3 !== 0 ? 'claimed' : 'lost');
  checks.push({ name: 'every parlay created exactly once', ok: parlays.length === o.parlays, detail: `${parlays.length}/${o.parlays}` });
  const wrong = parlays.filter((p) => p.status !== expectStatus(p.id));
  checks.push({
    name: 'every lifecycle event applied (final statuses)',
    ok: wrong.length === 0,
    detail: wrong
      .slice(0, 3)
      .map((p) => `${p.id}:${p.status}`)
      .join(' '),
  });
  const [{ n: legs }] = await q('select count(*)::int as n from parlay_legs');
  checks.push({ name: 'legs exactly once', ok: legs === o.parlays * 3, detail: `${legs}` });
  const [{ n: settled }] = await q("select count(*)::int as n from parlay_legs where status <> 'pending'");
  const expectSettled = lives.reduce(
    (a, l) => a + l.filter((tx: any) => labelOf(tx.transaction.signatures[0])?.startsWith('s-')).length,
    0,
  );
  checks.push({ name: 'every settled leg reflected once', ok: settled === expectSettled, detail: `${settled}/${expectSettled}` });

  if (nOrders) {
    const ids = new Set((await q('select id from open_orders')).map((r) => r.id));
    const missing = [...ackedOrders].filter((id) => !ids.has(id));
    checks.push({
      name: 'every acknowledged order on the ledger once',
      ok: missing.length === 0,
      detail: `${ackedOrders.size} acked, ${missing.length} missing, ${ordersRejected} rejected`,
    });
    const cancelled = new Set((await q("select id from open_orders where status = 'CANCELED'")).map((r) => r.id));
    const notCancelled = [...cancelsAcked].filter((id) => !cancelled.has(id));
    checks.push({
      name: 'every acknowledged cancel is CANCELED on the ledger',
      ok: cancelsAcked.size > 0 && notCancelled.length === 0,
      detail: `${cancelsAcked.size} cancelled, ${cancelsRefused} refused (filled first), ${notCancelled.length} wrong`,
    });
  }
  // Let what the cluster still owes itself (outbox messages to wallets) drain before comparing.
  for (let i = 0; i < 100; i++) {
    const [{ n }] = await q('select count(*)::int as n from outbox');
    if (n === 0) break;
    await sleep(100);
  }
  await sleep(1500);

  if (nOrders) {
    // Every trade settles once: each ends CONFIRMED (exactly one of its signed transactions landed)
    // or FAILED (none landed), whatever node ran the executor when the kills came.
    let pending = -1;
    for (let i = 0; i < 600; i++) {
      [{ n: pending }] = await q(
        "select count(*)::int as n from trades t left join settlements s on s.trade_id = t.id where s.status is null or s.status not in ('CONFIRMED', 'FAILED')",
      );
      if (pending === 0) break;
      await sleep(100);
    }
    const settled = await q(
      "select s.trade_id, s.status, coalesce(array_agg(a.signature) filter (where a.signature is not null), '{}') as sigs from settlements s left join settlement_attempts a on a.trade_id = s.trade_id group by s.trade_id, s.status",
    );
    const conn = chain.connection();
    const allSigs = settled.flatMap((r) => r.sigs as string[]);
    const landed = new Set<string>();
    for (let i = 0; i < allSigs.length; i += 200) {
      const st = await conn.getSignatureStatuses(allSigs.slice(i, i + 200), { searchTransactionHistory: true });
      st.value.forEach((v, j) => {
        if (v && v.err === null) landed.add(allSigs[i + j]);
      });
    }
    const twice = settled.filter((r) => (r.sigs as string[]).filter((x) => landed.has(x)).length > 1);
    const wrong = settled.filter((r) => (r.sigs as string[]).filter((x) => landed.has(x)).length !== (r.status === 'CONFIRMED' ? 1 : 0));
    const confirmed = settled.filter((r) => r.status === 'CONFIRMED').length;
    const reasons = await q("select reason, count(*)::int as n from settlements where status = 'FAILED' group by reason");
    if (reasons.length) log(`failed settlements: ${reasons.map((r) => `${r.n}× ${String(r.reason).slice(0, 300)}`).join('; ')}`);
    // Allowances are set and balances reserved: under chaos every trade must still confirm.
    checks.push({
      name: 'every trade settled on chain (CONFIRMED), none pending or failed',
      ok: pending === 0 && settled.length > 0 && confirmed === settled.length,
      detail: `${confirmed} confirmed, ${settled.length - confirmed} failed, ${pending} pending`,
    });
    checks.push({
      name: 'no trade settled twice (landed transactions per trade)',
      ok: twice.length === 0 && wrong.length === 0,
      detail: `${landed.size} landed for ${settled.length} trades; ${twice.length} twice, ${wrong.length} inconsistent`,
    });
  }

  // Determinism: one fresh node fed the very records the cluster consumed (read back from Kafka,
  // in partition order) reaches the same parlays, vault, ledger and actor states.
  const dump = async (url: string) => {
    const k = new pg.Client({ connectionString: url });
    await k.connect();
    const rows = async (sql: string) => (await k.query(sql)).rows;
    const state = {
      parlays: await rows(
        'select parlay_id, user_wallet, stake, status, legs_won, legs_lost, legs_resolved, actual_payout, claim_tx_signature, created_at, settled_at, claimed_at from parlays order by parlay_id',
      ),
      legs: await rows(
        'select parlay_id, leg_index, on_chain_market_id, status, resolved_at from parlay_legs order by parlay_id, leg_index',
      ),
      vault: await rows('select balance, total_staked, total_paid_out, total_exposure, max_legs from vault'),
      orders: await rows('select id, market, status, size_matched, associate_trades from open_orders order by id'),
      trades: await rows('select id, size, price, fee, match_type, maker_orders from trades order by id'),
      actors: await rows(
        "select kind, key, state from actor_snapshots where kind in ('market-book', 'wallet', 'parlay', 'vault') order by kind, key",
      ),
    };
    await k.end();
    return state;
  };
  // Idle, the cluster saves what only memory held: partitions going quiet are checkpointed, and a
  // member that took a partition over rebuilt its unsaved actors at once (from the group position
  // the dead owner committed). Then the snapshots compared below are the actors' whole state.
  // (and every forward sent: a credit moving between a wallet and a book is in flight until then)
  let unsaved = -1;
  let unsent = -1;
  for (let i = 0; i < 300 && (unsaved !== 0 || unsent !== 0); i++) {
    if (i) await sleep(100);
    [{ n: unsaved }] = await q('select count(*)::int as n from consumer_offsets where replay_from is not null');
    [{ n: unsent }] = await q('select count(*)::int as n from outbox');
  }
  checks.push({
    name: 'idle, every actor checkpointed (nothing left to replay)',
    ok: unsaved === 0,
    detail: `${unsaved} partitions with unsaved actors`,
  });
  const clusterState = await dump(db.url);
  checks.push(holdsCheck(clusterState.actors));
  const replayState = await replayAndDump(`127.0.0.1:${o.brokerPort}`, prefix, 6, async (url) => JSON.stringify(await dump(url)));
  const replay = JSON.parse(replayState);
  for (const part of Object.keys(clusterState) as (keyof typeof clusterState)[]) {
    const same = JSON.stringify(clusterState[part]) === JSON.stringify(replay[part]);
    checks.push({ name: `cluster ${part} equal a single-node replay of the log`, ok: same, detail: `${clusterState[part].length} rows` });
  }
  for (const n of nodes) await n?.kill('SIGTERM');
  return {
    deliveries: total,
    transactions: total,
    orders: nOrders,
    ordersAcked: ackedOrders.size,
    ordersRejected,
    seconds,
    retries,
    kills,
    restarts,
    brokerRestarts,
    takeovers,
    checks,
  };
}

/**
 * No hold leaked through the kills: every book is sound with what its wallets granted it covering
 * what its BUYs on credit hold (checkBook), and each wallet's credit per market is exactly what that
 * market's book holds of it; the wallets' own holds are those of orders still resting (none, when
 * every order was placed through its book).
 */
function holdsCheck(actors: { kind: string; key: string; state: any }[]): ChaosReport['checks'][number] {
  const bad: string[] = [];
  const booked = new Map<string, bigint>(); // `${market}|${owner}` → the book's credit
  let wallets = 0;
  let credits = 0;
  for (const a of actors) {
    if (a.kind !== 'market-book') continue;
    const st = typeof a.state === 'string' ? JSON.parse(a.state) : a.state;
    const book = fromSnapshot(st);
    // (a remainder may rest crossed beyond the distortion bound: only the structure and the credit are checked)
    for (const p of checkBook(book, { crossed: 'any' })) bad.push(`book ${a.key}: ${p}`);
    for (const [owner, c] of book.credit) booked.set(`${a.key}|${owner}`, c.amount);
  }
  for (const a of actors) {
    if (a.kind !== 'wallet') continue;
    wallets++;
    const st = typeof a.state === 'string' ? JSON.parse(a.state) : a.state;
    for (const [market, amount] of Object.entries((st.credit ?? {}) as Record<string, string>)) {
      credits++;
      const there = booked.get(`${market}|${a.key}`) ?? 0n;
      if (there !== BigInt(amount)) bad.push(`wallet ${a.key}: credit ${amount} in ${market}, whose book holds ${there}`);
      booked.delete(`${market}|${a.key}`);
    }
  }
  for (const [k, v] of booked) if (v !== 0n) bad.push(`book credit ${k} = ${v} that no wallet granted`);
  return {
    name: 'no hold leaked: books sound, each wallet credit = what its book holds of it',
    ok: bad.length === 0,
    detail: bad.length ? bad.slice(0, 3).join('; ') : `${wallets} wallets, ${credits} credits`,
  };
}

export function printReport(r: ChaosReport): void {
  const ms = r.takeovers.map((t) => t.ms).sort((a, b) => a - b);
  const pct = (p: number) => (ms.length ? ms[Math.min(ms.length - 1, Math.floor(p * ms.length))] : 0);
  console.log('\nchaos run');
  console.table([
    {
      deliveries: r.deliveries,
      orders: r.orders,
      'orders acked': r.ordersAcked,
      'orders rejected': r.ordersRejected,
      'acked/s': Math.round((r.deliveries + r.ordersAcked) / r.seconds),
      retries: r.retries,
      seconds: r.seconds.toFixed(1),
      kills: r.kills,
      restarts: r.restarts,
      'broker restarts': r.brokerRestarts,
    },
  ]);
  console.table([{ takeovers: ms.length, 'p50 ms': pct(0.5), 'p90 ms': pct(0.9), 'max ms': ms[ms.length - 1] ?? 0 }]);
  console.table(r.checks.map((c) => ({ check: c.name, result: c.ok ? 'passed' : 'FAILED', detail: c.detail ?? '' })));
}
