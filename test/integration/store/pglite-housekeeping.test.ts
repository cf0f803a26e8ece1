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
  const vacuumed = await one(kept, `select last_vacuum is not null as v from pg_stat_user_tables where relname = 'command_inbox'`);
  t.true(vacuumed.v, 'every churning table is vacuumed, written or not');
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

  for (let i = 0; i < 10; i++) await churn(e, i); // ~4.5 MB more: past both marks
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

test('PGlite housekeeping: it starts with a vacuum of the whole database and new WAL segments not zero-filled; with no WAL budget it does nothing', async (t) => {
  const e = await engineOf(await storeDb(t, 'PGlite'));
  const vacuumedTables = async () =>
    Number((await one(e, `select count(*)::int as n from pg_stat_user_tables where last_vacuum is not null`)).n);
  const off = new PgliteHousekeeping(Promise.resolve(e), { vacuumWalBytes: 0, checkpointWalBytes: 2 ** 20, log: quiet });
  await off.start();
  t.is((await one(e, 'show wal_init_zero')).wal_init_zero, 'on');
  t.is(await vacuumedTables(), 0);
  await off.stop();
  const on = new PgliteHousekeeping(Promise.resolve(e), {
    vacuumWalBytes: 2 ** 20,
    checkpointWalBytes: 2 ** 20,
    everyMs: 60_000,
    log: quiet,
  });
  await on.start();
  t.is((await one(e, 'show wal_init_zero')).wal_init_zero, 'off');
  const all = Number((await one(e, `select count(*)::int as n from pg_stat_user_tables`)).n);
  t.true(all > 20, `${all} tables`);
  t.is(await vacuumedTables(), all, 'every table vacuumed once at start');
  t.like(await on.pass(), { vacuumed: 'none' }, 'nothing written since');
  await on.stop();
});
