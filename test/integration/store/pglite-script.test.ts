// The wire-protocol path to PGlite (src/store/pglite-script.ts) on a real engine opened by the ORM:
// rows equal to what the driver's query gives, errors with the server's message and code, a script
// all or nothing, and a named statement prepared once even when its first run failed.
import test from 'ava';
import { openOrm, migrate, pgliteEngineOf, type Orm } from '../../../src/store/orm.ts';
import { readRows, runScript, ScriptError } from '../../../src/store/pglite-script.ts';

async function engine(t: import('ava').ExecutionContext) {
  const orm: Orm = await openOrm({ dataDir: 'memory://' });
  t.teardown(() => orm.close());
  await migrate(orm, undefined);
  const e = await pgliteEngineOf(orm)!;
  const viaDriver = (sql: string) => (orm.em.getDriver() as any).execute(sql, []) as Promise<any[]>;
  return { e, viaDriver };
}

test('rows: every type the code reads comes back as the driver gives it', async (t) => {
  const { e, viaDriver } = await engine(t);
  const sql = `select 9007199254740993::int8 as big, 7::int8 as small, 2::int4 as i, '2026-11-26 10:00:58.36+00'::timestamptz as ts, '{"x":[1,"é"]}'::jsonb as doc,
    '{"y":2}'::json as js, 1.25::numeric as num, true as yes, null::text as nothing, 'x'::varchar as v, array[1,2]::int[] as ints,
    array['a','b']::text[] as texts, 3.5::float8 as f, '2020-01-01'::date as d, 'ünï ✓'::text as txt`;
  t.deepEqual(await readRows(e, sql, []), await viaDriver(sql));
  t.deepEqual(await readRows(e, 'select 1 as x where false', []), []);
});

test('rows: parameters travel as text, a null as null; a named statement is prepared once', async (t) => {
  const { e } = await engine(t);
  await runScript(e, `create table p (id text primary key, n int, ok boolean); insert into p values ('a', 1, true), ('b', null, false)`);
  const sql = 'select id from p where n = $1 or ok = $2 or id = $3 order by id';
  t.deepEqual(await readRows(e, sql, [1, false, null], 'p_any'), [{ id: 'a' }, { id: 'b' }]);
  t.deepEqual(await readRows(e, sql, [5, true, 'b'], 'p_any'), [{ id: 'a' }, { id: 'b' }]);
  t.deepEqual(await readRows(e, sql, [5, false, 'zz'], 'p_any'), [{ id: 'b' }]);
  const [{ n }] = await readRows(e, `select count(*)::int as n from pg_prepared_statements where name = 'r_p_any'`, []);
  t.is(n, 1);
});

test('rows: a failed run of a named statement leaves it usable; an unknown table is a clear error', async (t) => {
  const { e } = await engine(t);
  await runScript(e, `create table q (id text primary key, n int); insert into q values ('a', 1)`);
  const bad = await t.throwsAsync(readRows(e, 'select id from q where n = $1', ['not a number'], 'q_n'));
  t.true(bad instanceof ScriptError);
  t.is((bad as ScriptError).code, '22P02');
  t.deepEqual(await readRows(e, 'select id from q where n = $1', [1], 'q_n'), [{ id: 'a' }]);
  const missing = await t.throwsAsync(readRows(e, 'select * from nope where id = $1', ['a'], 'nope'));
  t.regex(missing!.message, /relation "nope" does not exist/);
  t.is((missing as ScriptError).code, '42P01');
});

test('script: all of it or none, and the server’s error is thrown', async (t) => {
  const { e } = await engine(t);
  await runScript(e, 'create table s (id int primary key)');
  const err = await t.throwsAsync(runScript(e, 'insert into s values (1); insert into s values (2); insert into s values (1)'));
  t.is((err as ScriptError).code, '23505');
  t.regex(err!.message, /duplicate key/);
  t.deepEqual(await readRows(e, 'select count(*)::int as n from s', []), [{ n: 0 }]);
  await runScript(e, 'insert into s values (1); insert into s values (2)');
  t.deepEqual(await readRows(e, 'select count(*)::int as n from s', []), [{ n: 2 }]);
});

test('script: waits for a transaction open on the engine, as exec does', async (t) => {
  const { e } = await engine(t);
  await runScript(e, 'create table w (id int primary key)');
  const pg = e as unknown as { transaction<T>(fn: (tx: { query(sql: string): Promise<unknown> }) => Promise<T>): Promise<T> };
  const order: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const tx = pg.transaction(async (q) => {
    await q.query('insert into w values (1)');
    order.push('tx wrote');
    await held;
    await q.query('insert into w values (2)');
    order.push('tx done');
  });
  await new Promise((r) => setTimeout(r, 20));
  const script = runScript(e, 'insert into w values (3)').then(() => order.push('script'));
  await new Promise((r) => setTimeout(r, 50));
  t.deepEqual(order, ['tx wrote'], 'the script did not run inside the open transaction');
  release();
  await Promise.all([tx, script]);
  t.deepEqual(order, ['tx wrote', 'tx done', 'script']);
  t.deepEqual(await readRows(e, 'select id from w order by id', []), [{ id: 1 }, { id: 2 }, { id: 3 }]);
});

test('a closed engine refuses scripts and reads with PGlite’s own error', async (t) => {
  const orm: Orm = await openOrm({ dataDir: 'memory://' });
  const e = await pgliteEngineOf(orm)!;
  t.teardown(() => orm.close());
  await runScript(e, 'create table c (id int)');
  await (e as unknown as { close(): Promise<void> }).close();
  await t.throwsAsync(runScript(e, 'insert into c values (1)'), { message: /closed/ });
  await t.throwsAsync(readRows(e, 'select * from c', []), { message: /closed/ });
});
