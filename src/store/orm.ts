// Opens the database: PostgreSQL when DATABASE_URL is set, else embedded PGlite under ./data/<APP_ENV>.
import { mkdirSync } from 'node:fs';
import pg from 'pg';
import { MikroORM as PgORM } from '@mikro-orm/postgresql';
import { MikroORM as PgliteORM } from '@mikro-orm/pglite';
import { Migrator } from '@mikro-orm/migrations';
import type { MikroORM } from '@mikro-orm/core';
import { entities } from './entities.ts';
import { migrationsList } from './migrations/index.ts';
import type { PgliteReadEngine } from './pglite-script.ts';

/** Either driver: the code above the store only uses what both share. */
export type Orm = MikroORM<any, any>;

export interface DbOptions {
  databaseUrl?: string;
  dataDir?: string;
  poolMax?: number;
  debug?: boolean;
}

export async function openOrm(opts: DbOptions): Promise<Orm> {
  const common = {
    entities,
    extensions: [Migrator],
    migrations: {
      migrationsList,
      transactional: true,
      allOrNothing: true,
      tableName: 'mikro_orm_migrations',
      silent: true,
      snapshot: false,
    },
    debug: opts.debug ?? false,
    discovery: { warnWhenNoEntities: true },
    allowGlobalContext: false,
  };
  if (opts.databaseUrl) {
    return await PgORM.init({ ...common, clientUrl: opts.databaseUrl, pool: { max: opts.poolMax ?? 10 } } as any);
  }
  const dir = opts.dataDir ?? './data/development';
  if (dir !== 'memory://') mkdirSync(dir, { recursive: true });
  return await PgliteORM.init({ ...common, dbName: dir } as any);
}

const MIGRATION_LOCK = 7_401_337;

/**
 * Applies pending migrations; returns their names. On PostgreSQL, nodes starting together take
 * turns through an advisory lock held on a connection of its own.
 */
export async function migrate(orm: Orm, databaseUrl?: string): Promise<string[]> {
  if (!databaseUrl) return (await orm.migrator.up()).map((m: any) => m.name);
  const lock = new pg.Client({ connectionString: databaseUrl });
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    return (await orm.migrator.up()).map((m: any) => m.name);
  } finally {
    await lock.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await lock.end();
  }
}

/** The PGlite engine under an ORM opened on it (src/store/pglite-script.ts runs on it), else null (PostgreSQL). */
export function pgliteEngineOf(orm: Orm): Promise<PgliteReadEngine> | null {
  const pglite = orm.config.get('driver')?.name === 'PgliteDriver' || /pglite/i.test(String(orm.em.getPlatform().constructor.name));
  return pglite ? (orm.em.getDriver().getConnection() as any).getNativeClient() : null;
}
