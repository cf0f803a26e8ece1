// The reference market maker (examples/market-maker/) against a 3-node cluster: three service
// processes sharing the Kafka broker and one PostgreSQL database, the local chain, one market, two
// funded makers quoting both sides and crossing each other now and then. One node is SIGKILLed
// mid-run. The makers quote from the live book (the `market` channel), never reading it over REST;
// maker 0's channel moves off the killed node. Each maker ends with its own record of fills equal to the ledger's (the trades table,
// by maker_orders and taker side), every order's size_matched equals the sum of its fills, and no
// hold leaked: with nothing resting, each wallet's unreserved balance is its whole balance on the chain.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { Keypair, type PublicKey } from '@solana/web3.js';
import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import pg from 'pg';
import { freshDatabase } from '../../helpers/db.ts';
import { startProcessNode, type ProcessNode } from '../../helpers/process-node.ts';
import { JWT_SECRET, WEBHOOK_SECRET, KAFKA_BROKERS } from '../../helpers/node.ts';
import { bearer, createMarket, order } from '../../helpers/clob.ts';
import { call } from '../../helpers/node.ts';
import { OutcomeTokens } from '../../helpers/chain-market.ts';
import { startLocalChain } from '../../../src/chain/local/index.ts';
import { decimal } from '../../../src/client/index.ts';
import { MarketMaker, type Fill } from '../../../examples/market-maker/market-maker.ts';

const U = 1_000_000n;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('market makers on a 3-node cluster survive a node failover and end with their fills equal to the ledger', async (t) => {
  const db = await freshDatabase('mm');
  const chain = await startLocalChain();
  const nodes: (ProcessNode | null)[] = [];
  t.teardown(async () => {
    for (const n of nodes) await n?.kill('SIGKILL');
    await chain.close();
    await db.drop();
  });
  const boot = await chain.bootstrap();
  const env = {
    KAFKA_BROKERS,
    DATABASE_URL: db.url,
    TOPIC_PREFIX: `mm${randomBytes(3).toString('hex')}.`,
    TOPIC_PARTITIONS: '6',
    PLATFORM_JWT_SECRET: JWT_SECRET,
    PARLAY_WEBHOOK_AUTH_SECRET: WEBHOOK_SECRET,
    ASK_TIMEOUT_MS: '6000',
    DATABASE_POOL_MAX: '4',
    SOLANA_RPC_URL: chain.url,
    CLOB_COLLATERAL_MINT: boot.collateralMint.toBase58(),
    CLOB_DELEGATE: Keypair.generate().publicKey.toBase58(),
    CLOB_TOKEN_TTL_SECONDS: '8',
  };
  for (let i = 0; i < 3; i++) nodes.push(await startProcessNode({ ...env, NODE_ID: `mm-${i + 1}` }));
  const urls = nodes.map((n) => n!.url);

  const mints = await new OutcomeTokens(chain).create();
  const market = await createMarket(urls[0], {
    yes_token_id: mints.yes.publicKey.toBase58(),
    no_token_id: mints.no.publicKey.toBase58(),
    taker_fee_bps: 10,
    min_size: '1',
  });
  const wallets = [Keypair.generate(), Keypair.generate()];
  for (const w of wallets) {
    await chain.fundWallet(w.publicKey, 10n ** 9n, 100_000n * U);
    await mints.give(w.publicKey, mints.yes.publicKey, 10_000n * U);
  }
  let seed = 11;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const lines: string[] = [];
  const log = (l: string) => {
    lines.push(l);
  };
  // Maker 0 talks to node 2 first (the one killed below), maker 1 to node 3.
  const makers = [
    new MarketMaker({
      urls: [urls[1], urls[0], urls[2]],
      wallet: wallets[0],
      market: market.condition_id,
      mid: '0.50',
      walkTicks: 1,
      takeEvery: 2,
      refreshMs: 700,
      levels: 2,
      size: '3',
      random,
      log,
    }),
    new MarketMaker({
      urls: [urls[2], urls[0], urls[1]],
      wallet: wallets[1],
      market: market.condition_id,
      mid: '0.51',
      walkTicks: 1,
      takeEvery: 3,
      refreshMs: 700,
      levels: 2,
      size: '4',
      random,
      log,
    }),
  ];
  for (const m of makers) await m.start();

  await sleep(9_000);
  const fillsBefore = makers.map((m) => m.fills.size);
  await nodes[1]!.kill('SIGKILL');
  nodes[1] = null;
  t.log(`killed node 2 after ${fillsBefore.join(' + ')} fills`);
  await sleep(16_000);
  const results = await Promise.all(makers.map((m) => m.stop()));

  // The ledger, straight from the database.
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  t.teardown(() => c.end());
  const trades = (
    await c.query('select id, taker_order_id, owner, size::text, price, maker_orders from trades where market = $1', [market.condition_id])
  ).rows;
  t.true(trades.length >= 5, `${trades.length} trades`);
  for (const [i, mm] of makers.entries()) {
    const me = mm.address;
    const ledger: Fill[] = [];
    for (const tr of trades) {
      for (const m of tr.maker_orders)
        if (m.owner === me)
          ledger.push({ tradeId: tr.id, orderId: m.order_id, role: 'MAKER', amount: decimal(m.matched_amount), price: decimal(m.price) });
      if (tr.owner === me)
        ledger.push({ tradeId: tr.id, orderId: tr.taker_order_id, role: 'TAKER', amount: decimal(tr.size), price: decimal(tr.price) });
    }
    const key = (f: Fill) => `${f.tradeId}:${f.orderId}`;
    const sort = (a: Fill[]) => [...a].sort((x, y) => key(x).localeCompare(key(y)));
    t.true(ledger.length > 0, `maker ${i} has fills`);
    t.deepEqual(sort([...mm.fills.values()]), sort(ledger), `maker ${i}: its record of fills equals the ledger's`);
    t.deepEqual(results[i].extra, [], `maker ${i}: nothing recorded that the ledger lacks`);
    // Each of its orders: size_matched on the ledger = the sum of its recorded fills.
    const byOrder = new Map<string, bigint>();
    for (const f of mm.fills.values()) {
      const [w, fr = ''] = f.amount.split('.');
      byOrder.set(f.orderId, (byOrder.get(f.orderId) ?? 0n) + BigInt(w) * U + BigInt(fr.padEnd(6, '0')));
    }
    const orders = (await c.query('select id, size_matched::text from open_orders where owner = $1', [me])).rows;
    const off = orders.filter((o) => BigInt(o.size_matched) !== (byOrder.get(o.id) ?? 0n));
    t.deepEqual(off, [], `maker ${i}: size_matched of every order equals its fills`);
    const [{ n }] = (await c.query("select count(*)::int as n from open_orders where owner = $1 and status in ('LIVE', 'DELAYED')", [me]))
      .rows;
    t.is(n, 0, `maker ${i}: nothing left resting after stop`);
    t.true(mm.stats.signIns >= 4, `maker ${i}: token renewed on its timer (${mm.stats.signIns} sign-ins)`);
    t.true(mm.stats.canceled > 0, `maker ${i}: requoted`);
  }
  // No hold leaked through the failover: with nothing left resting, each wallet's unreserved balance
  // of every asset is its whole balance on the chain (holds never lapse: each must have been released).
  const live = nodes.filter((n): n is ProcessNode => !!n).map((n) => n.url);
  let probe = 7_000_000;
  const tokens = new Map<Keypair, { tok: string; at: number }>();
  const unreservedOf = async (w: Keypair, token: string, side: 'BUY' | 'SELL') => {
    // Tokens live 8 s here, and a sign-in message (to the second) is taken once: renew after 5 s.
    const have = tokens.get(w);
    if (!have || Date.now() - have.at > 5_000) {
      await sleep(1_100);
      tokens.set(w, { tok: await bearer(live[0], w), at: Date.now() });
    }
    const tok = tokens.get(w)!.tok;
    const r = await call(live[0], 'POST', '/v1/order', {
      token: tok,
      body: { order: order(w, token, side, '0.99', '1000000000', { salt: String(++probe) }), orderType: 'GTC' },
    });
    const m = /unreserved balance (\d+)/.exec(r.body?.errorMsg ?? '');
    return m ? BigInt(m[1]) : null;
  };
  const onChain = (w: Keypair, mint: PublicKey) => {
    try {
      return chain.tokenBalance(getAssociatedTokenAddressSync(mint, w.publicKey, true));
    } catch {
      return 0n;
    }
  };
  for (const [i, w] of wallets.entries()) {
    for (const [what, token, side, mint] of [
      ['collateral', market.yes_token_id, 'BUY', boot.collateralMint],
      ['YES', market.yes_token_id, 'SELL', mints.yes.publicKey],
      ['NO', market.no_token_id, 'SELL', mints.no.publicKey],
    ] as const) {
      let got: bigint | null = null;
      let want = onChain(w, mint);
      // Settlement may still move balances for a moment: wait until the wallet's view settles.
      for (let k = 0; k < 60 && got !== want; k++) {
        if (k) await sleep(500);
        want = onChain(w, mint);
        got = want === 0n ? 0n : await unreservedOf(w, token, side);
      }
      t.is(got, want, `maker ${i}: all of its ${what} is unreserved once nothing rests (no hold leaked)`);
    }
  }
  t.true(makers[0].fills.size > fillsBefore[0] || makers[1].fills.size > fillsBefore[1], 'trading went on after the failover');
  t.true(makers[0].stats.failovers >= 1, 'maker 0 moved off the killed node');
  t.not(makers[0].client.http.url, urls[1]);
  t.true(makers[0].stats.reconnects >= 1, "maker 0's stream resumed on another node");
  // Quoting from the live book (the market channel), never polling it.
  for (const [i, mm] of makers.entries()) {
    t.deepEqual(
      Object.keys(mm.stats.rest).filter((k) => /\/v1\/(book|books|price|prices|midpoint|spread)/.test(k)),
      [],
      `maker ${i}: no REST book reads`,
    );
    t.true(
      (mm.stats.rest['GET /v1/markets/:conditionId'] ?? 0) <= 3,
      `maker ${i}: the market read at start only (${JSON.stringify(mm.stats.rest)})`,
    );
    t.is(mm.live!.closed, true);
  }
  t.true(makers[0].live!.stats.reconnects >= 1, "maker 0's market channel moved off the killed node");
  t.true(makers[0].stats.liveRequotes + makers[1].stats.liveRequotes > 0, 'requotes triggered by the live book');
  console.table(
    makers.map((m, i) => ({
      maker: i,
      orders: m.stats.placed,
      recovered: m.stats.recovered,
      canceled: m.stats.canceled,
      'not canceled': JSON.stringify(m.stats.notCanceled),
      rejected: JSON.stringify(m.stats.rejected),
      takes: m.stats.takes,
      fills: m.fills.size,
      'from stream': m.stats.fromStream,
      'from REST': m.stats.fromRest,
      'sign-ins': m.stats.signIns,
      failovers: m.stats.failovers,
      'stream reconnects': m.stats.reconnects,
      'cycle errors': m.stats.errors,
      'live requotes': m.stats.liveRequotes,
      'channel reconnects': m.live?.stats.reconnects,
      'exact resumes': m.live?.resumes.resumedExact,
      resyncs: m.live?.resumes.resyncs,
    })),
  );
  if (!t.passed) t.log(lines.slice(-40).join('\n'));
});
