// The chain itself: SVM state, ledger, executor and the submission path a validator's
// sendTransaction follows (preflight, faults, landing), with listeners for landed transactions.
import { ComputeBudgetProgram, Keypair, PublicKey, SystemProgram, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { PARLAY_PROGRAM_ID } from '../idl.ts';
import { Executor, verifySignatures, type ExecResult } from './executor.ts';
import { Faults } from './faults.ts';
import { BLOCKHASH_VALID_SLOTS, Ledger, type TxRecord } from './ledger.ts';
import { RpcError, RPC_PREFLIGHT_FAILURE, RPC_SIGNATURE_FAILURE } from './rpc/rpc-error.ts';
import { SvmAccess } from './svm-access.ts';
import { displayTransactionError, type TransactionErrorJson } from './tx-errors.ts';

const FAUCET_LAMPORTS = 10n ** 18n;
const UPGRADEABLE_LOADER = new PublicKey('BPFLoaderUpgradeab1e11111111111111111111111');

export interface ChainOptions {
  slotMs?: number;
  programId?: PublicKey;
}

export class Chain {
  readonly svm = SvmAccess.create();
  readonly ledger = new Ledger(this.svm);
  readonly executor: Executor;
  readonly faults = new Faults();
  readonly programId: PublicKey;
  readonly faucet = Keypair.generate();
  private readonly stuck = new Map<string, number>();
  private readonly landedListeners: ((rec: TxRecord) => void)[] = [];
  private timer?: NodeJS.Timeout;
  private airdrops = 0;

  constructor(readonly opts: ChainOptions = {}) {
    this.programId = opts.programId ?? PARLAY_PROGRAM_ID;
    this.executor = new Executor(this.svm, this.programId);
    this.svm.set(this.faucet.publicKey, {
      lamports: FAUCET_LAMPORTS,
      data: Buffer.alloc(0),
      owner: SystemProgram.programId,
      executable: false,
    });
    this.installProgramAccount();
    this.ledger.onSlot((slot) => {
      for (const [sig, lastValid] of this.stuck) if (slot > lastValid) this.stuck.delete(sig);
    });
    if (opts.slotMs && opts.slotMs > 0) {
      this.timer = setInterval(() => this.ledger.advance(), opts.slotMs);
      this.timer.unref();
    }
  }

  /** An upgradeable-loader program account at the program id, so that it reads as a deployed program. */
  private installProgramAccount(): void {
    const data = Buffer.alloc(36);
    data.writeUInt32LE(2, 0); // UpgradeableLoaderState::Program { programdata_address }
    PublicKey.findProgramAddressSync([this.programId.toBuffer()], UPGRADEABLE_LOADER)[0].toBuffer().copy(data, 4);
    this.svm.set(this.programId, { lamports: this.svm.rentExempt(36), data, owner: UPGRADEABLE_LOADER, executable: true });
  }

  get slotTimer(): boolean {
    return this.timer !== undefined;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  onLanded(listener: (rec: TxRecord) => void): void {
    this.landedListeners.push(listener);
  }

  /** Signatures accepted but held by the stuck-transaction fault. */
  stuckSignatures(): string[] {
    return [...this.stuck.keys()];
  }

  static parse(bytes: Buffer): VersionedTransaction {
    try {
      return VersionedTransaction.deserialize(bytes);
    } catch (e) {
      throw new RpcError(-32602, `invalid transaction: failed to deserialize VersionedTransaction: ${(e as Error).message}`);
    }
  }

  private preflightError(err: TransactionErrorJson, res?: ExecResult): RpcError {
    return new RpcError(RPC_PREFLIGHT_FAILURE, `Transaction simulation failed: ${displayTransactionError(err)}`, {
      accounts: null,
      err,
      innerInstructions: null,
      logs: res?.logs ?? [],
      replacementBlockhash: null,
      returnData: null,
      unitsConsumed: res?.unitsConsumed ?? 0,
    });
  }

  /** sendTransaction: returns the signature, or throws the RpcError a validator answers. */
  submit(tx: VersionedTransaction, opts: { skipPreflight?: boolean } = {}): string {
    const signature = bs58.encode(tx.signatures[0]);
    const preflight = !opts.skipPreflight;
    if (this.ledger.get(signature)) {
      if (preflight) throw this.preflightError('AlreadyProcessed');
      return signature;
    }
    if (this.stuck.has(signature)) return signature;
    const blockhashOk = this.ledger.isBlockhashValid(tx.message.recentBlockhash);
    let exhaust = false;
    if (preflight) {
      if (!verifySignatures(tx)) throw new RpcError(RPC_SIGNATURE_FAILURE, 'Transaction signature verification failure');
      if (!blockhashOk) throw this.preflightError('BlockhashNotFound');
      exhaust = this.faults.takeExhaust();
      const sim = this.executor.execute(tx, { simulate: true, sigVerify: false, clock: this.ledger.clock(), exhaustCompute: exhaust });
      if (sim.err) throw this.preflightError(sim.err, sim);
    }
    if (!blockhashOk) return signature; // dropped by the leader, as a validator does with skipPreflight
    if (!preflight) exhaust = this.faults.takeExhaust();
    if (this.faults.takeDrop()) return signature;
    if (this.faults.takeStuck()) {
      const at = this.ledger.blockhashSlot(tx.message.recentBlockhash) ?? this.ledger.slot;
      this.stuck.set(signature, at + BLOCKHASH_VALID_SLOTS);
      return signature;
    }
    this.land(tx, exhaust);
    return signature;
  }

  /** Executes and records a transaction in a slot (a new one unless a slot timer runs). */
  land(tx: VersionedTransaction, exhaust = false): TxRecord | undefined {
    if (!this.timer) this.ledger.advance();
    const res = this.executor.execute(tx, { simulate: false, sigVerify: true, clock: this.ledger.clock(), exhaustCompute: exhaust });
    if (!res.landed) return undefined;
    const rec = this.ledger.record(tx, res);
    for (const l of this.landedListeners) {
      try {
        l(rec);
      } catch {
        // a listener's failure is not the chain's
      }
    }
    return rec;
  }

  /** Airdrop as a real transfer from the chain's faucet; returns the signature. */
  airdrop(to: PublicKey, lamports: bigint): string {
    const msg = new TransactionMessage({
      payerKey: this.faucet.publicKey,
      recentBlockhash: this.ledger.latestBlockhash().blockhash,
      instructions: [
        // a distinct compute limit per airdrop keeps repeated identical requests distinct transactions
        ComputeBudgetProgram.setComputeUnitLimit({ units: 10_000 + (this.airdrops++ % 1_000_000) }),
        SystemProgram.transfer({ fromPubkey: this.faucet.publicKey, toPubkey: to, lamports }),
      ],
    }).compileToLegacyMessage();
    const tx = new VersionedTransaction(msg);
    tx.sign([this.faucet]);
    const rec = this.land(tx);
    if (!rec || rec.result.err) throw new RpcError(-32603, `airdrop failed: ${JSON.stringify(rec?.result.err ?? 'not landed')}`);
    return rec.signature;
  }

  /** True when the transaction names the parlay program. */
  touchesProgram(rec: TxRecord): boolean {
    return rec.tx.message.staticAccountKeys.some((k) => k.equals(this.programId));
  }
}
