// Thin layer over LiteSVM in web3.js terms: accounts by PublicKey, snapshots for rollback, and
// running native instructions (System, SPL Token, ...) as an unsigned sub-transaction. The SVM runs
// with signature and blockhash checks off: the chain verifies the real transaction itself, and
// marks as signers exactly the accounts that signed it (or, for a CPI, the PDAs the program signs for).
import { ComputeBudget, FailedTransactionMetadata, LiteSVM, type TransactionMetadata } from 'litesvm';
import { PublicKey, TransactionMessage, type TransactionInstruction } from '@solana/web3.js';
import { transactionErrorFromSvm, type TransactionErrorJson } from './tx-errors.ts';

type KitTransaction = Parameters<LiteSVM['sendTransaction']>[0];
type KitAddress = Parameters<LiteSVM['getAccount']>[0];

export const LAMPORTS_PER_SIGNATURE = 5000n;
const SUB_TX_BLOCKHASH = PublicKey.default.toBase58();

export interface AccountState {
  lamports: bigint;
  data: Buffer;
  owner: PublicKey;
  executable: boolean;
}

export interface CompiledInner {
  programId: PublicKey;
  accounts: PublicKey[];
  data: Buffer;
  stackHeight: number;
}

export interface NativeResult {
  err: TransactionErrorJson | null;
  logs: string[];
  unitsConsumed: number;
  /** inner instructions (CPIs) of each instruction that ran, resolved to addresses */
  inner: CompiledInner[][];
}

export type Snapshot = Map<string, AccountState | null>;

export class SvmAccess {
  constructor(readonly svm: LiteSVM) {}

  static create(): SvmAccess {
    const svm = new LiteSVM().withSigverify(false).withBlockhashCheck(false).withTransactionHistory(0n);
    return new SvmAccess(svm);
  }

  get(key: PublicKey): AccountState | null {
    const acc = this.svm.getAccount(key.toBase58() as KitAddress);
    if (!acc.exists || acc.lamports === 0n) return null;
    return { lamports: acc.lamports, data: Buffer.from(acc.data), owner: new PublicKey(acc.programAddress), executable: acc.executable };
  }

  set(key: PublicKey, acc: AccountState | null): void {
    const a = acc ?? { lamports: 0n, data: Buffer.alloc(0), owner: PublicKey.default, executable: false };
    this.svm.setAccount({
      address: key.toBase58() as KitAddress,
      lamports: a.lamports as never,
      data: new Uint8Array(a.data),
      programAddress: a.owner.toBase58() as KitAddress,
      executable: a.executable,
      space: BigInt(a.data.length),
    } as never);
  }

  lamports(key: PublicKey): bigint {
    return this.get(key)?.lamports ?? 0n;
  }

  addLamports(key: PublicKey, delta: bigint): void {
    const acc = this.get(key) ?? { lamports: 0n, data: Buffer.alloc(0), owner: PublicKey.default, executable: false };
    this.set(key, { ...acc, lamports: acc.lamports + delta });
  }

  snapshot(keys: PublicKey[]): Snapshot {
    const snap: Snapshot = new Map();
    for (const k of keys) if (!snap.has(k.toBase58())) snap.set(k.toBase58(), this.get(k));
    return snap;
  }

  restore(snap: Snapshot): void {
    for (const [k, acc] of snap) this.set(new PublicKey(k), acc);
  }

  rentExempt(dataLen: number): bigint {
    return this.svm.minimumBalanceForRentExemption(BigInt(dataLen));
  }

  /**
   * Runs instructions natively in LiteSVM as one sub-transaction paid by `feePayer`, with a
   * compute-unit limit. The signature fee LiteSVM takes is credited beforehand so that the net
   * lamport effect is only the instructions' own.
   */
  runNative(instructions: TransactionInstruction[], feePayer: PublicKey, cuLimit: number): NativeResult {
    const msg = new TransactionMessage({ payerKey: feePayer, recentBlockhash: SUB_TX_BLOCKHASH, instructions }).compileToLegacyMessage();
    const nSig = msg.header.numRequiredSignatures;
    const signatures: Record<string, Uint8Array> = {};
    for (let i = 0; i < nSig; i++) signatures[msg.accountKeys[i].toBase58()] = new Uint8Array(64);
    const budget = new ComputeBudget();
    budget.computeUnitLimit = BigInt(Math.max(0, Math.floor(cuLimit)));
    this.svm.withComputeBudget(budget);
    this.addLamports(feePayer, LAMPORTS_PER_SIGNATURE * BigInt(nSig));
    const res = this.svm.sendTransaction({ messageBytes: msg.serialize(), signatures } as unknown as KitTransaction);
    const failed = res instanceof FailedTransactionMetadata;
    const meta: TransactionMetadata = failed ? res.meta() : res;
    const inner = meta.innerInstructions().map((list) =>
      list.map((ii) => {
        const ci = ii.instruction();
        return {
          programId: msg.accountKeys[ci.programIdIndex()],
          accounts: [...ci.accounts()].map((i) => msg.accountKeys[i]),
          data: Buffer.from(ci.data()),
          stackHeight: ii.stackHeight(),
        };
      }),
    );
    return {
      err: failed ? transactionErrorFromSvm(res.err()) : null,
      logs: meta.logs(),
      unitsConsumed: Number(meta.computeUnitsConsumed()),
      inner,
    };
  }
}
