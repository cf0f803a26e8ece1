// Benchmark tool (not a test): what PostgreSQL itself spends on the statements one run sent, without
// the run's noise. Replays the statements bench/pg-capture.ts wrote (every node's, in the order they
// were sent) on ONE connection to a fresh database migrated by a checkout's migrations, and prints
// the backend's CPU (user and kernel, from /proc) per kind of statement. The same capture replayed
// against two checkouts (CODE) or with statements left out (WITHOUT) compares SQL changes that a
// bench's totals cannot resolve on this machine (its speed drifts by 2× within an hour).
// Usage: npx tsx bench/pg-replay.ts [captureDir=/tmp/pg-capture]
//   CODE=<checkout>  migrate with that checkout's src/store/orm.ts (default: this one); CODE=a,b
//                    replays on each in turn, round by round (a, b, a, b, ...): this machine's speed
//                    drifts even between two rounds of the same replay, so compare interleaved rounds
//   WITHOUT=<regex>  leave out the statements whose text matches
//   ROUNDS=n         replay n times (a fresh database each), a column per round
//   KEEP=1           keep the last round's database (pg_replay_<pid>) to look into
//   DATABASE_URL     the server (its database name is replaced; default postgres://postgres@127.0.0.1:5432/postgres)
// Replayed one after the other, not concurrently as in the run: transaction control and LISTEN are
// left out, every statement commits on its own (named ones prepared once, as in the run), and a
// commit group's partition moves are emptied (the offsets they fence were the run's). Statements
// that fail are counted, not fatal.
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import { cpuSplitOf } from './cpu.ts';

const dir = process.argv[2] ?? '/tmp/pg-capture';
const codes = (process.env.CODE ?? '.').split(',').map((c) => resolve(c));
const without = process.env.WITHOUT ? new RegExp(process.env.WITHOUT) : null;
const rounds = Math.max(1, Number(process.env.ROUNDS ?? 1));
const server = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

type Line = [number, string, unknown[] | null, string | null | undefined];
const lines: Line[] = [];
for (const f of readdirSync(dir).filter((f) => f.endsWith('.jsonl')))
  for (const l of readFileSync(`${dir}/${f}`, 'utf8').split('\n')) if (l) lines.push(JSON.parse(l));
lines.sort((a, b) => a[0] - b[0]);

const SKIP = /^\s*(begin|commit|rollback|savepoint|release|start transaction|listen|unlisten|set names)\b/i;
/** What the migrator ran: the fresh database has it already. */
const MIGRATION = /mikro_orm_migrations|^\s*(create|alter|drop|comment)\s|information_schema|pg_advisory_lock/i;
const MOVES = /^select (runtime_commit_(?:group|batch))\('(?:[^']|'')*'::jsonb, \d+,/;

/** A statement's kind: the function a `select f(` calls, else its first words (literals as '…'). */
function kindOf(text: string): string {
  const t = text
    .trim()
    .replace(/'(?:[^']|'')*'/g, "'…'")
    .replace(/\s+/g, ' ');
  const call = /^select (?:\* from )?([a-z_]+)\(/i.exec(t);
  if (call) return `${call[1]}()`;
  return t.slice(0, 48);
}

const statements = lines
  .filter(([, text]) => !SKIP.test(text) && !MIGRATION.test(text) && !(without && without.test(text)))
  .map(([, text, values, name]) => ({
    kind: kindOf(text),
    name: name ?? undefined,
    text: MOVES.test(text) ? text.replace(MOVES, "select $1('[]'::jsonb, 0,") : text,
    values: values?.map((v: any) => (v && v.type === 'Buffer' && Array.isArray(v.data) ? Buffer.from(v.data) : v)) ?? undefined,
  }));

/** The backend's CPU so far, in ms (bench/cpu.ts reads /proc). */
const cpuOf = (pid: number) => {
  const c = cpuSplitOf(pid);
  if (!c) throw new Error(`backend ${pid} is gone`);
  return { user: Math.round(c.user * 1000), sys: Math.round(c.kernel * 1000) };
};

type Kinds = Map<string, { n: number; user: number; sys: number; errors: number }>;

async function replay(code: string): Promise<Kinds> {
  const name = `pg_replay_${process.pid}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`drop database if exists ${name}`);
  await admin.query(`create database ${name}`);
  const url = Object.assign(new URL(server), { pathname: `/${name}` }).toString();
  try {
    const { openOrm, migrate } = await import(`${code}/src/store/orm.ts`);
    const orm = await openOrm({ databaseUrl: url, poolMax: 2 });
    await migrate(orm, url);
    await orm.close();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const [{ pid }] = (await c.query('select pg_backend_pid() as pid')).rows;
      await c.query('checkpoint');
      const kinds: Kinds = new Map();
      for (const s of statements) {
        const k = kinds.get(s.kind) ?? { n: 0, user: 0, sys: 0, errors: 0 };
        kinds.set(s.kind, k);
        const a = cpuOf(pid);
        try {
          // A named statement is prepared once, as the run's connections did.
          await c.query({ name: s.name, text: s.text, values: s.values });
        } catch {
          k.errors++;
        }
        const b = cpuOf(pid);
        k.n++;
        k.user += b.user - a.user;
        k.sys += b.sys - a.sys;
      }
      return kinds;
    } finally {
      await c.end();
    }
  } finally {
    if (!process.env.KEEP) await admin.query(`drop database if exists ${name}`);
    else console.log(`kept: ${url}`);
    await admin.end();
  }
}

const results: { label: string; kinds: Kinds }[] = [];
for (let r = 0; r < rounds; r++)
  for (const [i, code] of codes.entries())
    results.push({ label: `${codes.length > 1 ? String.fromCharCode(65 + i) : ''}${r + 1}`, kinds: await replay(code) });
const cost = (m: Kinds, k: string) => (m.get(k)?.user ?? 0) + (m.get(k)?.sys ?? 0);
const total = (m: Kinds) => [...m.keys()].reduce((n, k) => n + cost(m, k), 0);
const kinds = [...new Set(results.flatMap((r) => [...r.kinds.keys()]))].sort(
  (a, b) => results.reduce((n, r) => n + cost(r.kinds, b), 0) - results.reduce((n, r) => n + cost(r.kinds, a), 0),
);
console.log(
  `${statements.length} statements from ${dir} (of ${lines.length} captured)${without ? `, without /${without.source}/` : ''}; migrated by ${codes
    .map((c, i) => (codes.length > 1 ? `${String.fromCharCode(65 + i)}: ${c}` : c))
    .join(', ')}`,
);
console.table(
  kinds.slice(0, 25).map((k) => {
    const first = results[0].kinds.get(k);
    const row: Record<string, string | number> = { statement: k, n: first?.n ?? 0 };
    for (const r of results) row[`ms ${r.label} (sys)`] = `${cost(r.kinds, k)} (${r.kinds.get(k)?.sys ?? 0})`;
    row.errors = results.reduce((n, r) => n + (r.kinds.get(k)?.errors ?? 0), 0);
    return row;
  }),
);
console.log(`backend CPU in all (ms): ${results.map((r) => `${r.label || 'round'} ${total(r.kinds)}`).join(', ')}`);
