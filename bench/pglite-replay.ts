// Benchmark tool (not a test): what PGlite itself spends on the commit scripts an embedded run sent
// (bench/pglite-capture.ts), without the run's noise: the embedded path's counterpart of
// bench/pg-replay.ts. Replays the scripts in order on a fresh PGlite migrated by this checkout, each
// round on a new engine, and prints the engine's CPU (this process's, user and kernel: PGlite runs
// in it) per round and variant. A script's fence is met first (its partitions' offsets set to what
// it expects, not counted), so every script commits as it did in the run.
// Usage: npx tsx bench/pglite-replay.ts [captureDir=/tmp/pglite-capture]
//   ROUNDS=n                 rounds (default 3); in each, every variant in turn, interleaved: this
//                            machine's speed drifts even between two replays of the same scripts
//   VARIANTS='as-captured,without:ledger_append,rename:open_orders_insert=open_orders_upsert,…'
//                            as-captured, or a script with one fused call left out (`without:<fn>`),
//                            or with calls of one function made to another (`rename:<from>=<to>`)
// A first replay, not counted, warms the process up (its first ran ~20% slower).
// What it showed (session 63, 881 scripts of ~26 KB, ~5 orders each, two quiet rounds): the new
// orders' rows 12% of the engine's time, the ledger lines 9%, the orders' changes 4%; the new
// orders as a plain insert rather than the upsert, 1,436 / 1,393 / 1,406 / 1,399 / 1,418 ms against
// 1,434 / 1,427 / 1,440 / 1,429 / 1,484 (−2.3%).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openOrm, migrate, pgliteEngineOf } from '../src/store/orm.ts';
import { runScript } from '../src/store/pglite-script.ts';

const dir = process.argv[2] ?? '/tmp/pglite-capture';
const rounds = Math.max(1, Number(process.env.ROUNDS ?? 3));
const variants = (process.env.VARIANTS ?? 'as-captured').split(',').filter(Boolean);
const scripts: string[] = [];
for (const f of readdirSync(dir).filter((f) => f.endsWith('.jsonl')))
  for (const l of readFileSync(join(dir, f), 'utf8').split('\n')) if (l) scripts.push(JSON.parse(l));
if (!scripts.length) throw new Error(`no scripts in ${dir}`);

/** The script with variant `v` applied. Calls are fused in one select: `select a(…), b(…), c(…)`. */
function variantOf(script: string, v: string): string {
  if (v === 'as-captured') return script;
  const without = /^without:([a-z_]+)$/.exec(v);
  if (without) {
    const at = script.indexOf(`, ${without[1]}(`);
    if (at < 0) return script;
    // The call runs to the next fused call or the statement's end; its literal holds neither.
    const rest = /, [a-z_]+\('|;\n/.exec(script.slice(at + 2));
    return script.slice(0, at) + (rest ? script.slice(at + 2 + rest.index) : '');
  }
  const rename = /^rename:([a-z_]+)=([a-z_]+)$/.exec(v);
  if (rename) return script.split(`, ${rename[1]}(`).join(`, ${rename[2]}(`);
  throw new Error(`unknown variant ${v}`);
}

const FENCE = /^select runtime_commit_batch\('(\[.*?\])'::jsonb/;

async function replay(v: string): Promise<{ ms: number; failed: number }> {
  const data = mkdtempSync(join(tmpdir(), 'pglite-replay-'));
  const orm = await openOrm({ dataDir: data });
  try {
    await migrate(orm);
    const engine = (await pgliteEngineOf(orm)!) as any;
    let us = 0;
    let failed = 0;
    for (const script of scripts) {
      const fence = FENCE.exec(script);
      for (const m of fence ? (JSON.parse(fence[1]) as { g: string; t: string; p: number; owner: string; expected: string }[]) : [])
        await engine.query(
          `insert into consumer_offsets (group_id, topic, partition, next_offset, owner, updated_at) values ($1, $2, $3, $4, $5, now())
           on conflict (group_id, topic, partition) do update set next_offset = excluded.next_offset, owner = excluded.owner`,
          [m.g, m.t, m.p, m.expected, m.owner],
        );
      const text = variantOf(script, v);
      const c0 = process.cpuUsage();
      try {
        await runScript(engine, text);
      } catch {
        failed++;
      }
      const c = process.cpuUsage(c0);
      us += c.user + c.system;
    }
    return { ms: Math.round(us / 1000), failed };
  } finally {
    await orm.close();
    rmSync(data, { recursive: true, force: true });
  }
}

await replay(variants[0]);
const table: Record<string, Record<string, string>> = {};
for (let r = 1; r <= rounds; r++)
  for (const v of variants) {
    const { ms, failed } = await replay(v);
    (table[v] ??= {})[`round ${r} ms`] = failed ? `${ms} (${failed} failed)` : String(ms);
  }
console.log(
  `${scripts.length} commit scripts from ${dir}, ${Math.round(scripts.reduce((n, s) => n + s.length, 0) / scripts.length)} characters each on average; engine CPU per replay:`,
);
console.table(table);
