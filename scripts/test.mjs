#!/usr/bin/env node
// `npm test`: starts the local Kafka broker (deploy/kafka.sh) unless KAFKA_BROKERS is given, runs
// every ava test against it and the machine's PostgreSQL, stops the broker, and prints the plain
// `N passed, N failed` line.
import { spawn, spawnSync } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const args = process.argv.slice(2);
let startedKafka = false;

function sh(cmd, cmdArgs) {
  const r = spawnSync(cmd, cmdArgs, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  process.stdout.write(r.stdout ?? '');
  return r;
}

if (!process.env.KAFKA_BROKERS) {
  const r = sh('bash', ['deploy/kafka.sh', 'start']);
  if (r.status !== 0) {
    console.error('could not start the local Kafka broker (bash deploy/kafka.sh start)');
    console.log('0 passed, 1 failed');
    process.exit(1);
  }
  const m = /KAFKA_BROKERS=(\S+)/.exec(r.stdout ?? '');
  process.env.KAFKA_BROKERS = m ? m[1] : '127.0.0.1:19092';
  startedKafka = true;
}

// ava runs in its own process group, so that whatever a test leaves behind (a node process, a chain)
// is reaped with it at the end.
const child = spawn(process.execPath, [`${root}node_modules/ava/entrypoints/cli.mjs`, ...args], {
  cwd: root,
  env: { ...process.env, FORCE_COLOR: '0' },
  stdio: ['ignore', 'pipe', 'pipe'],
  detached: true,
});
let out = '';
child.stdout.on('data', (d) => {
  out += d;
  process.stdout.write(d);
});
child.stderr.on('data', (d) => {
  out += d;
  process.stderr.write(d);
});
const killGroup = (signal) => {
  try {
    process.kill(-child.pid, signal);
  } catch {
    /* already gone */
  }
};
// Its own group no longer hears the terminal: pass an interrupt on.
for (const sig of ['SIGINT', 'SIGTERM'])
  process.on(sig, () => {
    try {
      child.kill(sig);
    } catch {
      /* gone */
    }
  });

// A watchdog above ava's own inactivity timeout: past the deadline ava is interrupted (it then names
// the tests still pending and exits), and killed 30 s later if it has not.
const deadlineMin = Number(process.env.TEST_DEADLINE_MIN ?? 45);
let overran = false;
const watchdog = setTimeout(() => {
  overran = true;
  console.error(`\nthe test run passed its ${deadlineMin}-minute deadline (TEST_DEADLINE_MIN): interrupting ava`);
  try {
    child.kill('SIGINT');
  } catch {
    /* gone */
  }
  setTimeout(() => killGroup('SIGKILL'), 30_000).unref();
}, deadlineMin * 60_000);
watchdog.unref();

// `exit`, not `close`: a stray grandchild holding ava's output pipe must not keep the run open.
const code = await new Promise((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
clearTimeout(watchdog);
await new Promise((r) => setTimeout(r, 200));
killGroup('SIGKILL');

if (startedKafka && !process.env.KEEP_KAFKA) sh('bash', ['deploy/kafka.sh', 'stop']);

const count = (re) => {
  const m = re.exec(out);
  return m ? Number(m[1]) : 0;
};
// ava's closing lines, or (when a run is cut short, e.g. a timeout) the ✔ / ✘ lines themselves.
const lines = (re) => (out.match(re) ?? []).length;
const passed = Math.max(count(/(\d+) tests? passed/), lines(/^\s*✔ /gm));
const failed =
  Math.max(count(/(\d+) tests? failed/), lines(/^\s*✘ \[fail\]/gm)) +
  count(/(\d+) uncaught exceptions?/) +
  count(/(\d+) unhandled rejections?/) +
  lines(/^\s*✘ Timed out/gm) +
  lines(/^\s*✘ .+ exited (with a non-zero exit code|due to)/gm);
// A test file whose worker died (a signal, a non-zero exit) ends ava's run non-zero with every test it
// did run passed: the file and what it left unrun are named again here, at the end, where they show.
const exited = out.match(/^\s*✘ .+ (exited (with a non-zero exit code|due to).*|tests? remaining in .+)$/gm) ?? [];
if (exited.length) console.log(`\ntest files that ended early:\n${exited.map((l) => `  ${l.trim()}`).join('\n')}`);
const skipped = count(/(\d+) tests? skipped/);
const exitFailed = (code !== 0 || overran) && failed === 0 ? 1 : failed;
console.log(`\n${passed} passed, ${exitFailed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(code === 0 && exitFailed === 0 && !overran ? 0 : 1);
