// One service node: database (migrated), bus, runtime with its actor kinds, asks, front door.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { Keypair } from '@solana/web3.js';
import type { Config } from './config.ts';
import { openOrm, migrate, type Orm } from './store/orm.ts';
import { openReader } from './store/reader.ts';
import { NotifyListener } from './store/notify-listener.ts';
import { ParlayReadCache } from './parlay/read-cache.ts';
import { SqlRuntimeStore } from './store/runtime-store.ts';
import { MemoryBus } from './runtime/memory-bus.ts';
import { KafkaBus } from './runtime/kafka-bus.ts';
import { Runtime } from './runtime/runtime.ts';
import { Asker } from './runtime/asker.ts';
import type { Bus } from './runtime/types.ts';
import { TOPICS } from '../topics/names.ts';
import { parlayKinds } from './parlay/kinds.ts';
import { ParlayService } from './parlay/service.ts';
import { Web3Gateway, parseKeypair, type ChainGateway } from './chain/gateway.ts';
import { PARLAY_PROGRAM_ID } from './chain/idl.ts';
import { buildApp } from './http/app.ts';
import { assertPortFree, listenError } from './http/port.ts';
import { lockDataDir } from './store/data-dir-lock.ts';
import { edgeFrom } from './http/edge.ts';
import { parlayRoutes } from './http/routes/parlays.ts';
import { healthRoutes } from './http/routes/health.ts';
import { createMetrics } from './metrics.ts';
import { createLogger } from './log.ts';
import { Catalog } from './clob/catalog.ts';
import { ClobTokens } from './clob/sign-in.ts';
import { marketRoutes } from './http/routes/markets.ts';
import { clobAuthRoutes } from './http/routes/clob-auth.ts';
import * as q from './parlay/queries.ts';
import { clobKinds } from './clob/kinds.ts';
import { ClobService } from './clob/service.ts';
import { BookClock } from './clob/book-clock.ts';
import { OutboxRelay } from './store/outbox.ts';
import { InboxPruner } from './store/inbox-pruner.ts';
import { LedgerRelay } from './clob/ledger-stream.ts';
import { clobRoutes } from './http/routes/clob.ts';
import { connectionOf, delegateKeypair, startSettlement } from './settlement/index.ts';
import { MintMerge } from './settlement/mint-merge.ts';
import { marketMakerRoutes } from './http/routes/market-makers.ts';
import { TemplateService } from './templates/service.ts';
import { templateRoutes } from './http/routes/templates.ts';
import { HeartbeatClock } from './clob/heartbeats.ts';
import { heartbeatRoutes } from './http/routes/heartbeats.ts';
import { MarketData } from './clob/market-data.ts';
import { marketDataRoutes } from './http/routes/market-data.ts';
import { uiRoutes } from './http/routes/ui.ts';
import { MarketFeed } from './clob/market-feed.ts';
import { WsServer } from './ws/server.ts';

export interface NodeOptions {
  log?: Logger;
  /** Replaces the chain gateway built from SOLANA_RPC_URL (tests, local chain wiring). */
  chain?: ChainGateway | null;
  authority?: Keypair;
  /** Share one in-process bus between nodes of a test. */
  bus?: Bus;
}

export interface ServiceNode {
  url: string;
  port: number;
  config: Config;
  orm: Orm;
  bus: Bus;
  runtime: Runtime;
  asker: Asker;
  parlays: ParlayService;
  log: Logger;
  /** The Koa app (its routers: src/http/openapi.ts routersOf). */
  app: ReturnType<typeof buildApp>;
  /** The WebSocket channels (docs/ws.md) and the feed behind them. */
  ws: WsServer;
  feed: MarketFeed;
  close(): Promise<void>;
}

export function readKeypair(value: string): Keypair {
  return parseKeypair(existsSync(value) ? readFileSync(value, 'utf8') : value);
}

/**
 * Starts a node. Before anything touches data: the HTTP port must be free, and an embedded (PGlite)
 * data directory is locked for this process (src/store/data-dir-lock.ts), released at close.
 */
export async function startNode(cfg: Config, opts: NodeOptions = {}): Promise<ServiceNode> {
  await assertPortFree(cfg.port, cfg.host);
  const lock = !cfg.databaseUrl && cfg.dataDir !== 'memory://' ? lockDataDir(cfg.dataDir) : null;
  try {
    const node = await boot(cfg, opts);
    const close = node.close;
    return Object.assign(node, { close: async () => { try { await close(); } finally { lock?.release(); } } });
  } catch (e) {
    lock?.release();
    throw e;
  }
}

async function boot(cfg: Config, opts: NodeOptions): Promise<ServiceNode> {
  const log = opts.log ?? createLogger({ level: cfg.logLevel, nodeId: cfg.nodeId });
  const metrics = createMetrics(cfg.nodeId);
  if (cfg.localChain && !cfg.databaseUrl && cfg.dataDir.endsWith('/local-chain') && opts.chain === undefined) {
    rmSync(cfg.dataDir, { recursive: true, force: true }); // a fresh local chain: a fresh mirror of it
  }
  const orm = await openOrm({ databaseUrl: cfg.databaseUrl, dataDir: cfg.dataDir, poolMax: cfg.databasePoolMax });
  const applied = await migrate(orm, cfg.databaseUrl);
  if (applied.length) log.info({ migrations: applied }, 'migrations applied');

  const bus: Bus = opts.bus ?? (cfg.kafkaBrokers
    ? new KafkaBus({ brokers: cfg.kafkaBrokers, clientId: cfg.nodeId, log, replicationFactor: cfg.topicReplication, sessionTimeoutMs: cfg.kafkaSessionTimeoutMs, heartbeatIntervalMs: Math.max(100, Math.floor(cfg.kafkaSessionTimeoutMs / 10)) })
    : new MemoryBus(cfg.partitions, (err, topic, partition) => log.error({ err, topic, partition }, "batch failed; redelivering")));
  const store = new SqlRuntimeStore(orm, cfg.databaseCommitsInFlight);
  const parlayTopic = cfg.topicPrefix + TOPICS.parlayEvents;
  const bookTopic = cfg.topicPrefix + TOPICS.clobCommands;
  const walletTopic = cfg.topicPrefix + TOPICS.walletCommands;
  let wakeRelays = () => {}; // set once the relays run (below)
  const runtime = new Runtime({
    bus, store, nodeId: cfg.nodeId, groupId: cfg.topicPrefix + cfg.groupId,
    kinds: [...parlayKinds(parlayTopic), ...clobKinds({ bookTopic, walletTopic })],
    partitions: { [parlayTopic]: cfg.partitions, [bookTopic]: cfg.partitions, [walletTopic]: cfg.partitions },
    log, metrics: metrics.runtime, faults: crashPoint(cfg.crashPoints.runtime, log), maxLiveActors: cfg.maxLiveActors, checkpoint: cfg.checkpoint,
    // The order book's projections wrote: the outbox and the ledger have rows to send (parlay batches write neither).
    onCommitted: (topic) => { if (topic !== parlayTopic) wakeRelays(); },
  });
  await runtime.start();
  const asker = new Asker(bus, cfg.topicPrefix + cfg.nodeId, cfg.askTimeoutMs);
  asker.observe = metrics.observeAsk;
  metrics.attach({ positions: () => runtime.positions(), actorCounts: () => runtime.actorCounts(), unsavedActors: () => runtime.unsavedActors(), offsets: bus.offsets ? (t) => bus.offsets!(t) : undefined });
  await asker.start();

  // Unset PARLAY_WEBHOOK_AUTH_SECRET: the webhook route answers 503 (the development local chain
  // hands its deliveries to the mirror in process, below).
  const webhookSecret = cfg.webhookSecret;
  const chain = opts.chain !== undefined ? opts.chain : cfg.solanaRpcUrl ? new Web3Gateway(cfg.solanaRpcUrl, authorityOf(cfg, opts, log)) : null;
  // Single statements outside transactions go straight to the driver (a forked entity manager per call costs more than the call).
  const driver = orm.em.getDriver() as unknown as { execute(sql: string, params?: unknown[]): Promise<any[]> };
  const dbHandle = { execute: (sql: string, params?: unknown[]) => driver.execute(sql, params ?? []) };
  const db = () => dbHandle;
  const reader = openReader(orm, cfg.databaseUrl, Math.max(2, Math.min(8, cfg.databasePoolMax)));
  // The parlay reads users poll, answered from memory while PostgreSQL's change notifications arrive.
  let readListener: NotifyListener | null = null;
  let reads: { cache: ParlayReadCache<Buffer>; settled(): Promise<void> } | undefined;
  if (cfg.databaseUrl && cfg.readCacheWallets > 0) {
    let listener: NotifyListener | null = null;
    const cache = new ParlayReadCache<Buffer>(() => listener?.listening ?? false, cfg.readCacheWallets, metrics.readCache);
    listener = new NotifyListener({ url: cfg.databaseUrl, channel: 'parlay_reads', onPayload: (p) => cache.changed(p), onGap: () => cache.clear(), log });
    await listener.start();
    readListener = listener;
    reads = { cache, settled: () => listener.sync() };
  }
  const parlays = new ParlayService({
    db, reader, reads, asker, store, topic: parlayTopic, programId: cfg.programId ?? PARLAY_PROGRAM_ID.toBase58(), chain, log, metrics: metrics.ingest,
  });

  const catalog = new Catalog(db);
  const tokens = new ClobTokens(cfg.clobJwtSecret, cfg.clobTokenTtl);
  const relay = new OutboxRelay(orm, bus, log);
  relay.start();
  const inboxPruner = new InboxPruner(db, { ...cfg.inbox, log });
  inboxPruner.start();
  const collateralMint = async () => cfg.collateralMint ?? (await q.programConfig(db()))?.collateral_mint ?? null;
  // Development with the local chain and no delegate given: a fresh one, funded on the local chain
  // once it is up (below), so that trades settle there too. Never with SOLANA_RPC_URL or in production.
  const runsDevChain = cfg.localChain && opts.chain === undefined && cfg.env === 'development';
  const devDelegate = runsDevChain && !cfg.solanaRpcUrl && !cfg.delegate && !cfg.delegateKeypair ? Keypair.generate() : null;
  if (devDelegate) cfg.delegate = devDelegate.publicKey.toBase58();
  const settlementKey = delegateKeypair(cfg) ?? devDelegate; // also sets cfg.delegate from the key when unset
  const chainConnection = connectionOf(cfg, () => parlays.chain());
  const clob = new ClobService({
    asker, db, catalog, chain: () => parlays.chain(), bookTopic, walletTopic, mintMerge: cfg.mintMergeMatching,
    distortionBound: cfg.distortionBound, maxMakersPerTrade: cfg.maxMakersPerTrade, maxMakersPerMintMergeTrade: cfg.maxMakersPerMintMergeTrade, collateralMint, delegate: () => cfg.delegate ?? null, holdMs: cfg.reservationHoldMs,
    maxOpenOrdersPerMarket: cfg.maxOpenOrdersPerMarket,
  });
  const clock = new BookClock({ db, asker, bus, runtime, bookTopic, log });
  if (cfg.bookClock) clock.start(); // off only for log replays, which must add no commands
  const heartbeats = new HeartbeatClock({ db, asker, bookTopic, nodeId: cfg.nodeId, timeoutMs: cfg.heartbeatTimeoutMs, log, onExpiry: (_w, n) => metrics.heartbeatExpiry(n) });
  if (cfg.bookClock) heartbeats.start();
  const ledgerTopic = (t: string) => `${cfg.topicPrefix}${t === 'orders' ? TOPICS.ledgerOrders : TOPICS.ledgerTrades}`;
  await bus.ensureTopics([{ topic: ledgerTopic('orders'), partitions: cfg.partitions }, { topic: ledgerTopic('trades'), partitions: cfg.partitions }]);
  const ledgerRelay = new LedgerRelay(orm, bus, ledgerTopic, log);
  if (cfg.databaseUrl) ledgerRelay.start(); // PGlite (embedded, one node) has no advisory locks to share: the stream is served from the table
  // The WebSocket channels' state, tailed from the ledger table by every node (src/clob/market-feed.ts).
  const feed = new MarketFeed({ db, mintMerge: cfg.mintMergeMatching, ringSize: cfg.ws.ringSize, lingerMs: cfg.ws.lingerMs, pollMs: cfg.ws.pollMs, nodeId: cfg.nodeId, log });
  wakeRelays = () => { relay.poke(); if (cfg.databaseUrl) ledgerRelay.poke(); feed.poke(); };
  const clobConfig = {
    get collateral_mint() { return mintSeen; }, delegate: null as string | null, taker_fee_curve: 'min(p,1-p)',
    token_ttl_seconds: cfg.clobTokenTtl, mint_merge_matching: cfg.mintMergeMatching,
  };
  clobConfig.delegate = cfg.delegate ?? null;
  let mintSeen: string | null = cfg.collateralMint ?? null;
  const refreshMint = setInterval(() => { void collateralMint().then((m) => { mintSeen = m; }, () => undefined); }, 2000);
  mintSeen = await collateralMint().catch(() => mintSeen);
  let devChain: { close(): Promise<void> } | null = null;
  const templates = new TemplateService({
    db, transaction: (fn) => (orm.em.fork() as any).transactional((em: any) => fn(em)), quote: (id) => clob.quote(id), mintMerge: cfg.mintMergeMatching,
  });
  const edge = edgeFrom(cfg.http);
  const app = buildApp([
    healthRoutes({
      database: async () => { await db().execute('select 1'); },
      [cfg.kafkaBrokers ? 'kafka' : 'bus']: async () => {
        await bus.ping?.();
        if (!runtime.hasJoined) throw new Error('not in the consumer group yet');
      },
      rpc: async () => { const c = parlays.chain(); if (!c) return 'not configured'; await c.ping(); },
    }, metrics.registry, { closing: () => closed }),
    parlayRoutes(parlays, { jwtSecret: cfg.platformJwtSecret, webhookSecret, edge }),
    marketRoutes(catalog, { jwtSecret: cfg.platformJwtSecret, edge, onChange: async (id) => { await clob.configure(id); await templates.marketChanged(id); } }),
    clobAuthRoutes({ tokens, db, config: () => clobConfig, edge }),
    clobRoutes({ svc: clob, tokens, db, internalToken: cfg.clobInternalToken, edge }),
    marketDataRoutes({ data: new MarketData({ asker, db, bookTopic, mintMerge: cfg.mintMergeMatching }), edge }),
    marketMakerRoutes({
      tokens, enabled: !cfg.mintMergeMatching, edge,
      mintMerge: new MintMerge({ asker, walletTopic, catalog, chain: () => parlays.chain(), connection: chainConnection, delegate: settlementKey, collateralMint, cuPrice: BigInt(cfg.settlementCuPrice) }),
    }),
    templateRoutes(templates, { jwtSecret: cfg.platformJwtSecret, edge }),
    heartbeatRoutes({ tokens, db, timeoutMs: cfg.heartbeatTimeoutMs, edge }),
    uiRoutes({ market: (id) => catalog.get(id) }),
  ], log, metrics.observeHttp, edge);

  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(cfg.port, cfg.host, () => resolve(s));
    s.once('error', (e) => reject(listenError(e, cfg.port, cfg.host)));
  });
  server.keepAliveTimeout = 65_000;
  const ws = new WsServer({ feed, tokens, limits: cfg.ws, trustProxy: cfg.http.trustProxy, log });
  ws.attach(server);
  metrics.attachWs({ connections: () => ws.byChannel(), sent: () => ws.sent, dropped: () => ws.dropped, resumes: () => feed.resumes });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  log.info({ url, env: cfg.env, kafka: !!cfg.kafkaBrokers, database: cfg.databaseUrl ? 'postgresql' : 'pglite' }, 'node started');
  if (runsDevChain) {
    const { startDevChain } = await import('./dev/local-chain.ts');
    // Its gateway signs void_parlay with the authority the local chain's program config was initialized with.
    const dev = await startDevChain({ serviceUrl: url, mirror: parlays, port: cfg.localChainPort, log, delegate: settlementKey, platformJwtSecret: cfg.platformJwtSecret });
    parlays.setChain(dev.gateway);
    devChain = dev;
  }
  // The settlement executor runs where the delegate's key is (issue 5, src/settlement/).
  const settlement = settlementKey
    ? await startSettlement({ cfg, orm, bus, log, url, delegate: settlementKey, connection: chainConnection, collateralMint, bookTopic, tradesTopic: ledgerTopic('trades') })
    : null;

  let closed = false;
  return {
    url, port, config: cfg, orm, bus, runtime, asker, parlays, log, app, ws, feed,
    async close() {
      if (closed) return;
      closed = true;
      ws.close();
      await feed.stop();
      await new Promise<void>((r) => { server.close(() => r()); server.closeAllConnections?.(); });
      clearInterval(refreshMint);
      await clock.stop();
      await settlement?.stop();
      await heartbeats.stop();
      // The relays' drains in progress end before the bus and the database close under them.
      await Promise.all([relay.stop(), ledgerRelay.stop(), inboxPruner.stop()]);
      await devChain?.close();
      await asker.stop();
      await runtime.stop();
      if (!opts.bus) await bus.close();
      await readListener?.close();
      await reader.close();
      await orm.close();
    },
  };
}

/**
 * The key that signs void_parlay through SOLANA_RPC_URL: PARLAY_AUTHORITY_KEYPAIR, else in
 * development a generated one (its public key logged: the program's config must name it for a
 * void to land); null in production without the setting (admin void answers 503).
 */
function authorityOf(cfg: Config, opts: NodeOptions, log: Logger): Keypair | null {
  if (opts.authority) return opts.authority;
  if (cfg.authorityKeypair) return readKeypair(cfg.authorityKeypair);
  if (cfg.env !== 'development') return null;
  const generated = Keypair.generate();
  log.warn({ authority: generated.publicKey.toBase58() }, 'PARLAY_AUTHORITY_KEYPAIR unset (development): generated a void_parlay authority; the program config must name it');
  return generated;
}

/**
 * Chaos hook: `RUNTIME_CRASH_POINT=before-commit:N` (or `after-commit:N`) kills this process with
 * SIGKILL at the N-th batch commit, between consuming and committing (or between committing and
 * answering), so that failover tests hit exactly that instant.
 */
function crashPoint(spec: string | undefined, log: Logger) {
  const m = spec ? /^(before|after)-commit:(\d+)$/.exec(spec) : null;
  if (!m) return undefined;
  let left = Number(m[2]);
  const hit = () => {
    if (--left > 0) return;
    log.warn({ point: spec }, 'RUNTIME_CRASH_POINT reached: SIGKILL');
    process.kill(process.pid, 'SIGKILL');
  };
  return m[1] === 'before' ? { beforeCommit: hit } : { afterCommit: hit };
}
