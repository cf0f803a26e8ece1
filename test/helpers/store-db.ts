// A migrated store for a test (a fresh PostgreSQL database, or an in-memory PGlite), closed and dropped afterwards.
import type { ExecutionContext } from 'ava';
import { openOrm, migrate, type Orm } from '../../src/store/orm.ts';
import { freshDatabase } from './db.ts';
import type { CommitArgs } from '../../src/runtime/store-port.ts';
import type { StoreTx } from '../../src/runtime/types.ts';

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

/** A test commit of partition `partition` (10 → 11, as `partitionMove`), nothing of the runtime's own but `effects`. */
export const commitOf = (partition: number, effects: (tx: StoreTx) => Promise<void>): CommitArgs => ({
  ...partitionMove(partition, 10n, 11n),
  snapshots: [],
  inbox: [],
  deadLetters: [],
  effects,
});

/** A LIVE open order's row as `open_orders_upsert` takes it: a BUY of 3 at 0.40 by owner `O` in market `m`. */
export const liveOrderRow = (id: string) => ({
  id,
  market: 'm',
  asset_id: 'a',
  owner: 'O',
  owner_lc: 'o',
  side: 'BUY',
  outcome: 'YES',
  original_size: '3000000',
  size_matched: '0',
  price: 400000,
  status: 'LIVE',
  associate_trades: [],
  type: 'GTC',
  fee_rate_bps: 0,
  expiration: '0',
  created_at: '2026-11-27T00:00:00.000Z',
  updated_at: '2026-11-27T00:00:00.000Z',
});
