// Settings from the environment (contracts/service.md). Production refuses to start without its
// required secrets and says which are missing; development generates what it may.
import { randomBytes } from 'node:crypto';
import { availableParallelism, hostname } from 'node:os';
import { z } from 'zod';

/**
 * Defaults of the maker caps: the most maker legs whose settlement transaction fits in 1232 bytes
 * in the worst case of its match type — every maker a distinct wallet, a fee recipient apart from
 * the delegate, any price and fee rate. The settlement transaction creates no token account (the
 * executor creates missing ones beforehand, in transactions of their own). Measured with the real
 * builder (planSettlement + signWithBudget, serialized); test/unit/settlement/plan.test.ts keeps it true:
 * - CLOB_MAX_MAKERS_PER_TRADE (COMPLEMENTARY, 2–3 transfers per leg): 9 legs 1177 bytes, 10 legs 1271;
 * - CLOB_MAX_MAKERS_PER_MINT_MERGE_TRADE (MINT or MERGE, 4–5 instructions per leg): 6 legs 1171
 *   bytes, 7 legs 1295.
 */
export const DEFAULT_MAX_MAKERS_PER_TRADE = 9;
export const DEFAULT_MAX_MAKERS_PER_MINT_MERGE_TRADE = 6;

const schema = z.object({
  APP_ENV: z.enum(['development', 'production']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: z.string().optional(),
  DATA_DIR: z.string().optional(),
  KAFKA_BROKERS: z.string().optional(),
  KAFKA_GROUP: z.string().default('parlay-clob'),
  TOPIC_PREFIX: z.string().default(''),
  TOPIC_PARTITIONS: z.coerce.number().int().min(1).max(4096).default(12),
  KAFKA_SESSION_TIMEOUT_MS: z.coerce.number().int().min(1000).max(300_000).default(3000),
  TOPIC_REPLICATION: z.coerce.number().int().min(1).max(7).default(1),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(500).default(10),
  DATABASE_COMMITS_IN_FLIGHT: z.coerce.number().int().min(1).max(500).default(2),
  PARLAY_READ_CACHE_WALLETS: z.coerce.number().int().min(0).max(10_000_000).default(100_000),
  RUNTIME_MAX_LIVE_ACTORS: z.coerce.number().int().min(1).max(10_000_000).default(2_000),
  RUNTIME_CHECKPOINT_BATCHES: z.coerce.number().int().min(1).max(1_000_000).default(20),
  RUNTIME_CHECKPOINT_MS: z.coerce.number().int().min(1).max(3_600_000).default(2_000),
  RUNTIME_INBOX_RETENTION_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(30 * 86_400_000)
    .default(900_000),
  RUNTIME_INBOX_PRUNE_MS: z.coerce.number().int().min(100).max(86_400_000).default(60_000),
  /** Embedded PGlite (no autovacuum, no checkpointer: src/store/pglite-housekeeping.ts): MB of WAL between vacuums of its churning tables (0: none), and between checkpoints. */
  PGLITE_VACUUM_WAL_MB: z.coerce.number().int().min(0).max(65_536).default(16),
  PGLITE_CHECKPOINT_WAL_MB: z.coerce.number().int().min(1).max(65_536).default(64),
  NODE_ID: z.string().optional(),
  /** Direct replies between nodes (src/runtime/direct-replies.ts): '0' sends every answer through the reply topics. */
  DIRECT_REPLIES: z.enum(['0', '1']).default('1'),
  /** Creations packed in the webhook's bulk records on Kafka; '0' while a node older than this reader still consumes. */
  KAFKA_PACKED_EVENTS: z.enum(['0', '1']).default('1'),
  REPLY_HOST: z.string().default('127.0.0.1'),
  REPLY_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  REPLY_ADVERTISE: z
    .string()
    .regex(/^[^\s:]+:\d{1,5}$/, 'host:port')
    .optional(),
  PLATFORM_JWT_SECRET: z.string().optional(),
  PARLAY_WEBHOOK_AUTH_SECRET: z.string().optional(),
  SOLANA_RPC_URL: z.string().optional(),
  PARLAY_PROGRAM_ID: z.string().optional(),
  PARLAY_AUTHORITY_KEYPAIR: z.string().optional(),
  CLOB_JWT_SECRET: z.string().optional(),
  CLOB_TOKEN_TTL_SECONDS: z.coerce.number().int().min(1).default(300),
  CLOB_INTERNAL_TOKEN: z.string().optional(),
  CLOB_COLLATERAL_MINT: z.string().optional(),
  CLOB_DELEGATE: z.string().optional(),
  CLOB_DELEGATE_KEYPAIR: z.string().optional(),
  CLOB_FEE_RECIPIENT: z.string().optional(),
  CLOB_SETTLEMENT_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(5),
  CLOB_SETTLEMENT_CU_PRICE: z.coerce.number().int().min(0).max(1_000_000_000).default(1000),
  CLOB_SETTLEMENT_POLL_MS: z.coerce.number().int().min(20).max(60_000).default(250),
  WS_MAX_PAYLOAD_BYTES: z.coerce
    .number()
    .int()
    .min(256)
    .max(1024 * 1024)
    .default(16 * 1024),
  WS_MAX_BUFFERED_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(256 * 1024 * 1024)
    .default(1024 * 1024),
  WS_MAX_ASSETS: z.coerce.number().int().min(1).max(100_000).default(500),
  WS_MAX_CONNECTIONS_PER_IP: z.coerce.number().int().min(1).max(1_000_000).default(100),
  WS_MESSAGES_PER_SEC: z.coerce.number().int().min(1).max(1_000_000).default(50),
  WS_PING_MS: z.coerce.number().int().min(50).max(600_000).default(10_000),
  WS_IDLE_TIMEOUT_MS: z.coerce.number().int().min(150).max(3_600_000).default(30_000),
  WS_RING_MESSAGES: z.coerce.number().int().min(1).max(1_000_000).default(1_000),
  WS_MARKET_LINGER_MS: z.coerce.number().int().min(0).max(86_400_000).default(60_000),
  WS_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(100),
  CLOB_ENABLE_MINT_MERGE_MATCHING: z.enum(['0', '1']).default('1'),
  CLOB_DISTORTION_BOUND: z.coerce.number().min(0).max(1).default(0.02),
  CLOB_MAX_MAKERS_PER_TRADE: z.coerce.number().int().min(1).max(10_000).default(DEFAULT_MAX_MAKERS_PER_TRADE),
  CLOB_MAX_MAKERS_PER_MINT_MERGE_TRADE: z.coerce.number().int().min(1).max(10_000).default(DEFAULT_MAX_MAKERS_PER_MINT_MERGE_TRADE),
  CLOB_HEARTBEAT_TIMEOUT_MS: z.coerce.number().int().min(200).max(3_600_000).default(15_000),
  CLOB_MAX_OPEN_ORDERS_PER_MARKET: z.coerce.number().int().min(1).max(1_000_000).default(1_000),
  CLOB_BALANCE_WATCH_MAX: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  CLOB_SIGVERIFY_THREADS: z.coerce.number().int().min(0).max(64).optional(),
  TRUST_PROXY: z.enum(['0', '1']).default('0'),
  HTTP_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(128 * 1024),
  WEBHOOK_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(256 * 1024 * 1024)
    .default(4 * 1024 * 1024),
  HTTP_JSON_MAX_DEPTH: z.coerce.number().int().min(2).max(1000).default(64),
  RATE_LIMIT_IP_PER_SEC: z.coerce.number().min(0).default(10_000),
  RATE_LIMIT_IP_BURST: z.coerce.number().int().min(1).default(20_000),
  RATE_LIMIT_WALLET_PER_SEC: z.coerce.number().min(0).default(2_000),
  RATE_LIMIT_WALLET_BURST: z.coerce.number().int().min(1).default(4_000),
  RATE_LIMIT_SIGNIN_PER_SEC: z.coerce.number().min(0).default(200),
  RATE_LIMIT_SIGNIN_BURST: z.coerce.number().int().min(1).default(1_000),
  ASK_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  LOG_LEVEL: z.string().default('info'),
  LOCAL_CHAIN: z.enum(['0', '1']).optional(),
  LOCAL_CHAIN_PORT: z.coerce.number().int().min(0).max(65535).default(8899),
  // Test and operations switches (chaos tests, log replays); not for production use.
  RUNTIME_CRASH_POINT: z
    .string()
    .regex(/^(before|after)-commit:\d+$/)
    .optional(),
  SETTLEMENT_CRASH_POINT: z.string().max(100).optional(),
  CLOB_BOOK_CLOCK: z.enum(['0', '1']).default('1'),
});

export type Env = z.infer<typeof schema>;

export interface Config {
  env: 'development' | 'production';
  port: number;
  host: string;
  databaseUrl?: string;
  dataDir: string;
  kafkaBrokers?: string[];
  groupId: string;
  topicPrefix: string;
  partitions: number;
  topicReplication: number;
  /** How soon the group notices a dead node (the broker must allow it: group.min.session.timeout.ms). */
  kafkaSessionTimeoutMs: number;
  databasePoolMax: number;
  /** Transactions this node's partition commits run at once; commits beyond wait and go together (group commit). */
  databaseCommitsInFlight: number;
  /** Wallets whose parlay reads a node keeps in memory (PostgreSQL only); 0: none. */
  readCacheWallets: number;
  /** Live actors per partition before idle ones are stopped (they come back from their snapshots). */
  maxLiveActors: number;
  /** Snapshots of changed actors are written every this many batches or milliseconds (Kafka only; 1 batch: every commit). */
  checkpoint: { everyBatches: number; maxAgeMs: number };
  /** Answered commands' inbox rows are deleted this long after they were written (once their record is before every replay point), checked every `everyMs`. */
  inbox: { retentionMs: number; everyMs: number };
  /** Embedded PGlite's housekeeping, in bytes of WAL: between vacuums of its churning tables (0: none), and between checkpoints. */
  pglite: { vacuumWalBytes: number; checkpointWalBytes: number };
  nodeId: string;
  platformJwtSecret: string;
  webhookSecret?: string;
  solanaRpcUrl?: string;
  programId?: string;
  authorityKeypair?: string;
  clobJwtSecret: string;
  clobTokenTtl: number;
  clobInternalToken: string;
  /** Collateral mint of the order book (default: the parlay program's, as mirrored). */
  collateralMint?: string;
  /** The program delegate that moves makers' tokens at settlement (its public key). */
  delegate?: string;
  /** The delegate's key (JSON secret-key array, or a file holding it): signs settlements; unset = no executor. */
  delegateKeypair?: string;
  /** Owner of the collateral account that collects taker fees (default: the delegate). */
  feeRecipient?: string;
  settlementMaxAttempts: number;
  /** First priority fee of a settlement, micro-lamports per compute unit (doubled on compute exhaustion). */
  settlementCuPrice: number;
  settlementPollMs: number;
  mintMergeMatching: boolean;
  distortionBound: number;
  /** Maker fills per COMPLEMENTARY trade of one taker execution (past it the sweep goes on in a further trade), so that its settlement fits one transaction. */
  maxMakersPerTrade: number;
  /** The same for a MINT or MERGE trade (more instructions per leg). */
  maxMakersPerMintMergeTrade: number;
  /** Live and held orders one wallet may have in one market (a GTC/GTD order past it is rejected). */
  maxOpenOrdersPerMarket: number;
  /** CLOB_BALANCE_WATCH_MAX: (wallet, mint) account subscriptions one node keeps, least recently used dropped first */
  balanceWatchMax: number;
  /** CLOB_SIGVERIFY_THREADS: worker threads that check order signatures (0: on the event loop; default: see defaultSigverifyThreads) */
  sigverifyThreads: number;
  /** Cancel-on-disconnect: a wallet that opted in (POST /v1/heartbeats) and is silent this long loses its resting orders. */
  heartbeatTimeoutMs: number;
  askTimeoutMs: number;
  /**
   * Answers to this node's asks from other nodes' workers straight to it over TCP (on Kafka; null:
   * through the reply topic only). `host`/`port`: what it listens on (port 0: any free one);
   * `advertise`: how other nodes reach it (default `host:port`); `secret`: shared by the cluster.
   */
  directReplies: { host: string; port: number; advertise?: string; secret: string } | null;
  /** The webhook's creations travel packed in bulk records on Kafka (KAFKA_PACKED_EVENTS). */
  packedEvents: boolean;
  /** WebSocket channels (src/ws/, docs/ws.md): per-connection bounds, heartbeats, the feed's ring and tail. */
  ws: {
    /** Most bytes of one frame from a client (larger: closed 1009 by ws). */
    maxPayloadBytes: number;
    /** Most bytes queued to one connection; past it the connection is dropped (4008). */
    maxBufferedBytes: number;
    /** Most assets one connection may subscribe (past it: 4413). */
    maxAssets: number;
    /** Most open connections from one address (past it the upgrade is answered 429). */
    maxConnectionsPerIp: number;
    /** Client frames per second per connection (a bucket of this many, refilled per second; past it: 4029). */
    messagesPerSecond: number;
    /** Server ping period. */
    pingMs: number;
    /** A connection silent (no frame, no pong) this long is terminated. */
    idleTimeoutMs: number;
    ringSize: number;
    lingerMs: number;
    pollMs: number;
  };
  /** The HTTP edge: trusted proxy headers, body bounds, rate limits (src/http/edge.ts). */
  http: {
    /** X-Forwarded-Host/Proto/For are believed only behind a proxy that sets them. */
    trustProxy: boolean;
    /** Most bytes of a request body, every route but the webhook. */
    bodyLimitBytes: number;
    /** Most bytes of a webhook delivery. */
    webhookBodyLimitBytes: number;
    /** Most nesting levels of a JSON body. */
    jsonMaxDepth: number;
    /** Token buckets per node: rate per second (0: off) and burst. */
    rateLimits: {
      ip: { perSecond: number; burst: number };
      wallet: { perSecond: number; burst: number };
      signIn: { perSecond: number; burst: number };
    };
  };
  logLevel: string;
  /** Start the local chain beside the service (development without SOLANA_RPC_URL). */
  localChain: boolean;
  localChainPort: number;
  /** Chaos hooks: kill the process with SIGKILL at a named point (`before-commit:N`, …). */
  crashPoints: { runtime?: string; settlement?: string };
  /** The book clock and heartbeat clock run (off only for log replays, which must add no commands). */
  bookClock: boolean;
}

export class ConfigError extends Error {}

/** The process's environment: the one place the code reads it (the service's and the ops CLI's settings). */
export function environment(): Record<string, string | undefined> {
  return process.env;
}

const SHARED_IN_CLUSTER = ['PLATFORM_JWT_SECRET', 'CLOB_JWT_SECRET', 'CLOB_INTERNAL_TOKEN'] as const;
/** Settings production has no default for (DATABASE_URL has one: PGlite under ./data/production). */
const REQUIRED_IN_PRODUCTION = ['PLATFORM_JWT_SECRET', 'CLOB_JWT_SECRET', 'CLOB_INTERNAL_TOKEN', 'SOLANA_RPC_URL'] as const;

export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  const parsed = schema.safeParse(source);
  if (!parsed.success) {
    throw new ConfigError(`invalid settings: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  const e = parsed.data;
  const prod = e.APP_ENV === 'production';
  if (prod) {
    const missing = REQUIRED_IN_PRODUCTION.filter((k) => !e[k]);
    if (missing.length) throw new ConfigError(`production needs these settings: ${missing.join(', ')}`);
  } else if (e.KAFKA_BROKERS) {
    // A cluster's nodes must agree on every secret: one generated per node would make a token
    // issued by one node fail on the next.
    const missing = SHARED_IN_CLUSTER.filter((k) => !e[k]);
    if (missing.length)
      throw new ConfigError(`a cluster (KAFKA_BROKERS set) needs the same values on every node for: ${missing.join(', ')}`);
  }
  const dev = (name: string) => randomBytes(32).toString('hex') + `-${name}`;
  const clobInternalToken = e.CLOB_INTERNAL_TOKEN ?? dev('internal');
  return {
    env: e.APP_ENV,
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL || undefined,
    // The development local chain lives in memory: its mirror gets a database of its own, started afresh.
    dataDir:
      e.DATA_DIR ?? (!prod && !e.SOLANA_RPC_URL && e.LOCAL_CHAIN !== '0' ? `./data/${e.APP_ENV}/local-chain` : `./data/${e.APP_ENV}`),
    kafkaBrokers: e.KAFKA_BROKERS
      ? e.KAFKA_BROKERS.split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : undefined,
    groupId: e.KAFKA_GROUP,
    topicPrefix: e.TOPIC_PREFIX,
    partitions: e.TOPIC_PARTITIONS,
    topicReplication: e.TOPIC_REPLICATION,
    kafkaSessionTimeoutMs: e.KAFKA_SESSION_TIMEOUT_MS,
    databasePoolMax: e.DATABASE_POOL_MAX,
    databaseCommitsInFlight: e.DATABASE_COMMITS_IN_FLIGHT,
    readCacheWallets: e.PARLAY_READ_CACHE_WALLETS,
    maxLiveActors: e.RUNTIME_MAX_LIVE_ACTORS,
    checkpoint: { everyBatches: e.RUNTIME_CHECKPOINT_BATCHES, maxAgeMs: e.RUNTIME_CHECKPOINT_MS },
    inbox: { retentionMs: e.RUNTIME_INBOX_RETENTION_MS, everyMs: e.RUNTIME_INBOX_PRUNE_MS },
    pglite: { vacuumWalBytes: e.PGLITE_VACUUM_WAL_MB * 2 ** 20, checkpointWalBytes: e.PGLITE_CHECKPOINT_WAL_MB * 2 ** 20 },
    nodeId: e.NODE_ID ?? `${hostname()}-${process.pid}`,
    platformJwtSecret: e.PLATFORM_JWT_SECRET ?? dev('platform'),
    webhookSecret: e.PARLAY_WEBHOOK_AUTH_SECRET || undefined,
    solanaRpcUrl: e.SOLANA_RPC_URL || undefined,
    programId: e.PARLAY_PROGRAM_ID || undefined,
    authorityKeypair: e.PARLAY_AUTHORITY_KEYPAIR || undefined,
    clobJwtSecret: e.CLOB_JWT_SECRET ?? dev('clob'),
    clobTokenTtl: e.CLOB_TOKEN_TTL_SECONDS,
    clobInternalToken,
    collateralMint: e.CLOB_COLLATERAL_MINT || undefined,
    delegate: e.CLOB_DELEGATE || undefined,
    delegateKeypair: e.CLOB_DELEGATE_KEYPAIR || undefined,
    feeRecipient: e.CLOB_FEE_RECIPIENT || undefined,
    settlementMaxAttempts: e.CLOB_SETTLEMENT_MAX_ATTEMPTS,
    settlementCuPrice: e.CLOB_SETTLEMENT_CU_PRICE,
    settlementPollMs: e.CLOB_SETTLEMENT_POLL_MS,
    mintMergeMatching: e.CLOB_ENABLE_MINT_MERGE_MATCHING === '1',
    distortionBound: e.CLOB_DISTORTION_BOUND,
    maxMakersPerTrade: e.CLOB_MAX_MAKERS_PER_TRADE,
    maxMakersPerMintMergeTrade: e.CLOB_MAX_MAKERS_PER_MINT_MERGE_TRADE,
    heartbeatTimeoutMs: e.CLOB_HEARTBEAT_TIMEOUT_MS,
    maxOpenOrdersPerMarket: e.CLOB_MAX_OPEN_ORDERS_PER_MARKET,
    balanceWatchMax: e.CLOB_BALANCE_WATCH_MAX,
    sigverifyThreads: e.CLOB_SIGVERIFY_THREADS ?? defaultSigverifyThreads(availableParallelism(), !e.DATABASE_URL),
    askTimeoutMs: e.ASK_TIMEOUT_MS,
    packedEvents: e.KAFKA_PACKED_EVENTS === '1',
    directReplies:
      e.DIRECT_REPLIES === '1'
        ? { host: e.REPLY_HOST, port: e.REPLY_PORT, advertise: e.REPLY_ADVERTISE, secret: `direct-replies:${clobInternalToken}` }
        : null,
    ws: {
      maxPayloadBytes: e.WS_MAX_PAYLOAD_BYTES,
      maxBufferedBytes: e.WS_MAX_BUFFERED_BYTES,
      maxAssets: e.WS_MAX_ASSETS,
      maxConnectionsPerIp: e.WS_MAX_CONNECTIONS_PER_IP,
      messagesPerSecond: e.WS_MESSAGES_PER_SEC,
      pingMs: e.WS_PING_MS,
      idleTimeoutMs: e.WS_IDLE_TIMEOUT_MS,
      ringSize: e.WS_RING_MESSAGES,
      lingerMs: e.WS_MARKET_LINGER_MS,
      pollMs: e.WS_POLL_MS,
    },
    http: {
      trustProxy: e.TRUST_PROXY === '1',
      bodyLimitBytes: e.HTTP_BODY_LIMIT_BYTES,
      webhookBodyLimitBytes: e.WEBHOOK_BODY_LIMIT_BYTES,
      jsonMaxDepth: e.HTTP_JSON_MAX_DEPTH,
      rateLimits: {
        ip: { perSecond: e.RATE_LIMIT_IP_PER_SEC, burst: e.RATE_LIMIT_IP_BURST },
        wallet: { perSecond: e.RATE_LIMIT_WALLET_PER_SEC, burst: e.RATE_LIMIT_WALLET_BURST },
        signIn: { perSecond: e.RATE_LIMIT_SIGNIN_PER_SEC, burst: e.RATE_LIMIT_SIGNIN_BURST },
      },
    },
    logLevel: e.LOG_LEVEL,
    localChain: !prod && (e.LOCAL_CHAIN ? e.LOCAL_CHAIN === '1' : !e.SOLANA_RPC_URL),
    localChainPort: e.LOCAL_CHAIN_PORT,
    crashPoints: { runtime: e.RUNTIME_CRASH_POINT, settlement: e.SETTLEMENT_CRASH_POINT },
    bookClock: e.CLOB_BOOK_CLOCK === '1',
  };
}

/**
 * Signature threads by default: with 4 cores or more, one per core beyond two (at most 4). On fewer
 * cores, one when the database runs inside the node (PGlite, no DATABASE_URL): the event loop then
 * carries HTTP, matching and the database's own work, and the other core is there for the thread
 * (embedded order bench, three paired `ROUNDS=3` runs: requests/s medians 1.06, 1.05, 1.02,
 * machine per request 0.97, 1.02, 1.08); with PostgreSQL (and the broker) in processes of their
 * own, the cores are theirs and a thread's hand-offs cost more machine than they free (session 55).
 */
export function defaultSigverifyThreads(cores: number, embeddedDatabase: boolean): number {
  if (cores >= 4) return Math.min(4, cores - 2);
  return embeddedDatabase && cores >= 2 ? 1 : 0;
}
