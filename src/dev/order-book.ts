// Development only (never loaded by the service): the order-book side of scripts/dev-chain.ts on the
// local chain that `npm start` runs, with the keys it wrote to .cache/dev-chain.json (DevState):
// funded wallets, a market whose YES/NO mints the dev settlement delegate may mint, outcome tokens
// backed by collateral in the delegate's escrow, and a superuser Platform JWT for the admin API.
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  Transaction,
  sendAndConfirmTransaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import {
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  getAssociatedTokenAddressSync,
  getMinimumBalanceForRentExemptMint,
} from '@solana/spl-token';
import { randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { DevState } from './local-chain.ts';

const key = (secret: number[]) => Keypair.fromSecretKey(Uint8Array.from(secret));

export function devDelegate(state: DevState): Keypair {
  if (!state.delegate)
    throw new Error(
      'the dev state file has no delegate: start the service with `npm start` (development, no SOLANA_RPC_URL, no CLOB_DELEGATE)',
    );
  return key(state.delegate);
}

/** A superuser Platform JWT signed with the given secret, else the dev node's (from the state file). */
export function superuserToken(state: DevState, secret = state.platformJwtSecret): string {
  if (!secret)
    throw new Error('no Platform JWT secret: pass one, or start the service with `npm start` so that it writes its own to the state file');
  return jwt.sign({ sub: 'dev-chain', is_superuser: true }, secret, { algorithm: 'HS256', expiresIn: 3600 });
}

async function send(conn: Connection, ixs: TransactionInstruction[], signers: Keypair[]): Promise<string> {
  return sendAndConfirmTransaction(conn, new Transaction().add(...ixs), signers, { commitment: 'confirmed' });
}

/** Airdrops `sol` SOL to `owner` and mints it `amount` micro-units of collateral. */
export async function fundWallet(conn: Connection, state: DevState, owner: PublicKey, sol: number, amount: bigint): Promise<PublicKey> {
  const mintAuthority = key(state.mintAuthority);
  const mint = new PublicKey(state.collateralMint);
  if (sol > 0) {
    const sig = await conn.requestAirdrop(owner, sol * LAMPORTS_PER_SOL);
    await conn.confirmTransaction({ signature: sig, ...(await conn.getLatestBlockhash()) });
  }
  const ata = getAssociatedTokenAddressSync(mint, owner, true);
  const ixs = [createAssociatedTokenAccountIdempotentInstruction(mintAuthority.publicKey, ata, owner, mint)];
  if (amount > 0n) ixs.push(createMintToInstruction(mint, ata, mintAuthority.publicKey, amount));
  await send(conn, ixs, [mintAuthority]);
  return ata;
}

export interface DevMarketOptions {
  question?: string;
  takerFeeBps?: number;
  tickSize?: string;
  minSize?: string;
  conditionId?: string;
  /** Platform JWT secret (default: the dev node's, from the state file) */
  platformJwtSecret?: string;
}

/**
 * Creates the YES and NO mints (6 decimals, mint authority: the dev delegate, which mints and burns
 * pairs at settlement) and registers the market through the admin API. Returns the market as the
 * API answers it.
 */
export async function createDevMarket(conn: Connection, state: DevState, service: string, o: DevMarketOptions = {}): Promise<any> {
  const delegate = devDelegate(state);
  const yes = Keypair.generate();
  const no = Keypair.generate();
  const rent = await getMinimumBalanceForRentExemptMint(conn);
  await send(
    conn,
    [yes, no].flatMap((m) => [
      SystemProgram.createAccount({
        fromPubkey: delegate.publicKey,
        newAccountPubkey: m.publicKey,
        lamports: rent,
        space: MINT_SIZE,
        programId: TOKEN_PROGRAM_ID,
      }),
      createInitializeMint2Instruction(m.publicKey, 6, delegate.publicKey, null),
    ]),
    [delegate, yes, no],
  );
  const body = {
    condition_id: o.conditionId ?? `0x${randomBytes(32).toString('hex')}`,
    question: o.question ?? 'Will it rain tomorrow?',
    yes_token_id: yes.publicKey.toBase58(),
    no_token_id: no.publicKey.toBase58(),
    tick_size: o.tickSize ?? '0.01',
    min_size: o.minSize ?? '1',
    taker_fee_bps: o.takerFeeBps ?? 0,
  };
  const r = await fetch(`${service.replace(/\/$/, '')}/api/markets/admin/markets/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${superuserToken(state, o.platformJwtSecret)}` },
    body: JSON.stringify(body),
  });
  const text = await r.text();
  if (r.status !== 201) throw new Error(`creating the market answered ${r.status}: ${text}`);
  return JSON.parse(text).data;
}

/**
 * Mints `amount` micro-units of YES and of NO of a market to `owner` (signed by the dev delegate,
 * their mint authority), and puts the same amount of collateral in the delegate's escrow (its
 * collateral account): settlement expects every YES+NO pair in circulation to be backed there.
 */
export async function giveTokens(
  conn: Connection,
  state: DevState,
  owner: PublicKey,
  market: { yes_token_id: string; no_token_id: string },
  amount: bigint,
): Promise<void> {
  const delegate = devDelegate(state);
  const mintAuthority = key(state.mintAuthority);
  const collateral = new PublicKey(state.collateralMint);
  const escrow = getAssociatedTokenAddressSync(collateral, delegate.publicKey, true);
  const ixs: TransactionInstruction[] = [];
  for (const id of [market.yes_token_id, market.no_token_id]) {
    const mint = new PublicKey(id);
    const ata = getAssociatedTokenAddressSync(mint, owner, true);
    ixs.push(
      createAssociatedTokenAccountIdempotentInstruction(delegate.publicKey, ata, owner, mint),
      createMintToInstruction(mint, ata, delegate.publicKey, amount),
    );
  }
  ixs.push(
    createAssociatedTokenAccountIdempotentInstruction(delegate.publicKey, escrow, delegate.publicKey, collateral),
    createMintToInstruction(collateral, escrow, mintAuthority.publicKey, amount),
  );
  await send(conn, ixs, [delegate, mintAuthority]);
}
