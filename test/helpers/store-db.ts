// A migrated store for a test (a fresh PostgreSQL database, or an in-memory PGlite), closed and dropped afterwards.
import type { ExecutionContext } from 'ava';
import { openOrm, migrate, type Orm } from '../../src/store/orm.ts';
import { freshDatabase } from './db.ts';

export async function storeDb(t: ExecutionContext, on: 'PostgreSQL' | 'PGlite' = 'PostgreSQL'): Promise<Orm> {
  const db = on === 'PostgreSQL' ? await freshDatabase() : null;
  const orm = await openOrm(db ? { databaseUrl: db.url } : { dataDir: 'memory://' });
  await migrate(orm, db?.url);
  t.teardown(async () => {
    await orm.close();
    await db?.drop();
  });
  return orm;
}

/** The transaction that last wrote partition `partition`'s offset row (of group `g`). */
export const xminOf = async (orm: Orm, partition: number): Promise<string> =>
  (
    await (orm.em.fork() as any).execute("select xmin::text as x from consumer_offsets where group_id = 'g' and partition = ?", [partition])
  )[0].x;

/** A test commit's offset move: partition `partition` of group `g`, topic `topic`, owner `a`, from `expectedNext` to `next`. */
export const partitionMove = (partition: number, expectedNext: bigint, next: bigint) => ({
  groupId: 'g',
  topic: 'topic',
  partition,
  owner: 'a',
  expectedNext,
  next,
  replayFrom: next,
});
