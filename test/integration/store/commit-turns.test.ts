// How SqlRuntimeStore turns partition commits into transactions: a big turn is shared among the
// free transaction slots, small commits stay together, `usuallyNew` inserts go plain first and as
// written when a row exists, and a run of function calls is one select. Real PostgreSQL and PGlite.
import test from 'ava';
import { SqlRuntimeStore } from '../../../src/store/runtime-store.ts';
import type { Orm } from '../../../src/store/orm.ts';
import { commitOf, liveOrderRow, storeDb, xminOf } from '../../helpers/store-db.ts';

/** Partition `partition` moves 10 → 11 and inserts dead letters `rows-<source>` (payload `payload`), `usuallyNew` or not. */
function rowsCommit(store: SqlRuntimeStore, partition: number, sources: string[], o: { payload?: string; usuallyNew?: boolean } = {}) {
  return store.commit(
    commitOf(partition, async (tx) => {
      await tx.execute(
        `insert into dead_letters (source, reason, payload, created_at)
         select t.s, 'test', t.p, now() from jsonb_to_recordset(?::jsonb) as t(s text, p text)
         on conflict (source) do nothing`,
        [JSON.stringify(sources.map((s) => ({ s: `rows-${s}`, p: o.payload ?? '{}' })))],
        { usuallyNew: o.usuallyNew ?? true },
      );
    }),
  );
}

/** The store, with every script it runs recorded. */
async function recorded(orm: Orm, commitsInFlight?: number) {
  const store = new SqlRuntimeStore(orm, commitsInFlight);
  const scripts: string[] = [];
  const run = (store as any).script as (sql: string) => Promise<unknown>;
  (store as any).script = (sql: string) => {
    scripts.push(sql);
    return run(sql);
  };
  for (const p of [0, 1, 2, 3, 4, 5]) await store.resetOffset('g', 'topic', p, 10n, 'a');
  return { store, scripts };
}

const sources = async (orm: Orm) =>
  ((await (orm.em.fork() as any).execute("select source from dead_letters where source like 'rows-%' order by source")) as any[]).map(
    (r) => r.source,
  );

test('a big turn of commits is shared among the free transactions; small commits of a turn stay one', async (t) => {
  const orm = await storeDb(t);
  const { store, scripts } = await recorded(orm, 2);
  // Four commits of ~150,000 characters each, issued on one turn: two transactions of two.
  const big = 'x'.repeat(150_000);
  t.deepEqual(await Promise.all([0, 1, 2, 3].map((p) => rowsCommit(store, p, [`big${p}`], { payload: big }))), [true, true, true, true]);
  t.is(scripts.length, 2, 'two transactions');
  t.is(await xminOf(orm, 0), await xminOf(orm, 1));
  t.is(await xminOf(orm, 2), await xminOf(orm, 3));
  t.not(await xminOf(orm, 0), await xminOf(orm, 2), 'the halves ran as transactions of their own');
  // Two small commits of one turn: one transaction, though a second is free.
  t.deepEqual(await Promise.all([4, 5].map((p) => rowsCommit(store, p, [`small${p}`]))), [true, true]);
  t.is(scripts.length, 3);
  t.is(await xminOf(orm, 4), await xminOf(orm, 5), 'small commits: one transaction');
  t.deepEqual(await sources(orm), ['rows-big0', 'rows-big1', 'rows-big2', 'rows-big3', 'rows-small4', 'rows-small5']);
});

for (const on of ['PostgreSQL', 'PGlite'] as const) {
  test(`usually-new inserts on ${on}: plain first; a row that exists commits the group again as written, once`, async (t) => {
    const orm = await storeDb(t, on);
    const { store, scripts } = await recorded(orm, 1);
    const ran = () => scripts.splice(0);

    t.true(await rowsCommit(store, 0, ['a1', 'a2']));
    let sql = ran();
    t.is(sql.length, 1, 'new rows: one try');
    t.false(/on conflict/i.test(sql[0].slice(sql[0].indexOf('insert into dead_letters'))), 'tried as a plain insert');

    // B, C (new) and D (one new row, one that exists), issued on one turn: one group.
    t.deepEqual(await Promise.all([rowsCommit(store, 1, ['b']), rowsCommit(store, 2, ['c']), rowsCommit(store, 3, ['a1', 'd'])]), [
      true,
      true,
      true,
    ]);
    sql = ran();
    t.is(sql.length, 2, 'the group plain; the group as written');
    t.false(/on conflict/i.test(sql[0]));
    t.true(/on conflict \(source\) do nothing/i.test(sql[1]) && sql[1].includes('rows-b') && sql[1].includes('rows-d'));
    t.is(await xminOf(orm, 1), await xminOf(orm, 3), 'B, C and D: still one transaction');
    t.deepEqual(await sources(orm), ['rows-a1', 'rows-a2', 'rows-b', 'rows-c', 'rows-d'], 'each row once');

    // Without the option the statement runs as written at once.
    t.true(await rowsCommit(store, 4, ['a2', 'e'], { usuallyNew: false }));
    sql = ran();
    t.is(sql.length, 1);
    t.true(/on conflict/i.test(sql[0]));
    // A failure that is not a row that exists is not retried as written: the fence still refuses.
    t.false(await rowsCommit(store, 0, ['f']), 'partition 0 is at 11: fenced');
    t.is(ran().length, 1, 'one try');
    t.deepEqual(await sources(orm), ['rows-a1', 'rows-a2', 'rows-b', 'rows-c', 'rows-d', 'rows-e']);
  });
}

for (const on of ['PostgreSQL', 'PGlite'] as const) {
  test(`merged rows on ${on}: one statement over a turn's rows, quotes and backslashes kept, an empty member skipped`, async (t) => {
    const orm = await storeDb(t, on);
    const { store, scripts } = await recorded(orm, 1);
    const payloads = { plain: '{"a":1}', quote: "it's", backslash: 'C:\\dir\\"x"' };
    // Four commits of one turn, one shape: the rows statement is merged into one over all of them.
    t.deepEqual(
      await Promise.all([
        rowsCommit(store, 0, ['m-plain'], { payload: payloads.plain }),
        rowsCommit(store, 1, [], {}),
        rowsCommit(store, 2, ['m-quote'], { payload: payloads.quote }),
        rowsCommit(store, 3, ['m-backslash'], { payload: payloads.backslash }),
      ]),
      [true, true, true, true],
    );
    t.is(scripts.length, 1, 'one transaction');
    t.is((scripts[0].match(/insert into dead_letters/g) ?? []).length, 1, 'one merged statement');
    // Without quotes or backslashes, the rows go in as pieces of the script: the same rows.
    t.deepEqual(await Promise.all([rowsCommit(store, 4, ['m-p4']), rowsCommit(store, 5, ['m-p5'])]), [true, true]);
    t.is(scripts.length, 2);
    t.is((scripts[1].match(/insert into dead_letters/g) ?? []).length, 1);
    const rows = (await (orm.em.fork() as any).execute(
      "select source, payload from dead_letters where source like 'rows-m-%' order by source",
    )) as { source: string; payload: string }[];
    t.deepEqual(
      rows.map((r) => [r.source, r.payload]),
      [
        ['rows-m-backslash', payloads.backslash],
        ['rows-m-p4', '{}'],
        ['rows-m-p5', '{}'],
        ['rows-m-plain', payloads.plain],
        ['rows-m-quote', payloads.quote],
      ],
    );
  });
}

/** Partition `partition` moves 10 → 11; its effects place order `id` and then change it (two function calls). */
function placeAndFill(store: SqlRuntimeStore, partition: number, id: string, sizeMatched: string) {
  return store.commit(
    commitOf(partition, async (tx) => {
      await tx.execute('select open_orders_upsert(?::jsonb)', [JSON.stringify([liveOrderRow(id)])]);
      await tx.execute('select open_orders_update(?::jsonb)', [
        JSON.stringify([{ id, size_matched: sizeMatched, status: 'MATCHED', at: '2026-11-28T00:00:01.000Z', trades: ['t1'] }]),
      ]);
    }),
  );
}

for (const on of ['PostgreSQL', 'PGlite'] as const) {
  test(`function calls fused on ${on}: one select, run in order, each seeing the one before; an error rolls all back`, async (t) => {
    const orm = await storeDb(t, on);
    const { store, scripts } = await recorded(orm, 1);
    const rows = async () =>
      (await (orm.em.fork() as any).execute(
        "select id, size_matched::text as s, status from open_orders where id like 'fused-%' order by id",
      )) as { id: string; s: string; status: string }[];
    // Alone, then two members of one turn: the bookkeeping call and both effects are one statement.
    t.true(await placeAndFill(store, 0, 'fused-a', '3000000'));
    t.deepEqual(await Promise.all([placeAndFill(store, 1, 'fused-b', '3000000'), placeAndFill(store, 2, 'fused-c', '3000000')]), [
      true,
      true,
    ]);
    t.is(scripts.length, 2);
    for (const sql of scripts) {
      t.false(sql.includes(';'), 'no statement boundary in the script');
      t.regex(sql, /^select runtime_commit_batch\(.*, open_orders_upsert\(.*, open_orders_update\(/s);
    }
    // The change found the row its call's neighbour had just inserted.
    t.deepEqual(await rows(), [
      { id: 'fused-a', s: '3000000', status: 'MATCHED' },
      { id: 'fused-b', s: '3000000', status: 'MATCHED' },
      { id: 'fused-c', s: '3000000', status: 'MATCHED' },
    ]);
    // The second call fails (not a number): the first call's row and the offset move are rolled back with it.
    await t.throwsAsync(placeAndFill(store, 3, 'fused-d', 'many'));
    t.deepEqual(
      (await rows()).map((r) => r.id),
      ['fused-a', 'fused-b', 'fused-c'],
    );
    t.true(await placeAndFill(store, 3, 'fused-d', '1000000'), 'partition 3 was not moved: it commits from 10 again');
  });
}

/** Partition `partition` moves 10 → 11; its effect projects order `id` with `status`, as the ledger projection does (`usuallyNew`). */
function projectOrder(store: SqlRuntimeStore, partition: number, id: string, status: string) {
  return store.commit(
    commitOf(partition, async (tx) => {
      await tx.execute('select open_orders_upsert(?::jsonb)', [JSON.stringify([{ ...liveOrderRow(id), status }])], { usuallyNew: true });
    }),
  );
}

for (const on of ['PostgreSQL', 'PGlite'] as const) {
  test(`usually-new upserts on ${on}: a new order goes as a plain insert; one that exists commits again as an upsert`, async (t) => {
    const orm = await storeDb(t, on);
    const { store, scripts } = await recorded(orm, 1);
    const ran = () => scripts.splice(0);
    const status = async (id: string) =>
      ((await (orm.em.fork() as any).execute('select status from open_orders where id = ?', [id])) as { status: string }[]).map(
        (r) => r.status,
      );
    // A new order: one try, through the plain function.
    t.true(await projectOrder(store, 0, 'new-a', 'LIVE'));
    let sql = ran();
    t.is(sql.length, 1);
    t.regex(sql[0], /open_orders_insert\(/);
    t.notRegex(sql[0], /open_orders_upsert\(/);
    t.deepEqual(await status('new-a'), ['LIVE']);
    // Delayed, then placed: the second projection of the order meets its row, and the commit runs
    // again with the upsert, which updates it. With a new order of another partition on the same
    // turn, both are in the group that runs twice; each row once.
    t.true(await projectOrder(store, 1, 'delayed-b', 'DELAYED'));
    ran();
    await store.resetOffset('g', 'topic', 1, 10n, 'a');
    t.deepEqual(await Promise.all([projectOrder(store, 1, 'delayed-b', 'LIVE'), projectOrder(store, 2, 'new-c', 'LIVE')]), [true, true]);
    sql = ran();
    t.is(sql.length, 2, 'plain, then as written');
    t.regex(sql[0], /open_orders_insert\(/);
    t.regex(sql[1], /open_orders_upsert\(/);
    t.notRegex(sql[1], /open_orders_insert\(/);
    t.deepEqual(await status('delayed-b'), ['LIVE']);
    t.deepEqual(await status('new-c'), ['LIVE']);
    t.is(await xminOf(orm, 1), await xminOf(orm, 2), 'one transaction');
  });
}
