// What the migrations leave on each store: the commit functions (planned once per connection),
// how actor snapshots are stored (lz4 where the server has it, uncompressed out of line on PGlite),
// and event identities carried over to their 128-bit keys.
import test from 'ava';
import { freshDatabase } from '../../helpers/db.ts';
import { createHash } from 'node:crypto';
import { openOrm, migrate } from '../../../src/store/orm.ts';
import { EventIdentities, identityKey } from '../../../src/parlay/event-identity.ts';

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
        `select proname::text as name from pg_proc where proname in ('runtime_commit', 'runtime_commit_group', 'runtime_commit_batch', 'ledger_append', 'open_orders_upsert') order by 1`,
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
  t.deepEqual(fns, ['ledger_append', 'open_orders_upsert', 'runtime_commit', 'runtime_commit_batch', 'runtime_commit_group']);
});

test('on PGlite (no lz4): snapshots stored uncompressed out of line, the commit functions present', async (t) => {
  const { col, fns } = await stored();
  t.deepEqual(col, { storage: 'e', compression: '' });
  t.deepEqual(fns, ['ledger_append', 'open_orders_upsert', 'runtime_commit', 'runtime_commit_batch', 'runtime_commit_group']);
});

// Event identities moved from text to 128-bit keys (Migration20261130100000): what the mirror had
// claimed before is still claimed, with the content it had, on both stores.
async function identitiesCarriedOver(t: import('ava').ExecutionContext, databaseUrl?: string) {
  const orm = await openOrm(databaseUrl ? { databaseUrl } : { dataDir: 'memory://' });
  try {
    await orm.migrator.up({ to: 'Migration20261129110000' });
    const execute = (sql: string) => (orm.em.getDriver() as any).execute(sql, []) as Promise<any[]>;
    const sig = '5'.repeat(88);
    const hash = createHash('sha256').update('event bytes').digest('hex');
    await execute(
      `insert into parlay_event_identities (signature, event_index, content_hash, created_at) values ('${sig}', 1, '${hash}', now())`,
    );
    await migrate(orm, databaseUrl);
    const [row] = await execute(`select encode(key, 'hex') as k, encode(content, 'hex') as h from parlay_event_identities`);
    t.is(row.k, identityKey({ signature: sig, index: 1 }));
    t.is(row.h, hash.slice(0, 32));
    const db = { execute: (sql: string, params: unknown[] = []) => orm.em.getConnection().execute(sql, params) } as any;
    const ids = new EventIdentities(() => db);
    const same = { signature: sig, index: 1, hash };
    const other = { signature: sig, index: 1, hash: createHash('sha256').update('other bytes').digest('hex') };
    const fresh = { signature: sig, index: 2, hash };
    const conflicts = await ids.claim([same, other, fresh]);
    t.deepEqual([...conflicts], [other]);
    t.is((await execute(`select count(*)::int as n from parlay_event_identities`))[0].n, 2);
  } finally {
    await orm.close();
  }
}

test('event identities claimed before the 128-bit keys stay claimed, on PostgreSQL', async (t) => {
  const db = await freshDatabase();
  t.teardown(() => db.drop());
  await identitiesCarriedOver(t, db.url);
});

test('event identities claimed before the 128-bit keys stay claimed, on PGlite', async (t) => {
  await identitiesCarriedOver(t);
});
