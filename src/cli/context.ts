// What every ops command opens: the service's settings (the same environment as a node), its
// database (migrated), its bus, and the actor kinds its runtime hosts.
import { hostname } from 'node:os';
import { environment, loadConfig, type Config } from '../config.ts';
import { openOrm, migrate, type Orm } from '../store/orm.ts';
import { SqlRuntimeStore } from '../store/runtime-store.ts';
import { KafkaBus } from '../runtime/kafka-bus.ts';
import type { ActorKind } from '../runtime/types.ts';
import { TOPICS } from '../../topics/names.ts';
import { parlayKinds } from '../parlay/kinds.ts';
import { clobKinds } from '../clob/kinds.ts';

export type { Db } from '../db.ts';
import type { Db } from '../db.ts';

export class OpsError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
}

export interface OpsContext {
  cfg: Config;
  orm: Orm;
  db: () => Db;
  store: SqlRuntimeStore;
  /** The consumer group of the service (and of its offsets rows). */
  groupId: string;
  /** The kinds the runtime hosts (src/node.ts builds the same list). */
  kinds: { kind: ActorKind; owns(key: string): boolean }[];
  topics: { parlay: string; book: string; wallet: string };
  /** This process's name on the bus and in `owner` columns. */
  clientId: string;
  bus(): KafkaBus;
  close(): Promise<void>;
  log: { info(o: object, m?: string): void; warn(o: object, m?: string): void; error(o: object, m?: string): void };
}

export function opsConfig(env: Record<string, string | undefined> = environment()): Config {
  // Secrets of the front door are not used here; a cluster's settings otherwise insist on them.
  return loadConfig({ PLATFORM_JWT_SECRET: 'ops-unused', CLOB_JWT_SECRET: 'ops-unused', CLOB_INTERNAL_TOKEN: 'ops-unused', ...env });
}

export async function openContext(
  env: Record<string, string | undefined> = environment(),
  o: { needKafka?: boolean } = {},
): Promise<OpsContext> {
  const cfg = opsConfig(env);
  if (!cfg.databaseUrl)
    throw new OpsError(
      'DATABASE_URL is required: ops commands work on the PostgreSQL database of a cluster (stop an embedded node and use its DATABASE_URL otherwise)',
    );
  if (o.needKafka && !cfg.kafkaBrokers) throw new OpsError('KAFKA_BROKERS is required: this command reads the command topics');
  const orm = await openOrm({ databaseUrl: cfg.databaseUrl, poolMax: 4 });
  await migrate(orm, cfg.databaseUrl);
  const db = () => orm.em.fork() as unknown as Db;
  const topics = {
    parlay: cfg.topicPrefix + TOPICS.parlayEvents,
    book: cfg.topicPrefix + TOPICS.clobCommands,
    wallet: cfg.topicPrefix + TOPICS.walletCommands,
  };
  const clientId = `ops-${hostname()}-${process.pid}`;
  const log = {
    info: (_o: object, _m?: string) => undefined,
    warn: (obj: object, m?: string) => {
      if (env.OPS_VERBOSE) process.stderr.write(`warn: ${m ?? ''} ${JSON.stringify(obj)}\n`);
    },
    error: (obj: object, m?: string) => {
      process.stderr.write(`error: ${m ?? ''} ${safe(obj)}\n`);
    },
  };
  let bus: KafkaBus | null = null;
  return {
    cfg,
    orm,
    db,
    store: new SqlRuntimeStore(orm),
    groupId: cfg.topicPrefix + cfg.groupId,
    topics,
    clientId,
    log,
    kinds: [...parlayKinds(topics.parlay), ...clobKinds({ bookTopic: topics.book, walletTopic: topics.wallet })],
    bus() {
      if (!cfg.kafkaBrokers) throw new OpsError('KAFKA_BROKERS is required');
      bus ??= new KafkaBus({
        brokers: cfg.kafkaBrokers,
        clientId,
        log,
        replicationFactor: cfg.topicReplication,
        sessionTimeoutMs: cfg.kafkaSessionTimeoutMs,
        heartbeatIntervalMs: Math.max(100, Math.floor(cfg.kafkaSessionTimeoutMs / 10)),
      });
      return bus;
    },
    async close() {
      await bus?.close();
      await orm.close();
    },
  };
}

function safe(o: object): string {
  try {
    return JSON.stringify(o, (_k, v) => (v instanceof Error ? { message: v.message } : typeof v === 'bigint' ? v.toString() : v));
  } catch {
    return String(o);
  }
}
