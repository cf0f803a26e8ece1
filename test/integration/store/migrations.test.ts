// What the migrations leave on each store: the commit functions (planned once per connection) and
// how actor snapshots are stored (lz4 where the server has it, uncompressed out of line on PGlite).
import test from 'ava';
import { freshDatabase } from '../../helpers/db.ts';
import { openOrm, migrate } from '../../../src/store/orm.ts';

async function stored(databaseUrl?: string) {
  const orm = await openOrm(databaseUrl ? { databaseUrl } : { dataDir: 'memory://' });
  try {
    await migrate(orm, databaseUrl);
    const execute = (sql: string) => (orm.em.getDriver() as any).execute(sql, []) as Promise<any[]>;
    const [col] = await execute(
      `select attstorage::text as storage, attcompression::text as compression from pg_attribute
       where attrelid = 'actor_snapshots'::regclass and attname = 'state'`,
    );
    const fns = (
      await execute(
        `select proname::text as name from pg_proc where proname in ('runtime_commit', 'ledger_append', 'open_orders_upsert') order by 1`,
      )
    ).map((r) => r.name);
    return { col, fns };
  } finally {
    await orm.close();
  }
}

test('on PostgreSQL: snapshots compressed with lz4, the commit functions present', async (t) => {
  const db = await freshDatabase();
  t.teardown(() => db.drop());
  const { col, fns } = await stored(db.url);
  t.deepEqual(col, { storage: 'x', compression: 'l' });
  t.deepEqual(fns, ['ledger_append', 'open_orders_upsert', 'runtime_commit']);
});

test('on PGlite (no lz4): snapshots stored uncompressed out of line, the commit functions present', async (t) => {
  const { col, fns } = await stored();
  t.deepEqual(col, { storage: 'e', compression: '' });
  t.deepEqual(fns, ['ledger_append', 'open_orders_upsert', 'runtime_commit']);
});
