// Slots, blockhashes, the clock and the history of landed transactions.
//
// Slots: one slot per landed transaction when no slot timer is set (the transaction lands in the
// new slot at index 0); with `slotMs` a timer advances the slot and transactions landing within
// one slot get increasing indexWithinBlock. Block height equals the slot (no skipped slots).
// A blockhash is valid while the current slot is at most BLOCKHASH_VALID_SLOTS past its own.
// Commitment: a landed transaction is immediately `finalized` (every commitment sees it).
import { Clock } from 'litesvm';
import { PublicKey, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { createHash, randomBytes } from 'node:crypto';
import type { ExecResult } from './executor.ts';
import type { SvmAccess } from './svm-access.ts';

export const BLOCKHASH_VALID_SLOTS = 150;
const SLOTS_PER_EPOCH = 432_000;

export interface TxRecord {
  signature: string;
  slot: number;
  blockTime: number;
  indexWithinBlock: number;
  tx: VersionedTransaction;
  result: ExecResult;
}

export class Ledger {
  slot: number;
  readonly genesisHash: string;
  transactionCount = 0;
  private readonly seed = randomBytes(32);
  private readonly blockhashes = new Map<string, number>();
  private timeOffset = 0;
  private lastBlockTime = 0;
  private txInSlot = 0;
  private readonly history = new Map<string, TxRecord>();
  private readonly byAddress = new Map<string, TxRecord[]>();
  private readonly slotListeners: ((slot: number) => void)[] = [];
  private readonly slotTimes = new Map<number, number>();

  constructor(
    private readonly svm: SvmAccess,
    startSlot = 1,
  ) {
    this.slot = startSlot;
    this.genesisHash = bs58.encode(createHash('sha256').update(this.seed).update('genesis').digest());
    this.blockhashes.set(this.blockhashFor(this.slot), this.slot);
    this.syncClock();
    this.slotTimes.set(this.slot, this.lastBlockTime);
  }

  blockhashFor(slot: number): string {
    return bs58.encode(createHash('sha256').update(this.seed).update(String(slot)).digest());
  }

  latestBlockhash(): { blockhash: string; lastValidBlockHeight: number } {
    return { blockhash: this.blockhashFor(this.slot), lastValidBlockHeight: this.slot + BLOCKHASH_VALID_SLOTS };
  }

  /** Slot at which the blockhash was produced, if known. */
  blockhashSlot(hash: string): number | undefined {
    return this.blockhashes.get(hash);
  }

  isBlockhashValid(hash: string): boolean {
    const at = this.blockhashes.get(hash);
    return at !== undefined && this.slot - at <= BLOCKHASH_VALID_SLOTS;
  }

  onSlot(listener: (slot: number) => void): void {
    this.slotListeners.push(listener);
  }

  advance(n = 1): void {
    for (let i = 0; i < n; i++) {
      this.slot += 1;
      this.txInSlot = 0;
      this.blockhashes.set(this.blockhashFor(this.slot), this.slot);
      this.blockhashes.delete(this.blockhashFor(this.slot - 2 * BLOCKHASH_VALID_SLOTS));
      this.syncClock();
      this.slotTimes.set(this.slot, this.lastBlockTime);
      this.slotTimes.delete(this.slot - 100_000);
      for (const l of this.slotListeners) l(this.slot);
    }
  }

  /** Moves the chain clock forward (or back) by `seconds`. */
  warpTime(seconds: number): void {
    this.timeOffset += seconds;
    if (seconds < 0) this.lastBlockTime = 0;
    this.syncClock();
  }

  /** Block time of a slot (the current one by default), if known. */
  blockTime(slot = this.slot): number | undefined {
    return slot === this.slot ? this.lastBlockTime : this.slotTimes.get(slot);
  }

  clock(): { slot: bigint; unixTimestamp: bigint } {
    return { slot: BigInt(this.slot), unixTimestamp: BigInt(this.lastBlockTime) };
  }

  epochInfo() {
    return {
      absoluteSlot: this.slot,
      blockHeight: this.slot,
      epoch: Math.floor(this.slot / SLOTS_PER_EPOCH),
      slotIndex: this.slot % SLOTS_PER_EPOCH,
      slotsInEpoch: SLOTS_PER_EPOCH,
      transactionCount: this.transactionCount,
    };
  }

  syncClock(): void {
    const now = Math.floor(Date.now() / 1000) + this.timeOffset;
    this.lastBlockTime = Math.max(this.lastBlockTime, now);
    const epoch = BigInt(Math.floor(this.slot / SLOTS_PER_EPOCH));
    this.svm.svm.setClock(new Clock(BigInt(this.slot), BigInt(this.lastBlockTime), epoch, epoch + 1n, BigInt(this.lastBlockTime)));
  }

  /** Records a landed transaction in the current slot. */
  record(tx: VersionedTransaction, result: ExecResult): TxRecord {
    const rec: TxRecord = {
      signature: bs58.encode(tx.signatures[0]),
      slot: this.slot,
      blockTime: this.lastBlockTime,
      indexWithinBlock: this.txInSlot++,
      tx,
      result,
    };
    this.history.set(rec.signature, rec);
    this.transactionCount += 1;
    for (const key of new Set(tx.message.staticAccountKeys.map((k) => k.toBase58()))) {
      const list = this.byAddress.get(key) ?? [];
      list.push(rec);
      this.byAddress.set(key, list);
    }
    return rec;
  }

  get(signature: string): TxRecord | undefined {
    return this.history.get(signature);
  }

  /** Transactions of a slot, in order. */
  inSlot(slot: number): TxRecord[] {
    return [...this.history.values()].filter((r) => r.slot === slot).sort((a, b) => a.indexWithinBlock - b.indexWithinBlock);
  }

  /** Transactions naming the address, newest first. */
  forAddress(address: PublicKey): TxRecord[] {
    return [...(this.byAddress.get(address.toBase58()) ?? [])].reverse();
  }
}
