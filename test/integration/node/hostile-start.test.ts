// Issue 19, reproduction 12: two processes on one embedded database, and a busy port. PGlite is
// single-process: a second `npm start` on the same data directory is refused at once, before it
// touches the data; a busy port is one clear line, not a stack.
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startProcessNode } from '../../helpers/process-node.ts';

const root = new URL('../../..', import.meta.url).pathname;
const EMBEDDED = { LOCAL_CHAIN: '0', KAFKA_BROKERS: '', DATABASE_URL: '', PARLAY_WEBHOOK_AUTH_SECRET: '' };

/** `src/main.ts` run to its exit: code, output and how long it took. */
async function runToExit(env: Record<string, string>, timeoutMs = 60_000) {
  const started = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      APP_ENV: 'development',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      CLOB_JWT_SECRET: 's',
      CLOB_INTERNAL_TOKEN: 'i',
      ...EMBEDDED,
      ...env,
    },
  });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    out += d;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  clearTimeout(timer);
  return { code, out, ms: Date.now() - started };
}

const tempDir = (t: any) => {
  const dir = mkdtempSync(join(tmpdir(), 'pglite-lock-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

test("a second process on a running node's embedded database is refused before touching it; a dead owner's lock is taken over", async (t) => {
  const dir = tempDir(t);
  const data = join(dir, 'db');
  const first = await startProcessNode({ ...EMBEDDED, DATA_DIR: data });
  t.teardown(() => first.kill('SIGKILL'));
  t.true(existsSync(`${data}.lock`), 'the owner holds <dir>.lock');

  const second = await runToExit({ DATA_DIR: data, PORT: String(await freePort()) });
  t.is(second.code, 2, second.out);
  t.regex(second.out, /refusing to start: the embedded database .*db is in use by process \d+/);
  t.notRegex(second.out, /\n\s+at /, 'no stack');
  t.notRegex(second.out, /migrations applied/, 'nothing applied to the data');
  t.true(second.ms < 15_000, `refused at once (${second.ms} ms)`);
  // The first node is unharmed.
  t.is((await fetch(`${first.url}/readyz`)).status, 200);

  // kill -9 leaves the lock behind; the next start sees its owner is gone and takes it.
  await first.kill('SIGKILL');
  t.true(existsSync(`${data}.lock`), 'a killed owner leaves its lock file');
  const third = await startProcessNode({ ...EMBEDDED, DATA_DIR: data });
  t.is((await fetch(`${third.url}/readyz`)).status, 200, 'the stale lock was taken over');
  await third.kill('SIGTERM');
  t.false(existsSync(`${data}.lock`), 'a graceful stop removes the lock');
});

test('the lock is taken before anything touches the data directory', async (t) => {
  const dir = tempDir(t);
  const data = join(dir, 'db');
  writeFileSync(`${data}.lock`, `${process.pid}\n`); // a live owner: this test process
  const r = await runToExit({ DATA_DIR: data, PORT: String(await freePort()) });
  t.is(r.code, 2, r.out);
  t.regex(r.out, new RegExp(`in use by process ${process.pid}`));
  t.false(existsSync(data), 'the data directory was never created');
});

test('a busy port is one clear line, before any data is touched', async (t) => {
  const dir = tempDir(t);
  const data = join(dir, 'db');
  const port = await freePort();
  const squatter: Server = await new Promise((r) => {
    const s = createServer();
    s.listen(port, '127.0.0.1', () => r(s));
  });
  t.teardown(() => new Promise<void>((r) => squatter.close(() => r())));
  const r = await runToExit({ DATA_DIR: data, PORT: String(port) });
  t.is(r.code, 2, r.out);
  // (bigint-buffer's notice that it runs without native bindings is printed by a dependency at import)
  const lines = r.out
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('bigint: Failed to load bindings'));
  t.is(lines.length, 1, r.out);
  t.is(lines[0], `refusing to start: port ${port} on 127.0.0.1 is already in use (another node or program listens there; set PORT)`);
  t.false(existsSync(data), 'no data directory made');
  t.false(existsSync(`${data}.lock`), 'no lock left behind');
});
