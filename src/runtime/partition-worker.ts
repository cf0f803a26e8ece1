// Processes one partition: skip what the store already reflects, run each command through its
// key's actor, then commit effects + answers + the next offset in one transaction, and only then
// send the replies. Snapshots are checkpointed: written every few batches (or seconds), not every
// batch, and the commit records where recovery must start reading (`replayFrom`) so that actors
// newer than their snapshots can be rebuilt. Any doubt (fenced, failed commit, gap, a decider
// that threw) drops the partition's actors and resumes from what the store holds: snapshot + replay.
// A batch that fails for the moment (the store unreachable, a connection lost, a deadlock) is
// retried from the store after a pause that doubles with every failure in a row (100 ms to 5 s): a
// partition that cannot commit waits, it does not spin. A batch whose commit fails because of what a
// record holds (a value beyond its column or type, a NUL byte, a projection that throws: see
// failures.ts) is retried in halves until the record that fails alone (twice) is found; that record
// is dead-lettered with the reason, its asker answered with the error, and the partition goes on.
import { PartitionActors, step, type StepResult } from './actor-cell.ts';
import { commandsOf, envelopeJson, lazyRecord, recordChars, type BulkAnswer } from './envelope.ts';
import { Backoff } from './backoff.ts';
import { bigJson, jsonCopy, toJson } from './json.ts';
import { classifyCommitFailure, clip, ProjectionError, REASON_MAX, reasonOf } from './failures.ts';
import { cutBySize } from './cut.ts';
import { deliver } from './loopback.ts';
import { REPLY_VIA } from './direct-replies.ts';
import {
  InboxSeen,
  type DeadLetterRow,
  type ForwardRow,
  type InboxRow,
  type JournalRow,
  type RuntimeStore,
  type SnapshotRow,
  type StoredSnapshot,
} from './store-port.ts';
import type {
  ActorKind,
  Applied,
  Batch,
  BatchOutcome,
  Bus,
  Envelope,
  ExecuteOptions,
  Forward,
  InRecord,
  OutRecord,
  SentMessage,
  StoreTx,
} from './types.ts';

export interface WorkerDeps {
  bus: Bus;
  store: RuntimeStore;
  groupId: string;
  owner: string;
  system: any;
  kindFor(topic: string, key: string): ActorKind | undefined;
  log: { info(o: object, m?: string): void; warn(o: object, m?: string): void; error(o: object, m?: string): void };
  metrics?: {
    batch(topic: string, records: number, ms: number): void;
    resync(topic: string, partition: number): void;
    /** after a commit that wrote `n` snapshots (metrics: snapshot age) */
    snapshots?(topic: string, partition: number, n: number): void;
    deadLetters?(topic: string, n: number): void;
    /** A record dead-lettered by the runtime: unparsable (`parse`), its decider threw (`decide`) or its commit failed on its data (`commit`). */
    poison?(topic: string, partition: number, cause: 'parse' | 'decide' | 'commit'): void;
    /** a batch failed (commit or store read): it is retried from the store after `delayMs` */
    retry?(topic: string, partition: number, delayMs: number): void;
  };
  /** Pause before retrying a failed batch: `firstMs`, doubled per failure in a row up to `maxMs` (default 100 ms, 5 s). */
  retryBackoff?: { firstMs: number; maxMs: number };
  /** After a batch committed; `effects` counts the statements its projections wrote (outbox, ledger: relays to wake). */
  /** A batch with effects committed: its topic and partition, how many effects, and the keys whose actors changed. */
  onCommitted?(topic: string, partition: number, effects: number, keys: string[]): void;
  /** Live actors per partition (default MAX_LIVE_ACTORS). */
  maxLiveActors?: number;
  /** When snapshots are written; unset: with every batch. */
  checkpoint?: CheckpointPolicy;
  /**
   * The bus keeps no log to replay from (the in-process bus): the commands that changed an actor
   * since its snapshot are journaled with each batch, and an actor loads as snapshot + journal.
   */
  journal?: boolean;
  /** Fault injection for failover tests: called around the commit of every batch. */
  faults?: { beforeCommit?(): void; afterCommit?(): void };
}

/** Live actors a partition keeps in memory; the least recently used beyond this are stopped after a commit. */
export const MAX_LIVE_ACTORS = 2_000;

/**
 * Snapshots of changed actors are written when `everyBatches` batches have committed since the
 * last checkpoint, or when the oldest unsaved change is `maxAgeMs` old (also on an idle partition),
 * provided the records since the last checkpoint are SNAPSHOT_SHARE times the characters that
 * checkpoint wrote (see `worthSaving`); and in any case when the oldest unsaved change is
 * `maxAgeMs × SNAPSHOT_MAX_AGE_FACTOR` old, or when unsaved actors reach half of the live-actor
 * bound (unsaved actors are never passivated).
 */
export interface CheckpointPolicy {
  everyBatches: number;
  maxAgeMs: number;
}

/**
 * A checkpoint rewrites every changed actor whole: a market book's snapshot holds its resting orders
 * and the memory of its last 10,000 finished orders (hundreds of KB), while the commands that
 * changed it are a few hundred bytes each. Written every 20 batches or 2 s whatever their size, the
 * books' snapshots were 12% of the embedded node's time in a 3,000-order run (60–75 ms of PGlite
 * for a 400–600 KB group) and more as the books grow; with checkpoints every 20 s instead, node CPU
 * per order fell 18%. A checkpoint now also waits until the records since the last one are
 * SNAPSHOT_SHARE times the characters that one wrote: snapshots write at most 1/SNAPSHOT_SHARE of
 * what the commands themselves are, and what a new owner (or a restart) replays is about
 * SNAPSHOT_SHARE snapshots' worth of commands per partition (replaying a command costs tens of µs,
 * in memory; writing its share of a snapshot cost more, on every commit).
 */
export const SNAPSHOT_SHARE = 4;
/** However little changed, a checkpoint once the oldest unsaved change is this many `maxAgeMs` old (default 2 s × 15 = 30 s). */
export const SNAPSHOT_MAX_AGE_FACTOR = 15;

/** After a commit refused for a key seen before, batches look their keys up first for this long. */
export const INBOX_LOOKUP_MS = 10_000;

/** Failures of one record committed alone before it is dead-lettered (a second chance against a race). */
export const POISON_CONFIRMATIONS = 2;

export const REPLY_TO = 'reply-to';
export const CORRELATION = 'corr';
/**
 * Set by an asker that reads a reply record holding many answers (a JSON array of ReplyMessage):
 * the answers of one batch to one asker then travel as one record, not one record each. An asker
 * without it (a node of an earlier version) is answered one record per ask.
 */
export const REPLY_BATCH = 'reply-batch';
/** A reply record of many answers stays under this many characters (then a next record). */
const REPLY_RECORD_CHARS = 256 * 1024;

export interface ReplyMessage {
  corr: string;
  reply: unknown;
  error?: string;
  /** A bulk record refused whole: its sender asks its commands again one by one (see `split` below). */
  split?: boolean;
}

interface Item {
  record: InRecord;
  /** The command's key: the record's, or its own inside a bulk record. */
  key: string;
  /** Its place in a bulk record (answered together, in one reply), else undefined. */
  bulkIndex?: number;
  /** Decided here against its kind's initial state, without an actor (see RowState.blind). */
  inline?: boolean;
  /** Its record is refused whole (found poison): dead-lettered and answered once, as it came. */
  whole?: boolean;
  /**
   * Its record is a bulk record of several commands refused whole: not one command of it is applied,
   * and its sender is told to ask them again one by one, so that only the one that fails alone is
   * dead-lettered (plain records narrow down to one record; a bulk record's commands are narrowed so).
   */
  split?: boolean;
  envelope?: Envelope;
  kind?: ActorKind;
  command?: unknown;
  reply?: unknown;
  error?: string;
  /** An earlier command of the same batch with the same idempotency key: answered like it. */
  dupOf?: Item;
  /** Handed on instead of answered (Decision.forward), now or when it was first applied (from the inbox). */
  forward?: Forward;
}

/** How the inbox remembers a command that was handed on: a repeat is forwarded again, not answered. */
const FORWARDED = '$forward';

function forwardOf(reply: unknown): Forward | undefined {
  return reply && typeof reply === 'object' && FORWARDED in reply ? ((reply as Record<string, unknown>)[FORWARDED] as Forward) : undefined;
}

export class PartitionWorker {
  private expectedNext: bigint | null = null;
  private soughtTo: bigint | null = null;
  private actors: PartitionActors | null = null;
  /** Actors changed since their stored snapshot, with the offset of their first unsaved change. */
  private dirty = new Map<string, { kind: ActorKind; since: bigint }>();
  private dirtyAt = 0;
  private batchesSinceCheckpoint = 0;
  /** Characters of the records processed since the last checkpoint. */
  private charsSinceCheckpoint = 0;
  /** Characters of the snapshots the last checkpoint wrote (0: none yet). */
  private lastSnapshotChars = 0;
  /** While rebuilding after a load: the next record to replay (below expectedNext), else null. */
  private replayNext: bigint | null = null;
  /** While rebuilding: the offset each spawned actor's snapshot reflects. */
  private snapshotAt = new Map<string, bigint>();
  /** Records found poison (their decider threw, or their commit failed alone): dead-lettered, not run, when processing reaches them again. */
  private poison = new Map<bigint, string>();
  /**
   * Records whose commit failed on their data: `count` records from `start`, of which only the first
   * `take` are tried next (halves, down to one); `alone`: failures of that one record by itself.
   */
  private suspect: { start: bigint; count: number; take: number; alone: number } | null = null;
  /** Batches and idle checkpoints run one at a time. */
  private queue: Promise<unknown> = Promise.resolve();
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  /** Failed batches in a row: the pause before the next attempt (kept across reset()). */
  private failures: Backoff;
  /**
   * Until when batches look their idempotency keys up in the inbox before deciding. Normally not:
   * the commit itself refuses a key stored before (InboxSeen), and only then, for a while, do
   * batches read first. Kept across reset().
   */
  private lookUpInboxUntil = 0;

  constructor(
    private deps: WorkerDeps,
    readonly topic: string,
    readonly partition: number,
  ) {
    this.failures = new Backoff(deps.retryBackoff?.firstMs, deps.retryBackoff?.maxMs);
  }

  /** Forget everything in memory: the next batch starts from the store (snapshots + replay). */
  reset(): void {
    this.actors?.drop();
    this.actors = null;
    this.expectedNext = null;
    this.replayNext = null;
    this.dirty.clear();
    this.snapshotAt.clear();
    this.batchesSinceCheckpoint = 0;
    this.charsSinceCheckpoint = 0;
    if (this.idleTimer) {
      clearTimeout(this.idleTimer);
      this.idleTimer = null;
    }
  }

  /** Actors changed in memory since their stored snapshot (metrics, tests). */
  get unsaved(): number {
    return this.dirty.size;
  }

  /**
   * Writes the snapshots of every changed actor now (graceful stop); false when fenced or failed.
   * With a journal, also of every actor of the partition that has one (loaded for it): a worker
   * that started over (a reset) forgot which actors were newer than their snapshots.
   */
  flush(): Promise<boolean> {
    return this.serially(async () => {
      if (this.deps.journal && this.actors && this.expectedNext !== null) {
        try {
          await this.loadJournaled();
        } catch (err) {
          this.deps.log.warn({ err, topic: this.topic, partition: this.partition }, 'journaled actors not loaded; their journals stay');
        }
      }
      return this.checkpointNow();
    });
  }

  private async loadJournaled() {
    const byKind = new Map<ActorKind, string[]>();
    for (const { key } of await this.deps.store.journaledKeys(this.topic, this.partition)) {
      const kind = this.deps.kindFor(this.topic, key);
      if (!kind || kind.rows || this.actors!.has(key)) continue;
      byKind.set(kind, [...(byKind.get(kind) ?? []), key]);
    }
    for (const [kind, keys] of byKind) await this.spawnSaved(kind, keys, this.expectedNext!);
  }

  private serially<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  stateOf(key: string): unknown {
    return this.actors?.stateOf(key);
  }

  /** The next offset this worker will process (null until it has loaded from the store). */
  get position(): bigint | null {
    return this.expectedNext;
  }

  actorCounts(into: Record<string, number> = {}): Record<string, number> {
    return this.actors?.countsByKind(into) ?? into;
  }

  handle(batch: Batch): Promise<BatchOutcome> {
    return this.serially(async () => {
      try {
        return await this.process(batch);
      } catch (err) {
        this.reset(); // nothing half-done stays in memory: the batch is redelivered against the store
        return this.retryLater(batch.records[0].offset, err, 'batch failed');
      }
    });
  }

  private async process(batch: Batch): Promise<BatchOutcome> {
    const started = Date.now();
    const d = this.deps;
    if (this.expectedNext === null) {
      const stored = d.bus.durable ? await d.store.loadPosition(d.groupId, this.topic, this.partition) : null;
      if (stored === null) {
        await d.store.resetOffset(d.groupId, this.topic, this.partition, batch.records[0].offset, d.owner);
        this.expectedNext = batch.records[0].offset;
      } else {
        this.expectedNext = stored.next;
        if (stored.replayFrom < stored.next) this.replayNext = stored.replayFrom;
      }
      this.actors = new PartitionActors(d.system, `${this.topic}-${this.partition}`);
      d.metrics?.resync(this.topic, this.partition);
    }
    const expected = this.expectedNext;
    const from = this.replayNext ?? expected;
    const fresh = batch.records.filter((r) => r.offset >= from);
    if (!fresh.length) return { done: true, resumeFrom: this.resumeFrom() };
    if (fresh[0].offset > from) {
      if (this.soughtTo !== from) {
        this.soughtTo = from;
        return { seek: from };
      }
      // Sought once and still past it: the log no longer holds those records (retention). Go on
      // from what exists, fencing on the stored offset as ever, and say so loudly.
      d.log.error(
        { topic: this.topic, partition: this.partition, from: String(from), to: String(fresh[0].offset) },
        'records gone from the log before they were processed',
      );
    } else {
      this.soughtTo = null; // reached: a later reload (a retried batch) may need to seek back here again
    }
    if (this.replayNext !== null) {
      await this.replay(fresh.filter((r) => r.offset < expected));
      const last = fresh[fresh.length - 1].offset;
      this.replayNext = last + 1n < expected ? last + 1n : null;
      if (this.replayNext === null) this.snapshotAt.clear();
      this.armIdleCheckpoint(); // rebuilt actors are saved even if no new record comes
    }
    let records = fresh.filter((r) => r.offset >= expected);
    if (!records.length) return { done: true, resumeFrom: this.resumeFrom() };
    if (records[0].offset > expected && this.soughtTo !== expected) {
      d.log.error(
        { topic: this.topic, partition: this.partition, from: String(expected), to: String(records[0].offset) },
        'records gone from the log before they were processed',
      );
    }
    // Narrowing down a failing record: only the part of the suspect range being tried goes in.
    if (this.suspect && records[0].offset !== this.suspect.start) this.suspect = null;
    const cut = this.suspect !== null && records.length > this.suspect.take;
    if (cut) records = records.slice(0, this.suspect!.take);

    const items = records.flatMap((record) => this.parse(record));
    items.forEach((it, i) => {
      const reason = this.poison.get(it.record.offset);
      if (reason === undefined) return;
      const split = it.bulkIndex !== undefined && (items[i + 1]?.record === it.record || items[i - 1]?.record === it.record);
      it.kind = undefined;
      it.error = split ? `split: a command of this bulk record was refused; its commands are asked again one by one (${reason})` : reason;
      it.whole = true;
      it.split = split;
    });
    if (Date.now() < this.lookUpInboxUntil) await this.answerFromInbox(items);
    markDuplicates(items);
    markInline(items, (key) => this.actors!.has(key));
    await this.ensureActors(items);
    const results = await this.step(items);

    // A decider that throws may have left its (mutable) state half-changed, and other keys may have
    // run commands after it: nothing of this batch is trusted. Its record is remembered; the
    // partition is rebuilt from the store and, when processing reaches that record again, it is
    // dead-lettered without being run (what came before it commits as usual).
    const bad = results.findIndex((r) => r?.error);
    if (bad >= 0) return this.poisoned(items[bad].record, results[bad]!.error!);

    const applied = new Map<ActorKind, Applied<unknown, unknown, unknown>[]>();
    const inbox: InboxRow[] = [];
    const forwards: ForwardRow[] = [];
    const journal: JournalRow[] = [];
    const deadLetters: DeadLetterRow[] = [];
    const lettered = new Set<InRecord>();
    items.forEach((it, i) => {
      const r = results[i];
      if (it.error) {
        // A record that failed whole (unparsable, poison) is kept once, as it came; one command of a
        // bulk record that failed alone is kept as a plain record of its own (replayable as such).
        const whole = it.bulkIndex === undefined || !!it.whole;
        if (!whole || !lettered.has(it.record)) {
          if (whole) lettered.add(it.record);
          deadLetters.push({
            source: `${this.topic}/${this.partition}@${it.record.offset}${whole ? '' : `.${it.bulkIndex}`}`,
            reason: clip(it.error, REASON_MAX),
            payload: clip(whole ? it.record.value : envelopeJson(it.envelope!.cmd, { at: it.envelope!.at })),
            key: clip(whole ? it.record.key : it.key),
          });
        }
      }
      if (!r) return;
      const decision = r.decision!;
      const id = it.envelope!.id;
      it.reply = decision.reply;
      // A command of a bulk record is handed on too, but without the asker's headers: the bulk
      // record is answered as one, with this command's reply in it.
      if (decision.forward) {
        it.forward = decision.forward;
        forwards.push({
          topic: decision.forward.topic,
          key: decision.forward.key,
          value: envelopeJson(decision.forward.cmd, { id: decision.forward.id, at: it.envelope!.at }),
          headers: it.bulkIndex === undefined ? replyHeaders(it.record) : {},
          msgKey: decision.forward.id,
        });
      }
      if (decision.final !== false && id)
        inbox.push({ key: id, reply: it.forward ? { [FORWARDED]: it.forward } : decision.reply, offset: it.record.offset });
      if (decision.events.length) {
        const list = applied.get(it.kind!) ?? [];
        list.push({ key: it.key, command: it.command, envelope: it.envelope!, events: decision.events, state: r.state });
        applied.set(it.kind!, list);
        if (!it.kind!.rows) {
          this.markDirty(it.kind!, it.key, it.record.offset);
          if (d.journal) journal.push({ kind: it.kind!.name, key: it.key, envelope: toJson(it.envelope) });
        }
      }
    });

    for (const it of items)
      if (it.dupOf) {
        it.reply = it.dupOf.reply;
        it.error = it.dupOf.error;
        it.forward = it.dupOf.forward;
      }
    const next = records[records.length - 1].offset + 1n;
    for (const r of records) this.charsSinceCheckpoint += recordChars(r);
    const checkpoint = this.checkpointDue();
    const snapshots = checkpoint ? this.unsavedSnapshots() : [];
    let committed = false;
    let failed: { err: unknown } | null = null;
    let effects = 0;
    const sent: SentMessage[] = [];
    d.faults?.beforeCommit?.();
    try {
      committed = await d.store.commit({
        groupId: d.groupId,
        topic: this.topic,
        partition: this.partition,
        expectedNext: expected,
        next,
        owner: d.owner,
        replayFrom: checkpoint ? next : this.oldestUnsaved(next),
        snapshots,
        inbox,
        forwards,
        // A checkpoint saves every changed actor: their journals go, none is written.
        journal: d.journal ? (checkpoint ? [] : journal) : undefined,
        deadLetters,
        effects: async (tx) => {
          const counted: StoreTx = {
            execute: (sql: string, params?: unknown[], opts?: ExecuteOptions) => {
              effects++;
              return tx.execute(sql, params, opts);
            },
            // Committed with the batch's forwards (outbox rows with a grace), sent after the commit.
            send: (messages) => {
              effects++;
              for (const m of messages) {
                forwards.push({ topic: m.topic, key: m.key, value: m.value, headers: {}, msgKey: m.msgKey });
                sent.push(m);
              }
            },
          };
          for (const [kind, list] of applied) {
            try {
              await kind.project(counted, list);
            } catch (err) {
              throw new ProjectionError(kind.name, err);
            }
          }
        },
      });
    } catch (err) {
      failed = { err };
    }
    if (!committed) {
      this.reset();
      // A command of the batch was applied before: the batch runs again, answering it from the inbox.
      if (failed?.err instanceof InboxSeen) {
        this.lookUpInboxUntil = Date.now() + INBOX_LOOKUP_MS;
        return { seek: records[0].offset };
      }
      // Fenced (another owner moved the partition on): reload at once. Failed for the moment (the
      // store may be down): the same batch is retried after a pause. Failed on its data: narrowed.
      if (!failed) {
        this.suspect = null;
        return { seek: records[0].offset };
      }
      if (classifyCommitFailure(failed.err) === 'transient' || (this.poison.has(records[0].offset) && records.length === 1)) {
        return this.retryLater(records[0].offset, failed.err, 'commit failed');
      }
      return this.narrow(records, failed.err);
    }
    this.failures.succeed();
    this.expectedNext = next;
    for (const offset of this.poison.keys()) if (offset < next) this.poison.delete(offset);
    if (this.suspect) {
      const left = this.suspect.count - records.length;
      this.suspect = left > 0 ? { start: next, count: left, take: Math.ceil(left / 2), alone: 0 } : null;
    }
    this.afterCheckpoint(checkpoint);
    this.actors!.passivate(d.maxLiveActors ?? MAX_LIVE_ACTORS, (key) => this.dirty.has(key));
    d.faults?.afterCommit?.();
    if (effects)
      d.onCommitted?.(this.topic, this.partition, effects, [...new Set([...applied.values()].flatMap((l) => l.map((x) => x.key)))]);
    await this.sendReplies(items, sent);
    d.metrics?.batch(this.topic, records.length, Date.now() - started);
    if (snapshots.length) d.metrics?.snapshots?.(this.topic, this.partition, snapshots.length);
    if (deadLetters.length) d.metrics?.deadLetters?.(this.topic, deadLetters.length);
    const logged = new Set<InRecord>();
    for (const it of items) {
      if (!it.error || it.dupOf) continue;
      if (it.bulkIndex !== undefined && it.whole) {
        if (logged.has(it.record)) continue;
        logged.add(it.record);
      }
      const reason = it.split ? it.error.slice(it.error.indexOf('(') + 1) : it.error;
      const cause = reason.startsWith('commit failed') ? 'commit' : reason.startsWith('decider failed') ? 'decide' : 'parse';
      d.log.error(
        {
          topic: this.topic,
          partition: this.partition,
          offset: String(it.record.offset),
          key: clip(it.key, 200),
          reason: it.error,
          cause,
        },
        'record dead-lettered',
      );
      d.metrics?.poison?.(this.topic, this.partition, cause);
    }
    // Part of the batch was left out (a failing record is being narrowed down): the rest comes again.
    return cut ? { seek: next } : { done: true, resumeFrom: this.resumeFrom() };
  }

  /**
   * The commit of `records` failed on their data. More than one: the first half is tried next
   * (nothing paused: the database answers). One, a first time: tried alone again after a short
   * pause (a constraint raced by another writer may pass). One, a second time: it is poison,
   * dead-lettered when processing reaches it again; what comes after it goes on as usual.
   */
  private narrow(records: InRecord[], err: unknown): BatchOutcome {
    const d = this.deps;
    const at = records[0];
    const where = { topic: this.topic, partition: this.partition, offset: String(at.offset) };
    if (records.length > 1) {
      this.suspect = { start: at.offset, count: records.length, take: Math.ceil(records.length / 2), alone: 0 };
      d.log.warn(
        { ...where, records: records.length, err },
        "commit failed on the records' data; retrying the batch in halves to find the failing record",
      );
      return { seek: at.offset };
    }
    const alone = (this.suspect?.start === at.offset ? this.suspect.alone : 0) + 1;
    if (alone < POISON_CONFIRMATIONS) {
      this.suspect = { start: at.offset, count: 1, take: 1, alone };
      d.log.warn({ ...where, key: clip(at.key, 200), err }, 'commit of one record failed on its data; trying it alone once more');
      return { seek: at.offset, retryInMs: d.retryBackoff?.firstMs ?? 100 };
    }
    this.suspect = null;
    this.poison.set(at.offset, reasonOf('commit failed', err));
    return { seek: at.offset };
  }

  /**
   * Where a member taking this partition over must start reading: the first record an unsaved actor
   * (or the replay still under way) needs. A durable bus commits it as the group's position, so that
   * the new owner rebuilds those actors at once, even when no new record arrives.
   */
  private resumeFrom(): bigint {
    const pending = this.replayNext ?? this.expectedNext!;
    return this.oldestUnsaved(pending);
  }

  /** A failed batch: redelivered from `from` against the store after the backoff's next pause, logged once per pause. */
  private retryLater(from: bigint, err: unknown, what: string): BatchOutcome {
    const retryInMs = this.failures.fail();
    this.deps.log.error(
      { err, topic: this.topic, partition: this.partition, offset: String(from), failures: this.failures.attempts, retryInMs },
      `${what}; retrying from the store in ${retryInMs} ms`,
    );
    this.deps.metrics?.retry?.(this.topic, this.partition, retryInMs);
    return { seek: from, retryInMs };
  }

  private poisoned(at: InRecord, err: Error): BatchOutcome {
    const from = this.oldestUnsaved(this.expectedNext!); // = the stored replayFrom: this batch changed nothing yet
    this.deps.log.error(
      { err, key: at.key, topic: this.topic, partition: this.partition, offset: String(at.offset) },
      'decider threw; its command will be dead-lettered',
    );
    this.reset();
    this.poison.set(at.offset, reasonOf('decider failed', err));
    return { seek: from };
  }

  private markDirty(kind: ActorKind, key: string, offset: bigint) {
    if (this.dirty.has(key)) return;
    if (!this.dirty.size) this.dirtyAt = Date.now();
    this.dirty.set(key, { kind, since: offset });
  }

  /** The first record some unsaved actor needs replayed (or `fallback` when every actor is saved). */
  private oldestUnsaved(fallback: bigint): bigint {
    let min = fallback;
    for (const { since } of this.dirty.values()) if (since < min) min = since;
    return min;
  }

  private checkpointDue(): boolean {
    const p = this.deps.checkpoint;
    if (!p || !this.dirty.size) return true;
    const age = Date.now() - this.dirtyAt;
    return (
      ((this.batchesSinceCheckpoint + 1 >= p.everyBatches || age >= p.maxAgeMs) && this.worthSaving()) ||
      age >= p.maxAgeMs * SNAPSHOT_MAX_AGE_FACTOR ||
      this.dirty.size * 2 >= (this.deps.maxLiveActors ?? MAX_LIVE_ACTORS)
    );
  }

  /** The records since the last checkpoint are SNAPSHOT_SHARE times what it wrote. */
  private worthSaving(): boolean {
    return this.charsSinceCheckpoint >= this.lastSnapshotChars * SNAPSHOT_SHARE;
  }

  private unsavedSnapshots(): SnapshotRow[] {
    const rows = [...this.dirty].map(([key, { kind }]) => ({ kind: kind.name, key, state: kind.toSnapshot(this.actors!.stateOf(key)) }));
    // Their size, for the next checkpoint's share (the store serialises them once more: a
    // checkpoint's own cost in PGlite or PostgreSQL is tens of times a stringify's).
    this.lastSnapshotChars = rows.reduce((n, r) => n + toJson(r.state).length, 0);
    return rows;
  }

  /** After a commit: forget what a checkpoint saved, and make sure an idle partition still saves what it holds. */
  private afterCheckpoint(saved: boolean) {
    if (saved) {
      this.dirty.clear();
      this.batchesSinceCheckpoint = 0;
      this.charsSinceCheckpoint = 0;
    } else this.batchesSinceCheckpoint++;
    this.armIdleCheckpoint();
  }

  private armIdleCheckpoint() {
    const p = this.deps.checkpoint;
    if (!p || !this.dirty.size || this.idleTimer) return;
    const age = Date.now() - this.dirtyAt;
    this.idleTimer = setTimeout(
      () => {
        this.idleTimer = null;
        if (!this.dirty.size) return;
        const age = Date.now() - this.dirtyAt;
        if (age < p.maxAgeMs || (!this.worthSaving() && age < p.maxAgeMs * SNAPSHOT_MAX_AGE_FACTOR)) {
          this.armIdleCheckpoint();
          return;
        }
        this.flush().catch((err) => this.deps.log.warn({ err, topic: this.topic, partition: this.partition }, 'idle checkpoint failed'));
      },
      // At `maxAgeMs`, then every `maxAgeMs` while not worth saving, until the hard bound.
      Math.max(10, age < p.maxAgeMs ? p.maxAgeMs - age : Math.min(p.maxAgeMs, p.maxAgeMs * SNAPSHOT_MAX_AGE_FACTOR - age)),
    );
    this.idleTimer.unref?.();
  }

  /** A commit of snapshots alone (no record): the offset stays, `replayFrom` catches up with it. */
  private async checkpointNow(): Promise<boolean> {
    const d = this.deps;
    const next = this.expectedNext;
    if (!this.actors || next === null || this.replayNext !== null || !this.dirty.size) return true;
    const snapshots = this.unsavedSnapshots();
    let ok = false;
    try {
      ok = await d.store.commit({
        groupId: d.groupId,
        topic: this.topic,
        partition: this.partition,
        expectedNext: next,
        next,
        replayFrom: next,
        owner: d.owner,
        snapshots,
        inbox: [],
        journal: d.journal ? [] : undefined,
        deadLetters: [],
        effects: async () => undefined,
      });
    } catch (err) {
      d.log.warn({ err, topic: this.topic, partition: this.partition }, 'checkpoint failed; resuming from the store');
    }
    if (!ok) {
      this.reset();
      return false;
    }
    this.afterCheckpoint(true);
    d.metrics?.snapshots?.(this.topic, this.partition, snapshots.length);
    return true;
  }

  /**
   * Rebuilds actors newer than their snapshots from records already committed: each command runs
   * again exactly when it ran the first time (not answered from the inbox, not dead-lettered, not
   * already in its actor's snapshot). Nothing is written and nothing is answered.
   */
  private async replay(records: InRecord[]) {
    if (!records.length) return;
    // Kinds whose rows hold their state are never replayed: their rows match the committed offset.
    const items = records.flatMap((record) => this.parse(record)).filter((it) => it.kind && !it.kind.rows);
    const ids = [...new Set(items.map((it) => it.envelope!.id).filter((x): x is string => !!x))];
    const facts = await this.deps.store.replayFacts(
      this.topic,
      this.partition,
      ids,
      items.map((it) => it.record.offset),
    );
    const run = items.filter((it) => {
      if (facts.poisoned.has(it.record.offset)) return false;
      const id = it.envelope!.id;
      if (id && facts.appliedAt.has(id) && facts.appliedAt.get(id) !== it.record.offset) return false;
      return true;
    });
    await this.ensureActors(run);
    const live = run.filter((it) => it.record.offset >= (this.snapshotAt.get(it.key) ?? -1n));
    const results = await this.step(live);
    live.forEach((it, i) => {
      const r = results[i];
      if (r?.error) {
        // It ran without error the first time: a decider that is not deterministic. Loud, not fatal.
        this.deps.log.error(
          { err: r.error, key: it.key, topic: this.topic, partition: this.partition, offset: String(it.record.offset) },
          'replayed command threw; state may diverge',
        );
        return;
      }
      if (r?.decision?.events.length) this.markDirty(it.kind!, it.key, it.record.offset);
    });
  }

  /** Runs the batch's commands through their actors: one mailbox turn per key, keys in parallel, each key's commands in order. */
  private async step(items: Item[]): Promise<(StepResult | null)[]> {
    const byKey = new Map<string, number[]>();
    const results: (StepResult | null)[] = items.map(() => null);
    // Blind commands of keys not in memory: one pass here, from the initial state, nothing kept.
    const inline = new Map<string, unknown>();
    items.forEach((it, i) => {
      if (!it.kind || it.reply !== undefined || it.dupOf) return;
      if (it.inline) {
        const r = step(it.kind, inline.has(it.key) ? inline.get(it.key) : it.kind.decider.initial(it.key), it.command);
        inline.set(it.key, r.state);
        results[i] = r;
        return;
      }
      const list = byKey.get(it.key);
      if (list) list.push(i);
      else byKey.set(it.key, [i]);
    });
    await Promise.all(
      [...byKey].map(async ([key, idx]) => {
        const out = await this.actors!.sendMany(
          key,
          idx.map((i) => ({ envelope: items[i].envelope!, command: items[i].command })),
        );
        idx.forEach((i, j) => {
          results[i] = out[j];
        });
      }),
    );
    return results;
  }

  /** A record's commands (one, or each of a bulk record), parsed by their kinds; what fails to parse carries its error. */
  private parse(record: InRecord): Item[] {
    let commands: ReturnType<typeof commandsOf>;
    try {
      // `decoded` first: reading `value` may build the text (OutRecord.decoded).
      commands = commandsOf(record.key, (record.decoded as object | undefined) ?? record.value);
    } catch (e) {
      return [{ record, key: record.key, error: `bad command: ${(e as Error).message}` }];
    }
    return commands.map(({ key, envelope, bulk }, i) => {
      const it: Item = { record, key, envelope, bulkIndex: bulk ? i : undefined };
      try {
        const kind = this.deps.kindFor(this.topic, key);
        if (!kind) throw new Error(`no actor kind for key ${key}`);
        if (bulk && kind.topic !== this.topic) throw new Error(`key ${key} is not of this topic`);
        it.kind = kind;
        it.command = kind.parse(envelope.cmd, envelope);
      } catch (e) {
        it.kind = undefined;
        it.error = `bad command: ${(e as Error).message}`;
      }
      return it;
    });
  }

  private async answerFromInbox(items: Item[]) {
    const ids = [...new Set(items.filter((it) => it.kind && it.envelope?.id).map((it) => it.envelope!.id!))];
    if (!ids.length) return;
    const found = await this.deps.store.findInbox(ids);
    for (const it of items) {
      const id = it.envelope?.id;
      if (!it.kind || !id || !found.has(id)) continue;
      it.reply = found.get(id);
      it.forward = forwardOf(it.reply);
    }
  }

  private async ensureActors(items: Item[]) {
    const missing = new Map<ActorKind, Set<string>>();
    for (const it of items) {
      if (!it.kind || it.reply !== undefined || it.inline || this.actors!.has(it.key)) continue;
      const set = missing.get(it.kind) ?? new Set<string>();
      set.add(it.key);
      missing.set(it.kind, set);
    }
    for (const [kind, keys] of missing) {
      if (kind.rows) {
        const states = await kind.rows.load(this.deps.store.reader, [...keys]);
        for (const key of keys) this.actors!.spawn(key, kind, states.get(key) ?? kind.decider.initial(key));
        continue;
      }
      await this.spawnSaved(kind, [...keys], items[0]?.record.offset ?? 0n);
    }
  }

  /** Spawns `keys` from their snapshots (or initial states), then runs their journals (a bus with no log). */
  private async spawnSaved(kind: ActorKind, keys: string[], at: bigint) {
    const snaps: Map<string, StoredSnapshot> = await this.deps.store.loadSnapshots(kind.name, keys);
    for (const key of keys) {
      const snap = snaps.get(key);
      this.actors!.spawn(key, kind, snap === undefined ? kind.decider.initial(key) : kind.fromSnapshot(snap.state));
      if (this.replayNext !== null) this.snapshotAt.set(key, snap?.next ?? -1n);
    }
    if (this.deps.journal) await this.replayJournal(kind, keys, at);
  }

  /**
   * A bus with no log: actors newer than their snapshots run their journaled commands again, in
   * order, as they ran the first time (nothing written, nothing answered); they stay unsaved until
   * the next checkpoint, which deletes the journal it covers.
   */
  private async replayJournal(kind: ActorKind, keys: string[], at: bigint) {
    const journals = await this.deps.store.loadJournal(kind.name, keys);
    for (const [key, envelopes] of journals) {
      const steps = envelopes.map((json) => {
        const envelope = JSON.parse(json) as Envelope;
        return { envelope, command: kind.parse(envelope.cmd, envelope) };
      });
      const out = await this.actors!.sendMany(key, steps);
      const bad = out.find((r) => r.error);
      if (bad)
        this.deps.log.error(
          { err: bad.error, key, topic: this.topic, partition: this.partition },
          'journaled command threw; state may diverge',
        );
      this.markDirty(kind, key, at);
    }
  }

  /** Replies, forwards and what projections sent (StoreTx.send), after the commit. */
  private async sendReplies(items: Item[], sent: SentMessage[] = []) {
    const byRecord = new Map<InRecord, Item[]>();
    for (const it of items) {
      const list = byRecord.get(it.record);
      if (list) list.push(it);
      else byRecord.set(it.record, [it]);
    }
    const byTopic = new Map<string, OutRecord[]>();
    const batched = new Map<string, { corr: string; text: string }[]>();
    const inProcess = !this.deps.bus.durable;
    /** In the process: the answers to one asker, as values (one record, not cut: no broker to fit). */
    const local = new Map<string, { corr: string; decoded: unknown }[]>();
    const forwarded: string[] = [];
    /** The reply server each asker named (its reply topic's), if any. */
    const viaOf = new Map<string, string>();
    const add = (topic: string, rec: OutRecord) => {
      const list = byTopic.get(topic);
      if (list) list.push(rec);
      else byTopic.set(topic, [rec]);
    };
    for (const m of sent) {
      add(m.topic, { key: m.key, value: m.value });
      forwarded.push(m.msgKey);
    }
    for (const [record, its] of byRecord) {
      const first = its[0];
      const plain = first.bulkIndex === undefined;
      for (const it of its) {
        const f = it.forward;
        if (!f || it.error) continue;
        // Handed on with the asker's reply headers (a plain record): the receiver answers the asker.
        add(f.topic, {
          key: f.key,
          value: envelopeJson(f.cmd, { id: f.id, at: it.envelope!.at }),
          headers: plain ? replyHeaders(record) : {},
        });
        forwarded.push(f.id);
      }
      if (plain && first.forward && !first.error) continue;
      const to = record.headers?.[REPLY_TO];
      const corr = record.headers?.[CORRELATION];
      if (!to || !corr) continue;
      const via = record.headers?.[REPLY_VIA];
      if (via) viaOf.set(to, via);
      // A bulk record is answered once: one entry per command, or one error when it was refused whole.
      const msg: ReplyMessage =
        first.bulkIndex === undefined || first.whole
          ? first.error
            ? { corr, reply: null, error: first.error, ...(first.split ? { split: true } : {}) }
            : { corr, reply: first.reply }
          : { corr, reply: its.map((x): BulkAnswer => (x.error ? { error: x.error } : { reply: x.reply })) };
      // One command's answer (an order's) carries amounts as bigints: the replacer at once; a bulk's
      // answers (the ingest's results) seldom hold one.
      const textOf = () => (first.bulkIndex === undefined ? bigJson(msg) : toJson(msg));
      // In the process (the in-process bus) the answer goes as the value its text would parse to
      // (OutRecord.decoded): no text is built or parsed unless something reads it.
      if (inProcess) {
        const decoded = jsonCopy(msg);
        if (!record.headers?.[REPLY_BATCH]) add(to, lazyRecord({ key: corr, decoded }, textOf));
        else (local.get(to) ?? local.set(to, []).get(to)!).push({ corr, decoded });
      } else if (record.headers?.[REPLY_BATCH]) {
        const list = batched.get(to);
        const text = textOf();
        if (list) list.push({ corr, text });
        else batched.set(to, [{ corr, text }]);
      } else add(to, { key: corr, value: textOf() });
    }
    // The answers to one asker: one record (a JSON array of them; one alone as itself), cut at REPLY_RECORD_CHARS.
    for (const [to, list] of batched)
      for (const run of cutBySize(list, (m) => m.text.length + 1, REPLY_RECORD_CHARS))
        add(to, { key: run[0].corr, value: run.length === 1 ? run[0].text : `[${run.map((m) => m.text).join(',')}]` });
    for (const [to, list] of local) {
      const decoded = list.length === 1 ? list[0].decoded : list.map((m) => m.decoded);
      add(
        to,
        lazyRecord({ key: list[0].corr, decoded }, () => JSON.stringify(decoded)),
      );
    }
    let lost = false;
    await Promise.all(
      [...byTopic].map(([topic, recs]) =>
        deliver(this.deps.bus, topic, recs, viaOf.get(topic)).catch((err) => {
          lost = true;
          this.deps.log.warn(
            { err, topic },
            'reply or forward not delivered; the asker retries, the outbox relay sends a forward when due',
          );
        }),
      ),
    );
    if (forwarded.length && !lost) this.deps.store.forwarded?.(forwarded);
  }
}

/**
 * Marks the commands decided without an actor: every pending command of a key not in memory is
 * blind for its kind (RowState.blind). A key with any other command goes through its actor, loaded
 * from its rows.
 */
function markInline(items: Item[], live: (key: string) => boolean) {
  const blind = new Map<string, boolean>();
  for (const it of items) {
    if (!it.kind || it.reply !== undefined || it.dupOf) continue;
    const ok = !!it.kind.rows?.blind?.(it.command) && !live(it.key);
    blind.set(it.key, (blind.get(it.key) ?? true) && ok);
  }
  for (const it of items) if (it.kind && it.reply === undefined && !it.dupOf && blind.get(it.key)) it.inline = true;
}

function markDuplicates(items: Item[]) {
  const first = new Map<string, Item>();
  for (const it of items) {
    const id = it.envelope?.id;
    if (!it.kind || !id || it.reply !== undefined) continue;
    const f = first.get(id);
    if (f) it.dupOf = f;
    else first.set(id, it);
  }
}

/** The asker's reply headers of a record (none: a told command), carried by what it is forwarded as. */
function replyHeaders(record: InRecord): Record<string, string> {
  const to = record.headers?.[REPLY_TO];
  const corr = record.headers?.[CORRELATION];
  const batch = record.headers?.[REPLY_BATCH];
  const via = record.headers?.[REPLY_VIA];
  return to && corr
    ? { [REPLY_TO]: to, [CORRELATION]: corr, ...(batch ? { [REPLY_BATCH]: batch } : {}), ...(via ? { [REPLY_VIA]: via } : {}) }
    : {};
}
