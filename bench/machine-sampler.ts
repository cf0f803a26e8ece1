// What the machine was doing when requests were slow (a reading aid, not a benchmark, not a test).
// Record while a bench runs, then line the samples up with the bench's slow requests:
//   npx tsx bench/machine-sampler.ts record /tmp/samples.log [intervalMs=50] &
//   PERF_MARKS=1 ONLY=cluster npx tsx bench/order-ratio.ts 2> marks.log; kill %1
//   npx tsx bench/machine-sampler.ts show /tmp/samples.log marks.log
// `record` writes one line per interval (epoch ms first): the machine's idle share since the last
// line (/proc/stat), the service nodes' CPU ticks (processes running src/main.ts), PostgreSQL's
// autovacuum workers, the vacuum under way and its checkpoint counters (pg_stat_activity,
// pg_stat_progress_vacuum, pg_stat_bgwriter; DATABASE_URL, default postgres@127.0.0.1:5432), and,
// when a Kafka broker runs, its garbage collections (`jstat -gcutil`, a line per change).
// `show` reads the `perf-mark half-rate <startedAt> slow <bucket>:<n> …` line bench/order-ratio.ts
// prints with PERF_MARKS (requests over 50 ms per 100 ms bucket, epoch ms) and prints, per 100 ms
// of the run, the slow requests next to the machine's idle share and anything PostgreSQL or the
// broker did in it. Session 58 read with it that the half-rate p99 is the machine running out
// (idle 0.00 in the worst buckets), not a collection, a checkpoint or a vacuum.
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import pg from 'pg';
import { pidsOf } from './cpu.ts';

const [mode, file, third] = process.argv.slice(2);

function ticksOf(pid: string): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return NaN;
  }
}

function servicePids(): string[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('src/main.ts');
      } catch {
        return false;
      }
    });
}

async function record(out: string, intervalMs: number): Promise<void> {
  writeFileSync(out, '');
  const put = (line: string) => appendFileSync(out, `${Date.now()} ${line}\n`);
  const [broker] = pidsOf(['-f', 'kafka.Kafka']);
  if (broker) {
    const js = spawn('jstat', ['-gcutil', String(broker), String(intervalMs)]);
    js.on('error', () => put('gc jstat unavailable'));
    let rest = '';
    let last = '';
    js.stdout.on('data', (d: Buffer) => {
      rest += d;
      for (let i = rest.indexOf('\n'); i >= 0; i = rest.indexOf('\n')) {
        const f = rest.slice(0, i).trim().split(/\s+/);
        rest = rest.slice(i + 1);
        // S0 S1 E O M CCS YGC YGCT FGC FGCT CGC CGCT GCT: a line when a collection's count moved.
        const counts = `${f[6]} ${f[8]} ${f[10]}`;
        if (/^\d/.test(f[6] ?? '') && counts !== last)
          put(`gc young ${f[6]} (${f[7]} s) full ${f[8]} concurrent ${f[10]} total ${f[12]} s`);
        last = counts;
      }
    });
    process.on('exit', () => js.kill());
  }
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' });
  await db.connect();
  const ticks = new Map<string, number>();
  let idle = 0;
  let total = 0;
  let busy = false;
  const tick = async () => {
    if (busy) return; // the database answered late: skip a beat rather than pile up
    busy = true;
    const st = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const nowIdle = st[3] + st[4];
    const nowTotal = st.reduce((a, b) => a + b, 0);
    const share = nowTotal > total ? (nowIdle - idle) / (nowTotal - total) : 0;
    [idle, total] = [nowIdle, nowTotal];
    const nodes = servicePids().map((p) => {
      const t = ticksOf(p);
      const d = ticks.has(p) ? t - ticks.get(p)! : 0;
      ticks.set(p, t);
      return `${p}:${d}`;
    });
    put(`cpu idle ${share.toFixed(2)} nodes ${nodes.join(' ') || '-'}`);
    try {
      const { rows } = await db.query(
        `select (select count(*)::int from pg_stat_activity where backend_type = 'autovacuum worker') as autovacuum,
                (select string_agg(relid::regclass::text, ',') from pg_stat_progress_vacuum) as vacuuming,
                (select checkpoints_timed + checkpoints_req from pg_stat_bgwriter)::int as checkpoints`,
      );
      put(`pg autovacuum ${rows[0].autovacuum} vacuuming ${rows[0].vacuuming ?? '-'} checkpoints ${rows[0].checkpoints}`);
    } catch (e) {
      put(`pg error ${(e as Error).message}`);
    }
    busy = false;
  };
  setInterval(() => void tick(), intervalMs);
  for (const s of ['SIGINT', 'SIGTERM'] as const)
    process.on(s, () => {
      void db.end().finally(() => process.exit(0));
    });
}

function show(samplesFile: string, marksFile: string): void {
  const mark = readFileSync(marksFile, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('perf-mark half-rate '));
  if (!mark) throw new Error(`${marksFile}: no "perf-mark half-rate" line (run the bench with PERF_MARKS=1)`);
  const [, , started, , ...buckets] = mark.split(' ');
  const slow = new Map(buckets.map((b) => b.split(':').map(Number) as [number, number]));
  const from = Number(started) - 1000;
  const to = Number(started) + 11_000;
  const rows = new Map<number, { slow: number; idle: number[]; events: string[] }>();
  let lastPg = '';
  for (const line of readFileSync(samplesFile, 'utf8').split('\n')) {
    const at = Number(line.slice(0, line.indexOf(' ')));
    if (!(at >= from && at <= to)) continue;
    const b = Math.floor(at / 100) * 100;
    const row = rows.get(b) ?? { slow: slow.get(b) ?? 0, idle: [], events: [] };
    rows.set(b, row);
    const rest = line.slice(line.indexOf(' ') + 1);
    if (rest.startsWith('cpu idle ')) row.idle.push(Number(rest.split(' ')[2]));
    else if (rest.startsWith('gc ')) row.events.push(`broker ${rest}`);
    else if (rest.startsWith('pg ')) {
      const state = rest.replace(/checkpoints (\d+)/, 'checkpoint #$1');
      if (state !== lastPg && lastPg) row.events.push(state);
      lastPg = state;
    }
  }
  console.log('ms into the run | requests over 50 ms | machine idle | what else happened');
  for (const [b, r] of [...rows].sort((x, y) => x[0] - y[0])) {
    const idle = r.idle.length ? Math.min(...r.idle).toFixed(2) : '';
    console.log(
      `${String(b - Number(started)).padStart(6)} | ${String(r.slow || '').padStart(3)} | ${idle.padStart(4)} | ${r.events.join('; ')}`,
    );
  }
}

if (mode === 'record' && file) await record(file, Number(third ?? 50));
else if (mode === 'show' && file && third) show(file, third);
else {
  console.error('usage: machine-sampler.ts record <out> [intervalMs] | show <samples> <bench stderr with PERF_MARKS>');
  process.exit(2);
}
