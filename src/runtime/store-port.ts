// What the runtime needs from a database: offsets, snapshots, the command inbox and dead letters,
// all written in one transaction together with the effects of a batch.
import type { StoreTx } from './types.ts';

export interface SnapshotRow {
  kind: string;
  key: string;
  state: unknown;
}
/** A command applied, by idempotency key, with the offset of the record that applied it. */
export interface InboxRow {
  key: string;
  reply: unknown;
  offset: bigint;
}
/** A stored snapshot and the partition offset it reflects (every record below it). */
export interface StoredSnapshot {
  state: unknown;
  next: bigint;
}
/** Where a partition stands: the next record to process, and where to start reading to rebuild actors newer than their snapshots. */
export interface StoredPosition {
  next: bigint;
  replayFrom: bigint;
}
/** What a replay needs to apply exactly what was applied the first time. */
export interface ReplayFacts {
  /** Per idempotency key found in the inbox: the offset that applied it, when it is of this partition (else null). */
  appliedAt: Map<string, bigint | null>;
  /** Offsets of this partition whose record was dead-lettered (never applied: unparsable, its decider threw or its commit failed). */
  poisoned: Set<bigint>;
}
/** `key`: the record's key when it came off a topic (what a replay re-sends it with). */
export interface DeadLetterRow {
  source: string;
  reason: string;
  payload: string;
  key?: string;
}

export interface CommitArgs {
  groupId: string;
  topic: string;
  partition: number;
  /** The offset this worker believes is next; the commit is refused if the store disagrees (fencing). */
  expectedNext: bigint;
  next: bigint;
  /** Where recovery must start reading (≤ next): the first record not yet reflected in some actor's snapshot. */
  replayFrom: bigint;
  owner: string;
  snapshots: SnapshotRow[];
  inbox: InboxRow[];
  deadLetters: DeadLetterRow[];
  effects(tx: StoreTx): Promise<void>;
}

export interface RuntimeStore {
  loadOffset(groupId: string, topic: string, partition: number): Promise<bigint | null>;
  loadPosition(groupId: string, topic: string, partition: number): Promise<StoredPosition | null>;
  /** Claims the partition at `next` whatever it held (used by a non-durable bus at boot). */
  resetOffset(groupId: string, topic: string, partition: number, next: bigint, owner: string): Promise<void>;
  loadSnapshots(kind: string, keys: string[]): Promise<Map<string, StoredSnapshot>>;
  /** Reads outside any transaction (the states of kinds whose rows hold them). */
  reader: StoreTx;
  findInbox(keys: string[]): Promise<Map<string, unknown>>;
  replayFacts(topic: string, partition: number, ids: string[], offsets: bigint[]): Promise<ReplayFacts>;
  /** false when fenced: another owner moved the partition on. */
  commit(args: CommitArgs): Promise<boolean>;
  deadLetter(row: DeadLetterRow): Promise<void>;
}
