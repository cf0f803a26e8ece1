// PGlite has no autovacuum and no checkpointer: the embedded node's housekeeping does their work
// (src/store/pglite-housekeeping.ts). On a migrated PGlite, with the journal churning as the
// runtime churns it (lines written every batch, deleted at each actor checkpoint).
import test from 'ava';
import { pgliteEngineOf, type Orm } from '../../../src/store/orm.ts';
import { readRows, runScript, type PgliteReadEngine } from '../../../src/store/pglite-script.ts';
import { PgliteHousekeeping } from '../../../src/store/pglite-housekeeping.ts';
import { storeDb } from '../../helpers/store-db.ts';

const quiet = { debug: () => undefined, warn: () => undefined };
const engineOf = (orm: Orm) => pgliteEngineOf(orm)! as Promise<PgliteReadEngine>;
const one = async (e: PgliteReadEngine, sql: string) => (await readRows(e, sql, []))[0];

/** One actor checkpoint's worth of journal: 300 lines of ~1 KB written, then deleted. */
async function churn(e: PgliteReadEngine, cycle: number): Promise<void> {
  await runScript(
    e,
    `insert into actor_journal (kind, key, topic, partition, envelope)
     select 'market-book', 'm' || (i % 12), 't', i % 12, repeat('x', 1000) || ${cycle} from generate_series(1, 300) i`,
  );
  await runScript(e, `delete from actor_journal`);
}

const journalBytes = async (e: PgliteReadEngine) => Number((await one(e, `select pg_relation_size('actor_journal')::text as n`)).n);

test('PGlite housekeeping: the churning tables keep their size; without it they grow with every cycle', async (t) => {
  const kept = await engineOf(await storeDb(t, 'PGlite'));
  const left = await engineOf(await storeDb(t, 'PGlite'));
  const housekeeping = new PgliteHousekeeping(Promise.resolve(kept), { vacuumWalBytes: 1, checkpointWalBytes: 2 ** 40, log: quiet });
  await housekeeping.pass(); // marks where the WAL stands
  const passes = [];
  for (let cycle = 0; cycle < 12; cycle++) {
    await churn(kept, cycle);
    await churn(left, cycle);
    passes.push(await housekeeping.pass());
  }
  t.true(
    passes.every((p) => p.vacuumed === 'tables' && !p.checkpointed),
    JSON.stringify(passes),
  );
  const withIt = await journalBytes(kept);
  const without = await journalBytes(left);
  // 300 lines of ~1 KB: ~40 pages a cycle. Vacuumed, the next cycle reuses the freed pages.
  t.log(`journal: ${withIt} bytes with housekeeping, ${without} without`);
  t.true(without >= 12 * 35 * 8192, `without: ${without} bytes`);
  t.true(withIt <= 3 * 45 * 8192, `with: ${withIt} bytes`);
  const vacuumed = await one(kept, `select count(*)::int as n from pg_stat_user_tables where last_vacuum is not null`);
  t.is(vacuumed.n, 1, 'only the journal: the other tables are too small to be worth a vacuum');
});

test('PGlite housekeeping: nothing written, nothing done; a checkpoint once enough WAL was written; the whole database now and then', async (t) => {
  const e = await engineOf(await storeDb(t, 'PGlite'));
  let now = 1_000_000;
  const housekeeping = new PgliteHousekeeping(Promise.resolve(e), {
    vacuumWalBytes: 4 * 2 ** 20,
    checkpointWalBytes: 2 * 2 ** 20,
    idleVacuumMs: 60_000,
    fullVacuumMs: 600_000,
    log: quiet,
  });
  await runScript(e, 'checkpoint');
  // The first pass marks where the WAL stands.
  t.like(await housekeeping.pass(now), { vacuumed: 'none', checkpointed: false });
  t.like(await housekeeping.pass((now += 1_000)), { vacuumed: 'none', checkpointed: false }, 'nothing written');

  await churn(e, 1); // ~0.7 MB of WAL: under both marks
  t.like(await housekeeping.pass((now += 1_000)), { vacuumed: 'none', checkpointed: false });
  t.like(await housekeeping.pass((now += 60_000)), { vacuumed: 'tables', checkpointed: false }, 'a little written, a minute gone');

  for (let i = 0; i < 12; i++) await churn(e, i); // ~4.9 MB more: past both marks
  const redoBefore = (await one(e, `select redo_lsn::text as r from pg_control_checkpoint()`)).r;
  t.like(await housekeeping.pass((now += 1_000)), { vacuumed: 'tables', checkpointed: true });
  const after = await one(
    e,
    `select redo_lsn::text as r, pg_wal_lsn_diff(pg_current_wal_lsn(), redo_lsn)::int as since from pg_control_checkpoint()`,
  );
  t.not(after.r, redoBefore, 'the redo point moved on');
  t.true(Number(after.since) < 2 ** 20);

  await churn(e, 9);
  t.like(await housekeeping.pass((now += 600_000)), { vacuumed: 'all' }, 'ten minutes on, with writes: the whole database');
});

test('PGlite housekeeping: it starts with a vacuum of the whole database (its tables worth one) and new WAL segments not zero-filled; with no WAL budget it does nothing', async (t) => {
  const e = await engineOf(await storeDb(t, 'PGlite'));
  const vacuumed = async (view: string) =>
    (await readRows(e, `select relname from ${view} where last_vacuum is not null order by 1`, [])).map((r) => r.relname);
  const off = new PgliteHousekeeping(Promise.resolve(e), { vacuumWalBytes: 0, checkpointWalBytes: 2 ** 20, log: quiet });
  await off.start();
  t.is((await one(e, 'show wal_init_zero')).wal_init_zero, 'on');
  t.deepEqual(await vacuumed('pg_stat_user_tables'), []);
  await off.stop();
  // An earlier node's journal, never vacuumed: ~40 pages.
  await runScript(
    e,
    `insert into actor_journal (kind, key, topic, partition, envelope)
     select 'market-book', 'm' || (i % 12), 't', i % 12, repeat('x', 1000) from generate_series(1, 300) i`,
  );
  const on = new PgliteHousekeeping(Promise.resolve(e), {
    vacuumWalBytes: 2 ** 20,
    checkpointWalBytes: 2 ** 20,
    everyMs: 60_000,
    log: quiet,
  });
  await on.start();
  t.is((await one(e, 'show wal_init_zero')).wal_init_zero, 'off');
  t.deepEqual(await vacuumed('pg_stat_user_tables'), ['actor_journal'], 'of the tables of the schema, those of 10 pages or more');
  const catalogs = await vacuumed('pg_stat_sys_tables');
  t.true(catalogs.includes('pg_proc') && catalogs.includes('pg_attribute'), catalogs.join(', '));
  t.false(catalogs.includes('pg_namespace'), 'a small catalog is left alone too');
  t.like(await on.pass(), { vacuumed: 'none' }, 'nothing written since');
  await on.stop();
});

test('PGlite housekeeping: a table too small to be worth it is never vacuumed, so a plan made while it is empty is not a scan of it forever', async (t) => {
  // The planner takes a never-vacuumed table to be 10 pages at least; a vacuumed empty one to be
  // empty. `ledger_append` (PL/pgSQL: its plans kept for the session) probes each market's last seq:
  // planned on an "empty" ledger, that probe scanned the whole ledger on every call ever after.
  const e = await engineOf(await storeDb(t, 'PGlite'));
  const housekeeping = new PgliteHousekeeping(Promise.resolve(e), {
    vacuumWalBytes: 1,
    checkpointWalBytes: 2 ** 40,
    everyMs: 60_000,
    log: quiet,
  });
  await housekeeping.start();
  const market = (i: number) => `0x${String(i % 12).padStart(64, '0')}`;
  const scans = async () => {
    await runScript(e, 'select pg_stat_force_next_flush()');
    return Number((await one(e, `select seq_scan::int as n from pg_stat_user_tables where relname = 'ledger_messages'`)).n);
  };
  let scansBefore = -1;
  for (let call = 0; call < 200; call++) {
    const rows = Array.from({ length: 8 }, (_, k) => ({
      market: market(call + k),
      topic: 'orders',
      type: 'order_placed',
      owner_lc: 'w',
      payload: { call, k },
      at: new Date(0).toISOString(),
      ord: k,
    }));
    await runScript(e, `select ledger_append('${JSON.stringify(rows)}'::jsonb)`);
    if (call % 50 === 49) await housekeeping.pass();
    if (call === 99) scansBefore = await scans();
  }
  await housekeeping.stop();
  const scansAfter = await scans();
  const ledger = await one(
    e,
    `select c.reltuples::int as tuples, pg_relation_size('ledger_messages')::int / 8192 as pages, (select count(*)::int from ledger_messages) as n
       from pg_class c where c.relname = 'ledger_messages'`,
  );
  t.log(JSON.stringify({ ...ledger, scansBefore, scansAfter }));
  t.is(ledger.n, 1600);
  t.true(Number(ledger.pages) >= 10, 'the ledger outgrew the 10 pages');
  t.is(ledger.tuples, -1, 'never vacuumed: the planner keeps assuming it may be big');
  t.is(scansAfter, scansBefore, 'the last 100 calls probed the last seqs through the primary key, never scanning the ledger');
  const small = await one(
    e,
    `select count(*)::int as n from pg_stat_user_tables where last_vacuum is not null and relname = 'command_inbox'`,
  );
  t.is(small.n, 0, 'an empty churning table is left alone');
});
