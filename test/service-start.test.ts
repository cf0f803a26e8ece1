// `npm start` as a newcomer runs it: embedded (in-process bus, PGlite), migrations applied, the
// local chain beside it in development; production refuses to start without its secrets.
import test from 'ava';
import { spawn } from 'node:child_process';
import { startProcessNode } from './helpers/process-node.ts';

test('development default: embedded node with the local chain wired to its webhook', async (t) => {
  const node = await startProcessNode({ DATA_DIR: 'memory://', LOCAL_CHAIN: '1', LOCAL_CHAIN_PORT: '0', KAFKA_BROKERS: '', DATABASE_URL: '', PARLAY_WEBHOOK_AUTH_SECRET: '' });
  t.teardown(() => node.kill('SIGTERM'));
  let vault: any;
  for (let i = 0; i < 100; i++) {
    vault = await (await fetch(`${node.url}/api/parlays/vault/`)).json();
    if (vault.data.vault_address && vault.data.balance > 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.truthy(vault.data.vault_address, 'ConfigInitialized reached the mirror through the chain webhook');
  t.true(vault.data.balance > 0, 'VaultSeeded too');
  const ready = await (await fetch(`${node.url}/readyz`)).json();
  t.deepEqual(ready.checks, { bus: 'ok', database: 'ok', rpc: 'ok' });
});

test('production refuses to start without its secrets and names them', async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { PATH: process.env.PATH, APP_ENV: 'production', PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const code = await new Promise((r) => child.on('exit', r));
  t.is(code, 2);
  t.regex(err, /PLATFORM_JWT_SECRET/);
  t.regex(err, /DATABASE_URL/);
  t.regex(err, /CLOB_INTERNAL_TOKEN/);
});
