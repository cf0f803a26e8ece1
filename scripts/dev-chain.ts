// Development CLI for the local chain: start it, then place and settle parlays by hand over
// JSON-RPC with @solana/web3.js.
//
//   tsx scripts/dev-chain.ts serve --port 8899                 # chain + bootstrap; writes .cache/dev-chain.json
//   tsx scripts/dev-chain.ts new-wallet --out .cache/alice.json
//   tsx scripts/dev-chain.ts fund --wallet .cache/alice.json --amount 100
//   tsx scripts/dev-chain.ts create-parlay --user .cache/alice.json --id 1 --stake 10 --leg 101:yes:0.5 --leg 102:no:0.4
//   tsx scripts/dev-chain.ts settle-leg --id 1 --leg 0 --status won
//   tsx scripts/dev-chain.ts claim --user .cache/alice.json --id 1
//   tsx scripts/dev-chain.ts void --id 1
//   tsx scripts/dev-chain.ts show --id 1 | vault
//
// Order book (development only: needs the chain `npm start` runs, whose state file holds the dev
// settlement delegate and the node's Platform JWT secret):
//   tsx scripts/dev-chain.ts create-market --question "Will it rain?" [--fee-bps 0] [--platform-secret S]
//   tsx scripts/dev-chain.ts give-tokens --wallet .cache/alice.json --market 0x… --amount 50   # YES and NO, backed in escrow
//   tsx scripts/dev-chain.ts approve --wallet .cache/alice.json --market 0x… [--amount max]     # allowance to the delegate
//
// Every command but serve takes --rpc URL (default: the one in the state file, else http://127.0.0.1:8899)
// and --state FILE (default .cache/dev-chain.json), which holds the authority and mint-authority keys;
// the order-book ones also --service URL (default: the node in the state file).
import {
  Connection,
  Keypair,
  PublicKey,
  SendTransactionError,
  Transaction,
  sendAndConfirmTransaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { createDevMarket, fundWallet, giveTokens as giveDevTokens } from '../src/dev/order-book.ts';
import type { DevState } from '../src/dev/local-chain.ts';
import { parseAllowanceArgs, runAllowance } from '../src/cli/allowance.ts';
import {
  claimParlayInstruction,
  createParlayInstruction,
  decodeParlayAccount,
  findConfigPda,
  findParlayPda,
  findVaultPda,
  marketAddressFor,
  settleLegInstruction,
  voidParlayInstruction,
} from '../src/chain/program.ts';

const DEFAULT_STATE = '.cache/dev-chain.json';

type State = DevState;

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rpc: { type: 'string' },
    state: { type: 'string', default: DEFAULT_STATE },
    port: { type: 'string', default: '8899' },
    'slot-ms': { type: 'string' },
    webhook: { type: 'string' },
    'webhook-auth': { type: 'string', default: '' },
    out: { type: 'string' },
    wallet: { type: 'string' },
    user: { type: 'string' },
    id: { type: 'string' },
    stake: { type: 'string' },
    leg: { type: 'string', multiple: true },
    status: { type: 'string' },
    amount: { type: 'string' },
    sol: { type: 'string', default: '2' },
    help: { type: 'boolean', short: 'h' },
    service: { type: 'string' },
    market: { type: 'string' },
    question: { type: 'string' },
    'fee-bps': { type: 'string', default: '0' },
    'platform-secret': { type: 'string' },
  },
});

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

/** "10.5" units → micro-units. */
function units(text: string): bigint {
  const m = /^(\d+)(?:\.(\d{0,6}))?$/.exec(text);
  if (!m) fail(`not an amount: ${text}`);
  return BigInt(m[1]) * 1_000_000n + BigInt((m[2] ?? '').padEnd(6, '0'));
}

const readKey = (path: string) => Keypair.fromSecretKey(Uint8Array.from(JSON.parse(readFileSync(path, 'utf8'))));
function writeJson(path: string, value: unknown) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(value, null, 2));
}

function loadState(): State {
  if (!existsSync(opts.state!)) fail(`no state file ${opts.state}; start the chain with: tsx scripts/dev-chain.ts serve`);
  return JSON.parse(readFileSync(opts.state!, 'utf8'));
}

function connection(): Connection {
  const rpc = opts.rpc ?? (existsSync(opts.state!) ? loadState().rpc : 'http://127.0.0.1:8899');
  return new Connection(rpc, 'confirmed');
}

async function send(conn: Connection, ixs: TransactionInstruction[], signers: Keypair[]): Promise<string> {
  try {
    const sig = await sendAndConfirmTransaction(conn, new Transaction().add(...ixs), signers);
    const tx = await conn.getTransaction(sig, { maxSupportedTransactionVersion: 0 });
    for (const line of tx?.meta?.logMessages ?? []) console.log(`  ${line}`);
    console.log(`signature ${sig}`);
    return sig;
  } catch (e) {
    if (e instanceof SendTransactionError) {
      console.error(e.message);
      process.exit(1);
    }
    throw e;
  }
}

const need = (v: string | undefined, flag: string) => v ?? fail(`missing --${flag}`);

async function serve() {
  const { startLocalChain } = await import('../src/chain/local/index.ts');
  const chain = await startLocalChain({
    port: Number(opts.port),
    slotMs: opts['slot-ms'] ? Number(opts['slot-ms']) : undefined,
    webhooks: opts.webhook ? [{ url: opts.webhook, authorization: opts['webhook-auth']! }] : [],
  });
  const boot = await chain.bootstrap();
  const state: State = {
    rpc: chain.url,
    authority: [...boot.authority.secretKey],
    mintAuthority: [...boot.mintAuthority.secretKey],
    collateralMint: boot.collateralMint.toBase58(),
  };
  writeJson(opts.state!, state);
  console.log(`local chain at ${chain.url} (ws ${chain.wsUrl})`);
  console.log(`program ${chain.chain.programId.toBase58()}, authority ${boot.authority.publicKey.toBase58()}`);
  console.log(`collateral mint ${boot.collateralMint.toBase58()}, vault ${boot.vault.toBase58()} (${chain.vaultBalance()} micro-units)`);
  console.log(`state written to ${opts.state}; Ctrl-C to stop`);
  const stop = async () => {
    await chain.close();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

const walletKey = () => {
  const w = need(opts.wallet, 'wallet');
  return existsSync(w) ? readKey(w).publicKey : new PublicKey(w);
};

async function fund() {
  const conn = connection();
  const owner = walletKey();
  const ata = await fundWallet(conn, loadState(), owner, Number(opts.sol), units(opts.amount ?? '100'));
  console.log(`${owner.toBase58()}: ${(await conn.getTokenAccountBalance(ata)).value.uiAmountString} collateral in ${ata.toBase58()}`);
}

/* Order book (development only): the chain of `npm start`, whose state file holds the delegate. */

function service(state: State): string {
  return opts.service ?? state.service ?? fail('no --service and no service URL in the state file');
}

async function getMarket(state: State) {
  const id = need(opts.market, 'market');
  const r = await fetch(`${service(state)}/v1/markets/${id}`);
  if (!r.ok) fail(`market ${id}: ${r.status} ${await r.text()}`);
  return r.json() as Promise<{ yes_token_id: string; no_token_id: string }>;
}

async function createMarket() {
  const state = loadState();
  const market = await createDevMarket(connection(), state, service(state), {
    question: opts.question,
    takerFeeBps: Number(opts['fee-bps']),
    platformJwtSecret: opts['platform-secret'] ?? process.env.PLATFORM_JWT_SECRET,
  });
  console.log(JSON.stringify(market, null, 2));
  console.log(`market ${market.condition_id}: YES ${market.yes_token_id}, NO ${market.no_token_id} (mint authority: the dev delegate)`);
}

async function giveTokens() {
  const state = loadState();
  const conn = connection();
  const owner = walletKey();
  const market = await getMarket(state);
  await giveDevTokens(conn, state, owner, market, units(opts.amount ?? '100'));
  for (const [name, mint] of [
    ['YES', market.yes_token_id],
    ['NO', market.no_token_id],
  ]) {
    const b = await conn.getTokenAccountBalance(getAssociatedTokenAddressSync(new PublicKey(mint), owner, true));
    console.log(`${owner.toBase58()}: ${b.value.uiAmountString} ${name}`);
  }
}

/** The allowance tool (src/cli/allowance.ts) with the dev defaults: set on collateral, YES and NO. */
async function approveAll() {
  const state = loadState();
  const rpc = opts.rpc ?? state.rpc;
  await runAllowance(
    parseAllowanceArgs([
      'set',
      '--keypair',
      need(opts.wallet, 'wallet'),
      '--rpc',
      rpc,
      '--service',
      service(state),
      '--market',
      need(opts.market, 'market'),
      '--collateral-mint',
      state.collateralMint, // not only /v1/config's: it shows the mirrored mint a moment after the start
      '--amount',
      opts.amount ?? 'max',
    ]),
  );
}

function parseLeg(text: string) {
  const [id, side, p] = text.split(':');
  const probability = Math.round(Number(p) * 1_000_000);
  if (!id || !/^(yes|no)$/i.test(side ?? '') || !(probability > 0))
    fail(`bad --leg ${text}; expected MARKET_ID:yes|no:PROBABILITY, e.g. 101:yes:0.5`);
  return { marketId: BigInt(id), market: marketAddressFor(BigInt(id)), outcome: /^yes$/i.test(side) ? 0 : 1, probability };
}

async function createParlay() {
  const state = loadState();
  const user = readKey(need(opts.user, 'user'));
  const userToken = getAssociatedTokenAddressSync(new PublicKey(state.collateralMint), user.publicKey, true);
  const legs = (opts.leg ?? []).map(parseLeg);
  await send(
    connection(),
    [
      createParlayInstruction({
        user: user.publicKey,
        userToken,
        parlayId: BigInt(need(opts.id, 'id')),
        stake: units(need(opts.stake, 'stake')),
        legs,
      }),
    ],
    [user],
  );
}

async function settleLeg() {
  const state = loadState();
  const conn = connection();
  const authority = Keypair.fromSecretKey(Uint8Array.from(state.authority));
  const parlayId = BigInt(need(opts.id, 'id'));
  const legIndex = Number(opts.leg?.[0] ?? fail('missing --leg INDEX'));
  const legStatus = { won: 1, lost: 2, voided: 3 }[need(opts.status, 'status') as 'won'] ?? fail('--status is won, lost or voided');
  const acc = await conn.getAccountInfo(findParlayPda(parlayId));
  const market = acc ? (decodeParlayAccount(acc.data).legs[legIndex]?.market ?? PublicKey.default) : PublicKey.default;
  await send(conn, [settleLegInstruction({ resolver: authority.publicKey, parlayId, market, legIndex, legStatus })], [authority]);
}

async function claim() {
  const state = loadState();
  const user = readKey(need(opts.user, 'user'));
  const userToken = getAssociatedTokenAddressSync(new PublicKey(state.collateralMint), user.publicKey, true);
  await send(connection(), [claimParlayInstruction({ user: user.publicKey, userToken, parlayId: BigInt(need(opts.id, 'id')) })], [user]);
}

async function voidParlay() {
  const state = loadState();
  const conn = connection();
  const authority = Keypair.fromSecretKey(Uint8Array.from(state.authority));
  const parlayId = BigInt(need(opts.id, 'id'));
  const acc = await conn.getAccountInfo(findParlayPda(parlayId));
  if (!acc) fail(`parlay ${parlayId} does not exist`);
  const userToken = getAssociatedTokenAddressSync(new PublicKey(state.collateralMint), decodeParlayAccount(acc.data).user, true);
  await send(conn, [voidParlayInstruction({ authority: authority.publicKey, userToken, parlayId })], [authority]);
}

async function show() {
  const acc = await connection().getAccountInfo(findParlayPda(BigInt(need(opts.id, 'id'))));
  if (!acc) fail('no such parlay');
  const p = decodeParlayAccount(acc.data);
  const status = ['active', 'won', 'lost', 'claimed', 'voided', 'refunded'][p.status];
  console.log(
    JSON.stringify(
      { ...p, user: p.user.toBase58(), status, legs: p.legs.map((l) => ({ ...l, market: l.market.toBase58() })) },
      (_, v) => (typeof v === 'bigint' ? v.toString() : v),
      2,
    ),
  );
}

async function vault() {
  const conn = connection();
  const { decodeConfig } = await import('../src/chain/local/parlay/state.ts');
  const cfg = await conn.getAccountInfo(findConfigPda());
  const balance = await conn.getTokenAccountBalance(findVaultPda());
  const c = cfg ? decodeConfig(cfg.data) : null;
  console.log(
    JSON.stringify(
      {
        vault: findVaultPda().toBase58(),
        balance: balance.value.amount,
        config: c && { ...c, authority: c.authority.toBase58(), collateralMint: c.collateralMint.toBase58(), vault: c.vault.toBase58() },
      },
      (_, v) => (typeof v === 'bigint' ? v.toString() : v),
      2,
    ),
  );
}

function newWallet() {
  const kp = Keypair.generate();
  const out = opts.out ?? `.cache/wallet-${kp.publicKey.toBase58().slice(0, 8)}.json`;
  writeJson(out, [...kp.secretKey]);
  console.log(`${kp.publicKey.toBase58()} written to ${out}`);
}

const commands: Record<string, () => unknown> = {
  serve,
  fund,
  'new-wallet': newWallet,
  'create-parlay': createParlay,
  'settle-leg': settleLeg,
  claim,
  void: voidParlay,
  show,
  vault,
  'create-market': createMarket,
  'give-tokens': giveTokens,
  approve: approveAll,
};
const command = positionals[0];
if (!command || opts.help || !commands[command]) {
  console.log(
    readFileSync(new URL(import.meta.url), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('//'))
      .map((l) => l.slice(3))
      .join('\n'),
  );
  process.exit(command && !opts.help ? 1 : 0);
}
await commands[command]();
