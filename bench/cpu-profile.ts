// Where a process's time goes, from V8 CPU profiles (not a benchmark, not a test: a reading aid for
// them). Run a bench with its nodes profiled, e.g.
//   PERF_MARKS=1 SERVICE_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof" npx tsx bench/order-ratio.ts 2> marks.log
// then
//   npx tsx bench/cpu-profile.ts /tmp/prof [--marks marks.log [--label cluster]] [--window s,e] [--top 40]
//                                [--callers writeBuffer [--depth 8]]
// Prints, over every profile given (files or folders of *.cpuprofile), each process's busy share
// and its self time by package (node_modules/<pkg>, src/<dir>, node:<module>, V8's own entries),
// then the top functions by self time, and with --callers the call paths into one function.
// --marks takes the window of the first `perf-mark start|end <s> <label>` pair whose label holds
// --label (bench/cpu.ts perfMark: CLOCK_MONOTONIC seconds, the clock of a profile's timestamps);
// --window gives it in the same seconds. Samples outside it are left out.
// Reading it: V8 samples on a timer, so a thread preempted inside a system call (a socket write
// that wakes PostgreSQL or the broker on a saturated machine) is charged to that call while it
// waits (`writeBuffer` reached 11% of the cluster nodes' samples in session 56, most of it waiting
// for a core): on a busy machine a syscall's self time is an upper bound, not its CPU.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const args = process.argv.slice(2);
const opt = (name: string) => {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const marks = opt('marks');
const label = opt('label') ?? '';
const windowArg = opt('window');
const top = Number(opt('top') ?? 40);
const callersOf = opt('callers');
const depth = Number(opt('depth') ?? 6);
if (!args.length) {
  console.error(
    'usage: npx tsx bench/cpu-profile.ts <profile|dir>… [--marks file [--label s]] [--window s,e] [--top n] [--callers fn [--depth n]]',
  );
  process.exit(2);
}

/** The window in µs of the profiles' clock, or null (every sample). */
function windowOf(): [number, number] | null {
  if (windowArg) {
    const [s, e, ...more] = windowArg.split(',').map(Number);
    if (more.length || !Number.isFinite(s) || !Number.isFinite(e) || e <= s)
      throw new Error(`--window wants start,end in seconds (start < end), not "${windowArg}"`);
    return [s * 1e6, e * 1e6];
  }
  if (!marks) return null;
  let start: number | null = null;
  for (const line of readFileSync(marks, 'utf8').split('\n')) {
    const m = /^perf-mark (start|end) ([\d.]+) (.*)$/.exec(line.trim());
    if (!m || !m[3].includes(label)) continue;
    if (m[1] === 'start') start = Number(m[2]) * 1e6;
    else if (start !== null) return [start, Number(m[2]) * 1e6];
  }
  throw new Error(`no perf-mark start/end pair with "${label}" in ${marks}`);
}

const files = args.flatMap((a) =>
  statSync(a).isDirectory()
    ? readdirSync(a)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => join(a, f))
    : [a],
);
const win = windowOf();

/** A frame's group: a package, a folder of src/, a node: module, or V8's own entry. */
function groupOf(cf: CallFrame): string {
  const url = cf.url;
  if (!url) return cf.functionName.startsWith('(') ? cf.functionName : '(native code)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const src = /\/(src|actors|topics|bench)\/([^/]+)\//.exec(url);
  if (src) return `${src[1]}/${src[2]}`;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  return 'other';
}
const shortUrl = (url: string) => url.replace(/^.*\/(node_modules|src|actors|topics|bench)\//, '$1/');
const frameName = (cf: CallFrame) => `${cf.functionName || '(anonymous)'} ${shortUrl(cf.url)}:${cf.lineNumber + 1}`;

const byGroup = new Map<string, number>();
const byFn = new Map<string, number>();
const paths = new Map<string, number>();
let total = 0;
const add = <K>(m: Map<K, number>, k: K, v: number) => m.set(k, (m.get(k) ?? 0) + v);
const rows: { file: string; seconds: number; busy: number }[] = [];

for (const file of files) {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const nodes = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  let at = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i] ?? 0;
    at += dt;
    if (win && (at < win[0] || at > win[1])) continue;
    add(self, p.samples[i], dt);
  }
  let seconds = 0;
  let idle = 0;
  for (const [id, t] of self) {
    const cf = nodes.get(id)!.callFrame;
    seconds += t;
    if (cf.functionName === '(idle)') idle += t;
    add(byGroup, groupOf(cf), t);
    add(byFn, frameName(cf), t);
    if (callersOf && cf.functionName === callersOf) {
      const stack: string[] = [];
      for (let up = parent.get(id); up !== undefined && stack.length < depth; up = parent.get(up))
        stack.push(frameName(nodes.get(up)!.callFrame));
      add(paths, stack.join(' < '), t);
    }
  }
  total += seconds;
  rows.push({ file: file.split('/').pop()!, seconds: seconds / 1e6, busy: seconds ? 1 - idle / seconds : 0 });
}

const pct = (v: number) => `${((100 * v) / (total || 1)).toFixed(1)}%`;
const show = (m: Map<string, number>, n: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => ({ share: pct(v), ms: Math.round(v / 1000), what: k }));
console.log(
  win ? `window ${(win[0] / 1e6).toFixed(3)}–${(win[1] / 1e6).toFixed(3)} s (${((win[1] - win[0]) / 1e6).toFixed(1)} s)` : 'whole profiles',
);
console.table(rows.map((r) => ({ profile: r.file, seconds: r.seconds.toFixed(1), busy: `${(100 * r.busy).toFixed(0)}%` })));
console.log('self time by package or folder, all profiles:');
console.table(show(byGroup, 30));
console.log(`top ${top} functions by self time:`);
console.table(show(byFn, top));
if (callersOf) {
  const sum = [...paths.values()].reduce((a, b) => a + b, 0);
  console.log(`${callersOf}: ${pct(sum)} of all samples; its callers (${depth} frames up):`);
  console.table(show(paths, 15));
}
