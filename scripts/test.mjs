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

const child = spawn(process.execPath, [`${root}node_modules/ava/entrypoints/cli.mjs`, ...args], {
  cwd: root, env: { ...process.env, FORCE_COLOR: '0' }, stdio: ['ignore', 'pipe', 'pipe'],
});
let out = '';
child.stdout.on('data', (d) => { out += d; process.stdout.write(d); });
child.stderr.on('data', (d) => { out += d; process.stderr.write(d); });
const code = await new Promise((resolve) => child.on('close', (c) => resolve(c ?? 1)));

if (startedKafka && !process.env.KEEP_KAFKA) sh('bash', ['deploy/kafka.sh', 'stop']);

const count = (re) => { const m = re.exec(out); return m ? Number(m[1]) : 0; };
// ava's closing lines, or (when a run is cut short, e.g. a timeout) the ✔ / ✘ lines themselves.
const lines = (re) => (out.match(re) ?? []).length;
const passed = Math.max(count(/(\d+) tests? passed/), lines(/^\s*✔ /gm));
const failed = Math.max(count(/(\d+) tests? failed/), lines(/^\s*✘ \[fail\]/gm)) + count(/(\d+) uncaught exceptions?/) + count(/(\d+) unhandled rejections?/) + lines(/^\s*✘ Timed out/gm);
const skipped = count(/(\d+) tests? skipped/);
const exitFailed = code !== 0 && failed === 0 ? 1 : failed;
console.log(`\n${passed} passed, ${exitFailed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(code === 0 && exitFailed === 0 ? 0 : 1);
