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
let current = null;
// Its own group no longer hears the terminal: pass an interrupt on.
for (const sig of ['SIGINT', 'SIGTERM'])
  process.on(sig, () => {
    try {
      current?.kill(sig);
    } catch {
      /* gone */
    }
  });

/** One ava run over `avaArgs`: its exit code, its output, and whether it passed `deadlineMin`. */
async function runAva(avaArgs, deadlineMin) {
  const child = spawn(process.execPath, [`${root}node_modules/ava/entrypoints/cli.mjs`, ...avaArgs], {
    cwd: root,
    env: { ...process.env, FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  current = child;
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
  // A watchdog above ava's own inactivity timeout: past the deadline ava is interrupted (it then
  // names the tests still pending and exits), and killed 30 s later if it has not.
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
  current = null;
  return { code, out, overran };
}

/** What ava printed of a run: passed, failed (whatever the cause), skipped, and the files whose worker died. */
function tally(out) {
  const count = (re) => {
    const m = re.exec(out);
    return m ? Number(m[1]) : 0;
  };
  // ava's closing lines, or (when a run is cut short, e.g. a timeout) the ✔ / ✘ lines themselves.
  const lines = (re) => (out.match(re) ?? []).length;
  // A test file whose worker died (a signal, a non-zero exit): ava names it once, mid-run, with the
  // tests it left unrun; every test it did run counts as passed.
  const diedLines = out.match(/^\s*✘ \S+ exited (with a non-zero exit code|due to).*$/gm) ?? [];
  const died = [...new Set(diedLines.map((l) => /✘ (\S+) exited/.exec(l)[1]))];
  const failed =
    Math.max(count(/(\d+) tests? failed/), lines(/^\s*✘ \[fail\]/gm)) +
    count(/(\d+) uncaught exceptions?/) +
    count(/(\d+) unhandled rejections?/) +
    lines(/^\s*✘ Timed out/gm);
  return {
    passed: Math.max(count(/(\d+) tests? passed/), lines(/^\s*✔ /gm)),
    failed,
    skipped: count(/(\d+) tests? skipped/),
    died,
    diedLines: out.match(/^\s*✘ .+ (exited (with a non-zero exit code|due to).*|tests? remaining in .+)$/gm) ?? [],
  };
}

/** The ✔ lines of a file's tests in a whole-suite run: ava titles them by its path under test/. */
const passedIn = (out, file) => {
  const prefix =
    file
      .replace(/^test\//, '')
      .replace(/\.test\.ts$/, '')
      .split('/')
      .join(' › ') + ' › ';
  return (out.match(/^\s*✔ .*$/gm) ?? []).filter((l) => l.trim().slice(2).startsWith(prefix)).length;
};

const deadlineMin = Number(process.env.TEST_DEADLINE_MIN ?? 45);
const first = await runAva(args, deadlineMin);
const t = tally(first.out);
let { passed, failed } = t;
let overran = first.overran;
let code = first.code;
if (t.diedLines.length) console.log(`\ntest files that ended early:\n${t.diedLines.map((l) => `  ${l.trim()}`).join('\n')}`);
// A worker that died with nothing else failing (a crash of the process, not an assertion): its files
// run once more, alone, and count by that run; the death stays printed above. Any other failure, or
// a second death, fails the run.
if (t.died.length && t.failed === 0 && !overran) {
  console.log(`\nrunning again, alone: ${t.died.join(' ')}`);
  const again = await runAva(t.died, deadlineMin);
  const a = tally(again.out);
  passed = passed - t.died.reduce((n, f) => n + passedIn(first.out, f), 0) + a.passed;
  failed = a.failed + a.died.length;
  overran = again.overran;
  code = again.code;
  console.log(`\nthe files run again: ${a.passed} passed, ${a.failed + a.died.length} failed`);
} else failed += t.died.length;

if (startedKafka && !process.env.KEEP_KAFKA) sh('bash', ['deploy/kafka.sh', 'stop']);

const exitFailed = (code !== 0 || overran) && failed === 0 ? 1 : failed;
console.log(`\n${passed} passed, ${exitFailed} failed${t.skipped ? `, ${t.skipped} skipped` : ''}`);
process.exit(code === 0 && exitFailed === 0 && !overran ? 0 : 1);
