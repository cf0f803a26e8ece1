// The service's access to the chain, through @solana/web3.js at SOLANA_RPC_URL.
import { ComputeBudgetProgram, Connection, Keypair, PublicKey, Transaction, type AccountInfo } from '@solana/web3.js';
import { getAssociatedTokenAddressSync, unpackAccount } from '@solana/spl-token';
import type { RawTransaction } from '../parlay/webhook-schema.ts';
import { nodeFetch } from './http-fetch.ts';
import { AccountSubscriptions, websocketUrlOf, type NotifiedAccount } from './account-subscriptions.ts';

export interface TokenHolding {
  /** the wallet's associated token account */
  account: string;
  amount: bigint;
  /** the standing allowance: who may move how much out of the account */
  delegate: string | null;
  delegatedAmount: bigint;
  slot: number;
}

export interface ChainGateway {
  vaultBalance(address: string): Promise<{ amount: string; slot: number }>;
  /** The wallet's holding of a mint (its associated token account); zero when it has none. */
  holding(owner: string, mint: string): Promise<TokenHolding>;
  /**
   * Subscribes to changes of that holding (`accountSubscribe` on the RPC's WebSocket; the client
   * subscribes again after a reconnect). Returns what stops it. Absent: no subscriptions.
   */
  watchHolding?(owner: string, mint: string, onChange: (h: TokenHolding) => void): () => Promise<void>;
  voidParlay(a: { parlayId: string; user: string; collateralMint: string }): Promise<{ signature: string; transaction: RawTransaction }>;
  ping(): Promise<void>;
}

export class ChainError extends Error {
  constructor(
    message: string,
    readonly custom?: number,
    readonly logs: string[] = [],
  ) {
    super(message);
  }
}

/** The gateway has no key to sign with (PARLAY_AUTHORITY_KEYPAIR unset in production): a configuration error, not an RPC one. */
export class MissingAuthority extends Error {
  constructor(message = 'PARLAY_AUTHORITY_KEYPAIR is not configured: voiding a parlay needs the key of the program authority') {
    super(message);
  }
}

export function parseKeypair(text: string): Keypair {
  const arr = JSON.parse(text);
  return Keypair.fromSecretKey(Uint8Array.from(arr));
}

export class Web3Gateway implements ChainGateway {
  readonly connection: Connection;
  /** Account-change subscriptions on the RPC's WebSocket (not the Connection's: see account-subscriptions.ts). */
  private readonly subscriptions: AccountSubscriptions;

  constructor(
    rpcUrl: string,
    private authority: Keypair | null,
    log?: { warn(o: object, m: string): void },
  ) {
    this.connection = new Connection(rpcUrl, { commitment: 'confirmed', disableRetryOnRateLimit: true, fetch: nodeFetch as any });
    this.subscriptions = new AccountSubscriptions(websocketUrlOf(rpcUrl), { commitment: 'confirmed', log });
  }

  async ping(): Promise<void> {
    await this.connection.getSlot();
  }

  /** Associated token addresses already derived (a program-address search per order otherwise). */
  private atas = new Map<string, PublicKey>();

  private ataOf(owner: string, mint: string): PublicKey {
    const k = `${mint}:${owner}`;
    let ata = this.atas.get(k);
    if (!ata) {
      ata = getAssociatedTokenAddressSync(new PublicKey(mint), new PublicKey(owner), true);
      if (this.atas.size >= 100_000) this.atas.clear();
      this.atas.set(k, ata);
    }
    return ata;
  }

  async holding(owner: string, mint: string): Promise<TokenHolding> {
    const ata = this.ataOf(owner, mint);
    const res = await this.connection.getAccountInfoAndContext(ata, 'confirmed');
    return holdingOf(ata, res.value, res.context.slot);
  }

  watchHolding(owner: string, mint: string, onChange: (h: TokenHolding) => void): () => Promise<void> {
    const ata = this.ataOf(owner, mint);
    const stop = this.subscriptions.watch(ata.toBase58(), (account, slot) => onChange(holdingOf(ata, accountInfoOf(account), slot)));
    return async () => stop();
  }

  async vaultBalance(address: string) {
    const res = await this.connection.getTokenAccountBalance(new PublicKey(address), 'confirmed');
    return { amount: res.value.amount, slot: res.context.slot };
  }

  async voidParlay(a: { parlayId: string; user: string; collateralMint: string }) {
    if (!this.authority) throw new MissingAuthority();
    const userToken = getAssociatedTokenAddressSync(new PublicKey(a.collateralMint), new PublicKey(a.user), true);
    const { voidParlayInstruction } = await import('./program.ts');
    const ix = voidParlayInstruction({ authority: this.authority.publicKey, userToken, parlayId: BigInt(a.parlayId) });
    const { blockhash, lastValidBlockHeight } = await this.connection.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: this.authority.publicKey, blockhash, lastValidBlockHeight }).add(
      ComputeBudgetProgram.setComputeUnitLimit({ units: 200_000 }),
      ix,
    );
    tx.sign(this.authority);
    let signature: string;
    try {
      signature = await this.connection.sendRawTransaction(tx.serialize(), { skipPreflight: false, preflightCommitment: 'confirmed' });
    } catch (e: any) {
      throw chainError(e);
    }
    const conf = await this.connection.confirmTransaction({ signature, blockhash, lastValidBlockHeight }, 'confirmed');
    if (conf.value.err) throw new ChainError(`void_parlay failed: ${JSON.stringify(conf.value.err)}`, customOf(conf.value.err));
    const got = await this.connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    if (!got) throw new ChainError(`transaction ${signature} confirmed but not readable`);
    return {
      signature,
      transaction: {
        slot: got.slot,
        blockTime: got.blockTime ?? null,
        indexWithinBlock: (got as any).indexWithinBlock ?? 0,
        meta: { err: got.meta?.err ?? null, logMessages: got.meta?.logMessages ?? [] },
        transaction: { signatures: got.transaction.signatures, message: { accountKeys: [] } },
      } as RawTransaction,
    };
  }
}

function accountInfoOf(a: NotifiedAccount | null): AccountInfo<Buffer> | null {
  return a && { data: a.data, owner: new PublicKey(a.owner), lamports: a.lamports, executable: a.executable };
}

/** A token account's holding; an account that does not exist (or was closed) holds nothing. */
function holdingOf(ata: PublicKey, info: AccountInfo<Buffer> | null, slot: number): TokenHolding {
  if (!info || info.data.length === 0) return { account: ata.toBase58(), amount: 0n, delegate: null, delegatedAmount: 0n, slot };
  const acc = unpackAccount(ata, info);
  return {
    account: ata.toBase58(),
    amount: acc.amount,
    delegate: acc.delegate?.toBase58() ?? null,
    delegatedAmount: acc.delegatedAmount,
    slot,
  };
}

function customOf(err: unknown): number | undefined {
  const ie = (err as any)?.InstructionError;
  return ie && typeof ie[1]?.Custom === 'number' ? ie[1].Custom : undefined;
}

function chainError(e: any): ChainError {
  const logs: string[] = e?.logs ?? e?.transactionLogs ?? [];
  const m = /custom program error: 0x([0-9a-f]+)/i.exec(String(e?.message ?? '') + logs.join('\n'));
  return new ChainError(String(e?.message ?? e), m ? parseInt(m[1], 16) : undefined, logs);
}
