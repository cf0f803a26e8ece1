// The runtime's vocabulary: buses, records, deciders and actor kinds. Knows nothing of any domain.

export interface OutRecord {
  key: string;
  value: string;
  headers?: Record<string, string>;
  /**
   * The value as `JSON.parse(value)` gives it, when the sender built it so: the in-process bus hands
   * it to the consumer, which then skips the parse (and the sender may give `value` as a getter that
   * builds the text only when something reads it); a durable bus sends `value` alone.
   */
  decoded?: unknown;
}

export interface InRecord extends OutRecord {
  topic: string;
  partition: number;
  offset: bigint;
}

export interface Batch {
  topic: string;
  partition: number;
  records: InRecord[];
}

/**
 * What a batch handler asks the bus to do next. `resumeFrom`: where a member that takes the
 * partition over must start reading (records below the next offset that rebuild unsaved state);
 * a durable bus commits it as the group's position instead of the batch's end. `retryInMs`: deliver
 * from `seek` again only after this pause (a batch that failed: backoff), the partition's own
 * delivery paused meanwhile, not the others'.
 */
export type BatchOutcome = { done: true; resumeFrom?: bigint } | { seek: bigint; retryInMs?: number };

export interface ConsumerHandle {
  stop(): Promise<void>;
}

export interface ConsumeOptions {
  groupId: string;
  topics: string[];
  /** Read from the start when the group has no position (command topics), else from the end. */
  fromBeginning: boolean;
  onBatch(batch: Batch): Promise<BatchOutcome>;
  /** The partitions this member owns now (after every rebalance). */
  onAssignment?(assigned: { topic: string; partition: number }[]): void;
  /**
   * On a broker: how long a fetch that finds nothing waits there before the next one (a record
   * that arrives ends the wait at once), 100 ms unless set. A consumer that seldom has records,
   * never seeks and never pauses (a node's reply topic) waits longer: fewer idle fetches and
   * heartbeats for the broker and the node to serve, at the price of a stop that waits for the
   * fetch in flight.
   */
  idleWaitMs?: number;
}

export interface TopicSpec {
  topic: string;
  partitions: number;
}

export interface Bus {
  /** A durable bus keeps its log across restarts (Kafka); the in-process one does not. */
  readonly durable: boolean;
  ensureTopics(specs: TopicSpec[]): Promise<void>;
  partitionsOf(topic: string): number;
  send(topic: string, records: OutRecord[]): Promise<void>;
  consume(opts: ConsumeOptions): Promise<ConsumerHandle>;
  close(): Promise<void>;
  /** The log's first and next offsets per partition (metrics: consumer lag; ops: replays). */
  offsets?(topic: string): Promise<{ partition: number; low: bigint; high: bigint }[]>;
  /** Throws when the transport is unreachable (readiness). */
  ping?(): Promise<void>;
}

/** A pure decider: no clock, no randomness, no I/O. Time and ids come in the command. */
export interface Decision<E, R> {
  events: E[];
  reply: R;
  /** false: the command had no effect and must be retried later (not remembered as answered). */
  final?: boolean;
  /**
   * Instead of answering, hand the command on (a pipeline stage: the wallet holds, then the book
   * places): the runtime sends `cmd` to `key` on `topic` with idempotency key `id`, carrying the
   * asker's reply headers, so that the receiver answers the asker. Committed with the batch and sent
   * right after it; a command seen again is forwarded again (the receiver answers it once). A
   * command of a bulk record is handed on without the asker's headers: the bulk answer carries
   * this decision's reply.
   */
  forward?: Forward;
}

export interface Forward {
  topic: string;
  key: string;
  id: string;
  cmd: unknown;
}

export interface Decider<S, C, E, R> {
  initial(key: string): S;
  decide(state: S, command: C): Decision<E, R>;
  evolve(state: S, event: E): S;
}

/** The command envelope carried on a topic. */
export interface Envelope<C = unknown> {
  v: 1;
  /** Idempotency key: a command seen before is answered with its first reply, not applied again. */
  id?: string;
  /** Milliseconds since the epoch, stamped by whoever sent the command. */
  at: number;
  cmd: C;
}

export interface Applied<C, E, S> {
  key: string;
  command: C;
  envelope: Envelope<C>;
  events: E[];
  state: S;
}

/** A transaction of the store the runtime commits in: the kind writes its effects through it. */
export interface StoreTx {
  execute<T = any>(sql: string, params?: unknown[], opts?: ExecuteOptions): Promise<T[]>;
  /**
   * Messages a projection sends to other topics (a batch's commit only): kept in the outbox by the
   * same commit (the relay's once a grace has passed) and sent by the worker right after it, like
   * a decision's forward. Each is named by its idempotency key (`msgKey`); its receiver answers a
   * repeat as the first.
   */
  send?(messages: SentMessage[]): void;
}

export interface ExecuteOptions {
  /**
   * An `insert … on conflict … do nothing` whose rows are almost always new (a blind creation):
   * a batch's commit tries it as a plain insert first, which costs PostgreSQL about a fifth less
   * per row (no speculative insertion), and only when that fails on a unique violation commits
   * again with the statement as written. Also a call of an upsert function that has a plain-insert
   * counterpart (`open_orders_upsert`: src/store/runtime-store.ts PLAIN_CALLS). Ignored where the
   * statement has neither.
   */
  usuallyNew?: boolean;
}

export interface SentMessage {
  topic: string;
  key: string;
  value: string;
  msgKey: string;
}

export interface ActorKind<S = unknown, C = unknown, E = unknown, R = unknown> {
  name: string;
  topic: string;
  decider: Decider<S, C, E, R>;
  /** Validates a command read off the topic; throws on garbage (dead-lettered). */
  parse(cmd: unknown, envelope: Envelope): C;
  toSnapshot(state: S): unknown;
  fromSnapshot(json: unknown): S;
  /** Writes the effects of a batch inside the runtime's transaction. */
  project(tx: StoreTx, applied: Applied<C, E, S>[]): Promise<void>;
  /**
   * A kind whose state its own read-model rows hold (written by `project` in the batch's
   * transaction, so they always match the committed offset): no snapshots, nothing to replay; a
   * key's state is loaded from its rows when a command needs it.
   */
  rows?: RowState<S, C>;
}

export interface RowState<S, C> {
  /** The states of `keys` as their rows hold them (a key without rows: absent). */
  load(read: StoreTx, keys: string[]): Promise<Map<string, S>>;
  /**
   * A command decided without loading its key's state when the key is not in memory: against the
   * initial state, its projection idempotent on the rows (a created parlay: insert, or nothing).
   */
  blind?(command: C): boolean;
}
