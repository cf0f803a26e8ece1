// One service node, composed: the platform (database, bus, runtime, asker), then the modules
// (parlay mirror, order book, templates, settlement, and the local chain in development), the HTTP
// front door and its WebSocket channels. Each part registers how it stops as it starts; close()
// stops them in reverse (src/lifecycle.ts). Settings are read once (src/config.ts), never changed.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Keypair } from '@solana/web3.js';
import type { Config } from './config.ts';
import type { Orm } from './store/orm.ts';
import type { Runtime } from './runtime/runtime.ts';
import type { Asker } from './runtime/asker.ts';
import type { Bus } from './runtime/types.ts';
import type { ChainGateway } from './chain/gateway.ts';
import type { ParlayService } from './parlay/service.ts';
import type { MarketFeed } from './clob/market-feed.ts';
import type { WsServer } from './ws/server.ts';
import { buildApp } from './http/app.ts';
import { edgeFrom } from './http/edge.ts';
import { assertPortFree, listenError } from './http/port.ts';
import { healthRoutes } from './http/routes/health.ts';
import { lockDataDir } from './store/data-dir-lock.ts';
import { InboxPruner } from './store/inbox-pruner.ts';
import { PgliteHousekeeping } from './store/pglite-housekeeping.ts';
import { pgliteEngineOf } from './store/orm.ts';
import { createMetrics } from './metrics.ts';
import { createLogger } from './log.ts';
import { Lifecycle } from './lifecycle.ts';
import { openInfrastructure, startRuntime } from './modules/infrastructure.ts';
import { parlayModule, parlayModuleKinds } from './modules/parlay.ts';
import { clobModule, clobModuleKinds } from './modules/clob.ts';
import { templatesModule } from './modules/templates.ts';
import { settlementModule } from './modules/settlement.ts';
import { startDevChainModule } from './modules/dev-chain.ts';

export { readKeypair } from './modules/parlay.ts';
/** The refusals of a start an operator fixes in the settings or the machine (main prints them as one line). */
export { PortBusy } from './http/port.ts';
export { DataDirBusy } from './store/data-dir-lock.ts';

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

/**
 * Starts a node. Before anything touches data: the HTTP port must be free, and an embedded (PGlite)
 * data directory is locked for this process (src/store/data-dir-lock.ts), released at close.
 */
export async function startNode(cfg: Config, opts: NodeOptions = {}): Promise<ServiceNode> {
  await assertPortFree(cfg.port, cfg.host);
  const log = opts.log ?? createLogger({ level: cfg.logLevel, nodeId: cfg.nodeId });
  const life = new Lifecycle(log);
  if (!cfg.databaseUrl && cfg.dataDir !== 'memory://') {
    const lock = lockDataDir(cfg.dataDir);
    life.defer('data directory lock', () => lock.release());
  }
  try {
    return await compose(cfg, opts, log, life);
  } catch (e) {
    await life.close();
    throw e;
  }
}

async function compose(cfg: Config, opts: NodeOptions, log: Logger, life: Lifecycle): Promise<ServiceNode> {
  const metrics = createMetrics(cfg.nodeId);
  const devChain = cfg.localChain && opts.chain === undefined && cfg.env === 'development';
  const infra = await openInfrastructure(cfg, {
    bus: opts.bus,
    freshLocalChain: devChain && !cfg.databaseUrl && cfg.dataDir.endsWith('/local-chain'),
    log,
    life,
  });
  // Set once the order book is composed (below); commits before that have nothing to wake.
  // eslint-disable-next-line prefer-const -- assigned after the runtime it listens to has started
  let clob: Awaited<ReturnType<typeof clobModule>> | undefined;
  const { runtime, asker } = await startRuntime(cfg, infra, {
    kinds: [...parlayModuleKinds(infra), ...clobModuleKinds(infra)],
    log,
    metrics,
    life,
    // Only the books' batches write ledger rows (their keys are markets); the others send what
    // they write to the outbox themselves (forwards).
    onCommitted: (topic, _partition, _effects, markets) => {
      if (topic === infra.topics.book) clob?.wake(markets);
    },
  });
  const pruner = new InboxPruner(infra.db, { ...cfg.inbox, log });
  pruner.start();
  life.defer('inbox pruner', () => pruner.stop());
  const engine = pgliteEngineOf(infra.orm);
  if (engine) {
    const housekeeping = new PgliteHousekeeping(engine, { ...cfg.pglite, log });
    await housekeeping.start();
    life.defer('PGlite housekeeping', () => housekeeping.stop());
  }
  const parlay = await parlayModule(cfg, infra, { asker, chain: opts.chain, authority: opts.authority, log, metrics, life });
  const chain = () => parlay.service.chain();
  const settlement = settlementModule(cfg, infra, { devChain, chain, log, life });
  clob = await clobModule(cfg, infra, { asker, runtime, chain, settlement, log, metrics, life });
  const templates = templatesModule(cfg, infra, { quote: (id) => clob!.service.quote(id) });
  const edge = edgeFrom(cfg.http);
  let closed = false;
  const health = healthRoutes(
    {
      database: async () => {
        await infra.db().execute('select 1');
      },
      [cfg.kafkaBrokers ? 'kafka' : 'bus']: async () => {
        await infra.bus.ping?.();
        if (!runtime.hasJoined) throw new Error('not in the consumer group yet');
      },
      rpc: async () => {
        const c = chain();
        if (!c) return 'not configured';
        await c.ping();
      },
    },
    metrics.registry,
    { closing: () => closed },
  );
  const app = buildApp(
    [health, ...parlay.routes(edge), ...clob.routes(edge, (id) => templates.service.marketChanged(id)), ...templates.routes(edge)],
    log,
    metrics.observeHttp,
    edge,
  );
  const server = await listen(app, cfg);
  life.defer(
    'http server',
    () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections?.();
      }),
  );
  const ws = clob.listening(server);
  metrics.attachWs({
    connections: () => ws.byChannel(),
    sent: () => ws.sent,
    dropped: () => ws.dropped,
    resumes: () => clob!.feed.resumes,
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  log.info({ url, env: cfg.env, kafka: !!cfg.kafkaBrokers, database: cfg.databaseUrl ? 'postgresql' : 'pglite' }, 'node started');
  if (devChain) await startDevChainModule(cfg, { url, mirror: parlay.service, delegate: settlement.key, log, life });
  await settlement.start(url, clob.collateralMint, () => clob.pokeOutbox());
  return {
    url,
    port: Number(new URL(url).port),
    config: cfg,
    orm: infra.orm,
    bus: infra.bus,
    runtime,
    asker,
    parlays: parlay.service,
    log,
    app,
    ws,
    feed: clob.feed,
    close: async () => {
      closed = true;
      await life.close();
    },
  };
}

function listen(app: ReturnType<typeof buildApp>, cfg: Config): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = app.listen(cfg.port, cfg.host, () => {
      s.keepAliveTimeout = 65_000;
      resolve(s);
    });
    s.once('error', (e) => reject(listenError(e, cfg.port, cfg.host)));
  });
}
