// Reads what bench/request-count.ts wrote (every node's kafkajs requests by API and pg queries) and
// prints each kind's count over one window of a bench run, per second and per request (not a
// benchmark, not a test: a reading aid). Usage:
//   npx tsx bench/request-count-report.ts [dir=/tmp/request-count] --marks marks.log --label <row> --requests <n>
// The window is the first `perf-mark start|end <s> <label>` pair whose label holds --label (the
// run's stderr with PERF_MARKS=1); --requests is how many requests it carried (order-ratio's full
// rate: its first argument, 3,000 → 3,024). Totals are read at their quarter-second samples nearest
// inside the window's edges.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const opt = (name: string) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args.splice(at, 2)[1] : undefined;
};
const marks = opt('marks');
const label = opt('label') ?? '';
const requests = Number(opt('requests'));
const dir = args[0] ?? '/tmp/request-count';
if (!marks || !(requests > 0))
  throw new Error('usage: npx tsx bench/request-count-report.ts [dir] --marks marks.log --label <row> --requests <n>');

let window: [number, number] | null = null;
let start: number | null = null;
for (const line of readFileSync(marks, 'utf8').split('\n')) {
  const m = /^perf-mark (start|end) ([\d.]+) (.*)$/.exec(line.trim());
  if (!m || !m[3].includes(label)) continue;
  if (m[1] === 'start') start = Number(m[2]);
  else if (start !== null) {
    window = [start, Number(m[2])];
    break;
  }
}
if (!window) throw new Error(`no perf-mark start/end pair with "${label}" in ${marks}`);
const [from, to] = window;

const sum: Record<string, number> = {};
let seconds = 0;
for (const f of readdirSync(dir).filter((f) => f.endsWith('.jsonl'))) {
  const rows = readFileSync(join(dir, f), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as [number, Record<string, number>]);
  const inside = rows.filter(([t]) => t >= from && t <= to);
  if (inside.length < 2) continue;
  const [t0, first] = inside[0];
  const [t1, last] = inside[inside.length - 1];
  seconds = Math.max(seconds, t1 - t0);
  for (const [k, v] of Object.entries(last)) sum[k] = (sum[k] ?? 0) + v - (first[k] ?? 0);
}
if (!seconds) throw new Error(`no process of ${dir} has two samples inside ${from}–${to}`);
// The samples span a little less than the window: the requests are scaled to the span measured.
const carried = (requests * seconds) / (to - from);
console.log(`${label || 'window'}: ${(to - from).toFixed(1)} s, counted over ${seconds.toFixed(1)} s (~${Math.round(carried)} requests)`);
console.table(
  Object.fromEntries(
    Object.entries(sum)
      .filter(([, v]) => v > 0)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => [k, { count: v, 'per second': Math.round(v / seconds), 'per request': (v / carried).toFixed(3) }]),
  ),
);
