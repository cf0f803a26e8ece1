// What the runtime needs from a database: offsets, snapshots, the command inbox and dead letters,
// all written in one transaction together with the effects of a batch.
import type { StoreTx } from './types.ts';

export interface SnapshotRow { kind: string; key: string; state: unknown }
export interface InboxRow { key: string; reply: unknown }
export interface DeadLetterRow { source: string; reason: string; payload: string }

export interface CommitArgs {
  groupId: string;
  topic: string;
  partition: number;
  /** The offset this worker believes is next; the commit is refused if the store disagrees (fencing). */
  expectedNext: bigint;
  next: bigint;
  owner: string;
  snapshots: SnapshotRow[];
  inbox: InboxRow[];
  deadLetters: DeadLetterRow[];
  effects(tx: StoreTx): Promise<void>;
}

export interface RuntimeStore {
  loadOffset(groupId: string, topic: string, partition: number): Promise<bigint | null>;
  /** Claims the partition at `next` whatever it held (used by a non-durable bus at boot). */
  resetOffset(groupId: string, topic: string, partition: number, next: bigint, owner: string): Promise<void>;
  loadSnapshots(kind: string, keys: string[]): Promise<Map<string, unknown>>;
  findInbox(keys: string[]): Promise<Map<string, unknown>>;
  /** false when fenced: another owner moved the partition on. */
  commit(args: CommitArgs): Promise<boolean>;
  deadLetter(row: DeadLetterRow): Promise<void>;
}
