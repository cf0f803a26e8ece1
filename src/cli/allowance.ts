// The allowance tool (SPEC 5, issue 5): sets, shows and revokes a wallet's standing allowance to
// the settlement delegate on its collateral and outcome token accounts. Cancelling an order never
// touches the allowance; this is how it is changed.
//
//   npx tsx src/cli/allowance.ts set    --keypair wallet.json --rpc URL --service URL --market 0x… --amount 500
//   npx tsx src/cli/allowance.ts show   --keypair wallet.json --rpc URL --delegate <pubkey> --mint <mint> --mint <mint>
//   npx tsx src/cli/allowance.ts revoke --keypair wallet.json --rpc URL --service URL --market 0x…
//
// Mints: every --mint, plus --collateral-mint, plus (with --service, the node's base URL) the
// book's collateral mint from GET /v1/config and each --market's YES and NO from
// GET /v1/markets/{id}. The delegate: --delegate, else the node's (GET /v1/config).
// --amount is in token units (decimal, 6 places) or `max`. Prints one JSON line per account.
import { decimalToMicro } from '../../topics/units.ts';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Connection, PublicKey, Transaction, sendAndConfirmTransaction, type Keypair } from '@solana/web3.js';
import {
  createApproveInstruction,
  createAssociatedTokenAccountIdempotentInstruction,
  createRevokeInstruction,
  getAssociatedTokenAddressSync,
  unpackAccount,
} from '@solana/spl-token';
import { z } from 'zod';
import { parseKeypair } from '../chain/gateway.ts';

const USAGE = `usage: allowance <set|show|revoke> --keypair <file> --rpc <url> [--delegate <pubkey>] [--service <url>]
       [--market <condition id>]... [--mint <mint>]... [--collateral-mint <mint>] [--amount <units>|max]`;

const base58 = z.string().refine((s) => {
  try {
    new PublicKey(s);
    return true;
  } catch {
    return false;
  }
}, 'not a base58 public key');
const args = z
  .object({
    command: z.enum(['set', 'show', 'revoke']),
    keypair: z.string().min(1, '--keypair <file> is required'),
    rpc: z.string().url('--rpc must be a URL'),
    delegate: base58.optional(),
    service: z.string().url('--service must be a URL').optional(),
    market: z.array(z.string().regex(/^0x[0-9a-fA-F]{64}$/, '--market is a condition id: 0x + 64 hex digits')).default([]),
    mint: z.array(base58).default([]),
    'collateral-mint': base58.optional(),
    amount: z
      .string()
      .regex(/^(max|\d{1,13}(\.\d{1,6})?)$/, '--amount is token units with at most 6 decimals, or max')
      .optional(),
  })
  .refine((a) => a.command !== 'set' || a.amount !== undefined, { message: 'set needs --amount', path: ['amount'] })
  .refine((a) => a.market.length === 0 || a.service, { message: '--market needs --service (to look the market up)', path: ['market'] });

export type AllowanceArgs = z.infer<typeof args>;

const U64_MAX = (1n << 64n) - 1n;
const micro = (s: string) => {
  if (s === 'max') return U64_MAX;
  const n = decimalToMicro(s);
  if (n === null) throw new Error(`--amount must be a decimal of units (at most 6 places) or max: ${s}`);
  return n;
};

async function getJson(url: string): Promise<any> {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`GET ${url} answered ${r.status}: ${await r.text()}`);
  return r.json();
}

export async function runAllowance(a: AllowanceArgs, out: (line: string) => void = (l) => console.log(l)): Promise<void> {
  let owner: Keypair;
  try {
    owner = parseKeypair(readFileSync(a.keypair, 'utf8'));
  } catch (e) {
    throw new Error(`cannot read the keypair file ${a.keypair}: ${(e as Error).message}`, { cause: e });
  }
  const cfg = a.service ? await getJson(`${a.service.replace(/\/$/, '')}/v1/config`) : null;
  const delegate = a.delegate ?? cfg?.delegate;
  if (a.command === 'set' && !delegate) throw new Error('no delegate: pass --delegate or --service (whose /v1/config names it)');
  const mints = new Set<string>(a.mint);
  if (a['collateral-mint']) mints.add(a['collateral-mint']);
  else if (cfg?.collateral_mint) mints.add(cfg.collateral_mint);
  for (const m of a.market) {
    const market = await getJson(`${a.service!.replace(/\/$/, '')}/v1/markets/${m}`);
    mints.add(market.yes_token_id);
    mints.add(market.no_token_id);
  }
  if (!mints.size) throw new Error('no token account to act on: pass --mint, --collateral-mint, or --service (and --market)');
  const conn = new Connection(a.rpc, 'confirmed');
  const accounts = [...mints].map((m) => ({
    mint: new PublicKey(m),
    account: getAssociatedTokenAddressSync(new PublicKey(m), owner.publicKey, true),
  }));
  if (a.command !== 'show') {
    const infos = await conn.getMultipleAccountsInfo(accounts.map((x) => x.account));
    const tx = new Transaction();
    accounts.forEach((x, i) => {
      if (a.command === 'set') {
        if (!infos[i]) tx.add(createAssociatedTokenAccountIdempotentInstruction(owner.publicKey, x.account, owner.publicKey, x.mint));
        tx.add(createApproveInstruction(x.account, new PublicKey(delegate!), owner.publicKey, micro(a.amount!)));
      } else if (infos[i]) {
        tx.add(createRevokeInstruction(x.account, owner.publicKey));
      }
    });
    if (tx.instructions.length) await sendAndConfirmTransaction(conn, tx, [owner], { commitment: 'confirmed' });
  }
  const infos = await conn.getMultipleAccountsInfo(accounts.map((x) => x.account));
  accounts.forEach((x, i) => {
    const info = infos[i];
    const acc = info ? unpackAccount(x.account, info) : null;
    const current = acc?.delegate?.toBase58() ?? null;
    out(
      JSON.stringify({
        wallet: owner.publicKey.toBase58(),
        mint: x.mint.toBase58(),
        account: x.account.toBase58(),
        exists: !!acc,
        balance: (acc?.amount ?? 0n).toString(),
        delegate: current,
        delegated_amount: (acc?.delegatedAmount ?? 0n).toString(),
        ...(delegate ? { is_settlement_delegate: current === delegate } : {}),
      }),
    );
  });
}

export function parseAllowanceArgs(argv: string[]): AllowanceArgs {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      keypair: { type: 'string' },
      rpc: { type: 'string' },
      delegate: { type: 'string' },
      service: { type: 'string' },
      market: { type: 'string', multiple: true },
      mint: { type: 'string', multiple: true },
      'collateral-mint': { type: 'string' },
      amount: { type: 'string' },
    },
  });
  const r = args.safeParse({ command: positionals[0], ...values });
  if (!r.success) throw new Error(`${r.error.issues.map((i) => `${i.path.join('.') || 'command'}: ${i.message}`).join('; ')}\n${USAGE}`);
  return r.data;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  try {
    await runAllowance(parseAllowanceArgs(process.argv.slice(2)));
  } catch (e) {
    console.error(`allowance: ${(e as Error).message}`);
    process.exit(1);
  }
}
