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
  /** Commands handed on (Decision.forward), kept until their worker sent them (see `forwarded`). */
  forwards?: ForwardRow[];
  /**
   * A bus that keeps no log: the commands of this batch that changed an actor not snapshotted in
   * it, in order (its envelope as JSON). A snapshot deletes its actor's journal in the same commit.
   */
  journal?: JournalRow[];
  effects(tx: StoreTx): Promise<void>;
}

export interface JournalRow {
  kind: string;
  key: string;
  envelope: string;
}

/** A forwarded command as the outbox keeps it: its record, the asker's reply headers, its idempotency key. */
export interface ForwardRow {
  topic: string;
  key: string;
  value: string;
  headers: Record<string, string>;
  msgKey: string;
}

export interface RuntimeStore {
  loadOffset(groupId: string, topic: string, partition: number): Promise<bigint | null>;
  loadPosition(groupId: string, topic: string, partition: number): Promise<StoredPosition | null>;
  /** Claims the partition at `next` whatever it held (used by a non-durable bus at boot). */
  resetOffset(groupId: string, topic: string, partition: number, next: bigint, owner: string): Promise<void>;
  loadSnapshots(kind: string, keys: string[]): Promise<Map<string, StoredSnapshot>>;
  /** The journal of `keys` (envelopes as JSON, in order): what changed them since their snapshots. */
  loadJournal(kind: string, keys: string[]): Promise<Map<string, string[]>>;
  /** The keys with a journal on a partition (a graceful stop saves them all). */
  journaledKeys(topic: string, partition: number): Promise<{ kind: string; key: string }[]>;
  /** Reads outside any transaction (the states of kinds whose rows hold them). */
  reader: StoreTx;
  findInbox(keys: string[]): Promise<Map<string, unknown>>;
  replayFacts(topic: string, partition: number, ids: string[], offsets: bigint[]): Promise<ReplayFacts>;
  /**
   * false when fenced: another owner moved the partition on. Throws InboxSeen, having written
   * nothing, when an inbox key is there already (the commit does not look before it writes).
   */
  commit(args: CommitArgs): Promise<boolean>;
  deadLetter(row: DeadLetterRow): Promise<void>;
  /**
   * The worker sent these forwarded commands itself: their outbox rows go (soon, in one statement
   * for many). Should that never happen (a crash), the relay sends them once they are due.
   */
  forwarded?(msgKeys: string[]): void;
}

/**
 * A commit refused whole because one of its inbox keys was already stored: a command seen before
 * (a retried ask, an outbox message sent twice) that this batch decided again without knowing it.
 * Nothing was written; the worker runs the batch again after looking its keys up in the inbox.
 * Looking up only then spares every other batch a read before its commit.
 */
export class InboxSeen extends Error {
  constructor(readonly cause?: unknown) {
    super('an inbox key of this batch was already applied');
  }
}

/** What `runtime_commit_group` (Migration20261130110000, nodes of an earlier version) fails with when a key of its inbox was stored before; `runtime_commit_batch` fails on the inbox's primary key instead. */
export const INBOX_SEEN = 'inbox: a command of this batch was applied before';
