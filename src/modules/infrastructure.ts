// The platform every module stands on: the database (migrated), the bus, the runtime store, the
// runtime with the modules' actor kinds, and the asker. Started first, stopped last.
import { rmSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from '../db.ts';
import type { Lifecycle } from '../lifecycle.ts';
import type { createMetrics } from '../metrics.ts';
import { openOrm, migrate, pgliteEngineOf, type Orm } from '../store/orm.ts';
import { readRows } from '../store/pglite-script.ts';
import { openReader } from '../store/reader.ts';
import { NotifyListener } from '../store/notify-listener.ts';
import { SqlRuntimeStore } from '../store/runtime-store.ts';
import { formatQuery } from '../store/sql-format.ts';
import { MemoryBus } from '../runtime/memory-bus.ts';
import { KafkaBus } from '../runtime/kafka-bus.ts';
import { Runtime, type RuntimeOptions } from '../runtime/runtime.ts';
import { Asker } from '../runtime/asker.ts';
import type { Bus } from '../runtime/types.ts';
import { TOPICS } from '../../topics/names.ts';

export type Metrics = ReturnType<typeof createMetrics>;

export interface Infrastructure {
  orm: Orm;
  bus: Bus;
  store: SqlRuntimeStore;
  /** Single statements straight to the driver (a forked entity manager per call costs more than the call). */
  db: () => Db;
  reader: ReturnType<typeof openReader>;
  /**
   * PostgreSQL's change notifications, one LISTEN connection for the node's channels (the parlay
   * read cache's, the front door's markets); null on PGlite.
   */
  notifications: NotifyListener | null;
  topics: { parlay: string; book: string; wallet: string; ledger: (t: 'orders' | 'trades') => string };
}

/** The database and the bus (before any module: kinds and services are built on them). */
export async function openInfrastructure(
  cfg: Config,
  o: { bus?: Bus; freshLocalChain: boolean; log: Logger; life: Lifecycle },
): Promise<Infrastructure> {
  const { log, life } = o;
  if (o.freshLocalChain) rmSync(cfg.dataDir, { recursive: true, force: true }); // a fresh local chain: a fresh mirror of it
  const orm = await openOrm({ databaseUrl: cfg.databaseUrl, dataDir: cfg.dataDir, poolMax: cfg.databasePoolMax });
  life.defer('database', () => orm.close());
  const applied = await migrate(orm, cfg.databaseUrl);
  if (applied.length) log.info({ migrations: applied }, 'migrations applied');
  const bus: Bus =
    o.bus ??
    (cfg.kafkaBrokers
      ? new KafkaBus({
          brokers: cfg.kafkaBrokers,
          clientId: cfg.nodeId,
          log,
          replicationFactor: cfg.topicReplication,
          sessionTimeoutMs: cfg.kafkaSessionTimeoutMs,
          heartbeatIntervalMs: Math.max(100, Math.floor(cfg.kafkaSessionTimeoutMs / 10)),
        })
      : new MemoryBus(cfg.partitions, (err, topic, partition) => log.error({ err, topic, partition }, 'batch failed; redelivering')));
  if (!o.bus) life.defer('bus', () => bus.close());
  const driver = orm.em.getDriver() as unknown as Db;
  // Parameters are inlined by src/store/sql-format.ts (as the runtime store's commits are):
  // MikroORM's own escaping builds a string a character at a time (a 35 KB JSON parameter of the
  // webhook's event-identity claim allocated ~24 bytes per character, a sixth of the node's garbage).
  const platform = orm.em.getPlatform();
  // On PGlite a statement is one trip through the engine, its rows read from the answer
  // (src/store/pglite-script.ts): the driver's `query` costs several, and a result set built per call.
  const engine = pgliteEngineOf(orm);
  const handle: Db = {
    execute: (sql, params) => {
      const text = params?.length ? formatQuery(platform, sql, params) : sql;
      return engine ? engine.then((e) => readRows(e, text, [])) : driver.execute(text, []);
    },
  };
  const reader = openReader(orm, cfg.databaseUrl, Math.max(2, Math.min(8, cfg.databasePoolMax)));
  life.defer('reader', () => reader.close());
  const notifications = cfg.databaseUrl ? new NotifyListener({ url: cfg.databaseUrl, channel: 'node_sync', log }) : null;
  if (notifications) {
    await notifications.start();
    life.defer('notifications', () => notifications.close());
  }
  const p = cfg.topicPrefix;
  return {
    orm,
    bus,
    store: new SqlRuntimeStore(orm, cfg.databaseCommitsInFlight),
    db: () => handle,
    reader,
    notifications,
    topics: {
      parlay: p + TOPICS.parlayEvents,
      book: p + TOPICS.clobCommands,
      wallet: p + TOPICS.walletCommands,
      ledger: (t) => p + (t === 'orders' ? TOPICS.ledgerOrders : TOPICS.ledgerTrades),
    },
  };
}

/** The runtime with every module's actor kinds, then the asker that talks to them. */
export async function startRuntime(
  cfg: Config,
  infra: Infrastructure,
  o: {
    kinds: RuntimeOptions['kinds'];
    log: Logger;
    metrics: Metrics;
    life: Lifecycle;
    onCommitted(topic: string, partition: number, effects: number, keys: string[]): void;
  },
): Promise<{ runtime: Runtime; asker: Asker }> {
  const { bus, store, topics } = infra;
  const runtime = new Runtime({
    bus,
    store,
    nodeId: cfg.nodeId,
    groupId: cfg.topicPrefix + cfg.groupId,
    kinds: o.kinds,
    partitions: { [topics.parlay]: cfg.partitions, [topics.book]: cfg.partitions, [topics.wallet]: cfg.partitions },
    log: o.log,
    metrics: o.metrics.runtime,
    faults: crashPoint(cfg.crashPoints.runtime, o.log),
    maxLiveActors: cfg.maxLiveActors,
    checkpoint: cfg.checkpoint,
    onCommitted: o.onCommitted,
  });
  await runtime.start();
  o.life.defer('runtime', () => runtime.stop());
  const asker = new Asker(bus, cfg.topicPrefix + cfg.nodeId, cfg.askTimeoutMs, cfg.directReplies ?? undefined);
  asker.observe = o.metrics.observeAsk;
  o.metrics.attach({
    positions: () => runtime.positions(),
    actorCounts: () => runtime.actorCounts(),
    unsavedActors: () => runtime.unsavedActors(),
    offsets: bus.offsets ? (t) => bus.offsets!(t) : undefined,
    replies: () => asker.replyCounts(),
  });
  await asker.start();
  o.life.defer('asker', () => asker.stop());
  return { runtime, asker };
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
