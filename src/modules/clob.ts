// The order book as a module of the node: its actor kinds, the use cases (orders, market data,
// the clocks), the relays that publish what its batches wrote (outbox, public ledger), the
// WebSocket feed, and its routes.
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Lifecycle } from '../lifecycle.ts';
import type { Asker } from '../runtime/asker.ts';
import type { Runtime } from '../runtime/runtime.ts';
import type { ChainGateway } from '../chain/gateway.ts';
import * as q from '../parlay/queries.ts';
import { clobKinds } from '../clob/kinds.ts';
import { Catalog } from '../clob/catalog.ts';
import { OrderIndex } from '../clob/order-index.ts';
import { watchMarkets } from './market-watch.ts';
import { ClobTokens } from '../clob/sign-in.ts';
import { ClobService } from '../clob/service.ts';
import { BalanceWatch, balanceOf } from '../clob/balances.ts';
import { channel } from '../runtime/asker.ts';
import type { WalletProtocol } from '../../topics/wallet-commands.ts';
import type { BookProtocol } from '../../topics/clob-commands.ts';
import { BookClock } from '../clob/book-clock.ts';
import { HeartbeatClock } from '../clob/heartbeats.ts';
import { LedgerRelay } from '../clob/ledger-stream.ts';
import { MarketData } from '../clob/market-data.ts';
import { MarketFeed } from '../clob/market-feed.ts';
import { OutboxRelay } from '../store/outbox.ts';
import { WsServer } from '../ws/server.ts';
import type { Edge } from '../http/edge.ts';
import { clobAuthRoutes } from '../http/routes/clob-auth.ts';
import { clobRoutes } from '../http/routes/clob.ts';
import { marketDataRoutes } from '../http/routes/market-data.ts';
import { marketMakerRoutes } from '../http/routes/market-makers.ts';
import { heartbeatRoutes } from '../http/routes/heartbeats.ts';
import { marketRoutes } from '../http/routes/markets.ts';
import { uiRoutes } from '../http/routes/ui.ts';
import type { Infrastructure, Metrics } from './infrastructure.ts';
import { signatureVerifier } from '../clob/sigverify.ts';
import type { settlementModule } from './settlement.ts';

export const clobModuleKinds = (infra: Infrastructure) => clobKinds({ bookTopic: infra.topics.book, walletTopic: infra.topics.wallet });

export async function clobModule(
  cfg: Config,
  infra: Infrastructure,
  o: {
    asker: Asker;
    runtime: Runtime;
    chain: () => ChainGateway | null;
    settlement: ReturnType<typeof settlementModule>;
    log: Logger;
    metrics: Metrics;
    life: Lifecycle;
  },
) {
  const { db, bus, orm, topics } = infra;
  const { asker, log, life } = o;
  const catalog = new Catalog(db, infra.reader);
  // On PostgreSQL the markets are watched through its notifications (several nodes edit them); the
  // embedded node reads a market again every second, as the index does unwatched.
  let marketWatch: { listening(): boolean } | null = null;
  const orders = new OrderIndex(db, infra.reader, undefined, () => marketWatch?.listening() ?? false);
  if (infra.notifications) {
    const watch = watchMarkets(infra.notifications, () => orders);
    marketWatch = watch;
    // Listening before the front door serves: a market read before then is kept a second only
    // (unwatched) and dropped by the channel's first gap, so the next order read it again (seen
    // as a ledger-check test's extra `before_ask` read on a loaded CI machine).
    await watch.listened;
  }
  const tokens = new ClobTokens(cfg.clobJwtSecret, cfg.clobTokenTtl);
  const relay = new OutboxRelay(orm, bus, log);
  relay.start();
  life.defer('outbox relay', () => relay.stop());
  const collateralMint = async () => cfg.collateralMint ?? (await q.programConfig(db()))?.collateral_mint ?? null;
  // Balances kept current from the chain's account notifications, told to the wallets' actors.
  const wallets = channel<WalletProtocol>(topics.wallet);
  const books = channel<BookProtocol>(topics.book);
  const balances = new BalanceWatch({
    chain: o.chain,
    max: cfg.balanceWatchMax,
    seen: (wallet, asset, h, market) =>
      market
        ? asker.tellTo(books, [{ key: market, cmd: { type: 'SeeBalance', owner: wallet, asset, balance: balanceOf(h), now: Date.now() } }])
        : asker.tellTo(wallets, [{ key: wallet, cmd: { type: 'SeeBalance', asset, balance: balanceOf(h) } }]),
    log,
  });
  life.defer('balance watch', () => balances.stop());
  const verifier = signatureVerifier(cfg.sigverifyThreads);
  life.defer('signature threads', () => verifier.close());
  const service = new ClobService({
    verifier,
    asker,
    db,
    catalog,
    orders,
    chain: o.chain,
    balances,
    log,
    bookTopic: topics.book,
    walletTopic: topics.wallet,
    mintMerge: cfg.mintMergeMatching,
    distortionBound: cfg.distortionBound,
    maxMakersPerTrade: cfg.maxMakersPerTrade,
    maxMakersPerMintMergeTrade: cfg.maxMakersPerMintMergeTrade,
    collateralMint,
    delegate: () => o.settlement.delegate,
    maxOpenOrdersPerMarket: cfg.maxOpenOrdersPerMarket,
    ledgerRead: o.metrics.ledgerRead,
  });
  const clock = new BookClock({ db, reader: infra.reader, asker, bus, runtime: o.runtime, bookTopic: topics.book, log });
  const heartbeats = new HeartbeatClock({
    db,
    asker,
    bookTopic: topics.book,
    nodeId: cfg.nodeId,
    timeoutMs: cfg.heartbeatTimeoutMs,
    log,
    onExpiry: (_w, n) => o.metrics.heartbeatExpiry(n),
  });
  if (cfg.bookClock) {
    // off only for log replays, which must add no commands
    clock.start();
    life.defer('book clock', () => clock.stop());
    heartbeats.start();
    life.defer('heartbeat clock', () => heartbeats.stop());
  }
  await bus.ensureTopics([
    { topic: topics.ledger('orders'), partitions: cfg.partitions },
    { topic: topics.ledger('trades'), partitions: cfg.partitions },
  ]);
  const ledgerRelay = new LedgerRelay(orm, bus, (t) => topics.ledger(t === 'orders' ? 'orders' : 'trades'), log);
  if (cfg.databaseUrl) {
    // PGlite (embedded, one node) has no advisory locks to share: the stream is served from the table
    ledgerRelay.start();
    life.defer('ledger relay', () => ledgerRelay.stop());
  }
  // The WebSocket channels' state, tailed from the ledger table by every node (src/clob/market-feed.ts).
  const feed = new MarketFeed({
    db,
    mintMerge: cfg.mintMergeMatching,
    ringSize: cfg.ws.ringSize,
    lingerMs: cfg.ws.lingerMs,
    pollMs: cfg.ws.pollMs,
    nodeId: cfg.nodeId,
    log,
  });
  life.defer('market feed', () => feed.stop());
  // GET /v1/config: the collateral mint as last seen (the mirrored program config may arrive later).
  let mintSeen: string | null = cfg.collateralMint ?? null;
  const refreshMint = setInterval(() => {
    void collateralMint().then(
      (m) => {
        mintSeen = m;
      },
      () => undefined,
    );
  }, 2000);
  life.defer('collateral mint refresh', () => clearInterval(refreshMint));
  mintSeen = await collateralMint().catch(() => mintSeen);
  const clobConfig = {
    get collateral_mint() {
      return mintSeen;
    },
    delegate: o.settlement.delegate,
    taker_fee_curve: 'min(p,1-p)',
    token_ttl_seconds: cfg.clobTokenTtl,
    mint_merge_matching: cfg.mintMergeMatching,
  };
  return {
    service,
    catalog,
    tokens,
    feed,
    collateralMint,
    /**
     * A batch of the order book committed: the ledger and the feed have rows to send. (Its outbox
     * rows, forwards and releases, are sent by its worker; the relay takes them only when overdue.)
     */
    wake(markets: string[]) {
      if (cfg.databaseUrl) ledgerRelay.poke(markets);
      feed.poke();
    },
    /** Rows were committed to the outbox outside a batch (the settlement executor's): send them now. */
    pokeOutbox() {
      relay.poke();
    },
    routes: (edge: Edge, onMarketChange: (id: string) => Promise<void>) => [
      marketRoutes(catalog, {
        jwtSecret: cfg.platformJwtSecret,
        edge,
        onChange: async (id) => {
          orders.forgetMarket(id);
          await service.configure(id);
          await onMarketChange(id);
        },
      }),
      clobAuthRoutes({ tokens, db, config: () => clobConfig, edge }),
      clobRoutes({ svc: service, tokens, db, internalToken: cfg.clobInternalToken, edge }),
      marketDataRoutes({ data: new MarketData({ asker, db, bookTopic: topics.book, mintMerge: cfg.mintMergeMatching }), edge }),
      marketMakerRoutes({
        tokens,
        enabled: !cfg.mintMergeMatching,
        edge,
        mintMerge: o.settlement.mintMerge({ asker, catalog, collateralMint }),
      }),
      heartbeatRoutes({ tokens, db, timeoutMs: cfg.heartbeatTimeoutMs, edge }),
      uiRoutes({ market: (id) => catalog.get(id) }),
    ],
    /** The channels upgrade on the node's HTTP server. */
    listening(server: Server) {
      const ws = new WsServer({ feed, tokens, limits: cfg.ws, trustProxy: cfg.http.trustProxy, log });
      ws.attach(server);
      life.defer('websocket channels', () => ws.close());
      return ws;
    },
  };
}
