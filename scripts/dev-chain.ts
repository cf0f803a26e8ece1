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
// Every command but serve takes --rpc URL (default: the one in the state file, else http://127.0.0.1:8899)
// and --state FILE (default .cache/dev-chain.json), which holds the authority and mint-authority keys.
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SendTransactionError, Transaction, sendAndConfirmTransaction, type TransactionInstruction } from '@solana/web3.js';
import { createAssociatedTokenAccountIdempotentInstruction, createMintToInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import {
  claimParlayInstruction, createParlayInstruction, decodeParlayAccount, findConfigPda, findParlayPda, findVaultPda,
  marketAddressFor, settleLegInstruction, voidParlayInstruction,
} from '../src/chain/program.ts';

const DEFAULT_STATE = '.cache/dev-chain.json';

interface State { rpc: string; authority: number[]; mintAuthority: number[]; collateralMint: string }

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rpc: { type: 'string' }, state: { type: 'string', default: DEFAULT_STATE }, port: { type: 'string', default: '8899' },
    'slot-ms': { type: 'string' }, webhook: { type: 'string' }, 'webhook-auth': { type: 'string', default: '' },
    out: { type: 'string' }, wallet: { type: 'string' }, user: { type: 'string' }, id: { type: 'string' }, stake: { type: 'string' },
    leg: { type: 'string', multiple: true }, status: { type: 'string' }, amount: { type: 'string', default: '100' },
    sol: { type: 'string', default: '2' }, help: { type: 'boolean', short: 'h' },
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
    port: Number(opts.port), slotMs: opts['slot-ms'] ? Number(opts['slot-ms']) : undefined,
    webhooks: opts.webhook ? [{ url: opts.webhook, authorization: opts['webhook-auth']! }] : [],
  });
  const boot = await chain.bootstrap();
  const state: State = {
    rpc: chain.url, authority: [...boot.authority.secretKey], mintAuthority: [...boot.mintAuthority.secretKey],
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

async function fund() {
  const state = loadState();
  const conn = connection();
  const owner = opts.wallet ? (existsSync(opts.wallet) ? readKey(opts.wallet).publicKey : new PublicKey(opts.wallet)) : fail('missing --wallet');
  const mintAuthority = Keypair.fromSecretKey(Uint8Array.from(state.mintAuthority));
  const mint = new PublicKey(state.collateralMint);
  const sol = Number(opts.sol);
  if (sol > 0) {
    const sig = await conn.requestAirdrop(owner, sol * LAMPORTS_PER_SOL);
    await conn.confirmTransaction({ signature: sig, ...(await conn.getLatestBlockhash()) });
  }
  const ata = getAssociatedTokenAddressSync(mint, owner, true);
  await send(conn, [
    createAssociatedTokenAccountIdempotentInstruction(mintAuthority.publicKey, ata, owner, mint),
    createMintToInstruction(mint, ata, mintAuthority.publicKey, units(opts.amount!)),
  ], [mintAuthority]);
  console.log(`${owner.toBase58()}: ${(await conn.getTokenAccountBalance(ata)).value.uiAmountString} collateral in ${ata.toBase58()}`);
}

function parseLeg(text: string) {
  const [id, side, p] = text.split(':');
  const probability = Math.round(Number(p) * 1_000_000);
  if (!id || !/^(yes|no)$/i.test(side ?? '') || !(probability > 0)) fail(`bad --leg ${text}; expected MARKET_ID:yes|no:PROBABILITY, e.g. 101:yes:0.5`);
  return { marketId: BigInt(id), market: marketAddressFor(BigInt(id)), outcome: /^yes$/i.test(side) ? 0 : 1, probability };
}

async function createParlay() {
  const state = loadState();
  const user = readKey(need(opts.user, 'user'));
  const userToken = getAssociatedTokenAddressSync(new PublicKey(state.collateralMint), user.publicKey, true);
  const legs = (opts.leg ?? []).map(parseLeg);
  await send(connection(), [createParlayInstruction({ user: user.publicKey, userToken, parlayId: BigInt(need(opts.id, 'id')), stake: units(need(opts.stake, 'stake')), legs })], [user]);
}

async function settleLeg() {
  const state = loadState();
  const conn = connection();
  const authority = Keypair.fromSecretKey(Uint8Array.from(state.authority));
  const parlayId = BigInt(need(opts.id, 'id'));
  const legIndex = Number(opts.leg?.[0] ?? fail('missing --leg INDEX'));
  const legStatus = { won: 1, lost: 2, voided: 3 }[need(opts.status, 'status') as 'won'] ?? fail('--status is won, lost or voided');
  const acc = await conn.getAccountInfo(findParlayPda(parlayId));
  const market = acc ? decodeParlayAccount(acc.data).legs[legIndex]?.market ?? PublicKey.default : PublicKey.default;
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
  console.log(JSON.stringify({ ...p, user: p.user.toBase58(), status, legs: p.legs.map((l) => ({ ...l, market: l.market.toBase58() })) },
    (_, v) => (typeof v === 'bigint' ? v.toString() : v), 2));
}

async function vault() {
  const conn = connection();
  const { decodeConfig } = await import('../src/chain/local/parlay/state.ts');
  const cfg = await conn.getAccountInfo(findConfigPda());
  const balance = await conn.getTokenAccountBalance(findVaultPda());
  const c = cfg ? decodeConfig(cfg.data) : null;
  console.log(JSON.stringify({ vault: findVaultPda().toBase58(), balance: balance.value.amount, config: c && { ...c, authority: c.authority.toBase58(), collateralMint: c.collateralMint.toBase58(), vault: c.vault.toBase58() } },
    (_, v) => (typeof v === 'bigint' ? v.toString() : v), 2));
}

function newWallet() {
  const kp = Keypair.generate();
  const out = opts.out ?? `.cache/wallet-${kp.publicKey.toBase58().slice(0, 8)}.json`;
  writeJson(out, [...kp.secretKey]);
  console.log(`${kp.publicKey.toBase58()} written to ${out}`);
}

const commands: Record<string, () => unknown> = {
  serve, fund, 'new-wallet': newWallet, 'create-parlay': createParlay, 'settle-leg': settleLeg, claim, void: voidParlay, show, vault,
};
const command = positionals[0];
if (!command || opts.help || !commands[command]) {
  console.log(readFileSync(new URL(import.meta.url), 'utf8').split('\n').filter((l) => l.startsWith('//')).map((l) => l.slice(3)).join('\n'));
  process.exit(command && !opts.help ? 1 : 0);
}
await commands[command]();
