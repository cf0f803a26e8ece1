// `npm start` as a newcomer runs it: embedded (in-process bus, PGlite), migrations applied, the
// local chain beside it in development; production refuses to start without its secrets.
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { startProcessNode } from '../../helpers/process-node.ts';
import { call } from '../../helpers/node.ts';
import { bearer, order } from '../../helpers/clob.ts';
import { DEV_STATE_FILE, type DevState } from '../../../src/dev/local-chain.ts';
import { createDevMarket, fundWallet, giveTokens } from '../../../src/dev/order-book.ts';
import { runAllowance } from '../../../src/cli/allowance.ts';
import { loadConfig, ConfigError } from '../../../src/config.ts';

const U = 1_000_000n;

test('development default: embedded node with the local chain wired to its webhook, and a delegate that settles trades there', async (t) => {
  const node = await startProcessNode({
    DATA_DIR: 'memory://',
    LOCAL_CHAIN: '1',
    LOCAL_CHAIN_PORT: '0',
    KAFKA_BROKERS: '',
    DATABASE_URL: '',
    PARLAY_WEBHOOK_AUTH_SECRET: '',
  });
  t.teardown(() => node.kill('SIGTERM'));
  let vault: any;
  for (let i = 0; i < 100; i++) {
    vault = await (await fetch(`${node.url}/api/parlays/vault/`)).json();
    if (vault.data.vault_address && vault.data.balance > 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.truthy(vault.data.vault_address, 'ConfigInitialized reached the mirror through the chain webhook');
  t.true(vault.data.balance > 0, 'VaultSeeded too');
  // PARLAY_WEBHOOK_AUTH_SECRET is unset: the route answers 503 to every caller, whatever the body
  // (the local chain hands its deliveries to the mirror in process, as just seen).
  for (const [auth, body] of [
    [undefined, '[]'],
    ['anything', '[]'],
    ['dev-guess', '[{"slot":'],
  ] as const) {
    const hook = await fetch(`${node.url}/api/parlays/webhooks/indexer/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
      body,
    });
    t.is(hook.status, 503, `auth ${auth}, body ${body}`);
    t.is((await hook.json()).error, 'webhook_not_configured');
  }
  const ready = await (await fetch(`${node.url}/readyz`)).json();
  t.deepEqual(ready.checks, { bus: 'ok', database: 'ok', rpc: 'ok' });

  // The order book settles there too: the node made up a delegate, funded it and runs the executor.
  const config = await (await fetch(`${node.url}/v1/config`)).json();
  t.truthy(config.delegate, '/v1/config names the dev delegate');
  let state = null as DevState | null;
  for (let i = 0; i < 100 && state?.service !== node.url; i++) {
    if (existsSync(DEV_STATE_FILE)) state = JSON.parse(readFileSync(DEV_STATE_FILE, 'utf8'));
    if (state?.service !== node.url) await new Promise((r) => setTimeout(r, 100));
  }
  t.is(state?.service, node.url, "the state file is this node's");
  const dev = state!;
  t.is(
    Keypair.fromSecretKey(Uint8Array.from(dev.delegate!)).publicKey.toBase58(),
    config.delegate,
    "the state file holds the delegate's key",
  );
  t.truthy(dev.platformJwtSecret);

  // What scripts/dev-chain.ts create-market, fund, give-tokens and approve do.
  const conn = new Connection(dev.rpc, 'confirmed');
  const market = await createDevMarket(conn, dev, node.url, { question: 'Dev settles?' });
  const [alice, bob] = [Keypair.generate(), Keypair.generate()];
  const dir = mkdtempSync(join(tmpdir(), 'dev-chain-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const w of [alice, bob]) {
    await fundWallet(conn, dev, w.publicKey, 1, 100n * U);
    await giveTokens(conn, dev, w.publicKey, market, 20n * U);
    const file = join(dir, `${w.publicKey.toBase58()}.json`);
    writeFileSync(file, JSON.stringify([...w.secretKey]));
    await runAllowance(
      {
        command: 'set',
        keypair: file,
        rpc: dev.rpc,
        service: node.url,
        market: [market.condition_id],
        mint: [],
        'collateral-mint': dev.collateralMint,
        amount: 'max',
      },
      () => undefined,
    );
  }
  const bal = async (owner: PublicKey, mint: string) =>
    BigInt((await conn.getTokenAccountBalance(getAssociatedTokenAddressSync(new PublicKey(mint), owner, true))).value.amount);
  const escrow0 = await bal(new PublicKey(config.delegate), dev.collateralMint);
  t.is(escrow0, 40n * U, 'the pairs given out are backed in the escrow');

  // A crossing pair through the API: Bob rests a SELL of 10 YES at 0.60, Alice buys them.
  const [A, B] = [await bearer(node.url, alice), await bearer(node.url, bob)];
  const ask = await call(node.url, 'POST', '/v1/order', {
    token: B,
    body: { order: order(bob, market.yes_token_id, 'SELL', '0.60', '10'), orderType: 'GTC' },
  });
  t.is(ask.status, 200, JSON.stringify(ask.body));
  const bid = await call(node.url, 'POST', '/v1/order', {
    token: A,
    body: { order: order(alice, market.yes_token_id, 'BUY', '0.60', '10'), orderType: 'GTC' },
  });
  t.is(bid.status, 200, JSON.stringify(bid.body));
  t.deepEqual(bid.body.warnings, [], 'the allowances are in place');
  let trade: any = null;
  for (let i = 0; i < 200 && trade?.status !== 'CONFIRMED'; i++) {
    trade = (await call(node.url, 'GET', `/v1/trades?market=${market.condition_id}`, { token: A })).body?.[0] ?? null;
    if (trade?.status !== 'CONFIRMED') await new Promise((r) => setTimeout(r, 100));
  }
  t.is(trade?.status, 'CONFIRMED', `the trade settled on the local chain: ${JSON.stringify(trade)}`);
  t.is(trade.match_type, 'COMPLEMENTARY');
  t.is(await bal(alice.publicKey, dev.collateralMint), 94n * U);
  t.is(await bal(alice.publicKey, market.yes_token_id), 30n * U);
  t.is(await bal(bob.publicKey, dev.collateralMint), 106n * U);
  t.is(await bal(bob.publicKey, market.yes_token_id), 10n * U);
  t.is(await bal(new PublicKey(config.delegate), dev.collateralMint), escrow0, 'a COMPLEMENTARY trade leaves the escrow as it was');
});

test('production refuses to start without its secrets and names them', async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { PATH: process.env.PATH, APP_ENV: 'production', PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d) => {
    err += d;
  });
  const code = await new Promise((r) => child.on('exit', r));
  t.is(code, 2);
  for (const name of ['PLATFORM_JWT_SECRET', 'CLOB_JWT_SECRET', 'CLOB_INTERNAL_TOKEN', 'SOLANA_RPC_URL']) t.regex(err, new RegExp(name));
  t.notRegex(err, /DATABASE_URL/, 'unset DATABASE_URL has a default: PGlite under ./data/production');
});

test('production settings: DATABASE_URL may be unset (PGlite under ./data/production); each missing required setting is named', (t) => {
  const secrets = {
    APP_ENV: 'production',
    PLATFORM_JWT_SECRET: 'p',
    CLOB_JWT_SECRET: 'c',
    CLOB_INTERNAL_TOKEN: 'i',
    SOLANA_RPC_URL: 'http://rpc.example',
  };
  const cfg = loadConfig(secrets);
  t.is(cfg.databaseUrl, undefined);
  t.is(cfg.dataDir, './data/production');
  t.false(cfg.localChain);
  for (const name of ['PLATFORM_JWT_SECRET', 'CLOB_JWT_SECRET', 'CLOB_INTERNAL_TOKEN', 'SOLANA_RPC_URL']) {
    const e = t.throws(() => loadConfig({ ...secrets, [name]: '' }), { instanceOf: ConfigError });
    t.regex(e!.message, new RegExp(`: ${name}$`), e!.message);
  }
  const both = t.throws(() => loadConfig({ APP_ENV: 'production', PLATFORM_JWT_SECRET: 'p', CLOB_INTERNAL_TOKEN: 'i' }), {
    instanceOf: ConfigError,
  });
  t.regex(both!.message, /CLOB_JWT_SECRET, SOLANA_RPC_URL$/);
});
